"""Bad inputs give our own error types, naming the file (and line), never a raw UP/pymimir error."""

from __future__ import annotations

import shutil
import warnings

import pytest
from pddl_cases import TYPED_BLOCKS, fixture

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.errors import GnnplanError, ProblemLoadError, UnsupportedFeatureError
from up_gnnplan.problems import load_task
from up_gnnplan.problems.loading import PddlQuirkWarning

BLOCKSWORLD = TYPED_BLOCKS
TWO_BLOCKS = fixture("blocksworld", "two-blocks.pddl")


def load_error(domain, problem, kind=GnnplanError):
    """Load and return the error, checking it is ours and carries no foreign traceback."""
    with pytest.raises(kind) as caught:
        load_task(domain, problem)
    error = caught.value
    assert type(error).__module__ == "up_gnnplan.errors"
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    return str(error)


def test_missing_problem_file(tmp_path):
    missing = tmp_path / "nope.pddl"
    message = load_error(BLOCKSWORLD, missing, ProblemLoadError)
    assert str(missing) in message and "no such file" in message


def test_missing_domain_file(tmp_path):
    missing = tmp_path / "domain.pddl"
    message = load_error(missing, TWO_BLOCKS, ProblemLoadError)
    assert str(missing) in message


def test_directory_instead_of_file(tmp_path):
    message = load_error(tmp_path, TWO_BLOCKS, ProblemLoadError)
    assert str(tmp_path) in message


def test_unclosed_parenthesis():
    problem = fixture("blocksworld", "unclosed-paren.pddl")
    message = load_error(BLOCKSWORLD, problem, ProblemLoadError)
    assert str(problem) in message and "line" in message and "never closed" in message
    # the section left open is named: (:goal opens inside (:init, so the ')' is missing before it
    assert "(:goal on line 6 opens inside (:init opened on line 5)" in message, message


def test_extra_closing_parenthesis():
    problem = fixture("blocksworld", "extra-paren.pddl")
    message = load_error(BLOCKSWORLD, problem, ProblemLoadError)
    assert f"{problem}, line 6" in message and "closes nothing" in message


def test_unbalanced_domain_is_blamed_on_the_domain(tmp_path):
    domain = tmp_path / "domain.pddl"
    domain.write_text(BLOCKSWORLD.read_text().replace("(on ?x - block ?y - block)", "(on ?x - block ?y - block"))
    message = load_error(domain, TWO_BLOCKS, ProblemLoadError)
    assert message.startswith(str(domain)) and "line" in message


def test_unknown_predicate_names_file_and_line():
    problem = fixture("blocksworld", "unknown-predicate.pddl")
    message = load_error(BLOCKSWORLD, problem, ProblemLoadError)
    assert message.startswith(f"{problem}, line 6:")
    assert "on-top-of" in message


def test_unknown_object_names_file_and_line():
    problem = fixture("blocksworld", "unknown-object.pddl")
    message = load_error(BLOCKSWORLD, problem, ProblemLoadError)
    assert message.startswith(f"{problem}, line 5:")


def test_unknown_type(tmp_path):
    problem = tmp_path / "p.pddl"
    problem.write_text(TWO_BLOCKS.read_text().replace("a b - block", "a b - brick"))
    message = load_error(BLOCKSWORLD, problem, ProblemLoadError)
    assert str(problem) in message and "brick" in message


@pytest.mark.parametrize(
    "domain, problem, feature",
    [
        ("numeric-domain.pddl", "numeric-p01.pddl", "numeric effects (decrease)"),
        ("durative-domain.pddl", "durative-p01.pddl", "durative actions (:durative-actions)"),
    ],
)
def test_unsupported_feature_is_named(domain, problem, feature):
    domain, problem = fixture("unsupported", domain), fixture("unsupported", problem)
    with pytest.raises(UnsupportedFeatureError) as caught:
        load_task(domain, problem)
    error = caught.value
    assert feature in error.features
    assert feature in str(error)
    assert str(domain) in str(error) and str(problem) in str(error)


def test_empty_goal():
    problem = fixture("blocksworld", "empty-goal.pddl")
    message = load_error(BLOCKSWORLD, problem, ProblemLoadError)
    assert str(problem) in message and "goal is empty" in message


def test_negative_action_cost_is_refused(tmp_path):
    domain = tmp_path / "domain.pddl"
    domain.write_text(fixture("costs", "domain.pddl").read_text().replace("(increase (total-cost) 7)", "(increase (total-cost) -7)"))
    with pytest.raises(UnsupportedFeatureError) as caught:
        load_task(domain, fixture("costs", "p01.pddl"))
    assert "negative action costs" in str(caught.value) and "jump" in str(caught.value)


def test_conditions_beyond_the_declared_requirements_warn_and_load(tmp_path):
    """``(not (= ?a ?b))`` under ``:strips :equality``, a ``forall`` precondition under ``:strips``: Fast Downward
    takes them, pymimir refuses them undeclared; they are declared (a warning once per file) and read. The negated
    equality is PDDL's ``:equality``, so the warning names only the ``forall``."""
    domain, problem = tmp_path / "domain.pddl", tmp_path / "p1.pddl"
    domain.write_text(
        "(define (domain swap) (:requirements :strips :typing :equality) (:types token place) (:constants home - place)\n"
        "  (:predicates (at ?t - token ?p - place) (link ?a ?b - place) (done))\n"
        "  (:action go :parameters (?t - token ?a ?b - place)\n"
        "    :precondition (and (at ?t ?a) (link ?a ?b) (not (= ?a ?b))) :effect (and (not (at ?t ?a)) (at ?t ?b)))\n"
        "  (:action finish :parameters () :precondition (forall (?t - token) (at ?t home)) :effect (done)))\n")
    problem.write_text("(define (problem p1) (:domain swap) (:objects a b - token p1 p2 - place)\n"
                       "  (:init (at a p1) (at b p2) (link p1 p2) (link p2 p1) (link p2 home) (link p1 p1))\n"
                       "  (:goal (done)))\n")
    with pytest.warns(PddlQuirkWarning, match=r"uses :universal-preconditions without declaring it") as caught:
        task = load_task(domain, problem)
    assert not any("negative" in str(w.message) for w in caught)
    assert sorted(str(a) for a in task.initial_state().generate_applicable_actions()) == \
        ["(go a p1 p2)", "(go b p2 home)", "(go b p2 p1)"]  # not (go a p1 p1): the equality holds
    assert expand(task).initial_value == 4.0  # a to p2 and home, b home, finish
    domain.write_text(domain.read_text().replace("(not (= ?a ?b))", "(not (= ?a ?b)) (nonsense)"))
    message = load_error(domain, problem, ProblemLoadError)  # any other error still names the file and line
    assert f"{domain}, line 4" in message, message


@pytest.mark.parametrize("precondition, warned", [("(not (= ?a ?b))", False), ("(not (= ?a ?b)) (not (at ?t ?b))", True)])
def test_a_negated_equality_alone_is_no_undeclared_negative_precondition(tmp_path, precondition, warned):
    """Negated equalities under ``:equality`` are read without a warning; a negated atom undeclared still warns
    (delete effects, ``(not (at ?t ?a))`` below, are no negative preconditions either way)."""
    domain, problem = tmp_path / "domain.pddl", tmp_path / "p1.pddl"
    domain.write_text(
        "(define (domain hop) (:requirements :strips :typing :equality) (:types token place)\n"
        "  (:predicates (at ?t - token ?p - place))\n"
        "  (:action go :parameters (?t - token ?a ?b - place)\n"
        f"    :precondition (and (at ?t ?a) {precondition}) :effect (and (not (at ?t ?a)) (at ?t ?b))))\n")
    problem.write_text("(define (problem p1) (:domain hop) (:objects a - token p1 p2 - place)\n"
                       "  (:init (at a p1)) (:goal (at a p2)))\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = load_task(domain, problem)
    said = [str(w.message) for w in caught if issubclass(w.category, PddlQuirkWarning)]
    assert bool(said) == warned and all(":negative-preconditions" in m for m in said), said
    assert sorted(str(a) for a in task.initial_state().generate_applicable_actions()) == ["(go a p1 p2)"]


def test_a_domain_constant_declared_again_as_an_object_is_refused_by_name(tmp_path):
    domain, problem = tmp_path / "domain.pddl", tmp_path / "p1.pddl"
    domain.write_text("(define (domain home) (:requirements :strips :typing) (:types place) (:constants home - place)\n"
                      "  (:predicates (at ?p - place))\n"
                      "  (:action go :parameters (?a ?b - place) :precondition (at ?a) :effect (and (not (at ?a)) (at ?b))))\n")
    problem.write_text("(define (problem p1) (:domain home)\n  (:objects a - place\n    home - place)\n"
                       "  (:init (at a)) (:goal (at home)))\n")
    message = load_error(domain, problem, ProblemLoadError)
    assert f"{problem}, line 3: 'home' is a constant of the domain ({domain}, :constants)" in message, message


def test_a_negative_goal_under_a_domain_that_does_not_declare_it_warns_and_loads(tmp_path):
    """pddlgym's Glibdoors: ``(not (keyat ...))`` in the goal, the domain under ``:strips :typing``. pymimir refuses
    the problem; the requirement is declared in the domain (for Fast Downward's text too) and the problem read."""
    domain, problem = tmp_path / "domain.pddl", tmp_path / "p1.pddl"
    domain.write_text("(define (domain keys) (:requirements :strips :typing) (:types key place)\n"
                      " (:predicates (keyat ?k - key ?p - place) (held ?k - key))\n"
                      " (:action take :parameters (?k - key ?p - place) :precondition (keyat ?k ?p)\n"
                      "  :effect (and (not (keyat ?k ?p)) (held ?k))))\n")
    problem.write_text("(define (problem p1) (:domain keys) (:objects k - key a - place)\n (:init (keyat k a))\n"
                       " (:goal (and (not (keyat k a)))))\n")
    with pytest.warns(PddlQuirkWarning, match=f"{problem}: uses :negative-preconditions, which .* does not declare"):
        task = load_task(domain, problem)
    assert ":negative-preconditions" in task.domain_text
    assert expand(task).initial_value == 1.0


def test_probabilistic_effects_are_refused_by_name_and_line(tmp_path):
    domain, problem = tmp_path / "domain.pddl", tmp_path / "p1.pddl"
    domain.write_text("(define (domain tires) (:requirements :typing :strips :probabilistic-effects) (:types place)\n"
                      " (:predicates (at ?p - place) (flat))\n"
                      " (:action go :parameters (?a ?b - place) :precondition (at ?a)\n"
                      "  :effect (and (not (at ?a)) (at ?b)\n   (probabilistic 0.5 (flat)))))\n")
    problem.write_text("(define (problem p1) (:domain tires) (:objects a b - place) (:init (at a)) (:goal (at b)))\n")
    message = load_error(domain, problem, UnsupportedFeatureError)
    assert f"{domain}, line 5): unsupported feature(s): probabilistic effects" in message, message


def test_names_and_sections_pymimir_cannot_read_are_named(tmp_path):
    """A problem named ``0`` loads (Fast Downward takes it; the name is used nowhere); an object named ``1`` is
    refused by name and line, not as a file pymimir "cannot read"; a ``:goal`` before the ``:init`` is read in
    PDDL's order, with a warning."""
    domain = tmp_path / "domain.pddl"
    domain.write_text("(define (domain d) (:requirements :strips :typing) (:types n)\n"
                      " (:predicates (at ?x - n) (next ?x ?y - n))\n"
                      " (:action go :parameters (?x ?y - n) :precondition (and (at ?x) (next ?x ?y))\n"
                      "  :effect (and (not (at ?x)) (at ?y))))\n")
    problem = tmp_path / "p.pddl"
    problem.write_text("(define (problem 0) (:domain d) (:objects a b - n)\n (:init (at a) (next a b))\n (:goal (at b)))\n")
    assert expand(load_task(domain, problem)).initial_value == 1.0
    problem.write_text("(define (problem p) (:domain d)\n (:objects a 2 - n)\n (:init (at a) (next a 2))\n (:goal (at 2)))\n")
    message = load_error(domain, problem, ProblemLoadError)
    assert f"{problem}, line 2: the object name '2' does not begin with a letter" in message, message
    problem.write_text("(define (problem p) (:domain d) (:objects a b - n)\n (:goal (at b))\n (:init (at a) (next a b)))\n")
    with pytest.warns(PddlQuirkWarning, match=r"the \(:goal ...\) comes before the \(:init ...\); read in PDDL's order"):
        task = load_task(domain, problem)
    assert expand(task).initial_value == 1.0
    assert task.problem_text.index(":init") < task.problem_text.index(":goal")  # as Fast Downward is given it


def test_typed_objects_without_typing_requirement_warn_and_load(tmp_path):
    # Copy the domain: the warning is given once per domain file and process.
    domain = tmp_path / "domain.pddl"
    shutil.copy(fixture("strips-typing", "domain.pddl"), domain)
    with pytest.warns(PddlQuirkWarning, match=":typing"):
        task = load_task(domain, fixture("strips-typing", "p01.pddl"))
    assert task.object_names == ["b1", "b2"]
    assert expand(task).initial_value == 4.0  # unstack b2 b1, put-down b2, pick-up b1, stack b1 b2
    with warnings.catch_warnings():
        warnings.simplefilter("error", PddlQuirkWarning)
        load_task(domain, fixture("strips-typing", "p01.pddl"))  # not again for the same domain

"""Tasks read straight into pymimir (``Task.from_files``) are the tasks UP's reader gives.

Same names, signatures, types, object ids, atoms and estimates as ``Task(load_pddl(...))``; bad
input named by file and line; unsupported features refused by name; the same plans.
"""

from __future__ import annotations

import pytest
from pddl_cases import PROBLEMS, TYPED_BLOCKS, fixture

from up_gnnplan.errors import GnnplanError, ProblemLoadError, UnsupportedFeatureError
from up_gnnplan.problems import Task, load_pddl
from up_gnnplan.problems.size import estimate_ground_actions, estimate_initial_actions
from up_gnnplan.states.atoms import StateAtoms

# A typed domain with a hierarchy, a constant named by an action, a constant that is not, mixed
# case (PDDL names are case-insensitive), comments, an existential precondition, and action
# costs from a static function.
DOMAIN = """; a comment before the definition
(define (domain Depot)   ; and one after it
  (:requirements :strips :typing :negative-preconditions :existential-preconditions :action-costs)
  (:types truck crate - Thing place)
  (:constants Home - place spare - crate)
  (:predicates (At ?t - Thing ?p - place) (Road ?a ?b - place) (loaded ?c - crate ?t - truck)
               (vehicle ?t - truck) (free ?t - truck))
  (:functions (total-cost) - number (dist ?a ?b - place) - number)
  (:action Drive
    :parameters (?t - truck ?a ?b - place)
    :precondition (and (AT ?t ?a) (road ?a ?b) (vehicle ?t))
    :effect (and (not (at ?t ?a)) (at ?t ?b) (increase (total-cost) (dist ?a ?b))))
  (:action load
    :parameters (?c - crate ?t - truck ?p - place)
    :precondition (and (at ?c ?p) (at ?t ?p) (free ?t) (exists (?d - crate) (at ?d Home)))
    :effect (and (not (at ?c ?p)) (loaded ?c ?t) (not (free ?t)) (increase (total-cost) 1)))
  (:action unload
    :parameters (?c - crate ?t - truck ?p - place)
    :precondition (and (loaded ?c ?t) (at ?t ?p))
    :effect (and (at ?c ?p) (not (loaded ?c ?t)) (free ?t) (increase (total-cost) 1))))
"""
PROBLEM = """(define (problem depot-1) (:domain DEPOT)
  ; objects in an order of their own, not grouped by type
  (:objects C1 - crate Far - place T1 - truck c2 - crate)
  (:init (at t1 home) (at c1 home) (at c2 home) (at spare far) (vehicle t1) (free t1)
         (road home far) (road far home) (= (dist home far) 3) (= (dist far home) 2) (= (total-cost) 0))
  (:goal (and (at c1 far) (not (at c2 far)) (at c2 home)))
  (:metric minimize (total-cost)))
"""


def write(tmp_path, domain: str, problem: str, name: str = "p.pddl"):
    (tmp_path / "domain.pddl").write_text(domain)
    (tmp_path / name).write_text(problem)
    return tmp_path / "domain.pddl", tmp_path / name


def both(domain, problem):
    return Task(load_pddl(domain, problem)), Task.from_files(domain, problem)


VIEWS = {
    "signature": lambda t: t.signature,
    "action signature": lambda t: t.action_signature,
    "types": lambda t: t.types.to_json(),
    "object names": lambda t: t.object_names,
    "object types": lambda t: t.object_types,
    "goal": lambda t: t.goal_literals(),
    "unit costs": lambda t: t.has_unit_costs(),
    "least cost": lambda t: t.min_action_cost(),
    "estimates": lambda t: (estimate_ground_actions(t), estimate_initial_actions(t)),
    "static atoms": lambda t: StateAtoms(t).static.as_strings(t.signature, t.object_names),
    "initial atoms": lambda t: StateAtoms(t).strings(t.initial_state()),
    "named constants": lambda t: sorted(t.constant_ids),
    "first actions": lambda t: sorted(t.plan_lines(t.initial_state().generate_applicable_actions())),
}


def assert_same(up, files):
    for view, of in VIEWS.items():
        assert of(files) == of(up), view
    assert files.from_files_only and files.note is None


@pytest.mark.parametrize("name", sorted(set(PROBLEMS) - {"bw-exists-goal"}))
def test_fixture_tasks_are_the_same(name):
    assert_same(*both(*PROBLEMS[name]))


def test_typed_domain_with_constants_case_and_comments(tmp_path):
    up, files = both(*write(tmp_path, DOMAIN, PROBLEM))
    assert_same(up, files)
    assert files.object_names == ["home", "spare", "c1", "far", "t1", "c2"]  # constants first, then as listed
    assert ("type:thing", 1) in files.signature.predicates and ("vehicle", 1) in files.signature.predicates
    assert files.action_signature.schemas == (("drive", 3), ("load", 3), ("unload", 3))  # not pymimir's arity 4
    assert files.types.parents["crate"] == "thing" and files.constant_ids == {0}  # spare is named by no action
    assert not files.has_unit_costs() and files.min_action_cost() == 1.0
    assert [o.name for o in files.objects] == files.object_names  # UP's objects, read when asked for


def test_ground_action_by_name_is_the_applicable_action_or_none(tmp_path):
    """Plans read back by name (Fast Downward's, a compare row's) are built in one lookup, in any case;
    an action whose existential precondition pymimir made into extra parameters is found among the
    applicable ones; what is not applicable, or not in the task, is None."""
    for task in both(*write(tmp_path, DOMAIN, PROBLEM)):
        state = task.initial_state()
        applicable = {line: action for line, action in
                      zip(task.plan_lines(state.generate_applicable_actions()), state.generate_applicable_actions())}
        drive = task.ground_action(state, "DRIVE", ["T1", "Home", "FAR"])
        assert drive is not None and drive.get_index() == applicable["(drive t1 home far)"].get_index()
        load = task.ground_action(state, "load", ["c1", "t1", "home"])  # pymimir's arity 4: ?d is the 4th
        assert load is not None and task.plan_lines([load]) == ["(load c1 t1 home)"]
        assert task.ground_action(state, "drive", ["t1", "far", "home"]) is None  # t1 is not at far
        assert task.ground_action(state, "drive", ["c1", "home", "far"]) is None  # c1 is no truck
        assert task.ground_action(state, "fly", ["t1"]) is None and task.ground_action(state, "drive", ["x"]) is None
        state = drive.apply(state)
        assert task.ground_action(state, "drive", ["t1", "far", "home"]) is not None


def test_predicate_named_like_a_type(tmp_path):
    """UP's reader refuses a predicate named like a type; pymimir reads it, beside its own type predicate."""
    domain, problem = write(tmp_path, DOMAIN.replace("vehicle", "truck"), PROBLEM.replace("vehicle", "truck"))
    task = Task.from_files(domain, problem)
    atoms = StateAtoms(task).strings(task.initial_state())
    assert "truck(t1)" in atoms and "type:truck(t1)" in atoms
    assert [a for a in atoms if a.startswith("truck(")] == ["truck(t1)"]  # not every truck-typed object
    assert "(drive t1 home far)" in task.plan_lines(task.initial_state().generate_applicable_actions())


def test_existential_goal_falls_back_to_up_with_a_note():
    task = Task.from_files(*PROBLEMS["bw-exists-goal"])
    assert task.has_existential_goal and not task.from_files_only
    assert "UP's reader" in task.note and "exists" in task.note


def test_shipped_model_is_found_for_the_same_signature():
    from up_gnnplan.models_zoo import find_model

    for name in ("bw-p04", "gripper-p01", "bw-typed-p03"):
        up, files = both(*PROBLEMS[name])
        for need in (None, "value", "actions"):
            assert find_model(files.signature, need) == find_model(up.signature, need)
        assert (find_model(files.signature) is not None) == (name != "bw-typed-p03")  # no typed Blocks model ships


@pytest.mark.parametrize("name", ["bw-p03", "bw-p04", "gripper-p01"])
def test_plans_are_the_same(name):
    from up_gnnplan.plugins.engine import GnnplanEngine
    from up_gnnplan.problems.plans import PddlPlan, plan_text

    domain, problem = PROBLEMS[name]
    up = load_pddl(domain, problem)
    by_up = GnnplanEngine().solve(up, timeout=60)
    by_files = GnnplanEngine().solve_task(Task.from_files(domain, problem), timeout=60)
    assert isinstance(by_files.plan, PddlPlan) and by_files.status == by_up.status
    cost = by_up.metrics["plan_cost"]
    assert plan_text(None, by_files.plan) == plan_text(up, by_up.plan, cost)
    assert str(by_files.plan.to_up()) == str(by_up.plan)


def test_plan_text_of_costs_names_general_cost():
    from up_gnnplan.problems.plans import PddlPlan

    task = Task.from_files(*PROBLEMS["costs"])
    state, plan = task.initial_state(), []
    action = state.generate_applicable_actions()[0]
    plan.append(action)
    text = PddlPlan(task, plan, 7).text()
    assert text.endswith("; cost = 7 (general cost)\n") and text.startswith("(")


def load_error(domain, problem, kind=GnnplanError) -> str:
    with pytest.raises(kind) as caught:
        Task.from_files(domain, problem)
    error = caught.value
    assert type(error).__module__ == "up_gnnplan.errors"
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    return str(error)


@pytest.mark.parametrize("edit, file, line, words", [
    (("(at c1 far)", "(at-place c1 far)"), "p.pddl", 6, ["at-place"]),
    (("(at t1 home)", "(at t9 home)"), "p.pddl", 4, ["t9"]),
    (("(road ?a ?b)", "(roads ?a ?b)"), "domain.pddl", 11, ["roads"]),
    (("C1 - crate", "C1 - box"), "p.pddl", 3, ["box"]),
])
def test_bad_input_names_file_and_line(tmp_path, edit, file, line, words):
    domain, problem = DOMAIN, PROBLEM
    if file == "p.pddl":
        problem = problem.replace(*edit)
    else:
        domain = domain.replace(*edit)
    paths = write(tmp_path, domain, problem)
    message = load_error(*paths, ProblemLoadError)
    assert message.startswith(f"{tmp_path / file}, line {line}:"), message
    assert all(word in message for word in words) and "\n" not in message


def test_prechecks_run_first(tmp_path):
    message = load_error(TYPED_BLOCKS, fixture("blocksworld", "extra-paren.pddl"), ProblemLoadError)
    assert "extra-paren.pddl, line 6" in message and "closes nothing" in message
    domain, problem = write(tmp_path, DOMAIN, PROBLEM.replace("(:domain DEPOT)", "(:domain other)"))
    assert "defines 'Depot'" in load_error(domain, problem, ProblemLoadError)
    assert "goal is empty" in load_error(TYPED_BLOCKS, fixture("blocksworld", "empty-goal.pddl"), ProblemLoadError)


@pytest.mark.parametrize("edit", [
    ("(free ?t) (exists", "(or (free ?t) (vehicle ?t)) (exists"),
    ("(and (loaded ?c ?t) (at ?t ?p))", "(and (loaded ?c ?t) (at ?t ?p) (forall (?d - crate) (imply (loaded ?d ?t) (at ?d ?p))))"),
])
def test_disjunctive_and_universal_preconditions_are_read_alike_by_both_readers(tmp_path, edit):
    import warnings

    assert edit[0] in DOMAIN
    text = DOMAIN.replace(*edit).replace(":action-costs)", ":action-costs :disjunctive-preconditions :universal-preconditions)")
    domain, problem = write(tmp_path, text, PROBLEM)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        up, files = both(domain, problem)
    assert_same(up, files)


@pytest.mark.parametrize("edit, feature", [
    (("(increase (total-cost) (dist ?a ?b))", "(increase (total-cost) (dist ?a ?b)) (decrease (dist ?a ?b) 1)"),
     "numeric effects (decrease)"),
    (("(increase (total-cost) 1)))\n  (:action unload", "(increase (total-cost) -1)))\n  (:action unload"),
     "negative action costs: action 'load' costs -1"),
])
def test_unsupported_features_are_refused_by_name(tmp_path, edit, feature):
    assert edit[0] in DOMAIN
    domain, problem = write(tmp_path, DOMAIN.replace(*edit), PROBLEM)
    message = load_error(domain, problem, UnsupportedFeatureError)
    assert feature in message and str(domain) in message


def test_unsupported_problem_features_are_refused_by_name(tmp_path):
    domain, problem = write(tmp_path, DOMAIN, PROBLEM.replace("(:metric minimize (total-cost))",
                                                             "(:metric maximize (total-cost))"))
    message = load_error(domain, problem, UnsupportedFeatureError)
    assert "numeric metric" in message and str(problem) in message


@pytest.mark.parametrize("goal, cost", [
    ("(:goal (or (at c1 far) (at c2 far)))", 5.0),  # load either crate (1), drive (3), unload (1)
    ("(:goal (and (at c2 home) (forall (?c - crate) (imply (loaded ?c t1) (at t1 far)))))", 0.0),  # holds at once
])
def test_disjunctive_and_universal_goals_are_derived_predicates_by_both_readers(tmp_path, goal, cost):
    """A goal conjunct with or/imply/forall: a derived predicate over the objects it names (files), or a
    nullary one (UP): the same optimal plan length either way, the note says the model cannot see it."""
    from up_gnnplan.datasets.expansion import expand

    domain, problem = write(tmp_path, DOMAIN, PROBLEM.replace("(:goal (and (at c1 far) (not (at c2 far)) (at c2 home)))",
                                                             goal))
    files, up = Task.from_files(domain, problem), Task(load_pddl(domain, problem))
    assert files.from_files_only and "cannot see" in files.note and "cannot see" in up.note
    assert expand(files).initial_value == expand(up).initial_value == cost


def test_negative_static_cost_value_is_refused(tmp_path):
    domain, problem = write(tmp_path, DOMAIN, PROBLEM.replace("(= (dist far home) 2)", "(= (dist far home) -2)"))
    message = load_error(domain, problem, ProblemLoadError)  # pymimir's own check, under :action-costs
    assert message.startswith(f"{problem}, line 5:") and "negative" in message.lower()
    # under :numeric-fluents pymimir reads it, and the fragment check refuses it
    domain, problem = write(tmp_path, DOMAIN.replace(":action-costs", ":action-costs :numeric-fluents"), problem.read_text())
    message = load_error(domain, problem, UnsupportedFeatureError)
    assert "negative action costs" in message and "dist(far, home) = -2" in message and "drive" in message


@pytest.mark.parametrize("domain, problem, feature", [
    ("numeric-domain.pddl", "numeric-p01.pddl", "numeric effects (decrease)"),
    ("durative-domain.pddl", "durative-p01.pddl", "durative actions (:durative-actions)"),
])
def test_unsupported_fixtures_name_the_same_feature_as_up(domain, problem, feature):
    from up_gnnplan.problems.fragment import check_supported

    domain, problem = fixture("unsupported", domain), fixture("unsupported", problem)
    with pytest.raises(UnsupportedFeatureError) as by_files:
        Task.from_files(domain, problem)
    assert feature in by_files.value.features
    try:
        up = load_pddl(domain, problem)
    except GnnplanError:
        return  # UP's reader refuses it before its kind is known
    with pytest.raises(UnsupportedFeatureError) as by_up:
        check_supported(up, "x")
    assert feature in by_up.value.features


def test_typing_quirk_is_repaired_on_the_same_line(tmp_path):
    import shutil
    import warnings

    domain = tmp_path / "domain.pddl"
    shutil.copy(fixture("strips-typing", "domain.pddl"), domain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        up, files = both(domain, fixture("strips-typing", "p01.pddl"))
    assert_same(up, files)


@pytest.mark.parametrize("domain", sorted(__import__("up_gnnplan.datasets.generators", fromlist=["GENERATORS"])
                                          .GENERATORS))
def test_every_generated_domain_reads_the_same_and_finds_the_same_model(tmp_path, domain):
    """Each generator's default (training-size) problem: the same task both ways, the same shipped model."""
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.models_zoo import find_model

    paths = generate(domain, tmp_path, count=1, seed=3)
    problem = next(p for p in paths if p.name != "domain.pddl")
    if domain == "reach":  # derived predicates: UP's reader cannot parse them (tests/problems/test_derived.py)
        with pytest.raises(UnsupportedFeatureError, match="derived predicates"):
            load_pddl(tmp_path / "domain.pddl", problem)
        assert Task.from_files(tmp_path / "domain.pddl", problem).from_files_only
        return
    up, files = both(tmp_path / "domain.pddl", problem)
    if domain.startswith("exists-"):  # existential goals: read by UP's reader, said in the note
        assert not files.from_files_only and files.note
        return
    assert_same(up, files)
    for need in (None, "value", "actions"):
        assert find_model(files.signature, need) == find_model(up.signature, need)


def test_an_action_without_a_precondition_loads_by_both_readers(tmp_path):
    """PDDL allows an action without ``:precondition``; pymimir 0.13 crashed the process on one (a
    segmentation fault), so the text it gets says ``:precondition (and)``, on the same line."""
    from up_gnnplan.problems import load_task
    from up_gnnplan.problems.syntax import with_preconditions

    domain = """(define (domain switches) (:requirements :strips)
 (:predicates (p) (q))
 (:action turn-on :parameters () :effect (p))
 (:action finish :parameters () :precondition (p) :effect (q)))
"""
    domain_file, problem_file = tmp_path / "domain.pddl", tmp_path / "p.pddl"
    domain_file.write_text(domain)
    problem_file.write_text("(define (problem s) (:domain switches) (:init) (:goal (and (q))))\n")
    for task in (Task.from_files(domain_file, problem_file), load_task(domain_file, problem_file)):
        assert [str(a) for a in task.initial_state().generate_applicable_actions()] == ["(turn-on )"]
    patched = with_preconditions(domain)
    assert patched.count(":precondition") == 2 and patched.count("\n") == domain.count("\n")
    assert ":parameters () :precondition (and) :effect (p)" in patched


def test_a_universal_goal_over_literals_is_written_out_as_its_instances(tmp_path):
    """``(forall (?c - crate) (at ?c home))``: the crates are the problem's two and the domain's constant
    ``spare``; both readers give the model the same three goal atoms, and no note."""
    goal = "(:goal (and (at c1 far) (not (at c2 far)) (at c2 home)))"
    domain, problem = write(tmp_path, DOMAIN, PROBLEM.replace(goal, "(:goal (forall (?c - crate) (at ?c home)))"))
    files, up = Task.from_files(domain, problem), Task(load_pddl(domain, problem))
    assert files.goal_literals() == up.goal_literals()
    positive, negative, quantified = files.goal_literals()
    assert len(positive) == 3 and not negative and not quantified
    assert files.note is None and up.note is None

"""Disjunctive conditions reach pymimir in disjunctive normal form (``up_gnnplan.problems.normal_form``).

pymimir 0.13 gets a conjunction of two disjunctions wrong (``(and (or a b) (or c d))`` made actions
applicable where it does not hold). Random conditions of ``and``, ``or``, ``not``, ``imply``,
``exists`` and ``forall``, as preconditions and as ``when`` conditions, are checked here against an
evaluator of the formula written for the test: the actions pymimir finds applicable (and the
conditional effects it fires) are exactly those where the condition holds.
"""

from __future__ import annotations

import random

import pytest

from up_gnnplan.errors import ProblemLoadError
from up_gnnplan.problems import Task
from up_gnnplan.problems.normal_form import MAX_DISJUNCTS, with_normal_conditions

PREDICATES = "abcde"


def holds(formula, atoms, binding, objects) -> bool:
    head = formula[0]
    if head == "and":
        return all(holds(f, atoms, binding, objects) for f in formula[1:])
    if head == "or":
        return any(holds(f, atoms, binding, objects) for f in formula[1:])
    if head == "not":
        return not holds(formula[1], atoms, binding, objects)
    if head == "imply":
        return not holds(formula[1], atoms, binding, objects) or holds(formula[2], atoms, binding, objects)
    if head in ("exists", "forall"):
        test = any if head == "exists" else all
        return test(holds(formula[2], atoms, {**binding, formula[1]: o}, objects) for o in objects)
    return (head, binding[formula[1]]) in atoms


def pddl(formula) -> str:
    head = formula[0]
    if head in ("and", "or", "not", "imply"):
        return f"({head} " + " ".join(pddl(f) for f in formula[1:]) + ")"
    if head in ("exists", "forall"):
        return f"({head} ({formula[1]} - thing) {pddl(formula[2])})"
    return f"({head} {formula[1]})"


def random_formula(rng, depth, variables):
    if depth == 0 or rng.random() < 0.25:
        atom = (rng.choice(PREDICATES), rng.choice(variables))
        return ("not", atom) if rng.random() < 0.3 else atom
    head = rng.choice(["and", "or", "not", "imply", "exists", "forall", "and", "or"])
    if head in ("and", "or"):
        return (head, *(random_formula(rng, depth - 1, variables) for _ in range(rng.randint(2, 3))))
    if head == "not":
        return ("not", random_formula(rng, depth - 1, variables))
    if head == "imply":
        return ("imply", random_formula(rng, depth - 1, variables), random_formula(rng, depth - 1, variables))
    variable = f"?y{depth}"
    return (head, variable, random_formula(rng, depth - 1, [*variables, variable]))


def domain_text(formula, when: bool) -> str:
    body = (f":precondition (and) :effect (when {pddl(formula)} (done ?x))" if when
            else f":precondition {pddl(formula)} :effect (done ?x)")
    predicates = " ".join(f"({p} ?x - thing)" for p in PREDICATES)
    return (f"(define (domain d) (:requirements :strips :typing :adl) (:types thing)\n"
            f"  (:predicates {predicates} (done ?x - thing))\n  (:action go :parameters (?x - thing)\n    {body}))\n")


def problem_text(atoms, objects) -> str:
    init = " ".join(f"({p} {o})" for p, o in sorted(atoms))
    return f"(define (problem p) (:domain d) (:objects {' '.join(objects)} - thing) (:init {init}) (:goal (done t0)))\n"


@pytest.mark.parametrize("when", [False, True], ids=["precondition", "when"])
def test_pymimir_applies_random_conditions_as_they_read(tmp_path, when):
    rng = random.Random(7 + when)
    objects = [f"t{i}" for i in range(5)]
    for case in range(40):
        formula = random_formula(rng, 3, ["?x"])
        atoms = {(p, o) for p in PREDICATES for o in objects if rng.random() < 0.5}
        (tmp_path / "domain.pddl").write_text(domain_text(formula, when))
        (tmp_path / "p.pddl").write_text(problem_text(atoms, objects))
        task = Task.from_files(tmp_path / "domain.pddl", tmp_path / "p.pddl")
        state = task.initial_state()
        fired = set()
        for action in state.generate_applicable_actions():
            name = task.plan_lines([action])[0][len("(go "):-1]
            done = {str(a) for a in action.apply(state).get_atoms(ignore_static=True, ignore_derived=True)}
            if not when or f"(done {name})" in done:
                fired.add(name)
        expected = {o for o in objects if holds(formula, atoms, {"?x": o}, objects)}
        assert fired == expected, (case, pddl(formula))


def test_a_conjunction_of_disjunctions_is_split_into_every_combination(tmp_path):
    formula = ("and", ("or", ("a", "?x"), ("b", "?x")), ("or", ("c", "?x"), ("d", "?x")))
    text = domain_text(formula, when=False)
    assert "(or (and (a ?x) (c ?x)) (and (a ?x) (d ?x)) (and (b ?x) (c ?x)) (and (b ?x) (d ?x)))" in \
        with_normal_conditions(text, "d.pddl")
    objects = ["t0", "t1", "t2", "t3", "t4", "t5"]
    atoms = {("a", "t0"), ("c", "t0"), ("b", "t1"), ("d", "t1"), ("a", "t2"), ("c", "t3"), ("b", "t4"), ("d", "t5")}
    (tmp_path / "domain.pddl").write_text(text)
    (tmp_path / "p.pddl").write_text(problem_text(atoms, objects))
    task = Task.from_files(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    assert sorted(task.plan_lines(task.initial_state().generate_applicable_actions())) == ["(go t0)", "(go t1)"]


def test_lines_after_a_rewritten_condition_keep_their_numbers(tmp_path):
    text = domain_text(("or", ("a", "?x"), ("b", "?x")), when=False).replace(
        ":precondition (or (a ?x) (b ?x))", ":precondition (or (a ?x)\n\n (b ?x))")
    rewritten = with_normal_conditions(text, "d.pddl")
    assert rewritten.count("\n") == text.count("\n")
    effect_line = [i for i, line in enumerate(text.splitlines()) if ":effect" in line]
    assert [i for i, line in enumerate(rewritten.splitlines()) if ":effect" in line] == effect_line
    unchanged = domain_text(("and", ("a", "?x"), ("forall", "?y", ("b", "?y"))), when=False)
    assert with_normal_conditions(unchanged, "d.pddl") == unchanged  # no or, no imply: as written
    # an error after the rewritten condition still names its own line
    (tmp_path / "domain.pddl").write_text(text.replace(":effect (done ?x)))", ":effect (done ?x))\n  (:action bad :parameters"
                                                       " (?x - thing) :precondition (e ?x) :effect (gone ?x)))"))
    (tmp_path / "p.pddl").write_text(problem_text(set(), ["t0"]))
    with pytest.raises(ProblemLoadError, match=r"domain.pddl, line 7: .*gone"):
        Task.from_files(tmp_path / "domain.pddl", tmp_path / "p.pddl")


def test_a_condition_too_large_to_split_is_refused_with_its_line():
    conjuncts = " ".join("(or (a ?x) (b ?x) (c ?x))" for _ in range(7))  # 3^7 = 2,187 combinations
    text = f"(define (domain d) (:requirements :adl)\n (:predicates (a ?x) (b ?x) (c ?x))\n (:action go :parameters (?x)\n" \
           f"  :precondition (and {conjuncts}) :effect (a ?x)))"
    with pytest.raises(ProblemLoadError, match=rf"d.pddl, line 4: .*more than the {MAX_DISJUNCTS}"):
        with_normal_conditions(text, "d.pddl")

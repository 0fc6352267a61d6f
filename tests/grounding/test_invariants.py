"""At-most-one invariants: found where the schemas keep them, refused where they do not, and used by the filter."""

from __future__ import annotations

import pytest

from tests.grounding.cases import DOMAIN as BLOCKS, problem as blocks_problem
from up_gnnplan.grounding.goal import QuantifiedGoal, static_facts, static_fluents
from up_gnnplan.grounding.invariants import Mutexes
from up_gnnplan.problems.loading import load_pddl

GRIPPER = """(define (domain tiny-gripper)
 (:requirements :strips :typing :existential-preconditions)
 (:types room ball gripper)
 (:predicates (at-robby ?r - room) (at ?b - ball ?r - room) (free ?g - gripper) (carry ?b - ball ?g - gripper)
              (red ?x))
 (:action move :parameters (?from ?to - room) :precondition (at-robby ?from)
  :effect (and (at-robby ?to) (not (at-robby ?from))))
 (:action pick :parameters (?b - ball ?r - room ?g - gripper) :precondition (and (at ?b ?r) (at-robby ?r) (free ?g))
  :effect (and (carry ?b ?g) (not (at ?b ?r)) (not (free ?g))))
 (:action drop :parameters (?b - ball ?r - room ?g - gripper) :precondition (and (carry ?b ?g) (at-robby ?r))
  :effect (and (at ?b ?r) (free ?g) (not (carry ?b ?g)))))
"""


def gripper_problem(init: str, goal: str) -> str:
    return ("(define (problem p) (:domain tiny-gripper) (:objects r1 r2 - room b1 b2 - ball left - gripper) "
            f"(:init (at-robby r1) (free left) (red b1) (red b2) {init}) (:goal {goal}))")


def load(tmp_path, domain: str, text: str):
    (tmp_path / "domain.pddl").write_text(domain)
    (tmp_path / "p.pddl").write_text(text)
    return load_pddl(tmp_path / "domain.pddl", tmp_path / "p.pddl")


def shown(problem) -> set[str]:
    return {str(invariant) for invariant in Mutexes.of(problem).invariants}


def test_gripper_invariants_are_found_by_refinement(tmp_path):
    prob = load(tmp_path, GRIPPER, gripper_problem("(at b1 r1) (at b2 r2)", "(at b1 r2)"))
    assert shown(prob) == {"at most one of (at-robby _)",  # move deletes the room it adds another for
                           "at most one of (at k _), (carry k _)",  # pick: {carry} refined with the at it deletes
                           "at most one of (carry _ k), (free k)",
                           "at most one of (carry _ _), (free _)"}  # true of this problem's one gripper


def test_blocks_keeps_what_a_block_stands_on(tmp_path):
    prob = load(tmp_path, BLOCKS, blocks_problem("p", "(clear a) (clear b) (ontable a) (ontable b) (handempty)",
                                                   "(on a b)", objects="a b"))
    invariants = shown(prob)
    assert "at most one of (holding k), (on k _), (ontable k)" in invariants
    assert "at most one of (handempty), (holding _)" in invariants


def test_an_initial_state_with_two_atoms_of_a_key_refutes_the_invariant(tmp_path):
    prob = load(tmp_path, GRIPPER, gripper_problem("(at b1 r1) (at b1 r2) (at b2 r2)", "(at b1 r2)"))
    assert "at most one of (at k _), (carry k _)" not in shown(prob)


@pytest.mark.parametrize("change, lost", [
    # drop no longer deletes carry: a ball can be carried and in a room at once
    ("(and (at ?b ?r) (free ?g) (not (carry ?b ?g)))", "(and (at ?b ?r) (free ?g))"),
    # the deleted atom is no longer required: deleting a false atom balances nothing
    (":precondition (and (carry ?b ?g) (at-robby ?r))", ":precondition (at-robby ?r)"),
    # a conditional effect is not read: the candidate fails
    ("(and (at ?b ?r) (free ?g) (not (carry ?b ?g)))", "(and (when (free ?g) (at ?b ?r)) (free ?g) (not (carry ?b ?g)))"),
])
def test_a_schema_that_may_break_the_invariant_refutes_it(tmp_path, change, lost):
    assert change in GRIPPER
    prob = load(tmp_path, GRIPPER.replace(change, lost), gripper_problem("(at b1 r1) (at b2 r2)", "(at b1 r2)"))
    assert "at most one of (at k _), (carry k _)" not in shown(prob)


def test_adding_two_atoms_that_may_share_a_key_refutes_the_invariant(tmp_path):
    # move adds two robot positions: at most one at-robby no longer holds (?to and ?from may differ)
    twice = GRIPPER.replace("(and (at-robby ?to) (not (at-robby ?from)))", "(and (at-robby ?to) (at-robby ?from))")
    prob = load(tmp_path, twice, gripper_problem("(at b1 r1) (at b2 r2)", "(at b1 r2)"))
    assert "at most one of (at-robby _)" not in shown(prob)


def test_a_goal_that_puts_one_ball_in_two_rooms_is_a_violation_only_once_ground(tmp_path):
    prob = load(tmp_path, GRIPPER, gripper_problem(
        "(at b1 r1) (at b2 r2)", "(exists (?x1 ?x2 - ball) (and (red ?x1) (at ?x1 r1) (red ?x2) (at ?x2 r2)))"))
    goal, mutexes = QuantifiedGoal.of(prob), Mutexes.of(prob)
    facts_fluents = static_facts(prob, static_fluents(prob)), static_fluents(prob)
    objects = {o.name: o for o in prob.all_objects}
    x1, x2 = goal.variables
    half = goal.bind(x1, objects["b1"])
    assert half.violations(*facts_fluents, mutexes) == []  # ?x2 still free: nothing contradicts yet
    same = half.bind(x2, objects["b1"])
    assert same.violations(*facts_fluents, mutexes) == [
        "(at b1 r1) and (at b1 r2) cannot hold together (at most one of (at k _), (carry k _) for b1)"]
    assert same.violations(*facts_fluents) == []  # without the invariants: the old filter let it through
    assert half.bind(x2, objects["b2"]).violations(*facts_fluents, mutexes) == []


def test_the_filter_never_binds_two_variables_to_one_block_on_two_others(tmp_path, files, model):
    from up_gnnplan.grounding.preprocess import make_binder

    # Two red blocks each on a blue one, without an inequality: x1 = x2 would put one block on c and on d.
    text = blocks_problem("two-on", "(clear a) (clear b) (clear c) (clear d) (ontable a) (ontable b) (ontable c) "
                          "(ontable d) (handempty) (red a) (red b) (blue c) (blue d)",
                          "(exists (?x1 ?x2) (and (red ?x1) (on ?x1 c) (red ?x2) (on ?x2 d)))")
    (files / "two-on.pddl").write_text(text)
    prob = load_pddl(files / "domain.pddl", files / "two-on.pddl")
    with_filter = [g.binding for g in make_binder(prob, str(model), static_filter=True).bindings()]
    assert sorted(tuple(sorted(b.items())) for b in with_filter) == [
        (("x1", "a"), ("x2", "b")), (("x1", "b"), ("x2", "a"))]  # only the two bindings that can hold
    without = [g.binding for g in make_binder(prob, str(model), static_filter=False).bindings()]
    assert {"x1": "a", "x2": "a"} in without  # the paper's binding, the model alone, may propose it


@pytest.mark.parametrize("default, found", [(False, True), (True, False)])
def test_a_fluent_true_by_default_takes_no_part(default, found):
    from unified_planning.shortcuts import BoolType, Fluent, InstantaneousAction, Object, Problem, UserType

    ball, room = UserType("ball"), UserType("room")
    at = Fluent("at", BoolType(), b=ball, r=room)
    prob = Problem("p")
    prob.add_fluent(at, default_initial_value=default)  # true by default: every ball in every room
    b1, r1, r2 = Object("b1", ball), Object("r1", room), Object("r2", room)
    prob.add_objects([b1, r1, r2])
    move = InstantaneousAction("move", b=ball, frm=room, to=room)
    move.add_precondition(at(move.b, move.frm))
    move.add_effect(at(move.b, move.to), True)
    move.add_effect(at(move.b, move.frm), False)
    prob.add_action(move)
    prob.set_initial_value(at(b1, r1), True)
    prob.add_goal(at(b1, r2))
    assert ("at most one of (at k _)" in shown(prob)) == found

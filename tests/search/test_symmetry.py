"""Symmetric actions: one value per class of successors that are the same state up to renaming.

The claim that makes the pruning exact is checked with real shipped models: every successor of
a class gets the same value when each is valued on its own.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from up_gnnplan.problems import load_task
from up_gnnplan.models_zoo import find_model
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search import Inputs, Status, gbfs, policy_rollout
from up_gnnplan.search.symmetry import SymmetricActions
from up_gnnplan.states.successors import successors
from search_cases import assert_valid_up_plan, task_of  # noqa: E402

GRIPPER_6 = """(define (problem gripper-6) (:domain gripper)
  (:objects rooma roomb - room b1 b2 b3 b4 b5 b6 - ball left right - gripper)
  (:init (at-robby rooma) (at b1 rooma) (at b2 rooma) (at b3 rooma) (at b4 rooma) (at b5 rooma) (at b6 rooma)
         (free left) (free right))
  (:goal (and (at b1 roomb) (at b2 roomb) (at b3 roomb) (at b4 roomb) (at b5 roomb) (at b6 roomb))))
"""


@pytest.fixture(scope="module")
def gripper6(tmp_path_factory):
    from up_gnnplan.data import example

    path = tmp_path_factory.mktemp("sym") / "p6.pddl"
    path.write_text(GRIPPER_6)
    return load_task(example("gripper"), path)


def classes_of(task, state):
    symmetric = SymmetricActions(task, Inputs(task))
    children = successors(state)
    keys = symmetric.keys(state, [a for a, _, _ in children])
    groups = defaultdict(list)
    for key, child in zip(keys, children):
        groups[key].append(child)
    return groups


def test_interchangeable_balls_and_grippers_make_one_class_of_picks(gripper6):
    groups = classes_of(gripper6, gripper6.initial_state())
    picks = [g for g in groups.values() if g[0][0].get_action().get_name() == "pick"]
    assert sum(len(g) for g in picks) == 12  # 6 balls x 2 grippers
    assert len(picks) == 1
    moves = [g for g in groups.values() if g[0][0].get_action().get_name() == "move"]
    assert moves and all(len(g) == 1 for g in moves)  # rooma and roomb differ (robby, the goal)


def test_a_goal_that_names_objects_keeps_them_apart():
    task = task_of("bw-p04")
    symmetric = SymmetricActions(task, Inputs(task))
    # Every block of bw-p04 is named by the goal in its own place: no two are interchangeable.
    assert symmetric.classes(task.initial_state()) == {}
    children = successors(task.initial_state())
    assert len(set(symmetric.keys(task.initial_state(), [a for a, _, _ in children]))) == len(children)


@pytest.mark.parametrize("name", ["gripper6", "bw-p04"])
def test_every_successor_of_a_class_gets_the_same_value_from_a_shipped_model(name, gripper6):
    task = gripper6 if name == "gripper6" else task_of(name)
    value_fn = load_value_function(find_model(task.signature, "value"))
    inputs = Inputs(task)
    state, checked = task.initial_state(), 0
    for _ in range(6):  # along the policy's first steps
        groups = classes_of(task, state)
        for group in groups.values():
            if len(group) > 1:
                values = value_fn(inputs([s for _, s, _ in group]))
                np.testing.assert_allclose(values, values[0], rtol=0, atol=1e-4)
                checked += len(group)
        children = successors(state)
        state = children[int(np.argmin(value_fn(inputs([s for _, s, _ in children]))))][1]
    assert checked > 0 or name == "bw-p04"


def test_the_policy_with_symmetry_values_fewer_states_and_finds_an_equally_long_plan(gripper6):
    value_fn = load_value_function(find_model(gripper6.signature, "value"))
    pruned = policy_rollout(gripper6, value_fn, symmetry=True)
    full = policy_rollout(gripper6, value_fn, symmetry=False)
    assert pruned.status is full.status is Status.SOLVED
    assert len(pruned.actions) == len(full.actions)
    assert pruned.evaluated < full.evaluated / 2
    assert_valid_up_plan(gripper6, pruned)


def test_an_existential_goal_turns_it_off(tmp_path):
    from up_gnnplan.data import example

    problem = tmp_path / "exists.pddl"
    problem.write_text(GRIPPER_6.replace("(:goal (and (at b1 roomb)", "(:goal (and (exists (?b - ball) (at ?b roomb))"))
    task = load_task(example("gripper"), problem)
    symmetric = SymmetricActions(task, Inputs(task))
    children = successors(task.initial_state())
    assert not symmetric.enabled
    assert symmetric.keys(task.initial_state(), [a for a, _, _ in children]) == list(range(len(children)))


def test_the_engine_param_turns_it_on_and_the_plan_is_validated(gripper6):
    from unified_planning.engines import PlanGenerationResultStatus as S

    from up_gnnplan.plugins.engine import GnnplanEngine

    evaluated = {}
    for symmetry in (True, False):
        with GnnplanEngine(mode="policy", symmetry=symmetry) as engine:
            result = engine.solve(gripper6.up_problem, timeout=60)
        assert result.status is S.SOLVED_SATISFICING
        evaluated[symmetry] = int(result.metrics["evaluated"])
    assert evaluated[True] < evaluated[False] / 2


def gripper4(folder, goal: str):
    """Load Gripper with 4 balls in rooma and ``goal``."""
    from up_gnnplan.data import example

    problem = folder / "p4.pddl"
    problem.write_text(f"""(define (problem p4) (:domain gripper)
  (:objects rooma roomb - room b1 b2 b3 b4 - ball left right - gripper)
  (:init (at-robby rooma) (at b1 rooma) (at b2 rooma) (at b3 rooma) (at b4 rooma) (free left) (free right))
  (:goal {goal}))""")
    return load_task(example("gripper"), problem)


def test_gbfs_keeps_one_successor_per_class_and_finds_a_valid_plan(gripper6):
    value_fn = load_value_function(find_model(gripper6.signature, "value"))
    pruned = gbfs(gripper6, value_fn, symmetry=True)
    full = gbfs(gripper6, value_fn, symmetry=False)
    assert pruned.status is full.status is Status.SOLVED
    assert 2 * pruned.evaluated <= full.evaluated
    assert_valid_up_plan(gripper6, pruned)


def test_an_unsolvable_task_is_proven_so_up_to_symmetry(tmp_path):
    # b1 in both rooms at once: unreachable; b2..b4 stay interchangeable, so the proof is up to them.
    task = gripper4(tmp_path, "(and (at b1 roomb) (at b1 rooma) (at b2 roomb) (at b3 roomb) (at b4 roomb))")
    value_fn = load_value_function(find_model(task.signature, "value"))
    pruned = gbfs(task, value_fn, symmetry=True)
    full = gbfs(task, value_fn, symmetry=False)
    assert pruned.status is full.status is Status.UNSOLVABLE
    assert "up to symmetric objects" in pruned.message and "up to" not in full.message
    # States met again along other paths, up to renaming the balls and the grippers, are not expanded again.
    assert 4 * pruned.expanded < full.expanded


HALL_DOMAIN = """(define (domain hall) (:requirements :strips :typing) (:types room)
  (:constants hall - room)
  (:predicates (at ?r - room) (visited ?r - room) (done))
  (:action go :parameters (?from ?to - room) :precondition (at ?from)
    :effect (and (not (at ?from)) (at ?to) (visited ?to)))
  (:action finish :parameters () :precondition (visited hall) :effect (done)))
"""
HALL_PROBLEM = """(define (problem p) (:domain hall) (:objects start r1 r2 - room)
  (:init (at start)) (:goal (done)))
"""


def test_a_domain_constant_is_never_interchangeable(tmp_path):
    # hall, r1 and r2 look alike in every atom, but the action 'finish' names hall: going there
    # is not the same as going to r1, so hall must stay apart while r1 and r2 stay together.
    (tmp_path / "domain.pddl").write_text(HALL_DOMAIN)
    (tmp_path / "p.pddl").write_text(HALL_PROBLEM)
    task = load_task(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    symmetric = SymmetricActions(task, Inputs(task))
    names = task.object_names
    assert [sorted(names[o] for o in group) for group in symmetric.groups] == [["r1", "r2", "start"]]
    assert sorted(names[o] for o in symmetric.classes(task.initial_state())) == ["r1", "r2"]
    goes = [a for a, _, _ in successors(task.initial_state())]
    kept = symmetric.representatives(task.initial_state(), goes)
    assert len(goes) == 4 and len(kept) == 3  # to start, to hall, to one of r1 and r2


def test_policy_best_first_keeps_one_successor_per_class_at_the_summed_probability(gripper6):
    from up_gnnplan.search import policy_best_first
    from up_gnnplan.search.action_policy import _by_class, _log_softmax

    state = gripper6.initial_state()
    actions = state.generate_applicable_actions()
    log_pi = _log_softmax(np.zeros(len(actions)))  # a uniform policy
    kept, surprise = _by_class(SymmetricActions(gripper6, Inputs(gripper6)).keys(state, actions), actions, log_pi)
    picks = [i for i, a in enumerate(kept) if a.get_action().get_name() == "pick"]
    assert len(picks) == 1
    assert surprise[picks[0]] == pytest.approx(-np.log(12 / len(actions)))  # 12 picks of 6 balls x 2 grippers

    def uniform(state_input, action_input):
        return np.zeros(len(action_input.schema))

    pruned = policy_best_first(gripper6, uniform, symmetry=True)
    full = policy_best_first(gripper6, uniform, symmetry=False)
    assert pruned.status is full.status is Status.SOLVED
    assert pruned.expanded < full.expanded
    assert_valid_up_plan(gripper6, pruned)


def test_canonical_keys_merge_exactly_states_that_are_the_same_up_to_renaming(tmp_path):
    from itertools import permutations

    task = gripper4(tmp_path, "(and (at b1 roomb) (at b2 roomb) (at b3 roomb) (at b4 roomb))")
    inputs = Inputs(task)
    symmetric = SymmetricActions(task, inputs)
    names = task.object_names
    balls, grippers = ["b1", "b2", "b3", "b4"], ["left", "right"]

    def orbit(state):  # brute force: the least renamed atom set over all renamings of balls and grippers
        atoms = inputs.atoms.fluent(state).as_strings(task.signature, names)
        best = None
        for b in permutations(balls):
            for g in permutations(grippers):
                rename = dict(zip(balls + grippers, b + g))
                renamed = sorted(",".join(rename.get(x, x) for x in a.replace("(", ",").rstrip(")").split(","))
                                 for a in atoms)
                best = renamed if best is None or renamed < best else best
        return tuple(best)

    states, seen = [task.initial_state()], {task.initial_state().get_index()}
    for state in states:  # the whole reachable space, breadth first
        for _, child, _ in successors(state):
            if child.get_index() not in seen:
                seen.add(child.get_index())
                states.append(child)
    key_orbits, orbit_keys = defaultdict(set), defaultdict(set)
    for state in states:
        key, found = symmetric.canonical(state), orbit(state)
        key_orbits[key].add(found)
        orbit_keys[found].add(key)
    assert all(len(found) == 1 for found in key_orbits.values())  # never two different states under one key
    assert len(key_orbits) == len(orbit_keys)  # and here, one key per class of states
    assert len(states) > 4 * len(key_orbits)


def test_a_search_drops_symmetry_when_its_first_states_merge_none(gripper6, monkeypatch):
    from up_gnnplan.search import symmetry

    monkeypatch.setattr(symmetry, "TRIAL_STATES", 3)
    root = gripper6.initial_state()
    children = {str(a): s for a, s, _ in successors(root)}
    move, pick1, pick2 = (children["(move rooma roomb)"], children["(pick b1 rooma left)"],
                          children["(pick b2 rooma left)"])
    searched = symmetry.SearchSymmetry(gripper6, Inputs(gripper6))
    keys = [searched.key(s) for s in (root, move, pick1)]  # three different states: nothing merged
    assert not searched.active and searched.merged == 0
    assert [searched.key(s) for s in (root, move, pick1)] == keys  # states met keep their keys
    assert searched.key(pick2) == pick2.get_index() != keys[2]  # new ones get their index

    searched = symmetry.SearchSymmetry(gripper6, Inputs(gripper6))
    keys = [searched.key(s) for s in (root, pick1, pick2)]  # pick b1 and pick b2: one state up to renaming
    assert searched.active and searched.merged == 1 and keys[1] == keys[2]

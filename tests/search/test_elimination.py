"""Greedy action elimination (:mod:`up_gnnplan.search.elimination`): detours leave a plan,
optimal plans stay as they are, the time share and the fragment are respected."""

from __future__ import annotations

import pytest

from up_gnnplan.search import elimination, policy_rollout
from up_gnnplan.search.common import SearchResult, Status
from up_gnnplan.search.elimination import eliminate_actions
from search_cases import SOLVABLE, assert_valid_up_plan, task_of  # noqa: E402
from test_search import perfect  # noqa: E402


def optimal_plan(name):
    task = task_of(name)
    value_fn, initial_value = perfect(name)
    result = policy_rollout(task, value_fn)
    assert result.solved and result.cost == initial_value
    return task, result.actions


def detour(task, state, rounds: int) -> list:
    """``rounds`` pairs of an action and the action that undoes it, from ``state``."""
    actions = []
    for _ in range(rounds):
        for first in state.generate_applicable_actions():
            middle = first.apply(state)
            back = [b for b in middle.generate_applicable_actions() if b.apply(middle).get_index() == state.get_index()]
            if back:
                actions += [first, back[0]]
                break
    assert len(actions) == 2 * rounds
    return actions


@pytest.mark.parametrize("name", SOLVABLE)
def test_detours_are_left_out_down_to_the_optimal_plan(name):
    task, plan = optimal_plan(name)
    # Detours at the start and in the middle of an optimal plan.
    middle = task.initial_state()
    for action in plan[:2]:
        middle = action.apply(middle)
    padded = detour(task, task.initial_state(), 2) + plan[:2] + detour(task, middle, 1) + plan[2:]
    shorter = eliminate_actions(task, padded)
    assert shorter.removed == 6 and len(shorter.actions) == len(plan) and shorter.cost == len(plan)
    assert "6 of" in shorter.note
    assert_valid_up_plan(task, SearchResult(Status.SOLVED, shorter.actions, shorter.cost))


@pytest.mark.parametrize("name", SOLVABLE)
def test_an_optimal_plan_stays_as_it_is(name):
    task, plan = optimal_plan(name)
    same = eliminate_actions(task, plan)
    assert same.actions == plan and same.removed == 0 and "nothing to leave out" in same.note


def test_the_time_share_stops_it_with_the_plan_so_far(monkeypatch):
    task, plan = optimal_plan("bw-p04")
    padded = detour(task, task.initial_state(), 3) + plan
    monkeypatch.setattr(elimination, "CHECK_EVERY", 1)
    stopped = eliminate_actions(task, padded, deadline=0.0)  # past: stops at its first look at the clock
    assert stopped.actions == padded and "shortcuts and elimination stopped by the time share" in stopped.note
    assert eliminate_actions(task, padded, deadline=None).removed == 6


def test_plans_outside_the_fragment_are_returned_as_they_are(tmp_path):
    """An existential goal is compiled into derived atoms: the sets cannot test it, so nothing is left out."""
    from tests.grounding.cases import DOMAIN, PROBLEMS
    from up_gnnplan.problems import load_task
    from up_gnnplan.search import gbfs

    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "tower.pddl").write_text(PROBLEMS["tower"])
    task = load_task(tmp_path / "domain.pddl", tmp_path / "tower.pddl")
    result = gbfs(task, lambda inputs: [0.0] * len(inputs))
    assert result.solved
    same = eliminate_actions(task, result.actions)
    assert same.actions == result.actions and "derived atoms" in same.note


def _briefcase_plan(steps: list[str]):
    """The Briefcaseworld fixture's task of 3 locations and 2 portables, and the ground actions named by ``steps``."""
    from pddl_cases import fixture
    from up_gnnplan.problems import Task

    task = Task.from_files(fixture("briefcase", "domain.pddl"), fixture("briefcase", "p03.pddl"))
    state, actions = task.initial_state(), []
    for step in steps:
        action = {str(a): a for a in state.generate_applicable_actions()}[step]
        actions.append(action)
        state = action.apply(state)
    return task, actions


def test_conditional_effects_fire_where_their_condition_holds_and_detours_go():
    """p03: o0 at l0 must reach l1 (o1 is at its goal, l2). ``move`` carries what is in the case (a
    conditional effect under a ``forall``): the moves with o0 inside are needed, the detours are not."""
    steps = ["(move l0 l2)", "(move l2 l0)", "(put-in o0 l0)", "(move l0 l2)", "(move l2 l1)", "(take-out o0)"]
    task, plan = _briefcase_plan(steps)
    result = eliminate_actions(task, plan)
    kept = [str(a) for a in result.actions]
    # The first two moves come back to where they began (a shortcut of none), the moves by l2 become the
    # move to l1 (a shortcut), the take-out goes; without the put-in the move would not carry o0.
    assert kept == ["(put-in o0 l0)", "(move l0 l1)"]
    assert result.removed == 4 and result.note == "action elimination: 4 of 6 actions left out, 3 of them by shortcuts"


def test_a_walk_round_a_grid_takes_the_shortcuts_that_elimination_alone_cannot():
    """A robot's detour in Navig-xy: no single move can go (each needs the one before), but from a cell on
    the way a move reaches a cell the plan comes to only later; those shortcuts leave a plan as short as the
    grid allows, and a plan that comes back to a cell it left loses the loop."""
    import tempfile
    from pathlib import Path

    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.problems import Task

    folder = Path(tempfile.mkdtemp())
    (problem,) = generate("navig-xy", folder, count=1, seed=3, width=6, height=4, blocked_ratio=0.0)
    task = Task.from_files(folder / "domain.pddl", problem)
    optimal = optimal_length(task)
    state, plan = task.initial_state(), []
    for _ in range(3):  # wander: right as far as it goes and back, then down and back
        for name in ("move-right", "move-left", "move-up", "move-down"):
            moves = [a for a in state.generate_applicable_actions() if str(a).startswith(f"({name}")]
            if moves:
                plan.append(moves[0])
                state = moves[0].apply(state)
    walk = plan + [a for a in shortest(task, state)]
    result = eliminate_actions(task, walk)
    assert len(result.actions) == optimal and "by shortcuts" in result.note
    assert_valid_up_plan(task, SearchResult(Status.SOLVED, result.actions, result.cost))


def shortest(task, start) -> list:
    """An optimal plan of ``task`` from ``start`` (breadth-first: the tasks here are tiny)."""
    from collections import deque

    from up_gnnplan.states.successors import is_goal

    parents, queue = {start.get_index(): None}, deque([start])
    while queue:
        state = queue.popleft()
        if is_goal(task, state):
            path = []
            while parents[state.get_index()] is not None:
                state, action = parents[state.get_index()]
                path.append(action)
            return path[::-1]
        for action in state.generate_applicable_actions():
            successor = action.apply(state)
            if successor.get_index() not in parents:
                parents[successor.get_index()] = (state, action)
                queue.append(successor)
    raise AssertionError("no plan")


def optimal_length(task) -> int:
    return len(shortest(task, task.initial_state()))

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
    assert stopped.actions == padded and "stopped by its time share" in stopped.note
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
    # The first two moves and the take-out go; without the put-in the later moves would not carry o0.
    assert kept == ["(put-in o0 l0)", "(move l0 l2)", "(move l2 l1)"]
    assert result.removed == 3 and result.note == "action elimination: 3 of 6 actions left out"

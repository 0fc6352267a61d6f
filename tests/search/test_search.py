"""Check the searches on value functions that need no training.

A perfect value function (V* from a full expansion, looked up by the state's atoms) makes the
greedy policy optimal; a constant one leaves GBFS complete (blind, with duplicate detection)
and leads the policy astray, which must end in ``GAVE_UP`` with a message, not a wrong plan.
"""

from __future__ import annotations

import weakref

import numpy as np
import pytest

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.search import (SEARCHES, Status, action_policy_rollout, dual_gbfs, dual_policy_best_first, gbfs,
                               policy_best_first, policy_rollout)
from up_gnnplan.states import Atoms, StateAtoms
from search_cases import SOLVABLE, assert_valid_up_plan, task_of  # noqa: E402

_VSTAR: dict[str, tuple] = {}


def perfect(name: str):
    """Return (value function returning V*, V* of the initial state) of problem ``name``.

    V* comes from a full expansion; states are looked up by the strings of all their atoms
    (static, type and fluent), which is what a value function receives.
    """
    if name not in _VSTAR:
        task = task_of(name)
        labelled = expand(task)
        static = StateAtoms(task).static
        width = static.args.shape[1]
        table = {}
        for atoms, value in zip(labelled.states, labelled.value.tolist()):
            key = frozenset(Atoms.concat([static, atoms], width).as_strings(task.signature, task.object_names))
            assert key not in table
            table[key] = value
        calls = []

        def value_fn(inputs):
            calls.append(len(inputs))
            return np.array([table[frozenset(i.atoms.as_strings(task.signature, task.object_names))] for i in inputs])

        value_fn.calls = calls
        _VSTAR[name] = (value_fn, labelled.initial_value)
    return _VSTAR[name]


def constant(inputs):
    return np.zeros(len(inputs))


def test_registry():
    assert SEARCHES == {"policy": policy_rollout, "gbfs": gbfs, "dual-gbfs": dual_gbfs,
                        "action-policy": action_policy_rollout, "policy-best-first": policy_best_first,
                        "dual-policy-best-first": dual_policy_best_first}


@pytest.mark.parametrize("name", SOLVABLE)
def test_policy_with_perfect_values_is_optimal(name):
    task = task_of(name)
    value_fn, initial_value = perfect(name)
    assert initial_value > 3
    before = len(value_fn.calls)
    result = policy_rollout(task, value_fn)
    assert result.status is Status.SOLVED and result.solved, result.message
    assert len(result.actions) == initial_value and result.cost == initial_value
    # One value-function call per step, on all unvisited successors at once.
    assert result.expanded == len(result.actions) == len(value_fn.calls) - before
    assert result.evaluated == sum(value_fn.calls[before:])
    assert_valid_up_plan(task, result)


@pytest.mark.parametrize("name", SOLVABLE)
def test_gbfs_with_perfect_values_is_optimal(name):
    task = task_of(name)
    value_fn, initial_value = perfect(name)
    result = gbfs(task, value_fn)
    assert result.status is Status.SOLVED
    assert len(result.actions) == initial_value and result.cost == initial_value
    assert_valid_up_plan(task, result)


@pytest.mark.parametrize("name", SOLVABLE)
def test_gbfs_with_constant_values_is_complete(name):
    task = task_of(name)
    result = gbfs(task, constant)
    assert result.status is Status.SOLVED, result.message
    assert len(result.actions) >= perfect(name)[1] and result.cost == len(result.actions)
    assert result.expanded > 0 and result.evaluated > 0
    assert_valid_up_plan(task, result)


def test_gbfs_proves_unsolvable():
    result = gbfs(task_of("oneway-unsolvable"), constant)
    assert result.status is Status.UNSOLVABLE and not result.solved
    assert result.actions == [] and "explored" in result.message
    # With dead ends but a plan, it still finds the plan (s -> m -> g).
    result = gbfs(task_of("oneway-deadends"), lambda inputs: np.arange(len(inputs), 0, -1, dtype=float))
    assert result.status is Status.SOLVED and len(result.actions) == 2


@pytest.mark.parametrize("name", SOLVABLE)
def test_dual_gbfs_is_complete_and_ff_rescues_a_misleading_value(name):
    """With V = -V* (the goal looks worst) GBFS digs through the space; the FF list of dual-gbfs
    heads for the goal anyway, so it expands no more states, and its plans are valid."""
    task = task_of(name)
    value_fn, _ = perfect(name)

    def misleading(inputs):
        return -value_fn(inputs)

    single, dual = gbfs(task, misleading), dual_gbfs(task, misleading)
    assert single.status is dual.status is Status.SOLVED, dual.message
    assert dual.expanded <= single.expanded
    assert_valid_up_plan(task, dual)
    assert dual_gbfs(task, constant).status is Status.SOLVED


def test_dual_gbfs_leaves_ff_out_of_tasks_too_large_for_it_and_says_so(monkeypatch):
    from up_gnnplan.search import ff

    monkeypatch.setattr(ff, "MAX_INITIAL_ACTIONS", 0)  # bw-p04's initial state has some
    monkeypatch.setattr(ff, "_BUILT", weakref.WeakKeyDictionary())  # not the FF an earlier test built for it
    result = dual_gbfs(task_of("bw-p04"), constant)
    assert result.status is Status.SOLVED
    assert "FF left out" in result.message and "applicable actions" in result.message


def test_dual_gbfs_proves_unsolvable():
    result = dual_gbfs(task_of("oneway-unsolvable"), constant)
    assert result.status is Status.UNSOLVABLE and "explored" in result.message
    assert dual_gbfs(task_of("oneway-deadends"), constant).status is Status.SOLVED


def test_policy_gives_up_at_step_limit():
    task = task_of("bw-p04")
    result = policy_rollout(task, constant, max_steps=3)
    assert result.status is Status.GAVE_UP and not result.solved
    assert "step limit of 3" in result.message
    assert len(result.actions) == 3 and result.expanded == 3


def test_policy_gives_up_without_unvisited_successors():
    task = task_of("oneway-deadends")
    places = {name: i for i, name in enumerate(task.object_names)}
    at = task.signature.index["at"]

    def to_the_pit(inputs):
        """Value 0 at trap and pit, 10 elsewhere: the policy walks into the dead end."""
        out = []
        for state in inputs:
            where = state.atoms.args[state.atoms.pred == at, 0].tolist()
            out.append(0.0 if set(where) & {places["trap"], places["pit"]} else 10.0)
        return np.array(out)

    result = policy_rollout(task, to_the_pit, max_steps=50)
    assert result.status is Status.GAVE_UP
    assert "no unvisited successor" in result.message
    assert [str(a) for a in task.to_up_plan(result.actions).actions] == ["go(s, trap)", "go(trap, pit)"]
    # From the start of the unsolvable problem nothing is applicable at all.
    result = policy_rollout(task_of("oneway-unsolvable"), constant)
    assert result.status is Status.GAVE_UP and result.actions == [] and result.message


@pytest.mark.parametrize("search", [policy_rollout, gbfs, dual_gbfs], ids=["policy", "gbfs", "dual-gbfs"])
def test_time_limit_zero_times_out(search):
    result = search(task_of("bw-p04"), constant, time_limit=0)
    assert result.status is Status.TIMEOUT and not result.solved
    assert result.actions == [] and result.message


def test_a_value_policy_whose_course_keeps_the_goal_literals_undoes_none_where_another_step_is_left():
    """As the action policy (tests/search/test_action_policy.py): a value that would rather carry balls than leave
    them in their goal room walks them out of it again, and not once the course keeps the goal literals."""
    from search_cases import KeepingAtOnce, undoing_steps

    from up_gnnplan.limits import Limits

    task = task_of("gripper-p02")
    carry = task.signature.index["carry"]

    def carrying(inputs):  # lower with more balls carried
        return np.array([-float((state.atoms.pred == carry).sum()) for state in inputs])

    plain = policy_rollout(task, carrying, max_steps=500)
    whole = Limits(100)
    kept = policy_rollout(task, carrying, max_steps=500, course=KeepingAtOnce(task, whole.share(0.5), whole, keep=True))
    assert undoing_steps(task, plain.actions) > 0
    assert undoing_steps(task, kept.actions) == 0
    assert kept.status is Status.SOLVED, kept.message
    assert all(abs(v) < 10 for v in kept.step_values)  # the values of the steps, not the choice's penalty

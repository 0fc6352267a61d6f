"""Fallback searches seeded with the path of a policy that gave up (``seed=``, the engine's
``seed_fallback``): the path's states enter the open lists at the policy's own values, so the
search goes on from the best of them, and stays complete when the path leads nowhere."""

from __future__ import annotations

import numpy as np
import pytest

from up_gnnplan.search import (Status, action_policy_rollout, dual_gbfs, dual_policy_best_first, gbfs,
                               policy_best_first, policy_rollout)
from up_gnnplan.search.common import seed_path
from search_cases import SOLVABLE, assert_valid_up_plan, task_of  # noqa: E402
from test_action_policy import perfect_scorer  # noqa: E402
from test_search import constant, perfect  # noqa: E402


@pytest.mark.parametrize("name", SOLVABLE)
def test_value_policy_records_v_of_each_state_it_reached(name):
    task = task_of(name)
    value_fn, initial_value = perfect(name)
    steps = int(initial_value) - 1
    result = policy_rollout(task, value_fn, max_steps=steps)  # one step short of the goal
    assert result.status is Status.GAVE_UP and len(result.actions) == steps
    assert result.step_values == [initial_value - i for i in range(1, steps + 1)]
    path = seed_path(task, result)
    assert [action for _, action, _, _, _ in path] == result.actions
    assert [value for *_, value in path] == result.step_values
    assert [child.get_index() for *_, child, _ in path[:-1]] == [parent.get_index() for parent, *_ in path[1:]]


@pytest.mark.parametrize("search", [gbfs, dual_gbfs], ids=["gbfs", "dual-gbfs"])
@pytest.mark.parametrize("name", SOLVABLE)
def test_seeded_gbfs_goes_on_from_the_policys_best_state(name, search):
    """With V* the policy stopped one step short; seeded, the search expands the initial state
    and then that last state (V = 1), and ends at the goal: 2 expansions, where from the initial
    state alone it expands one state per step of the plan."""
    task = task_of(name)
    value_fn, initial_value = perfect(name)
    policy = policy_rollout(task, value_fn, max_steps=int(initial_value) - 1)
    alone, seeded = search(task, value_fn), search(task, value_fn, seed=policy)
    assert alone.solved and seeded.solved, seeded.message
    assert f"seeded with {len(policy.actions)} states of the policy's path" in seeded.message
    assert seeded.expanded <= 3 < alone.expanded
    assert seeded.cost == initial_value  # the path the policy walked, then the last step
    assert seeded.actions[:len(policy.actions)] == policy.actions
    assert_valid_up_plan(task, seeded)


@pytest.mark.parametrize("search", [policy_best_first, dual_policy_best_first],
                         ids=["policy-best-first", "dual-policy-best-first"])
@pytest.mark.parametrize("name", SOLVABLE)
def test_seeded_policy_best_first_keeps_the_paths_summed_surprise(name, search):
    task = task_of(name)
    scorer, initial_value = perfect_scorer(name)
    policy = action_policy_rollout(task, scorer, max_steps=int(initial_value) - 1)
    assert policy.status is Status.GAVE_UP
    assert len(policy.step_values) == len(policy.actions) and all(v >= 0 for v in policy.step_values)
    seeded = search(task, scorer, seed=policy)
    assert seeded.solved and "seeded with" in seeded.message, seeded.message
    assert seeded.cost == initial_value
    assert_valid_up_plan(task, seeded)
    # A scorer that prefers the worst action: the policy's perfect path still gets the search there.
    worst = search(task, lambda state, actions: -np.asarray(scorer(state, actions)), seed=policy)
    assert worst.solved
    assert_valid_up_plan(task, worst)


def test_a_seed_into_a_dead_end_leaves_the_search_complete():
    """The policy walked s -> trap -> pit (a one-way street); seeded with that path the searches
    still find s -> m -> g. FF proves trap a dead end, so the dual search enters nothing of it."""
    task = task_of("oneway-deadends")
    places = {name: i for i, name in enumerate(task.object_names)}
    at = task.signature.index["at"]

    def to_the_pit(inputs):
        return np.array([0.0 if set(s.atoms.args[s.atoms.pred == at, 0].tolist()) & {places["trap"], places["pit"]}
                         else 10.0 for s in inputs])

    policy = policy_rollout(task, to_the_pit, max_steps=50)
    assert policy.status is Status.GAVE_UP and len(policy.actions) == 2
    single = gbfs(task, constant, seed=policy)
    assert single.solved and len(single.actions) == 2 and "seeded with 2 states" in single.message
    dual = dual_gbfs(task, constant, seed=policy)
    assert dual.solved and len(dual.actions) == 2 and "seeded" not in dual.message
    assert_valid_up_plan(task, dual)


def test_no_seed_and_an_empty_seed_change_nothing():
    task = task_of("bw-p04")
    value_fn, _ = perfect("bw-p04")
    empty = policy_rollout(task, value_fn, max_steps=0)
    assert empty.actions == [] and seed_path(task, empty) == [] and seed_path(task, None) == []
    plain, seeded = gbfs(task, value_fn), gbfs(task, value_fn, seed=empty)
    assert (plain.actions, plain.expanded, plain.message) == (seeded.actions, seeded.expanded, seeded.message)


def test_an_action_policys_path_seeds_gbfs_at_the_models_values():
    """A model with an action head and a value head: the action policy gives up, GBFS goes on.
    The path's step values are -log pi, not V, so GBFS values the path's states itself."""
    task = task_of("bw-p04")
    scorer, initial_value = perfect_scorer("bw-p04")
    value_fn, _ = perfect("bw-p04")
    policy = action_policy_rollout(task, scorer, max_steps=int(initial_value) - 1)
    assert policy.step_kind == "surprise"
    before = len(value_fn.calls)
    seeded = gbfs(task, value_fn, seed=policy)
    assert seeded.solved and seeded.expanded <= 3 and seeded.cost == initial_value
    assert value_fn.calls[before] == len(policy.actions)  # the path, valued in one call first
    with pytest.raises(ValueError, match="seeded with an action policy's path"):
        policy_best_first(task, scorer, seed=policy_rollout(task, value_fn, max_steps=2))
    broken = policy_rollout(task, value_fn, max_steps=2)
    broken.step_values = broken.step_values[:1]
    with pytest.raises(ValueError, match="one step value per action"):
        gbfs(task, value_fn, seed=broken)



@pytest.mark.parametrize("deferred", [False, True], ids=["eager", "deferred"])
def test_where_the_model_is_slow_an_action_policys_path_gets_its_values_for_some_of_its_states(monkeypatch, deferred):
    """The model values an action policy's path within the same share of the search's time as FF (hard-lower
    Blocksworld: 1,225 states took the fallback's whole share): the last state first, for its pace, then
    evenly spaced ones; a state not valued takes the value of the next valued one along the path (deferred:
    it is valued when expanded). Every state is still entered, and the search goes on from the path's end."""
    from up_gnnplan.runtime.chunks import ChunkedEvaluator
    from up_gnnplan.search import common

    task = task_of("bw-p04")
    scorer, initial_value = perfect_scorer("bw-p04")
    value_fn, _ = perfect("bw-p04")
    policy = action_policy_rollout(task, scorer, max_steps=int(initial_value) - 1)
    path = seed_path(task, policy)
    assert len(path) >= 4
    monkeypatch.setattr(common, "SEED_FF_VALUES", 2)
    monkeypatch.setattr(common, "SEED_FF_SHARE", 0.0)
    before = len(value_fn.calls)
    seeded = gbfs(task, value_fn, seed=policy, time_limit=60, deferred=deferred)
    assert seeded.solved and seeded.cost == initial_value, seeded.message
    assert value_fn.calls[before:before + 2] == [1, 1]  # the last state, then the other of the two
    assert f"seeded with {len(path)} states of the policy's path (the model valued 2)" in seeded.message
    assert_valid_up_plan(task, seeded)
    valued, guessed = common.value_path(path, ChunkedEvaluator(value_fn), common.Inputs(task), 0.0)
    assert len(guessed) == len(path) - 2 and id(path[-1][3]) not in guessed
    values = [step[4] for step in valued]
    assert values == sorted(values, reverse=True)  # the perfect V falls along the path; the guesses keep the order

def test_where_ff_is_slow_a_long_path_gets_ff_values_for_some_of_its_states(monkeypatch):
    """FF values a seed's path within a share of the search's time left (SEED_FF_SHARE), for at least
    SEED_FF_VALUES states (every k-th, the last always: a Transport walk of 826 steps at 28 ms a value
    spent the fallback's share valuing it); every state is still entered, the others in the learned
    list only, and the search still goes on from the path's end. Without a deadline all are valued."""
    from up_gnnplan.search import common
    from up_gnnplan.search.common import enter_path

    task = task_of("bw-p04")
    value_fn, initial_value = perfect("bw-p04")
    policy = policy_rollout(task, value_fn, max_steps=int(initial_value) - 1)
    path = seed_path(task, policy)
    assert len(path) >= 4

    def entering(seconds):
        calls, pushed = [], []

        def ff(state):
            calls.append(state.get_index())
            return 1.0

        parents = {task.initial_state().get_index(): None}
        known, entered = enter_path(path, lambda state: state.get_index(), ff, parents,
                                    lambda key, child, value, h: pushed.append((key, h)), seconds)
        assert entered == len(pushed) == len(path) and all(child.get_index() in parents for *_, child, _ in path)
        assert list(known) == [key for key, h in pushed if h is not None]
        return calls, known

    calls, known = entering(None)
    assert len(known) == len(path) and calls[0] == path[-1][3].get_index()  # the last first, for its pace
    monkeypatch.setattr(common, "SEED_FF_VALUES", 2)
    calls, known = entering(0.0)  # no time for FF: the floor of 2 values, the last state among them
    assert len(calls) == len(known) == 2 and path[-1][3].get_index() in known
    monkeypatch.setattr(common, "SEED_FF_VALUES", 3)  # at least that many, however the path's length divides
    calls, known = entering(0.0)
    assert len(calls) == len(known) == 3 and path[-1][3].get_index() in known
    monkeypatch.setattr(common, "SEED_FF_VALUES", 2)
    monkeypatch.setattr(common, "SEED_FF_SHARE", 0.0)
    seeded = dual_gbfs(task, value_fn, seed=policy, time_limit=60)
    assert seeded.solved and seeded.expanded <= 3 and seeded.cost == initial_value, seeded.message
    assert f"seeded with {len(path)} states of the policy's path (FF valued 2)" in seeded.message
    assert_valid_up_plan(task, seeded)


@pytest.mark.parametrize("search", [dual_gbfs, dual_policy_best_first], ids=["dual-gbfs", "dual-policy-best-first"])
def test_a_seeded_search_stopped_by_a_limit_keeps_its_note(search):
    """A fallback stopped by its share of the time: the result's note still says it was seeded (mode
    auto writes it after "the learned part's share of the time spent"; before, the seeding was lost)."""
    from up_gnnplan.limits import Limits, TimeLimitReached

    class StopAtTheSearch(Limits):  # the deadline passes once the search proper begins
        def check(self, what):
            if what.startswith("after 0 expansions"):
                raise TimeLimitReached(f"time limit reached {what}")
            super().check(what)

    task = task_of("bw-p04")
    if search is dual_gbfs:
        model, initial_value = perfect("bw-p04")
        policy = policy_rollout(task, model, max_steps=int(initial_value) - 1)
    else:
        model, initial_value = perfect_scorer("bw-p04")
        policy = action_policy_rollout(task, model, max_steps=int(initial_value) - 1)
    result = search(task, model, seed=policy, limits=StopAtTheSearch(60))
    assert result.status is Status.TIMEOUT and "time limit reached after 0 expansions" in result.message
    assert f"seeded with {len(policy.actions)} states of the policy's path" in result.note, result.note

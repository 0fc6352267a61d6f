"""The searches on action scores: the action policy and best-first search on log-probabilities.

A perfect scorer (preference ``-(c(a) + V*(s'))``, from a full expansion's recorded
transitions) makes the action policy optimal; a scorer that prefers going back leads it into
visited states, which it must skip, and a constant scorer leaves best-first search complete.
"""

from __future__ import annotations

import numpy as np
import pytest

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.limits import Limits
from up_gnnplan.search import Status, action_policy_rollout, dual_policy_best_first, policy_best_first
from up_gnnplan.states import Atoms, StateAtoms
from search_cases import FIXTURES, SOLVABLE, KeepingAtOnce, assert_valid_up_plan, task_of, undoing_steps  # noqa: E402


def perfect_scorer(name: str):
    """Return (scorer, V* of the initial state): preferences -(c + V*(s')) looked up by state atoms and action."""
    task = task_of(name)
    labelled = expand(task)
    static = StateAtoms(task).static
    width = static.args.shape[1]
    transitions = labelled.transitions
    table = {}
    for i, atoms in enumerate(labelled.states):
        key = frozenset(Atoms.concat([static, atoms], width).as_strings(task.signature, task.object_names))
        lo, hi = transitions.ptr[i], transitions.ptr[i + 1]
        for schema, args, cost, nxt in zip(transitions.schema[lo:hi], transitions.args[lo:hi], transitions.cost[lo:hi],
                                           transitions.next[lo:hi]):
            table[key, int(schema), tuple(args.tolist())] = -(cost + labelled.value[nxt])
    calls = []

    def scorer(state, actions):
        calls.append(len(actions))
        key = frozenset(state.atoms.as_strings(task.signature, task.object_names))
        return np.array([table[key, int(s), tuple(a.tolist())] for s, a in zip(actions.schema, actions.args)])

    scorer.calls = calls
    return scorer, labelled.initial_value


@pytest.mark.parametrize("name", SOLVABLE)
def test_action_policy_with_perfect_scores_is_optimal_and_scores_each_state_once(name):
    task = task_of(name)
    scorer, initial_value = perfect_scorer(name)
    result = action_policy_rollout(task, scorer)
    assert result.status is Status.SOLVED
    assert result.cost == initial_value
    assert len(scorer.calls) == len(result.actions)  # one call per step, whatever the branching
    assert_valid_up_plan(task, result)


@pytest.mark.parametrize("name", SOLVABLE)
def test_policy_best_first_with_perfect_scores_finds_a_plan(name):
    task = task_of(name)
    scorer, _ = perfect_scorer(name)
    result = policy_best_first(task, scorer)
    assert result.status is Status.SOLVED
    assert_valid_up_plan(task, result)


def test_action_policy_never_returns_to_a_visited_state():
    task = task_of("bw-p04")
    scorer, _ = perfect_scorer("bw-p04")

    def contrary(state, actions):  # prefers the worst action: undoing the last move first
        return -scorer(state, actions)

    result = action_policy_rollout(task, contrary, max_steps=200)
    states = [task.initial_state()]
    for action in result.actions:
        states.append(action.apply(states[-1]))
    assert len({s.get_index() for s in states}) == len(states)
    assert result.status in (Status.SOLVED, Status.GAVE_UP)
    if result.status is Status.GAVE_UP:
        assert result.message


@pytest.mark.parametrize("name", SOLVABLE)
def test_the_action_policy_goes_back_where_every_successor_was_visited(name, monkeypatch):
    """Contrary scores walk into states whose successors were all visited; going back along the path
    (the default) makes the walk a depth-first search, complete on these finite spaces (with no cap on
    the steps back): it reaches the goal, with a valid plan of distinct states (the steps taken back
    are not in it). Without going back, the walk gives up there; with the cap, once over a quarter of
    its steps were steps back."""
    from up_gnnplan.search import action_policy

    task = task_of(name)
    scorer, _ = perfect_scorer(name)

    def contrary(state, actions):
        return -scorer(state, actions)

    capped = action_policy_rollout(task, contrary, max_steps=100_000)
    assert capped.status is Status.GAVE_UP or name != "bw-p04"  # there, 8 of its 29 steps are steps back
    if capped.status is Status.GAVE_UP:
        back = int(capped.message.split()[0])
        assert back >= action_policy.BACK_FLOOR and back > action_policy.BACK_SHARE * capped.expanded
        assert "steps were steps back (over 25%)" in capped.message
    monkeypatch.setattr(action_policy, "BACK_SHARE", 1.0)
    walk = action_policy_rollout(task, contrary, max_steps=100_000)
    assert walk.status is Status.SOLVED, walk.message
    assert_valid_up_plan(task, walk)
    states = [task.initial_state()]
    for action in walk.actions:
        states.append(action.apply(states[-1]))
    assert len({s.get_index() for s in states}) == len(states)
    assert len(walk.step_values) == len(walk.actions) and walk.expanded >= len(walk.actions)
    greedy = action_policy_rollout(task, contrary, max_steps=100_000, backtrack=False)
    if greedy.status is Status.GAVE_UP:
        assert greedy.message.startswith("no unvisited successor")
    if walk.expanded > len(walk.actions):  # it went back: the note says how often
        assert "taken back" in walk.message


def test_going_back_ends_when_every_reachable_state_was_visited(tmp_path):
    """Where the goal cannot be reached, the walk going back visits every reachable state, scoring each
    once (the rankings of recent states are kept for the steps back), then gives up saying so; every
    step, back or forward, counts against the step limit."""
    from up_gnnplan.problems import Task

    # Roads s -> a -> b -> c and a -> d, and one from g into s: g cannot be reached.
    (tmp_path / "p.pddl").write_text("""(define (problem oneway-branches) (:domain oneway)
      (:objects s a b c d g - place)
      (:init (at s) (road s a) (road a b) (road b c) (road a d) (road g s))
      (:goal (at g)))""")
    task = Task.from_files(FIXTURES / "oneway" / "domain.pddl", tmp_path / "p.pddl")
    calls = []

    def flat(state, actions):
        calls.append(len(actions))
        return np.zeros(len(actions))

    walk = action_policy_rollout(task, flat, max_steps=100)
    assert walk.status is Status.GAVE_UP, walk.message
    assert walk.message.startswith("every state reachable from the initial state visited (5)"), walk.message
    assert calls == [1, 2, 1]  # s, a, b; c and d have no road on (no call), a is not scored again
    limited = action_policy_rollout(task, flat, max_steps=2)
    assert limited.status is Status.GAVE_UP and limited.expanded == 2 and len(limited.actions) <= 2


@pytest.mark.parametrize("name", SOLVABLE)
def test_dual_policy_best_first_rescues_contrary_scores(name):
    """Scores that prefer the worst action send best-first search the long way; the FF list of
    the dual search heads for the goal anyway: no more expansions, a valid plan, still complete."""
    task = task_of(name)
    scorer, _ = perfect_scorer(name)

    def contrary(state, actions):
        return -scorer(state, actions)

    single, dual = policy_best_first(task, contrary), dual_policy_best_first(task, contrary)
    assert single.status is dual.status is Status.SOLVED
    assert dual.expanded <= single.expanded
    assert_valid_up_plan(task, dual)
    assert dual_policy_best_first(task_of("oneway-unsolvable"),
                                  lambda state, actions: np.zeros(len(actions))).status is Status.UNSOLVABLE


def test_constant_scores_leave_best_first_complete():
    task = task_of("oneway-unsolvable")
    result = policy_best_first(task, lambda state, actions: np.zeros(len(actions)))
    assert result.status is Status.UNSOLVABLE
    task = task_of("gripper-p02")
    result = policy_best_first(task, lambda state, actions: np.zeros(len(actions)))
    assert result.status is Status.SOLVED
    assert_valid_up_plan(task, result)


def test_action_searches_stop_at_the_deadline():
    task = task_of("bw-p04")
    for search in (action_policy_rollout, policy_best_first, dual_policy_best_first):
        result = search(task, lambda state, actions: np.zeros(len(actions)), limits=Limits(0.0))
        assert result.status is Status.TIMEOUT and "time limit" in result.message


def test_a_walk_whose_course_keeps_the_goal_literals_undoes_none_where_another_step_is_left():
    """Once the course keeps the goal literals (the walk went round in circles), a step that undoes one is taken
    only where no other has an unvisited successor: a scorer that would rather pick a ball up than anything else
    carries Gripper's balls back out of their goal room without it, and not with it."""
    task = task_of("gripper-p02")
    index = task.action_signature.index

    def picky(state, actions):  # pick, then move, then drop
        return np.select([actions.schema == index["pick"], actions.schema == index["move"]], [2.0, 1.0], 0.0)

    plain = action_policy_rollout(task, picky, max_steps=500)
    whole = Limits(100)
    kept = action_policy_rollout(task, picky, max_steps=500, course=KeepingAtOnce(task, whole.share(0.5), whole,
                                                                                  keep=True))
    assert undoing_steps(task, plain.actions) > 0
    assert kept.status is Status.SOLVED, kept.message
    assert undoing_steps(task, kept.actions) == 0
    assert_valid_up_plan(task, kept)


@pytest.mark.parametrize("name", SOLVABLE)
def test_the_native_applicable_actions_are_pymimirs_in_its_order_with_the_same_rows_and_successors(name):
    """``applicable_actions`` (pymimir's native actions, wrapped where read) gives the actions of
    ``generate_applicable_actions``, in the same order, the same rows, and applies to the same successors; it
    leaves no list of them cached on the state, as the walk keeps its path's states."""
    from up_gnnplan.states.actions import ActionRows
    from up_gnnplan.states.successors import Applicable, applicable_actions

    task = task_of(name)
    state = task.initial_state()
    for _ in range(3):
        native = applicable_actions(state)
        assert isinstance(native, Applicable) and not hasattr(state, "_applicable_actions")
        wrapped = state.generate_applicable_actions()
        assert [a.get_index() for a in native] == [a.get_index() for a in wrapped]
        assert native.indices.tolist() == [a.get_index() for a in wrapped]
        for got, want in zip(ActionRows(task)(native[1:]), ActionRows(task)(wrapped[1:])):
            assert np.array_equal(got, want)
        assert [native[j].apply(state).get_index() for j in range(len(native))] == [
            a.apply(state).get_index() for a in wrapped]
        assert applicable_actions(state) is wrapped  # the list the state cached, where it has one
        state = wrapped[-1].apply(state)

"""Greedy best-first search on a learned value function, with duplicate detection.

Complete on finite state spaces: it either finds a plan or proves, by exhausting the reachable
states, that none exists. Successors are valued in one call per expansion.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from up_gnnplan.search.common import Deadline, Inputs, SearchResult, Status
from up_gnnplan.states.successors import is_goal, successors


def _plan(parents, state_index):
    actions, cost = [], 0.0
    while parents[state_index] is not None:
        state_index, action, step_cost = parents[state_index]
        actions.append(action)
        cost += step_cost
    return actions[::-1], cost


def gbfs(task, value_fn, *, time_limit: float | None = None, max_expansions: int | None = None) -> SearchResult:
    """Search from the initial state of ``task``, always expanding the state of lowest value."""
    inputs, deadline = Inputs(task), Deadline(time_limit)
    root = task.initial_state()
    parents = {root.get_index(): None}
    tie = itertools.count()
    frontier = [(0.0, next(tie), root)]
    expanded = evaluated = 0
    while frontier:
        if deadline.passed():
            return SearchResult(Status.TIMEOUT, [], 0.0, expanded, evaluated, deadline.elapsed(), "time limit reached")
        if max_expansions is not None and expanded >= max_expansions:
            return SearchResult(Status.GAVE_UP, [], 0.0, expanded, evaluated, deadline.elapsed(),
                                f"expansion limit of {max_expansions} reached")
        _, _, state = heapq.heappop(frontier)
        if is_goal(task, state):
            actions, cost = _plan(parents, state.get_index())
            return SearchResult(Status.SOLVED, actions, cost, expanded, evaluated, deadline.elapsed())
        expanded += 1
        fresh = []
        for action, child, cost in successors(state):
            if child.get_index() not in parents:
                parents[child.get_index()] = (state.get_index(), action, cost)
                fresh.append(child)
        if fresh:
            values = np.asarray(value_fn(inputs(fresh)), dtype=np.float64)
            evaluated += len(fresh)
            for value, child in zip(values.tolist(), fresh):
                heapq.heappush(frontier, (value, next(tie), child))
    return SearchResult(Status.UNSOLVABLE, [], 0.0, expanded, evaluated, deadline.elapsed(),
                        f"all {len(parents)} reachable states explored without reaching a goal")

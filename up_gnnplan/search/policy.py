"""The greedy policy of a learned value function (Ståhlberg, Bonet & Geffner 2024, §9).

From state s, move to the unvisited successor s' with the lowest ``c(a) + V(s')`` (just
``V(s')`` for unit costs, as in the paper); stop at a goal, after ``max_steps`` steps, or when
every successor has been visited. All successors of a state are valued in one call.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.search.common import Deadline, Inputs, SearchResult, Status
from up_gnnplan.states.successors import is_goal, successors


def policy_rollout(task, value_fn, *, max_steps: int = 1000, time_limit: float | None = None) -> SearchResult:
    """Follow the greedy policy of ``value_fn`` from the initial state of ``task``."""
    inputs, deadline = Inputs(task), Deadline(time_limit)
    state = task.initial_state()
    visited = {state.get_index()}
    actions, cost, evaluated = [], 0.0, 0
    for step in range(max_steps + 1):
        if is_goal(task, state):
            return SearchResult(Status.SOLVED, actions, cost, step, evaluated, deadline.elapsed())
        if step == max_steps:
            break
        if deadline.passed():
            return SearchResult(Status.TIMEOUT, actions, cost, step, evaluated, deadline.elapsed(), "time limit reached")
        options = [(a, s, c) for a, s, c in successors(state) if s.get_index() not in visited]
        if not options:
            return SearchResult(Status.GAVE_UP, actions, cost, step, evaluated, deadline.elapsed(),
                                f"no unvisited successor after {step} steps")
        values = np.asarray(value_fn(inputs([s for _, s, _ in options])), dtype=np.float64)
        evaluated += len(options)
        best = int(np.argmin(values + np.array([c for _, _, c in options])))
        action, state, step_cost = options[best]
        visited.add(state.get_index())
        actions.append(action)
        cost += step_cost
    return SearchResult(Status.GAVE_UP, actions, cost, max_steps, evaluated, deadline.elapsed(),
                        f"step limit of {max_steps} reached")

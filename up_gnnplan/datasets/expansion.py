"""Label every reachable state of a small instance with its exact optimal cost-to-go V*.

pymimir expands the state space in C++ and computes cost-to-goal by a backward Dijkstra over
the transition graph, respecting action costs; dead ends (no path to a goal) are flagged and
get ``inf``, never a made-up number.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from up_gnnplan.errors import StateLimitExceeded
from up_gnnplan.problems.fragment import has_unit_costs
from up_gnnplan.states.atoms import Atoms, StateAtoms


@dataclass
class LabelledStates:
    """The states of one problem with their labels; atoms are fluent atoms only."""

    states: list[Atoms]
    value: np.ndarray
    steps: np.ndarray
    dead_end: np.ndarray
    is_goal: np.ndarray
    label: np.ndarray
    initial_value: float

    def __len__(self) -> int:
        return len(self.states)


def expand(task, max_states: int = 100_000, progress=None) -> LabelledStates:
    """Expand the full state space of ``task`` and return every state with its V*.

    Raises :class:`StateLimitExceeded` when the space has more than ``max_states`` states.
    ``progress`` is an optional callable ``(done, total)`` for a progress display.
    """
    space = _state_space(task, max_states)
    if space is None:
        raise StateLimitExceeded(
            f"{task.source.describe()}: the state space has more than {max_states} states; raise the "
            "limit (--max-states) or label states along optimal plans instead (--method optimal)"
        )
    atoms = StateAtoms(task)
    states = space.get_states()
    n = len(states)
    fluent, value, steps = [], np.empty(n), np.empty(n, np.int32)
    dead_end, is_goal = np.empty(n, bool), np.empty(n, bool)
    initial_value = float("inf")
    for i, state in enumerate(states):
        label = space.get_state_label(state)
        fluent.append(atoms.fluent(state))
        dead_end[i], is_goal[i] = label.is_dead_end, label.is_goal
        value[i] = float("inf") if label.is_dead_end else label.cost_to_goal
        steps[i] = -1 if label.is_dead_end else label.steps_to_goal
        if label.is_initial:
            initial_value = value[i]
        if progress is not None and (i % 1000 == 0 or i == n - 1):
            progress(i + 1, n)
    if not has_unit_costs(task.up_problem):
        # pymimir's steps_to_goal counts the fewest actions to a goal, ignoring costs; with
        # action costs the documented label is the length of a cheapest path.
        steps = _steps_on_cheapest_paths(space, states, value, is_goal)
    return LabelledStates(fluent, value, steps, dead_end, is_goal, np.zeros(n, np.uint8), initial_value)


def _state_space(task, max_states: int):
    """Return pymimir's full state space of ``task``, or None above ``max_states`` states.

    ``StateSpaceSampler.new`` also returns None for unsolvable problems (its option
    ``remove_if_unsolvable`` is on), which would read as "too many states" and make
    ``allow_unsolvable`` impossible, so the space is built with that option off.
    """
    import pymimir
    from pymimir.advanced.datasets import StateSpace, StateSpaceOptions
    from pymimir.advanced.datasets import StateSpaceSampler as AdvancedStateSpaceSampler

    options = StateSpaceOptions()
    options.max_num_states = max_states
    options.symmetry_pruning = False
    options.remove_if_unsolvable = False
    result = StateSpace.create(task.mimir_problem._search_context, options)
    if result is None:
        return None
    return pymimir.StateSpaceSampler(AdvancedStateSpaceSampler(result[0]), task.mimir_problem)


def _steps_on_cheapest_paths(space, states, value: np.ndarray, is_goal: np.ndarray) -> np.ndarray:
    """Return, per state, the fewest actions on a path to a goal of cost V* (-1 for dead ends).

    A path is cheapest exactly when each of its transitions is tight (cost + V*(next) ==
    V*(state)), so this is a breadth-first search backwards from the goals over tight
    transitions. (pymimir's ``get_backward_transitions`` yields the target state, not the
    source, so the reverse edges are collected from the forward transitions.)
    """
    position = {state.get_index(): i for i, state in enumerate(states)}
    tight_predecessors: list[list[int]] = [[] for _ in states]
    for i, state in enumerate(states):
        if not np.isfinite(value[i]):
            continue
        for action, _ in space.get_forward_transitions(state):
            successor, cost = action.apply(state, return_cost=True)
            j = position[successor.get_index()]
            if abs(cost + value[j] - value[i]) <= 1e-9 * max(1.0, abs(value[i])):
                tight_predecessors[j].append(i)
    steps = np.full(len(states), -1, np.int32)
    queue = deque(np.flatnonzero(is_goal).tolist())
    steps[list(queue)] = 0
    while queue:
        j = queue.popleft()
        for i in tight_predecessors[j]:
            if steps[i] == -1:
                steps[i] = steps[j] + 1
                queue.append(i)
    return steps

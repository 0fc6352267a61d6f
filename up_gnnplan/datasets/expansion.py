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
class Transitions:
    """The applicable actions of labelled states and where they lead (for action heads).

    For state ``i``, ``ptr[i]:ptr[i+1]`` indexes its actions: ``schema``/``args`` (see
    :mod:`up_gnnplan.states.actions`), ``cost``, and ``next``, the row of the successor among
    the same problem's labelled states (-1 when it was not labelled: an optimal search from it
    timed out). ``recorded[i]`` is False for states whose actions were not recorded (the
    successors of plan states, in datasets labelled along optimal plans).
    """

    ptr: np.ndarray  # int64[n + 1]
    schema: np.ndarray  # int16[T]
    args: np.ndarray  # int32[T, width]
    cost: np.ndarray  # float64[T]
    next: np.ndarray  # int64[T]
    recorded: np.ndarray  # bool[n]

    @classmethod
    def collect(cls, task, per_state: list, width: int) -> "Transitions":
        """Build from ``per_state[i]`` = None (not recorded) or a list of (ground action, cost, next row)."""
        from up_gnnplan.states.actions import ActionRows

        rows = ActionRows(task)
        counts = [len(entries) if entries is not None else 0 for entries in per_state]
        flat = [entry for entries in per_state if entries for entry in entries]
        schema, args = rows([action for action, _, _ in flat])
        return cls(ptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), schema=schema.astype(np.int16),
                   args=args.reshape(-1, width).astype(np.int32),
                   cost=np.array([cost for _, cost, _ in flat], np.float64),
                   next=np.array([row for _, _, row in flat], np.int64),
                   recorded=np.array([entries is not None for entries in per_state], bool))


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
    transitions: Transitions | None = None
    initial: int = 0  # row of the initial state

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
    initial_value, initial = float("inf"), 0
    for i, state in enumerate(states):
        label = space.get_state_label(state)
        fluent.append(atoms.fluent(state))
        dead_end[i], is_goal[i] = label.is_dead_end, label.is_goal
        value[i] = float("inf") if label.is_dead_end else label.cost_to_goal
        steps[i] = -1 if label.is_dead_end else label.steps_to_goal
        if label.is_initial:
            initial_value, initial = value[i], i
        if progress is not None and (i % 1000 == 0 or i == n - 1):
            progress(i + 1, n)
    unit = has_unit_costs(task.up_problem)
    if not unit:
        # pymimir's steps_to_goal counts the fewest actions to a goal, ignoring costs; with
        # action costs the documented label is the length of a cheapest path.
        steps = _steps_on_cheapest_paths(space, states, value, is_goal)
    transitions = Transitions.collect(task, _transitions(space, states, unit), task.action_signature.width)
    return LabelledStates(fluent, value, steps, dead_end, is_goal, np.zeros(n, np.uint8), initial_value, transitions,
                          initial)


def _transitions(space, states, unit_costs: bool) -> list[list]:
    """Return, per state, its (ground action, cost, successor row) from the expanded space."""
    position = {state.get_index(): i for i, state in enumerate(states)}
    out = []
    for state in states:
        entries = []
        for action, successor in space.get_forward_transitions(state):
            cost = 1.0 if unit_costs else action.apply(state, return_cost=True)[1]
            entries.append((action, cost, position[successor.get_index()]))
        out.append(entries)
    return out


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

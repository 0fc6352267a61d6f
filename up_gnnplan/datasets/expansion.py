"""Label every reachable state of a small instance with its exact optimal cost-to-go V*.

pymimir expands the state space in C++ and computes cost-to-goal by a backward Dijkstra over
the transition graph, respecting action costs; dead ends (no path to a goal) are flagged and
get ``inf``, never a made-up number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from up_gnnplan.errors import StateLimitExceeded
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
    import pymimir

    space = pymimir.StateSpaceSampler.new(task.mimir_problem, max_states=max_states, symmetry_pruning=False)
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
    return LabelledStates(fluent, value, steps, dead_end, is_goal, np.zeros(n, np.uint8), initial_value)

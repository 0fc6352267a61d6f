"""Successor generation and the goal test on pymimir states."""

from __future__ import annotations


def successors(state) -> list[tuple[object, object, float]]:
    """Return ``(ground action, successor state, action cost)`` for every applicable action."""
    return [(action, *action.apply(state, return_cost=True)) for action in state.generate_applicable_actions()]


# Successors are made this many at a time by :func:`successor_chunks`: a Childsnack state of 189
# objects has 130,575 applicable actions, and applying them all takes over a second.
CHUNK_ACTIONS = 4096


class Successors:
    """The successors of one state, made in chunks of at most ``size`` applicable actions.

    Iterating yields lists of ``(ground action, successor state, action cost)``. The applicable
    actions are generated at once (pymimir has no lazy generator); applying them is what takes
    time, so a search can check its limits between chunks. ``actions``: these applicable actions
    only (for example one per class of symmetric actions) instead of all of them.
    """

    def __init__(self, state, size: int = CHUNK_ACTIONS, actions: list | None = None):
        self.state, self.size = state, size
        self.actions = state.generate_applicable_actions() if actions is None else actions

    def __len__(self) -> int:
        return len(self.actions)

    def __iter__(self):
        for start in range(0, len(self.actions), self.size):
            yield [(action, *action.apply(self.state, return_cost=True))
                   for action in self.actions[start:start + self.size]]


def is_goal(task, state) -> bool:
    """Return whether ``state`` satisfies the goal (existential conjuncts included)."""
    return task.goal_condition.holds(state)

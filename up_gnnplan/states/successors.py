"""Successor generation and the goal test on pymimir states."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def successors(state) -> list[tuple[object, object, float]]:
    """Return ``(ground action, successor state, action cost)`` for every applicable action."""
    return [(action, *action.apply(state, return_cost=True)) for action in applicable_actions(state)]


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
        self.actions = applicable_actions(state) if actions is None else actions

    def __len__(self) -> int:
        return len(self.actions)

    def __iter__(self):
        for start in range(0, len(self.actions), self.size):
            yield [(action, *action.apply(self.state, return_cost=True))
                   for action in self.actions[start:start + self.size]]


def applicable_actions(state) -> Sequence:
    """Return the applicable ground actions of the pymimir ``state``, in pymimir's order (by action index).

    The same actions as ``state.generate_applicable_actions()``, made without its Python wrapper per action
    (:class:`Applicable`: an action is wrapped when it is looked at), and not cached on the state: a walk
    keeps its path's states, and with them each state's cached actions (a Hiking state of 100 objects has
    34,528). Where pymimir's internals differ from those this reads, its own method is used."""
    cached = getattr(state, "_applicable_actions", None)
    if cached is not None:
        return cached
    try:
        problem = state._problem
        natives = problem._search_context.get_applicable_action_generator().generate_applicable_actions(
            state._advanced_state)
    except AttributeError:
        return state.generate_applicable_actions()
    return Applicable(natives, problem)


class Applicable(Sequence):
    """Ground actions as pymimir's native objects (``natives``) with their indices (``indices``, ascending),
    wrapped as pymimir ``GroundAction``s one at a time where they are read: a policy step scores all of a
    state's actions from the natives (:class:`~up_gnnplan.states.actions.ActionRows`) and applies a few."""

    def __init__(self, natives, problem, indices: np.ndarray | None = None):
        if indices is None:
            indices = np.fromiter((a.get_index() for a in natives), dtype=np.int64, count=len(natives))
            if len(indices) > 1 and (np.diff(indices) < 0).any():
                order = np.argsort(indices, kind="stable")
                natives, indices = [natives[i] for i in order.tolist()], indices[order]
        self.natives, self.indices, self._problem = natives, indices, problem

    def __len__(self) -> int:
        return len(self.natives)

    def __getitem__(self, item):
        if isinstance(item, slice):
            return Applicable(self.natives[item], self._problem, self.indices[item])
        from pymimir import GroundAction

        return GroundAction(self.natives[item], self._problem)


def is_goal(task, state) -> bool:
    """Return whether ``state`` satisfies the goal (existential conjuncts included)."""
    return task.goal_condition.holds(state)

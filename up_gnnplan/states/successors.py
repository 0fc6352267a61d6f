"""Successor generation and the goal test on pymimir states."""

from __future__ import annotations


def successors(state) -> list[tuple[object, object, float]]:
    """Return ``(ground action, successor state, action cost)`` for every applicable action."""
    return [(action, *action.apply(state, return_cost=True)) for action in state.generate_applicable_actions()]


def is_goal(task, state) -> bool:
    """Return whether ``state`` satisfies the goal (existential conjuncts included)."""
    return task.mimir_problem.get_goal_condition().holds(state)

"""Choose a grounding model's epoch by what its binder makes of larger problems.

A grounding model is used for one thing: the greedy binder's choice among goals one binding apart
(:class:`~up_gnnplan.grounding.bind.GoalBinder`), on problems larger than it was trained on. Its
validation error on random goal variants of small problems does not measure that choice: variants
drawn at random differ widely in cost, so the ranking of close calls is invisible in it, and in the
runs of 2026-11-25 every such figure chose the first epoch, whose bindings were not the best on
the larger test sets. The judge here measures the choice itself: it binds each judge problem's
existential goal greedily with the model (static filter on), hands the ground problem to
LAMA-first, and counts the plan's length, as the benchmark's V/V^L does; a binding whose ground
problem LAMA-first does not solve within :data:`PLANNER_SECONDS` counts ``failed_cost``. The
training loop (``gnnplan train --validation-problem`` on grounding data) ranks epochs by problems
solved, then total plan length, then validation error.

The planner's result for a binding is kept for the whole training (:data:`_PLANS`), so an epoch
costs a planner call only for the bindings no earlier epoch chose.
"""

from __future__ import annotations

from up_gnnplan.grounding.bind import GoalBinder, binding_key
from up_gnnplan.grounding.goal import GoalGroundingError
from up_gnnplan.limits import LimitReached

PLANNER_SECONDS = 30.0  # LAMA-first's limit on one judge problem's ground goal
_PLANS: dict[tuple[str, frozenset], int | None] = {}  # (problem, binding) -> LAMA-first's plan length (None: unsolved)


def binding_validation(value_fn, tasks, failed_cost: int, limits=None) -> tuple[int, int]:
    """Bind each task's goal with ``value_fn`` and plan for it; return (solved, total plan length).

    ``tasks`` are :class:`~up_gnnplan.problems.bridge.Task` objects of problems with existential
    goals; an unsolved one, or one whose goal no candidate binding passes the static filter, adds
    ``failed_cost`` to the total. ``limits`` (:class:`~up_gnnplan.limits.Limits`) end the judge at
    their deadline: a task not bound or not planned for by then counts as unsolved.
    """
    solved = total = 0
    for task in tasks:
        try:
            if limits is not None:
                limits.check("before binding a judge problem's goal")
            grounding = GoalBinder(task.up_problem, value_fn, static_filter=True, task=task, limits=limits).greedy()
        except (GoalGroundingError, LimitReached):
            total += failed_cost
            continue
        key = (task.source.describe(), binding_key(grounding.goal))
        if key not in _PLANS:
            seconds = PLANNER_SECONDS if limits is None else min(PLANNER_SECONDS, limits.deadline.remaining())
            length = lama_first_length(grounding.goal.with_goal_of(task.up_problem), seconds) if seconds > 0 else None
            if seconds < PLANNER_SECONDS and length is None:
                total += failed_cost  # cut short by the deadline: not this binding's verdict, so not kept
                continue
            _PLANS[key] = length
        length = _PLANS[key]
        solved += length is not None
        total += failed_cost if length is None else length
    return solved, total


def lama_first_length(problem, seconds: float) -> int | None:
    """Return the length of LAMA-first's plan for ``problem`` (:func:`up_gnnplan.grounding.solve.lama_first`,
    the default memory limit), None if none in ``seconds``."""
    from up_gnnplan.grounding.solve import SOLVED, lama_first
    from up_gnnplan.limits import Limits

    result = lama_first(problem, Limits(seconds))
    return len(result.plan.actions) if result.status in SOLVED else None

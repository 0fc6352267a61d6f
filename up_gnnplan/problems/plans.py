"""Plans as text, as Fast Downward writes them: one action a line, then ``; cost = N (unit cost)``.

The cost line lets tools that read Fast Downward's plan files (validators, IPC scripts) read
ours; it says ``(general cost)`` when some action costs other than 1. A plan of a task read
from files (:class:`PddlPlan`) is printed from pymimir's ground actions, with no UP problem.
"""

from __future__ import annotations

import warnings


def _action_costs(problem):
    """Return the problem's ``MinimizeActionCosts`` metric, or None (every action costs 1)."""
    from unified_planning.model.metrics import MinimizeActionCosts

    return next((m for m in problem.quality_metrics if isinstance(m, MinimizeActionCosts)), None)


def is_unit_cost(problem) -> bool:
    """Return whether every action of ``problem`` costs 1 (no action costs, or all of them the constant 1)."""
    metric = _action_costs(problem)
    if metric is None:
        return True
    for action in problem.actions:
        cost = metric.get_action_cost(action)
        if cost is None or not cost.is_constant() or cost.constant_value() != 1:
            return False
    return True


def plan_cost(problem, plan) -> float:
    """Return the cost of ``plan`` (a UP sequential plan) on ``problem``: its length without action costs."""
    metric = _action_costs(problem)
    if metric is None or is_unit_cost(problem):
        return float(len(plan.actions))
    from unified_planning.engines.sequential_simulator import (UPSequentialSimulator, evaluate_quality_metric,
                                                               evaluate_quality_metric_in_initial_state)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "cannot establish whether ..." for the kinds it was not told about
        simulator = UPSequentialSimulator(problem, error_on_failed_checks=False)
    state = simulator.get_initial_state()
    value = evaluate_quality_metric_in_initial_state(simulator, metric)
    for step in plan.actions:
        after = simulator.apply_unsafe(state, step)
        value = evaluate_quality_metric(simulator, metric, value, state, step.action, step.actual_parameters, after)
        state = after
    return float(value)


class PddlPlan:
    """The plan of a task read from files: its pymimir ground actions, in PDDL terms (``actions``:
    one ``(action o1 o2)`` line each) and at ``cost``. Its UP ``SequentialPlan`` is built only when
    asked for (:meth:`to_up`), as that reads the files with UP's reader."""

    def __init__(self, task, ground_actions, cost: float):
        self.task, self.ground_actions, self.cost = task, list(ground_actions), float(cost)
        self.actions = task.plan_lines(self.ground_actions)

    def to_up(self):
        """Return the UP ``SequentialPlan`` of this plan (reads the task's UP problem)."""
        return self.task.to_up_plan(self.ground_actions)

    def text(self) -> str:
        """Return the plan as a PDDL plan file (see :func:`plan_text`)."""
        kind = "unit cost" if self.task.has_unit_costs() else "general cost"
        return "".join(f"{line}\n" for line in self.actions) + f"; cost = {self.cost:g} ({kind})\n"

    def __str__(self) -> str:
        return "\n".join(self.actions)


def plan_text(problem, plan, cost: float | None = None) -> str:
    """Return ``plan`` as a PDDL plan file: one action a line, then Fast Downward's cost line
    (``cost``, or the plan's cost on ``problem`` when not given). A :class:`PddlPlan` needs no
    ``problem`` (give None)."""
    if isinstance(plan, PddlPlan):
        return plan.text()
    from unified_planning.io import PDDLWriter

    cost = plan_cost(problem, plan) if cost is None else float(cost)
    kind = "unit cost" if is_unit_cost(problem) else "general cost"
    return PDDLWriter(problem).get_plan(plan) + f"; cost = {cost:g} ({kind})\n"

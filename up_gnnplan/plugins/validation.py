"""Validate every plan before the engine returns it.

Plans of problems without existential goals go through UP's own ``SequentialPlanValidator``,
which shares no code with the search. UP's validator is extremely slow on existential goals
(minutes for short plans), so for those the plan is replayed with UP's
``SequentialSimulator`` (each action applicable in turn) and the final state's goal is
checked by pymimir, which evaluates the quantified goal as a derived atom.
"""

from __future__ import annotations


def validate_plan(task, plan, ground_actions) -> str | None:
    """Return None when ``plan`` is valid for ``task``, else what is wrong."""
    from unified_planning.engines import ValidationResultStatus
    from unified_planning.engines.plan_validator import SequentialPlanValidator

    from up_gnnplan.states.successors import is_goal

    problem = task.up_problem
    if not task.has_existential_goal:
        result = SequentialPlanValidator(environment=problem.environment).validate(problem, plan)
        return None if result.status == ValidationResultStatus.VALID else (result.reason or "invalid plan")
    from unified_planning.engines.sequential_simulator import UPSequentialSimulator

    simulator = UPSequentialSimulator(problem)
    state = simulator.get_initial_state()
    for step, action in enumerate(plan.actions):
        if not simulator.is_applicable(state, action.action, action.actual_parameters):
            return f"step {step + 1}, {action}, is not applicable"
        state = simulator.apply(state, action.action, action.actual_parameters)
    mimir_state = task.initial_state()
    for ground_action in ground_actions:
        mimir_state = ground_action.apply(mimir_state)
    return None if is_goal(task, mimir_state) else "the final state does not satisfy the goal"

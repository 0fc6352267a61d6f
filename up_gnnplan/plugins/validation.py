"""Validate every plan before the engine returns it.

The plan is replayed on UP's own ``UPSequentialSimulator``, which shares no code with the
search: each action must be applicable in turn, and the final state must satisfy the goal
(UP's ``get_unsatisfied_goals``). This is what UP's ``SequentialPlanValidator`` does, step by
step here so that the solve's limits are checked between steps: validation counts towards the
time limit like every other part of a solve.

UP's simulator is extremely slow on existential goals (minutes for short plans), so for those
the final state's goal is checked by pymimir, which evaluates the quantified goal as a derived
atom, after the same replay of the actions on UP's simulator.

A task read from files has no UP problem (reading one would cost what reading the files with
pymimir saved: minutes for IPC 2023 medium tasks), so its plan is replayed on pymimir: each
ground action's precondition is evaluated on the state it is applied to (pymimir's ground
precondition test, not the lifted generator the search took it from), then the goal.
"""

from __future__ import annotations

import warnings

# Check the limits every this many plan steps (a step of UP's simulator takes about 0.1-1 ms).
CHECK_EVERY = 16


def validate_plan(task, plan, ground_actions, check=None) -> str | None:
    """Return None when ``plan`` is valid for ``task``, else what is wrong.

    ``check(what)`` is called every few steps; it may raise to stop (a limit was reached).
    """
    from unified_planning.engines.sequential_simulator import UPSequentialSimulator

    from up_gnnplan.states.successors import is_goal

    check = check or (lambda what: None)
    if task.from_files_only:
        return _replay_on_pymimir(task, ground_actions, check)
    problem = task.up_problem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "cannot establish whether ..." for the kinds it was not told about
        simulator = UPSequentialSimulator(problem, error_on_failed_checks=False)
    state = simulator.get_initial_state()
    for step, action in enumerate(plan.actions, start=1):
        if step % CHECK_EVERY == 0:
            check(f"while validating the plan (step {step} of {len(plan.actions)})")
        unsatisfied, _ = simulator.get_unsatisfied_conditions(state, action)
        if unsatisfied:
            return f"step {step}, {action}, is not applicable: {', '.join(map(str, unsatisfied))} do not hold"
        state = simulator.apply_unsafe(state, action)
    check("while validating the plan (its goal)")
    if not task.has_existential_goal:
        unsatisfied = simulator.get_unsatisfied_goals(state)
        return f"the final state does not satisfy {', '.join(map(str, unsatisfied))}" if unsatisfied else None
    mimir_state = task.initial_state()
    for ground_action in ground_actions:
        mimir_state = ground_action.apply(mimir_state)
    return None if is_goal(task, mimir_state) else "the final state does not satisfy the goal"


def _replay_on_pymimir(task, ground_actions, check) -> str | None:
    """Return None when ``ground_actions`` apply in turn from the initial state and reach the goal."""
    from up_gnnplan.states.successors import is_goal

    state = task.initial_state()
    for step, action in enumerate(ground_actions, start=1):
        if step % CHECK_EVERY == 0:
            check(f"while validating the plan (step {step} of {len(ground_actions)})")
        if not action.is_applicable(state):
            return f"step {step}, {task.plan_lines([action])[0]}, is not applicable"
        state = action.apply(state)
    check("while validating the plan (its goal)")
    return None if is_goal(task, state) else "the final state does not satisfy the goal"

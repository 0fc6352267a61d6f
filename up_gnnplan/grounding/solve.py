"""Mode ``ground`` of the gnnplan engine: bind the existential goal, then plan for the ground goal.

One time limit covers all of it: the task, the model's binding steps, the planner and the plan's
check. The ground problem goes to ``planner``: LAMA-first (Fast Downward through
``up-fast-downward``, given the time left) or gnnplan's own auto mode with the domain's value or
policy model. When the planner proves a ground problem unsolvable (the binding was valid but not
reachable, as a tower that must contain itself), the next-best binding is tried, up to
``max_groundings``. A goal without quantified variables goes to the planner unchanged.

Every plan returned is checked by :func:`~up_gnnplan.grounding.preprocess.check_witness` against
the quantified goal with the binding as its witness, never by UP's validator on the quantified
goal (minutes for a short plan on large problems).
"""

from __future__ import annotations

import importlib.util
import io

from unified_planning.engines import LogLevel, PlanGenerationResultStatus as Status

from up_gnnplan.errors import GnnplanError
from up_gnnplan.grounding.goal import QuantifiedGoal
from up_gnnplan.grounding.preprocess import check_witness, make_binder
from up_gnnplan.limits import LimitReached, MemoryLimitReached

SOLVED = (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY)
NO_FAST_DOWNWARD = ("the planner 'lama-first' is Fast Downward through up-fast-downward, which is not installed: "
                    "pip install 'up-gnnplan[fast-downward]', or plan for the ground goal with planner='gnnplan' "
                    "(gnnplan solve --planner gnnplan)")
TRY_NEXT = (Status.UNSOLVABLE_PROVEN, Status.UNSOLVABLE_INCOMPLETELY)


def solve_by_grounding(engine, problem, limits, messages: list, metrics: dict):
    """Return (status, plan) of mode ``ground`` for ``engine`` (its params say the model, filter and planner)."""
    options = engine.grounding
    metrics.update(planner=options["planner"], static_filter=str(options["static_filter"]),
                   binding_beam=str(options["binding_beam"]), binding_entailment=str(options["binding_entailment"]))
    try:
        if options["planner"] == "lama-first" and not fast_downward_installed():
            raise GnnplanError(NO_FAST_DOWNWARD)  # said before the binding's work, not after it
        goal = QuantifiedGoal.of(problem)
        if not goal.variables:
            messages.append((LogLevel.INFO, "the goal has no quantified variable: solved as it is"))
            return _plan(engine, problem, limits, messages, metrics)
        limits.check("before building the task")
        binder = make_binder(problem, options["grounding_model"], options["static_filter"], limits,
                             engine.threads, engine.device, beam=options["binding_beam"],
                             entailment=options["binding_entailment"])
        metrics["grounding_model"] = str(binder.value_fn.path)
        # Rows taken before 2026-11-26 have no such figure: their filter knew no invariants.
        metrics["invariants"] = str(len(binder.mutexes.invariants))
        for tried, grounding in enumerate(binder.bindings(), start=1):
            limits.check("after binding the goal")
            metrics.update(binding=" ".join(f"?{v}={o}" for v, o in grounding.binding.items()),
                           groundings_tried=str(tried), binding_seconds=f"{binder.seconds:.3f}",
                           bindings_evaluated=str(binder.evaluated))
            if tried == 1 and binder.beam_note:
                messages.append((LogLevel.INFO, binder.beam_note))
            if binder.beam_narrowed:
                metrics["binding_beam"] = "1 (narrowed)"
            messages.append((LogLevel.INFO, f"binding {tried}: " + ", ".join(
                f"?{s.variable}={s.obj} " + (f"(V={s.value:.2f} of {s.candidates})" if s.candidates else "(adds nothing)")
                for s in grounding.steps)))
            impossible = grounding.goal.violations(binder.facts, binder.fluents, binder.mutexes)
            if impossible:  # only without the static filter: proven unsolvable without a planner
                messages.append((LogLevel.INFO, f"binding {tried} cannot hold: {', '.join(impossible)}"))
                status, plan = Status.UNSOLVABLE_PROVEN, None
            else:
                status, plan = _plan(engine, grounding.goal.with_goal_of(problem), limits, messages, metrics)
            if status in SOLVED:
                error = check_witness(problem, goal, grounding.goal, plan)
                if error:
                    messages.append((LogLevel.ERROR, f"internal error: the plan does not reach the goal: {error}"))
                    return Status.INTERNAL_ERROR, None
                return Status.SOLVED_SATISFICING, plan
            if status not in TRY_NEXT:
                return status, None
            if tried >= options["max_groundings"]:
                messages.append((LogLevel.INFO, f"gave up after {tried} bindings (max_groundings)"))
                return Status.UNSOLVABLE_INCOMPLETELY, None
        messages.append((LogLevel.INFO, "no binding left that passes the static filter"))
        return Status.UNSOLVABLE_INCOMPLETELY, None
    except LimitReached as error:
        messages.append((LogLevel.ERROR if isinstance(error, MemoryLimitReached) else LogLevel.INFO, str(error)))
        return (Status.MEMOUT if isinstance(error, MemoryLimitReached) else Status.TIMEOUT), None
    except GnnplanError as error:
        messages.append((LogLevel.ERROR, str(error)))
        return Status.UNSUPPORTED_PROBLEM, None


def fast_downward_installed() -> bool:
    """Return whether up-fast-downward, the UP engine of LAMA-first, can be imported."""
    return importlib.util.find_spec("up_fast_downward") is not None


def lama_first(problem, seconds: float):
    """Return the UP result of LAMA-first (Fast Downward through ``up-fast-downward``) on ``problem``."""
    from unified_planning.exceptions import UPNoRequestedEngineAvailableException
    from unified_planning.shortcuts import OneshotPlanner

    problem.environment.credits_stream = None
    try:
        planner = OneshotPlanner(name="fast-downward")
    except UPNoRequestedEngineAvailableException:
        raise GnnplanError(NO_FAST_DOWNWARD) from None
    with planner:
        return planner.solve(problem, timeout=seconds, output_stream=io.StringIO())


def _plan(engine, problem, limits, messages: list, metrics: dict):
    """Return (status, plan) of the chosen planner on ``problem`` with the time left."""
    planner = engine.grounding["planner"]
    left = limits.deadline.remaining()
    if planner == "gnnplan":
        # A fresh engine of the caller's class (the gnnplan engine, which calls this), in mode auto.
        inner = type(engine)(mode="auto", max_steps=engine.max_steps, threads=engine.threads,
                             memory_mb=engine.memory_mb, device=engine.device)
        result = inner.solve(problem, timeout=left)
    else:
        result = lama_first(problem, left)
    messages.append((LogLevel.INFO, f"{planner}: {result.status.name}"
                     + (f", {len(result.plan.actions)} actions" if result.plan is not None else "")))
    messages.extend((log.level, f"{planner}: {log.message}") for log in result.log_messages or []
                    if log.level in (LogLevel.ERROR, LogLevel.WARNING) and log.message.strip())
    return result.status, result.plan

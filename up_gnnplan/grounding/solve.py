"""Mode ``ground`` of the gnnplan engine: bind the existential goal, then plan for the ground goal.

One time limit covers all of it: the task, the model's binding steps, the planner and the plan's
check. The ground problem goes to the planner it is given (:func:`planner`): LAMA-first (the Fast
Downward that ``up-fast-downward`` ships, run by :mod:`up_gnnplan.search.lama` with the time and
memory left) or gnnplan's own auto mode with the domain's value or policy model, which the engine
passes in. When the planner proves a ground
problem unsolvable (the binding was valid but not reachable, as a tower that must contain
itself), the next-best binding is tried, up to ``max_groundings``. A goal without quantified
variables goes to the planner unchanged.

Every plan returned is checked by :func:`~up_gnnplan.grounding.preprocess.check_witness` against
the quantified goal with the binding as its witness, never by UP's validator on the quantified
goal (minutes for a short plan on large problems).
"""

from __future__ import annotations

from unified_planning.engines import LogLevel, PlanGenerationResultStatus as Status

from up_gnnplan.errors import GnnplanError, InternalError
from up_gnnplan.grounding.goal import QuantifiedGoal
from up_gnnplan.grounding.preprocess import check_witness, make_binder
from up_gnnplan.search.lama import fast_downward_installed

SOLVED = (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY)
NO_FAST_DOWNWARD = ("the planner 'lama-first' is Fast Downward through up-fast-downward, which is not installed: "
                    "pip install 'up-gnnplan[fast-downward]', or plan for the ground goal with planner='gnnplan' "
                    "(gnnplan solve --planner gnnplan)")
TRY_NEXT = (Status.UNSOLVABLE_PROVEN, Status.UNSOLVABLE_INCOMPLETELY)


def solve_by_grounding(problem, params: dict, solve, limits, say, metrics: dict):
    """Return (UP status, plan) of mode ``ground``: bind the goal of ``problem`` with the model and
    filter ``params`` name, and solve each ground problem with ``solve(problem, limits)`` (a UP
    result, within the time and memory left under ``limits``), trying the next binding while it proves them unsolvable. ``say(level, text)`` logs.

    A limit reached or a model that does not fit is raised (:class:`~up_gnnplan.limits.LimitReached`,
    :class:`~up_gnnplan.errors.GnnplanError`) for the engine to map with every other outcome.
    """
    metrics.update(planner=params["planner"], static_filter=str(params["static_filter"]),
                   binding_beam=str(params["binding_beam"]), binding_entailment=str(params["binding_entailment"]))
    goal = QuantifiedGoal.of(problem)
    if not goal.variables:
        say("info", "the goal has no quantified variable: solved as it is")
        return _plan(solve, params["planner"], problem, limits, say, metrics)
    limits.check("before building the task")
    binder = make_binder(problem, params["grounding_model"], params["static_filter"], limits, params["threads"],
                         params["device"], beam=params["binding_beam"], entailment=params["binding_entailment"])
    metrics["grounding_model"] = str(binder.value_fn.path)
    # Rows taken before 2026-11-26 have no such figure: their filter knew no invariants.
    metrics["invariants"] = str(len(binder.mutexes.invariants))
    for tried, grounding in enumerate(binder.bindings(), start=1):
        limits.check("after binding the goal")
        metrics.update(binding=" ".join(f"?{v}={o}" for v, o in grounding.binding.items()),
                       groundings_tried=str(tried), binding_seconds=f"{binder.seconds:.3f}",
                       bindings_evaluated=str(binder.evaluated))
        if tried == 1 and binder.beam_note:
            say("info", binder.beam_note)
        if binder.beam_narrowed:
            metrics["binding_beam"] = "1 (narrowed)"
        say("info", f"binding {tried}: " + ", ".join(
            f"?{s.variable}={s.obj} " + (f"(V={s.value:.2f} of {s.candidates})" if s.candidates else "(adds nothing)")
            for s in grounding.steps))
        impossible = grounding.goal.violations(binder.facts, binder.fluents, binder.mutexes)
        if impossible:  # only without the static filter: proven unsolvable without a planner
            say("info", f"binding {tried} cannot hold: {', '.join(impossible)}")
            status, plan = Status.UNSOLVABLE_PROVEN, None
        else:
            status, plan = _plan(solve, params["planner"], grounding.goal.with_goal_of(problem), limits, say, metrics)
        if status in SOLVED:
            error = check_witness(problem, goal, grounding.goal, plan)
            if error:
                raise InternalError(f"internal error: the plan does not reach the goal: {error}")
            return Status.SOLVED_SATISFICING, plan
        if status not in TRY_NEXT:
            return status, None
        if tried >= params["max_groundings"]:
            say("info", f"gave up after {tried} bindings (max_groundings)")
            return Status.UNSOLVABLE_INCOMPLETELY, None
    say("info", "no binding left that passes the static filter")
    return Status.UNSOLVABLE_INCOMPLETELY, None


def planner(name: str, gnnplan):
    """Return the solver of ground problems that ``name`` (one of :data:`~up_gnnplan.search.modes.PLANNERS`)
    names: LAMA-first, or ``gnnplan`` (the engine's mode auto, given by the caller as
    ``(problem, seconds) -> UP result``); each a callable ``(problem, limits) -> UP result``.
    LAMA-first without up-fast-downward is refused here."""
    if name == "gnnplan":
        return lambda problem, limits: gnnplan(problem, limits.deadline.remaining())
    if not fast_downward_installed():
        raise GnnplanError(NO_FAST_DOWNWARD)
    return lama_first


def lama_first(problem, limits):
    """Return the UP result of LAMA-first on the UP ``problem`` within the time and memory left
    under ``limits`` (:class:`~up_gnnplan.limits.Limits`): its plan as a UP plan, checked by
    replaying it on pymimir (:func:`up_gnnplan.search.lama.lama_first` maps it to ground actions)."""
    from up_gnnplan.problems import Task
    from up_gnnplan.search.common import Status as SearchStatus
    from up_gnnplan.search.lama import lama_first as run, up_result

    task = Task(problem, check=limits.check)
    result = run(task, limits)
    return up_result(result, task.to_up_plan(result.actions) if result.status is SearchStatus.SOLVED else None,
                     "lama-first")


def _plan(solve, name: str, problem, limits, say, metrics: dict):
    """Return (status, plan) of ``solve`` (the planner ``name``) on ``problem`` within ``limits``."""
    result = solve(problem, limits)
    say("info", f"{name}: {result.status.name}" + (f", {len(result.plan.actions)} actions" if result.plan is not None
                                                    else ""))
    for log in result.log_messages or []:
        if log.level in (LogLevel.ERROR, LogLevel.WARNING) and log.message.strip():
            say(log.level.name.lower(), f"{name}: {log.message}")
    if result.plan is not None and "plan_cost" in (result.metrics or {}):
        metrics["plan_cost"] = result.metrics["plan_cost"]
    return result.status, result.plan

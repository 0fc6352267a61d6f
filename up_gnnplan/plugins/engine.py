"""The ``gnnplan`` UP engine: params in, a mode run, a status out.

Follows UP's ``OneshotPlanner`` contract: ``supported_kind``, ``supports``, ``_solve`` and
credits. Options arrive as ``params={...}`` and are checked when the engine is built
(:data:`~up_gnnplan.plugins.params.PARAMS` says what each accepts and does; a model file that
does not exist is refused then too). The ``mode`` param names one of
:data:`~up_gnnplan.search.modes.MODES`, which say what model head each mode needs, which params
it takes (a param the mode does not take is refused) and how it runs.

The time limit counts from the moment ``solve`` is called (or from :attr:`GnnplanEngine.clock_start`):
building the task, loading the model, the search and the validation of the plan all count, and
each is checked between units of work short enough for the limit to hold within 5% (or 0.5 s).
Reaching the memory limit ends the solve with ``MEMOUT`` and a message naming what was too
large. Every plan is validated before it is returned; every outcome maps to a UP status in
:func:`plan_status`.
"""

from __future__ import annotations

import contextlib
import time

import unified_planning as up
from unified_planning.engines import Credits, LogLevel, LogMessage, PlanGenerationResult, PlanGenerationResultStatus
from unified_planning.engines.engine import Engine
from unified_planning.engines.mixins.oneshot_planner import OneshotPlannerMixin
from unified_planning.model import ProblemKind

from up_gnnplan.plugins.params import PARAMS, check_params, check_timeout  # noqa: F401  (re-exported)
from up_gnnplan.search.modes import EXISTENTIAL_GOAL_WARNING, MODES, Job  # noqa: F401  (the warning: re-exported)

ELIMINATION_SHARE = 0.5  # of the time left when a plan is found, at most, for action elimination

CREDITS = Credits(
    name="gnnplan",
    author="up-gnnplan developers",
    contact="up-gnnplan developers",
    website="",
    license="MIT",
    short_description="Learned general policies and heuristics (relational GNNs, ONNX) for classical planning.",
    long_description="Greedy policies and greedy best-first search guided by value functions and action scores "
    "learned with relational graph neural networks on small instances of a domain.",
)


def plan_status(outcome) -> PlanGenerationResultStatus:
    """Map an outcome to UP's status: a search :class:`~up_gnnplan.search.Status`, the exception
    that ended a solve, or the UP status of the planner mode ground handed its problem to."""
    from up_gnnplan.errors import GnnplanError, InternalError
    from up_gnnplan.limits import LimitReached, MemoryLimitReached
    from up_gnnplan.runtime.providers import RuntimeSetupError
    from up_gnnplan.search.common import up_status

    if isinstance(outcome, PlanGenerationResultStatus):
        return outcome
    if isinstance(outcome, (MemoryLimitReached, MemoryError)):
        return PlanGenerationResultStatus.MEMOUT
    if isinstance(outcome, LimitReached):
        return PlanGenerationResultStatus.TIMEOUT
    # A missing ONNX runtime is this installation's fault, an invalid plan ours: not the problem's.
    if isinstance(outcome, (RuntimeSetupError, InternalError)):
        return PlanGenerationResultStatus.INTERNAL_ERROR
    if isinstance(outcome, GnnplanError):
        return PlanGenerationResultStatus.UNSUPPORTED_PROBLEM
    return up_status(outcome)


class GnnplanEngine(Engine, OneshotPlannerMixin):
    """Solve problems of known domains with a learned model (see the module docstring)."""

    def __init__(self, **params):
        Engine.__init__(self)
        OneshotPlannerMixin.__init__(self)
        self.params = check_params(params)
        self.mode = self.params["mode"]
        self._called_at = self._kind = None
        self.clock_start = None  # a perf_counter value the next solve's limit counts from (default: its call)
        from up_gnnplan.errors import GnnplanError
        from up_gnnplan.models_zoo import resolve
        from up_gnnplan.runtime.providers import providers_for

        for name in ("model", "grounding_model"):  # a file named but missing is refused now, not at solve time
            given = self.params[name]
            if given and not resolve(given).is_file():
                named = "/" not in given and not given.endswith(".onnx")  # perhaps meant as a shipped model's name
                raise up.exceptions.UPUsageError(f"gnnplan: param {name!r}: {given}: no such model file"
                                                 + (", nor a shipped model's name (gnnplan models lists them)"
                                                    if named else ""))
        if self.params["device"] != "auto":  # an explicit device that this installation cannot provide is refused now
            try:
                providers_for(self.params["device"])
            except GnnplanError as error:
                raise up.exceptions.UPUsageError(f"gnnplan: param 'device': {error}") from None

    @property
    def grounding(self) -> dict:
        """Mode ground's own params (the goal-grounding model, the filter, the planner, the beam)."""
        from up_gnnplan.search.modes import GROUNDING_OPTIONS

        return {name: self.params[name] for name in GROUNDING_OPTIONS}

    @property
    def name(self) -> str:
        return "gnnplan"

    @staticmethod
    def supported_kind() -> ProblemKind:
        kind = ProblemKind(version=2)
        kind.set_problem_class("ACTION_BASED")
        for feature in ("FLAT_TYPING", "HIERARCHICAL_TYPING"):
            kind.set_typing(feature)
        # Disjunctive and universal conditions, in preconditions and goals (a goal conjunct with them becomes a
        # derived predicate, as an existential one does).
        for feature in ("NEGATIVE_CONDITIONS", "EQUALITIES", "EXISTENTIAL_CONDITIONS", "DISJUNCTIVE_CONDITIONS",
                        "UNIVERSAL_CONDITIONS"):
            kind.set_conditions_kind(feature)
        for feature in ("CONDITIONAL_EFFECTS", "FORALL_EFFECTS"):
            kind.set_effects_kind(feature)
        kind.set_quality_metrics("ACTIONS_COST")
        kind.set_quality_metrics("PLAN_LENGTH")
        for feature in ("STATIC_FLUENTS_IN_ACTIONS_COST", "INT_NUMBERS_IN_ACTIONS_COST", "REAL_NUMBERS_IN_ACTIONS_COST"):
            kind.set_actions_cost_kind(feature)
        return kind

    @staticmethod
    def supports(problem_kind: ProblemKind) -> bool:
        return problem_kind <= GnnplanEngine.supported_kind()

    @staticmethod
    def satisfies(optimality_guarantee) -> bool:
        return optimality_guarantee == up.engines.OptimalityGuarantee.SATISFICING

    @staticmethod
    def get_credits(**kwargs) -> Credits:
        return CREDITS

    def solve(self, problem, heuristic=None, timeout=None, output_stream=None, warm_start_plan=None, **kwargs):
        """Solve ``problem``; the time limit counts from this call, or from :attr:`clock_start` where
        a caller set it (``gnnplan solve`` sets it to the command's start, so that reading the
        files counts too; it holds for one solve).

        This is UP's ``OneshotPlannerMixin.solve`` with one change: a problem outside the
        supported fragment gets our message naming its features (and the file it came from)
        instead of UP's "cannot establish whether gnnplan can solve this problem".
        ``output_stream`` (a text stream), where given, gets each line of the engine's log as it is
        said (each search, its limits and how it ended), besides the result's ``log_messages``.
        """
        with self._call(timeout):
            self._kind = problem.kind
            if not self.skip_checks and not self.supports(self._kind) and self.error_on_failed_checks:
                from up_gnnplan.errors import GnnplanError
                from up_gnnplan.problems.fragment import check_supported
                from up_gnnplan.problems.loading import source_of

                try:
                    check_supported(problem, source_of(problem).describe(), self._kind)
                except GnnplanError as error:
                    raise up.exceptions.UPUsageError(f"gnnplan cannot solve this problem: {error}") from None
                raise up.exceptions.UPUsageError("gnnplan cannot solve this problem (its kind is not supported)")
            return self._solve(problem, heuristic, timeout, output_stream)

    def solve_task(self, task, timeout=None, output_stream=None) -> PlanGenerationResult:
        """Solve a :class:`~up_gnnplan.problems.bridge.Task` already built, such as one read from PDDL
        files by :meth:`~up_gnnplan.problems.bridge.Task.from_files` (``gnnplan solve`` does this: UP's
        PDDL reader took minutes on the IPC 2023 medium tasks). The time limit counts as in :meth:`solve`.

        The supported fragment was checked when the task was built. For a task read from files the
        plan is validated on pymimir and returned as a :class:`~up_gnnplan.problems.plans.PddlPlan`
        (PDDL lines; ``to_up()`` gives UP's ``SequentialPlan``, reading the files with UP's reader);
        otherwise it is UP's ``SequentialPlan``, as from :meth:`solve`. ``output_stream`` as in :meth:`solve`.
        """
        with self._call(timeout):
            return self._solve(task, None, timeout, output_stream)

    @contextlib.contextmanager
    def _call(self, timeout):
        """One solve's clock: it starts at ``clock_start`` when set (once), else now; the heap held before
        it is kept out of its garbage collections (:func:`~up_gnnplan.limits.frozen_heap`)."""
        from up_gnnplan.limits import frozen_heap

        check_timeout(timeout)
        self._called_at = self.clock_start if self.clock_start is not None else time.perf_counter()
        self.clock_start = None
        try:
            with frozen_heap():
                yield
        finally:
            self._called_at = self._kind = None

    def _solve(self, problem, heuristic=None, timeout=None, output_stream=None) -> PlanGenerationResult:
        from up_gnnplan.errors import GnnplanError
        from up_gnnplan.limits import Limits, MemoryLimitReached

        start = self._called_at or time.perf_counter()
        limits = Limits(check_timeout(timeout), self.params["memory_mb"], start=start)
        log = []
        metrics = {"mode": self.mode, "memory_limit_mb": str(limits.memory_mb)}

        def say(level: str, text: str) -> None:  # the result's log, and as it happens on ``output_stream``
            log.append((level, text))
            if output_stream is not None:
                output_stream.write(f"[{limits.deadline.elapsed():6.1f} s] {level}: {text}\n")
                output_stream.flush()

        if heuristic is not None:
            say("warning", "gnnplan ignores the given heuristic: it uses its learned model")
        job = Job(problem, self.params, limits, say, metrics, self._kind, self._solve_in_auto)
        try:
            outcome = MODES[self.mode].execute(job)
            status, plan = outcome.status, outcome.plan
            if outcome.result is not None and outcome.result.solved:
                plan = self._validated(outcome.task, outcome.result, limits, job.say, metrics)
        except MemoryError:
            status, plan = MemoryLimitReached(f"out of memory (limit {limits.memory_mb} MB)"), None
            job.say("error", str(status))
        except GnnplanError as error:  # a limit reached, or a problem, model or installation that cannot serve
            status, plan = error, None
            job.say("error" if plan_status(error) != PlanGenerationResultStatus.TIMEOUT else "info", str(error))
        metrics["peak_memory_mb"] = f"{limits.peak_mb:.0f}"
        metrics["engine_internal_time"] = f"{time.perf_counter() - start:.6f}"
        logs = [LogMessage(LogLevel[level.upper()], text) for level, text in log]
        return PlanGenerationResult(plan_status(status), plan, self.name, metrics, logs)

    def _solve_in_auto(self, problem, seconds):
        """Solve ``problem`` in mode auto with this engine's params (mode ground's planner gnnplan)."""
        auto = MODES["auto"]
        params = {name: self.params[name] for name in PARAMS if name != "mode" and auto.takes(name)}
        return GnnplanEngine(mode="auto", **params).solve(problem, timeout=seconds)

    def _validated(self, task, result, limits, say, metrics):
        """Return the UP plan of ``result`` once shortened (:mod:`up_gnnplan.search.elimination`) and
        validated within the limits; raise :class:`~up_gnnplan.errors.InternalError` for a plan that
        does not validate."""
        from up_gnnplan.errors import InternalError
        from up_gnnplan.limits import LimitReached
        from up_gnnplan.plugins.validation import validate_plan
        from up_gnnplan.search.elimination import eliminate_actions

        if self.params["action_elimination"] and len(result.actions) > 1:
            began, remaining = time.perf_counter(), limits.deadline.remaining()
            deadline = None if remaining is None else began + ELIMINATION_SHARE * remaining  # the rest: validation
            shorter = eliminate_actions(task, result.actions, deadline, result.cost)
            if shorter.removed:
                result.actions, result.cost = shorter.actions, shorter.cost
            say("info", f"{shorter.note} in {time.perf_counter() - began:.1f} s")
        if task.from_files_only:  # no UP problem: the plan in PDDL terms, validated on pymimir
            from up_gnnplan.problems.plans import PddlPlan

            plan = PddlPlan(task, result.actions, result.cost)
        else:
            plan = task.to_up_plan(result.actions)
        try:
            problem_error = validate_plan(task, plan, result.actions, check=limits.check)
        except LimitReached as error:
            raise type(error)(f"a plan of {len(plan.actions)} actions was found but not validated in time, so it is "
                              f"not returned: {error}") from None
        if problem_error:
            raise InternalError(f"internal error: the plan found does not validate: {problem_error}")
        metrics["plan_cost"] = f"{result.cost:g}"
        return plan

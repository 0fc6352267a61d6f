"""The ``gnnplan`` UP engine: a learned value function guiding a policy or a search.

Follows UP's ``OneshotPlanner`` contract: ``supported_kind``, ``supports``, ``_solve`` and
credits; options arrive from ``params={...}``:

- ``model``: a shipped model's name or an ONNX file; default: the shipped model whose
  predicate signature matches the problem's domain;
- ``mode``: ``policy`` (the greedy policy), ``gbfs`` (greedy best-first search on V), or
  ``auto`` (default: the policy, then GBFS with the time that is left);
- ``max_steps``: the policy's step limit (1000, as in the paper);
- ``threads``: onnxruntime intra-op threads (1).

Every plan is validated before it is returned; outcomes map to UP statuses in one function.
"""

from __future__ import annotations

import time

import unified_planning as up
from unified_planning.engines import Credits, LogLevel, LogMessage, PlanGenerationResult, PlanGenerationResultStatus
from unified_planning.engines.engine import Engine
from unified_planning.engines.mixins.oneshot_planner import OneshotPlannerMixin
from unified_planning.model import ProblemKind

MODES = ("auto", "policy", "gbfs")

CREDITS = Credits(
    name="gnnplan",
    author="up-gnnplan developers",
    contact="see the up-gnnplan project page",
    website="https://pypi.org/project/up-gnnplan/",
    license="MIT",
    short_description="Learned general policies and heuristics (relational GNNs, ONNX) for classical planning.",
    long_description="Greedy policies and greedy best-first search guided by value functions learned with "
    "relational graph neural networks (R-GNN, R-GNN[t], PLOI) on small instances of a domain.",
)


def _status(search_status) -> PlanGenerationResultStatus:
    """Map a search outcome to UP's plan-generation status."""
    from up_gnnplan.search import Status

    return {
        Status.SOLVED: PlanGenerationResultStatus.SOLVED_SATISFICING,
        Status.UNSOLVABLE: PlanGenerationResultStatus.UNSOLVABLE_PROVEN,
        Status.GAVE_UP: PlanGenerationResultStatus.UNSOLVABLE_INCOMPLETELY,
        Status.TIMEOUT: PlanGenerationResultStatus.TIMEOUT,
    }[search_status]


class GnnplanEngine(Engine, OneshotPlannerMixin):
    """Solve problems of known domains with a learned value function (see the module docstring)."""

    def __init__(self, model: str | None = None, mode: str = "auto", max_steps: int = 1000, threads: int = 1):
        Engine.__init__(self)
        OneshotPlannerMixin.__init__(self)
        if mode not in MODES:
            raise up.exceptions.UPUsageError(f"gnnplan: unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        self.model, self.mode, self.max_steps, self.threads = model, mode, int(max_steps), int(threads)

    @property
    def name(self) -> str:
        return "gnnplan"

    @staticmethod
    def supported_kind() -> ProblemKind:
        kind = ProblemKind(version=2)
        kind.set_problem_class("ACTION_BASED")
        for feature in ("FLAT_TYPING", "HIERARCHICAL_TYPING"):
            kind.set_typing(feature)
        for feature in ("NEGATIVE_CONDITIONS", "EQUALITIES", "EXISTENTIAL_CONDITIONS"):
            kind.set_conditions_kind(feature)
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

    def _result(self, status, plan=None, start=None, messages=(), metrics=None) -> PlanGenerationResult:
        metrics = dict(metrics or {})
        if start is not None:
            metrics["engine_internal_time"] = f"{time.perf_counter() - start:.6f}"
        logs = [LogMessage(level, text) for level, text in messages]
        return PlanGenerationResult(status, plan, self.name, metrics, logs)

    def _solve(self, problem, heuristic=None, timeout=None, output_stream=None) -> PlanGenerationResult:
        from up_gnnplan.errors import GnnplanError
        from up_gnnplan.plugins.validation import validate_plan
        from up_gnnplan.problems import Task
        from up_gnnplan.search import Status, gbfs, policy_rollout

        start = time.perf_counter()
        messages = []
        if heuristic is not None:
            messages.append((LogLevel.WARNING, "gnnplan ignores the given heuristic: it uses its learned value function"))
        try:
            task = Task(problem)
            value_fn = self._value_function(task)
        except GnnplanError as error:
            messages.append((LogLevel.ERROR, str(error)))
            return self._result(PlanGenerationResultStatus.UNSUPPORTED_PROBLEM, start=start, messages=messages)

        def remaining():
            return None if timeout is None else max(0.0, timeout - (time.perf_counter() - start))

        result = None
        if self.mode in ("policy", "auto"):
            result = policy_rollout(task, value_fn, max_steps=self.max_steps, time_limit=remaining())
            messages.append((LogLevel.INFO, f"policy: {result.status.value} after {result.expanded} steps {result.message}".strip()))
        if self.mode == "gbfs" or (self.mode == "auto" and result.status is Status.GAVE_UP):
            result = gbfs(task, value_fn, time_limit=remaining())
            messages.append((LogLevel.INFO, f"gbfs: {result.status.value}, {result.expanded} expansions {result.message}".strip()))
        metrics = {"expanded": str(result.expanded), "evaluated": str(result.evaluated), "model": str(value_fn.path),
                   "mode": self.mode}
        if not result.solved:
            return self._result(_status(result.status), start=start, messages=messages, metrics=metrics)
        plan = task.to_up_plan(result.actions)
        problem_error = validate_plan(task, plan, result.actions)
        if problem_error:
            messages.append((LogLevel.ERROR, f"internal error: the plan found does not validate: {problem_error}"))
            return self._result(PlanGenerationResultStatus.INTERNAL_ERROR, start=start, messages=messages, metrics=metrics)
        metrics["plan_cost"] = f"{result.cost:g}"
        return self._result(PlanGenerationResultStatus.SOLVED_SATISFICING, plan, start, messages, metrics)

    def _value_function(self, task):
        """Return the ONNX value function for ``task``: the chosen model, or the shipped one."""
        from up_gnnplan.models_zoo import find_model, resolve
        from up_gnnplan.runtime import ModelError, load_value_function

        path = resolve(self.model) if self.model else find_model(task.signature)
        if path is None:
            names = ", ".join(f"{n}/{a}" for n, a in task.signature.predicates if not n.startswith("type:"))
            raise ModelError(
                f"no shipped model for this domain (predicates {names}); train one with "
                "`gnnplan dataset`, `gnnplan train` and `gnnplan export`, then pass "
                "params={'model': 'path/to/model.onnx'}"
            )
        value_fn = load_value_function(path, threads=self.threads)
        value_fn.check_signature(task.signature, task.source.describe())
        return value_fn

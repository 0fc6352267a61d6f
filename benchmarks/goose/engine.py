"""The WL-GOOSE peer as a UP ``OneshotPlanner`` engine, ``wl-goose``.

Greedy best-first search with duplicate detection (the package's own
:func:`up_gnnplan.search.gbfs.gbfs`, on pymimir) guided by h(s) = w . x(s), where x(s) are the
WL features of the state's ILG computed by wlplan and w a linear model trained by
:mod:`benchmarks.goose.train`. Importing this module registers the engine in UP's global
environment, so ``gnnplan compare --register benchmarks.goose.engine --engine wl-goose`` runs it.

Params: ``model``, the model file (JSON, required); ``memory_mb``, the limit on the process's
resident memory (default: derived from the machine, as gnnplan's; 0: none). The time limit
given to ``solve`` counts from the call and is checked before each expansion and each chunk of
successors; every plan is validated on UP's simulator before it is returned. A problem whose
predicates differ from the model's domain is ``UNSUPPORTED_PROBLEM`` with a message.
"""

from __future__ import annotations

import time

import unified_planning as up
from unified_planning.engines import Credits, LogLevel, LogMessage, PlanGenerationResult, PlanGenerationResultStatus
from unified_planning.engines.engine import Engine
from unified_planning.engines.mixins.oneshot_planner import OneshotPlannerMixin
from up_gnnplan.plugins.engine import plan_status

try:  # when `gnnplan compare --register` preloads this module in its forkserver, tasks start with wlplan loaded
    import wlplan.data
    import wlplan.feature_generator  # noqa: F401
except ImportError:  # reported by the solve (INTERNAL_ERROR, how to install it)
    pass

NAME = "wl-goose"
CREDITS = Credits(
    name=NAME,
    author="up-gnnplan developers (after Chen, Trevizan & Thiébaux 2024)",
    contact="see the up-gnnplan project page",
    website="https://github.com/DillonZChen/goose",
    license="MIT",
    short_description="GBFS on a linear heuristic over WL features of the Instance Learning Graph (wlplan).",
    long_description="A re-implementation of the WL-GOOSE recipe for benchmarks: WL features of the ILG from "
    "wlplan, a rank-SVM or GP regression of h*, greedy best-first search on pymimir.",
)
INSTALL = "pip install 'up-gnnplan[peer]' (wlplan and scikit-learn)"


class LinearHeuristic:
    """h(s) = w . x(s) for a list of wlplan states of one problem (the model's weights are in the generator)."""

    def __init__(self, generator, problem):
        self.generator = generator
        generator.set_problem(problem)

    def __call__(self, states):
        import numpy as np

        # One call per chunk of successors. wlplan's per-state ``predict`` embeds and applies the
        # weights in C++; measured faster than one ``embed`` of the whole chunk through a
        # DomainDataset followed by a matrix product (46 against 85 us a state, Blocksworld, 29 blocks).
        predict = self.generator.predict
        return np.fromiter((predict(s) for s in states), dtype=np.float64, count=len(states))


class WLGooseEngine(Engine, OneshotPlannerMixin):
    """Solve problems of the model's domain by GBFS on the learned WL heuristic (see the module docstring)."""

    def __init__(self, model=None, memory_mb=None):
        Engine.__init__(self)
        OneshotPlannerMixin.__init__(self)
        from benchmarks.goose.features import ModelError, read_meta

        if not model:
            raise up.exceptions.UPUsageError(f"{NAME}: give the model file, params={{'model': PATH}}")
        try:
            self.meta = read_meta(model)
        except ModelError as error:
            raise up.exceptions.UPUsageError(f"{NAME}: {error}") from None
        self.model = str(model)
        self.memory_mb = None if memory_mb is None else int(memory_mb)

    @property
    def name(self) -> str:
        return NAME

    @staticmethod
    def supported_kind():
        from up_gnnplan.plugins.engine import GnnplanEngine

        return GnnplanEngine.supported_kind()  # the same fragment: both search on pymimir

    @staticmethod
    def supports(problem_kind) -> bool:
        return problem_kind <= WLGooseEngine.supported_kind()

    @staticmethod
    def satisfies(optimality_guarantee) -> bool:
        return optimality_guarantee == up.engines.OptimalityGuarantee.SATISFICING

    @staticmethod
    def get_credits(**kwargs) -> Credits:
        return CREDITS

    def _result(self, status, start, messages, metrics, plan=None) -> PlanGenerationResult:
        metrics = {**metrics, "engine_internal_time": f"{time.perf_counter() - start:.6f}"}
        return PlanGenerationResult(status, plan, self.name, metrics, [LogMessage(l, t) for l, t in messages])

    def _solve(self, problem, heuristic=None, timeout=None, output_stream=None) -> PlanGenerationResult:
        from up_gnnplan.errors import GnnplanError
        from up_gnnplan.limits import LimitReached, Limits, MemoryLimitReached
        from up_gnnplan.plugins.engine import check_timeout
        from up_gnnplan.plugins.validation import validate_plan
        from up_gnnplan.problems import Task
        from up_gnnplan.search.gbfs import gbfs
        from up_gnnplan.states.signature import PredicateSignature

        start = time.perf_counter()
        limits = Limits(check_timeout(timeout), self.memory_mb, start=start)
        messages, metrics = [], {"model": self.model}
        if heuristic is not None:
            messages.append((LogLevel.WARNING, f"{NAME} ignores the given heuristic: it uses its learned one"))

        def stop(error):
            memout = isinstance(error, (MemoryLimitReached, MemoryError))
            messages.append((LogLevel.ERROR if memout else LogLevel.INFO, str(error) or "out of memory"))
            status = PlanGenerationResultStatus.MEMOUT if memout else PlanGenerationResultStatus.TIMEOUT
            return self._result(status, start, messages, metrics)

        try:
            from benchmarks.goose.features import load_model, task_converter, wl_domain
        except ImportError as error:
            messages.append((LogLevel.ERROR, f"{NAME} needs wlplan: {error}; {INSTALL}"))
            return self._result(PlanGenerationResultStatus.INTERNAL_ERROR, start, messages, metrics)
        try:
            limits.check("before loading the task")
            task = Task(problem, check=limits.check)
            expected = PredicateSignature.from_json(self.meta["signature"])
            if task.signature != expected:
                difference = expected.describe_difference(task.signature)
                message = (f"the model {self.model} is for domain '{self.meta['domain']}', whose predicates differ "
                           f"from this problem's ({difference})")
                messages.append((LogLevel.ERROR, message))
                return self._result(PlanGenerationResultStatus.UNSUPPORTED_PROBLEM, start, messages, metrics)
            limits.check("before loading the model")
            generator, _, meta = load_model(self.model)
            converter, atoms = task_converter(wl_domain(meta["domain"], task.signature), task)
            heuristic_fn = LinearHeuristic(generator, converter.problem)
            # The peer's recipe as measured: plain GBFS, without gnnplan's symmetry pruning.
            result = gbfs(task, heuristic_fn, limits=limits, symmetry=False,
                          inputs=lambda states: [converter.state(atoms.fluent(s)) for s in states])
        except (LimitReached, MemoryError) as error:
            return stop(error)
        except GnnplanError as error:  # outside the supported fragment, or pymimir refused it
            messages.append((LogLevel.ERROR, str(error)))
            return self._result(PlanGenerationResultStatus.UNSUPPORTED_PROBLEM, start, messages, metrics)
        metrics.update(expanded=str(result.expanded), evaluated=str(result.evaluated))
        messages.append((LogLevel.INFO, f"gbfs: {result.status.value} after {result.expanded} expansions "
                                        f"{result.message}".strip()))
        if not result.solved:
            return self._result(plan_status(result.status), start, messages, metrics)
        plan = task.to_up_plan(result.actions)
        try:
            wrong = validate_plan(task, plan, result.actions, check=limits.check)
        except LimitReached as error:
            message = f"a plan of {len(plan.actions)} actions was found but not validated in time, so it is not returned"
            messages.append((LogLevel.INFO, message))
            return stop(error)
        if wrong:
            messages.append((LogLevel.ERROR, f"internal error: the plan found does not validate: {wrong}"))
            return self._result(PlanGenerationResultStatus.INTERNAL_ERROR, start, messages, metrics)
        metrics["plan_cost"] = f"{result.cost:g}"
        return self._result(PlanGenerationResultStatus.SOLVED_SATISFICING, start, messages, metrics, plan)


def register(env=None) -> None:
    """Register ``wl-goose`` in ``env`` (UP's global environment by default)."""
    from unified_planning.environment import get_environment

    env = env or get_environment()
    if NAME not in env.factory.engines:
        env.factory.add_engine(NAME, __name__, "WLGooseEngine")


register()

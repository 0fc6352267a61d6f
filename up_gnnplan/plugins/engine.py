"""The ``gnnplan`` UP engine: a learned value function guiding a policy or a search.

Follows UP's ``OneshotPlanner`` contract: ``supported_kind``, ``supports``, ``_solve`` and
credits; options arrive from ``params={...}`` and are checked when the engine is built
(:data:`PARAMS` says what each accepts):

- ``model``: a shipped model's name or an ONNX file; default: the shipped model whose
  predicate signature matches the problem's domain;
- ``mode``: ``policy`` (the greedy policy of V), ``gbfs`` (greedy best-first search on V),
  ``dual-gbfs`` (GBFS alternating between V and the FF heuristic, as LAMA alternates its
  heuristics), ``action-policy`` (the greedy policy of an action head's scores), ``policy-best-first``
  (best-first search on the action head's log-probabilities), ``dual-policy-best-first`` (the
  same alternating with FF), or ``auto`` (default: the
  action policy when the model has an action head, else the value policy; then, if it gave
  up, GBFS on V when the model has a value head, else policy-best-first, with the time left;
  alternating with FF (``fallback="model+ff"``, default: dual-gbfs, dual-policy-best-first;
  measured: Satellite 30/30 against 15/30 with ``fallback="model"``, Transport 25 against 19));
- ``max_steps``: the policy's step limit (1000, as in the paper);
- ``astray_factor``: in mode auto, the policy also gives up after ``astray_factor`` times FF's
  estimate of the initial state's cost plus 50 steps (at most ``max_steps``), leaving the rest of
  the time to the fallback (4, the default; 0: off, the policy walks up to ``max_steps``;
  measured on the 330 tasks of the standing comparison, benchmarks/RESULTS.md);
- ``seed_fallback``: in mode auto, the fallback search starts with the states of the path the
  policy walked before it gave up in its open lists (at the policy's values, and by their own FF
  value in the dual searches), so it can go on from the best of them instead of finding them
  again; the initial state stays open, so the search stays complete (True, the default; False:
  the fallback starts from the initial state alone);
- ``action_elimination``: every plan gnnplan's own searches find is shortened by greedy action
  elimination before it is validated (:mod:`up_gnnplan.search.elimination`: each action whose
  removal, with the later actions it made applicable, still reaches the goal is left out; at most
  half the time left; True, the default; False: the plan as found);
- ``symmetry``: one successor of each class of symmetric actions (actions whose arguments
  differ by swapping interchangeable objects, such as Spanner's spanners: their successors are
  the same state up to renaming, so a model gives them one value and they reach a goal alike):
  the value policy values one, GBFS and policy-best-first keep one (the latter at the class's
  summed probability); exact, :mod:`up_gnnplan.search.symmetry`; True, the default: Spanner 5/5
  against 2/5 on problems 3-10x the training size, benchmarks/RESULTS.md; False: every successor);
- ``threads``: onnxruntime intra-op threads (1);
- ``memory_mb``: the limit on the process's resident memory (default: derived from the
  machine, see :mod:`up_gnnplan.limits`; 0: no limit);
- ``device``: ``auto`` (CUDA when onnxruntime-gpu offers it, else the CPU), ``cpu`` or ``cuda``;
- mode ``ground`` (Funkquist et al. 2024) binds an existential goal with a goal-grounding model
  (``grounding_model``: a name or file; default: the shipped one of the domain), dropping
  bindings that break a static atom or an inequality, or that ask two atoms an invariant of the
  domain never lets hold together (one ball in two rooms), unless ``static_filter`` is False, then
  solves the ground problem with ``planner`` (``lama-first``: Fast Downward through
  up-fast-downward; ``gnnplan``: this engine's auto mode with the domain's value or policy
  model), trying up to ``max_groundings`` bindings while the planner proves them unsolvable
  (see :mod:`up_gnnplan.grounding.solve`); ``binding_beam`` k > 1 takes the first bindings from
  a beam of width k over the model's values, ordered by FF of the ground problem (1, the
  default: the paper's greedy binding; :mod:`up_gnnplan.grounding.bind`); ``binding_entailment``
  (default True) makes each binding that adds nothing to the goal without the model (another
  variable already bound to an object that satisfies all this one asks; beyond the paper; False:
  the paper's greedy binding asks the model at every step).

The time limit counts from the moment ``solve`` is called: building the task, loading the
model, the search and the validation of the plan all count, and each is checked between units
of work short enough for the limit to hold within 5% (or 0.5 s). Reaching the memory limit
ends the solve with ``MEMOUT`` and a message naming what was too large. Every plan is
validated before it is returned; outcomes map to UP statuses in one function.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import unified_planning as up
from unified_planning.engines import Credits, LogLevel, LogMessage, PlanGenerationResult, PlanGenerationResultStatus
from unified_planning.engines.engine import Engine
from unified_planning.engines.mixins.oneshot_planner import OneshotPlannerMixin
from unified_planning.model import ProblemKind

MODES = ("auto", "policy", "gbfs", "dual-gbfs", "action-policy", "policy-best-first", "dual-policy-best-first", "ground")
# What mode auto searches with after a policy that gave up: the model alone (GBFS on V, or
# best-first on the action log-probabilities), or alternated with the FF heuristic.
FALLBACKS = ("model", "model+ff")
ELIMINATION_SHARE = 0.5  # of the time left when a plan is found, at most, for action elimination
PLANNERS = ("lama-first", "gnnplan")  # as up_gnnplan.grounding.preprocess.PLANNERS
# The head each explicit mode needs: "value" (a value function) or "actions" (an action scorer).
MODE_NEEDS = {"policy": "value", "gbfs": "value", "dual-gbfs": "value", "action-policy": "actions",
              "policy-best-first": "actions", "dual-policy-best-first": "actions"}
DEVICES = ("auto", "cpu", "cuda")  # as up_gnnplan.runtime.providers.DEVICES, without importing the runtime

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


def _text(value):
    if isinstance(value, bool) or not isinstance(value, (str, bytes)) and not hasattr(value, "__fspath__"):
        raise ValueError
    return str(value) if not isinstance(value, bytes) else value.decode()


def _integer(minimum: int) -> Callable[[Any], int]:
    def convert(value):
        if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
            raise ValueError
        number = int(value)  # accepts "100": UP passes params as strings too
        if number < minimum:
            raise ValueError
        return number

    return convert


def _number(minimum: float) -> Callable[[Any], float]:
    def convert(value):
        if isinstance(value, bool):
            raise ValueError
        number = float(value)  # accepts "4": UP passes params as strings too
        if not math.isfinite(number) or number < minimum:
            raise ValueError
        return number

    return convert


def _flag(value) -> bool:
    """Accept True/False, and their spellings on a command line (``--engine-param gnnplan:static_filter=false``)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def convert(value):
        if value not in options:
            raise ValueError
        return value

    return convert


@dataclass(frozen=True)
class Param:
    """One engine option: its default, how a given value is checked, and what it accepts (for messages)."""

    default: Any
    convert: Callable[[Any], Any]
    accepts: str


PARAMS = {
    "model": Param(None, _text, "a shipped model's name or the path of an ONNX file"),
    "mode": Param("auto", _choice(MODES), "one of " + ", ".join(MODES)),
    "fallback": Param("model+ff", _choice(FALLBACKS), "one of " + ", ".join(FALLBACKS)),
    "max_steps": Param(1000, _integer(1), "an integer >= 1"),
    "astray_factor": Param(4.0, _number(0.0), "a number >= 0 (0: off)"),
    "seed_fallback": Param(True, _flag, "True or False"),
    "action_elimination": Param(True, _flag, "True or False"),
    "symmetry": Param(True, _flag, "True or False"),
    "threads": Param(1, _integer(1), "an integer >= 1"),
    "memory_mb": Param(None, _integer(0), "an integer number of MB (0: no limit)"),
    "device": Param("auto", _choice(DEVICES), "one of " + ", ".join(DEVICES)),
    "grounding_model": Param(None, _text, "a shipped goal-grounding model's name or the path of an ONNX file"),
    "static_filter": Param(True, _flag, "True or False"),
    "planner": Param("lama-first", _choice(PLANNERS), "one of " + ", ".join(PLANNERS)),
    "max_groundings": Param(5, _integer(1), "an integer >= 1"),
    "binding_beam": Param(1, _integer(1), "an integer >= 1"),
    "binding_entailment": Param(True, _flag, "True or False"),
}


def check_params(given: dict) -> dict:
    """Return every engine option with ``given`` checked and converted; raise UPUsageError naming a bad one."""
    unknown = sorted(set(given) - set(PARAMS))
    if unknown:
        raise up.exceptions.UPUsageError(
            f"gnnplan: unknown param(s) {', '.join(map(repr, unknown))}; known: {', '.join(PARAMS)}")
    values = {name: param.default for name, param in PARAMS.items()}
    for name, value in given.items():
        if value is None and PARAMS[name].default is None:
            continue
        try:
            values[name] = PARAMS[name].convert(value)
        except (TypeError, ValueError):
            raise up.exceptions.UPUsageError(
                f"gnnplan: param {name!r} must be {PARAMS[name].accepts}, got {value!r}") from None
    return values


def check_timeout(timeout) -> float | None:
    """Return ``timeout`` as seconds (None: no limit); refuse a negative or non-finite one."""
    if timeout is None:
        return None
    try:
        seconds = float(timeout)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(timeout, bool) or not math.isfinite(seconds) or seconds < 0:
        raise up.exceptions.UPUsageError(f"gnnplan: timeout must be a finite number of seconds >= 0, got {timeout!r}")
    return seconds


def plan_status(search_status) -> PlanGenerationResultStatus:
    """Map a search outcome to UP's plan-generation status."""
    from up_gnnplan.search import Status

    return {
        Status.SOLVED: PlanGenerationResultStatus.SOLVED_SATISFICING,
        Status.UNSOLVABLE: PlanGenerationResultStatus.UNSOLVABLE_PROVEN,
        Status.GAVE_UP: PlanGenerationResultStatus.UNSOLVABLE_INCOMPLETELY,
        Status.TIMEOUT: PlanGenerationResultStatus.TIMEOUT,
        Status.MEMOUT: PlanGenerationResultStatus.MEMOUT,
    }[search_status]


class GnnplanEngine(Engine, OneshotPlannerMixin):
    """Solve problems of known domains with a learned value function (see the module docstring)."""

    def __init__(self, **params):
        Engine.__init__(self)
        OneshotPlannerMixin.__init__(self)
        values = check_params(params)
        self.model, self.mode, self.max_steps = values["model"], values["mode"], values["max_steps"]
        self.fallback, self.astray_factor = values["fallback"], values["astray_factor"]
        self.symmetry, self.seed_fallback = values["symmetry"], values["seed_fallback"]
        self.action_elimination = values["action_elimination"]
        self.threads, self.memory_mb, self.device = values["threads"], values["memory_mb"], values["device"]
        self.grounding = {name: values[name] for name in ("grounding_model", "static_filter", "planner", "max_groundings",
                                                              "binding_beam", "binding_entailment")}
        self._called_at = self._kind = None
        self.clock_start = None  # a perf_counter value the next solve's limit counts from (default: its call)
        if self.device != "auto":  # an explicit device that this installation cannot provide is refused now
            from up_gnnplan.errors import GnnplanError
            from up_gnnplan.runtime.providers import providers_for

            try:
                providers_for(self.device)
            except GnnplanError as error:
                raise up.exceptions.UPUsageError(f"gnnplan: param 'device': {error}") from None

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

    def solve(self, problem, heuristic=None, timeout=None, output_stream=None, warm_start_plan=None, **kwargs):
        """Solve ``problem``; the time limit counts from this call, or from :attr:`clock_start` where
        a caller set it (``gnnplan solve`` sets it to the command's start, so that reading the
        files counts too; it holds for one solve).

        This is UP's ``OneshotPlannerMixin.solve`` with one change: a problem outside the
        supported fragment gets our message naming its features (and the file it came from)
        instead of UP's "cannot establish whether gnnplan can solve this problem".
        """
        check_timeout(timeout)
        self._called_at = self.clock_start if self.clock_start is not None else time.perf_counter()
        self.clock_start = None
        try:
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
        finally:
            self._called_at = self._kind = None

    def _result(self, status, plan=None, start=None, messages=(), metrics=None) -> PlanGenerationResult:
        metrics = dict(metrics or {})
        if start is not None:
            metrics["engine_internal_time"] = f"{time.perf_counter() - start:.6f}"
        logs = [LogMessage(level, text) for level, text in messages]
        return PlanGenerationResult(status, plan, self.name, metrics, logs)

    def _solve(self, problem, heuristic=None, timeout=None, output_stream=None) -> PlanGenerationResult:
        from up_gnnplan.errors import GnnplanError
        from up_gnnplan.limits import Limits, LimitReached, MemoryLimitReached
        from up_gnnplan.problems import Task
        from up_gnnplan.runtime.providers import RuntimeSetupError, device_note
        from up_gnnplan.search import SEARCHES, Inputs, Status

        start = self._called_at or time.perf_counter()
        limits = Limits(check_timeout(timeout), self.memory_mb, start=start)
        messages = []
        if heuristic is not None:
            messages.append((LogLevel.WARNING, "gnnplan ignores the given heuristic: it uses its learned value function"))
        metrics = {"mode": self.mode, "memory_limit_mb": str(limits.memory_mb)}

        def stop(error):
            status = PlanGenerationResultStatus.MEMOUT if isinstance(error, MemoryLimitReached) else (
                PlanGenerationResultStatus.TIMEOUT)
            messages.append((LogLevel.ERROR if status == PlanGenerationResultStatus.MEMOUT else LogLevel.INFO,
                             str(error)))
            metrics["peak_memory_mb"] = f"{limits.peak_mb:.0f}"
            return self._result(status, start=start, messages=messages, metrics=metrics)

        if self.mode == "ground":
            from up_gnnplan.grounding.solve import solve_by_grounding

            status, plan = solve_by_grounding(self, problem, limits, messages, metrics)
            return self._result(status, plan, start, messages, metrics)
        try:
            limits.check("before loading the task")
            task = Task(problem, check=limits.check, kind=self._kind)
            limits.check("after building the task")
            _expect_first_generation(task, limits)
            value_fn = self._value_function(task, limits)
            searches_of(self.mode, value_fn, self.fallback)  # refuses a mode the model has no head for
            metrics.update(model=str(value_fn.path), provider=value_fn.provider)
            messages.append((LogLevel.INFO, f"model {value_fn.path.name} ({value_fn.architecture} for domain "
                                            f"'{value_fn.domain}') on {value_fn.provider}"))
            note = device_note(self.device, value_fn.provider)
            if note:
                messages.append((LogLevel.WARNING, note))
            if task.has_existential_goal:
                messages.append((LogLevel.WARNING, EXISTENTIAL_GOAL_WARNING))
            inputs = Inputs(task)
        except LimitReached as error:
            return stop(error)
        except MemoryError:
            return stop(MemoryLimitReached(f"out of memory while loading the task (limit {limits.memory_mb} MB)"))
        except GnnplanError as error:
            messages.append((LogLevel.ERROR, str(error)))
            # A missing or unusable ONNX runtime is this installation's fault, not the problem's.
            status = (PlanGenerationResultStatus.INTERNAL_ERROR if isinstance(error, RuntimeSetupError)
                      else PlanGenerationResultStatus.UNSUPPORTED_PROBLEM)
            return self._result(status, start=start, messages=messages, metrics=metrics)

        result = None
        try:
            for name in searches_of(self.mode, value_fn, self.fallback):
                guide = value_fn if MODE_NEEDS[name] == "value" else value_fn.scorer
                kwargs = {"max_steps": self.max_steps} if name in ("policy", "action-policy") else {}
                if kwargs and self.mode == "auto" and self.astray_factor:
                    kwargs["max_steps"] = self._astray_steps(task, limits, messages)
                if name != "action-policy":  # its scores need no successor states to be valued
                    kwargs["symmetry"] = self.symmetry
                if result is not None and self.seed_fallback:  # the policy gave up: go on from its path
                    kwargs["seed"] = result
                began = time.perf_counter()
                result = SEARCHES[name](task, guide, limits=limits, inputs=inputs, **kwargs)
                unit = "steps" if name in ("policy", "action-policy") else "expansions"
                messages.append((LogLevel.INFO, f"{name}: {result.status.value} after {result.expanded} {unit} in "
                                                f"{time.perf_counter() - began:.1f} s {result.message}".strip()))
                if result.status is not Status.GAVE_UP:
                    break
        except MemoryError:
            return stop(MemoryLimitReached(f"out of memory during the search (limit {limits.memory_mb} MB)"))
        metrics.update(expanded=str(result.expanded), evaluated=str(result.evaluated),
                       peak_memory_mb=f"{limits.peak_mb:.0f}")
        if result.status is Status.MEMOUT:
            messages[-1] = (LogLevel.ERROR, messages[-1][1])
        if not result.solved:
            return self._result(plan_status(result.status), start=start, messages=messages, metrics=metrics)
        return self._validated(task, result, limits, start, messages, metrics)

    def _validated(self, task, result, limits, start, messages, metrics) -> PlanGenerationResult:
        """Return the SOLVED result once its plan validates within the limits (else TIMEOUT or an error)."""
        from up_gnnplan.limits import LimitReached, MemoryLimitReached
        from up_gnnplan.plugins.validation import validate_plan

        if self.action_elimination and len(result.actions) > 1:
            self._eliminate(task, result, limits, messages)
        plan = task.to_up_plan(result.actions)
        try:
            problem_error = validate_plan(task, plan, result.actions, check=limits.check)
        except LimitReached as error:
            messages.append((LogLevel.INFO, f"a plan of {len(plan.actions)} actions was found but not validated "
                                            f"in time, so it is not returned: {error}"))
            status = (PlanGenerationResultStatus.MEMOUT if isinstance(error, MemoryLimitReached)
                      else PlanGenerationResultStatus.TIMEOUT)
            return self._result(status, start=start, messages=messages, metrics=metrics)
        if problem_error:
            messages.append((LogLevel.ERROR, f"internal error: the plan found does not validate: {problem_error}"))
            return self._result(PlanGenerationResultStatus.INTERNAL_ERROR, start=start, messages=messages,
                                metrics=metrics)
        metrics["plan_cost"] = f"{result.cost:g}"
        return self._result(PlanGenerationResultStatus.SOLVED_SATISFICING, plan, start, messages, metrics)

    @staticmethod
    def _eliminate(task, result, limits, messages) -> None:
        """Leave out the actions the plan does not need (:mod:`up_gnnplan.search.elimination`), within
        ``ELIMINATION_SHARE`` of the time left (the rest stays for validating the plan)."""
        from up_gnnplan.search.elimination import eliminate_actions

        began = time.perf_counter()
        remaining = limits.deadline.remaining()
        shorter = eliminate_actions(task, result.actions,
                                    None if remaining is None else began + ELIMINATION_SHARE * remaining, result.cost)
        if shorter.removed:
            result.actions, result.cost = shorter.actions, shorter.cost
        messages.append((LogLevel.INFO, f"{shorter.note} in {time.perf_counter() - began:.1f} s"))

    def _value_function(self, task, limits):
        """Return the ONNX value function for ``task``: the chosen model, or the shipped one."""
        from up_gnnplan.models_zoo import find_model, no_model_message, resolve
        from up_gnnplan.runtime import ModelError, load_value_function

        path = resolve(self.model) if self.model else find_model(task.signature, MODE_NEEDS.get(self.mode))
        if path is None:
            raise ModelError(no_model_message(task.signature))
        limits.check("before loading the model")
        value_fn = load_value_function(path, threads=self.threads, device=self.device)
        from up_gnnplan.grounding.encoding import is_grounding_signature

        if is_grounding_signature(value_fn.signature):
            raise ModelError(f"{path}: a goal-grounding model (it values bindings of existential goals, not states); "
                             f"use it with mode 'ground' and grounding_model={str(path)!r} (--grounding-model)")
        value_fn.check_signature(task.signature, task.source.describe(), task.action_signature)
        return value_fn


    def _astray_steps(self, task, limits, messages) -> int:
        """The policy's step limit in mode auto with ``astray_factor``: that many times FF's estimate
        of the initial state's cost, plus 50 steps, at most ``max_steps`` (``max_steps`` when FF is
        left out: too many actions to ground, or a dead end it cannot rank)."""
        from up_gnnplan.limits import GENERATING, LimitReached
        from up_gnnplan.search.ff import ASTRAY_FLOOR, FFHeuristic

        try:
            heuristic, note = FFHeuristic.for_search(task, limits, limits.uninterruptible(GENERATING))
            estimate = heuristic(task.initial_state()) if heuristic is not None else None
        except LimitReached:  # the policy's own first check says so
            return self.max_steps
        if heuristic is None:
            messages.append((LogLevel.INFO, f"policy step limit {self.max_steps} (no FF estimate: {note})"))
        if estimate is None:
            return self.max_steps
        steps = min(self.max_steps, ASTRAY_FLOOR + math.ceil(self.astray_factor * estimate))
        messages.append((LogLevel.INFO, f"policy step limit {steps} ({self.astray_factor:g} x FF's estimate "
                                        f"{estimate:g} of the initial state + {ASTRAY_FLOOR})"))
        return steps


# Generating the applicable actions of a state, per action: 11 µs on a quiet machine, 25 µs on a
# loaded one (130,575 Childsnack actions in 1.4 s and 3.3 s), and up to 1 KB each while they are held.
GENERATION_SECONDS_PER_ACTION = 25e-6
GENERATION_KB_PER_ACTION = 1.0


def _expect_first_generation(task, limits) -> None:
    """Say before any search how long the initial state's action generation will take, or refuse it.

    That generation is one pymimir call that cannot be interrupted, and the first of its kind has
    no earlier run to go by; the estimate of the state's applicable actions stands in for one, so
    a state with millions of them (Childsnack, 100 children: 37 s and 1.9 GB) is refused by name
    instead of breaking the limits.
    """
    from up_gnnplan.limits import GENERATING, MemoryLimitReached
    from up_gnnplan.problems.size import estimate_initial_actions

    actions = estimate_initial_actions(task.up_problem)
    memory_mb = actions * GENERATION_KB_PER_ACTION / 1024
    headroom = limits.headroom_mb()
    if headroom is not None and memory_mb > headroom:
        raise MemoryLimitReached(f"memory limit of {limits.memory_mb} MB reached before generating the actions of "
                                 f"the initial state: about {actions:,} of them would take about {memory_mb:,.0f} MB, "
                                 f"more than the {headroom:,.0f} MB left")
    limits.uninterruptible(GENERATING).expect(actions * GENERATION_SECONDS_PER_ACTION,
                                              f"estimated for its about {actions:,} applicable actions")


def searches_of(mode: str, model, fallback: str = "model+ff") -> list[str]:
    """Return the searches ``mode`` runs with ``model``, in order (each after the previous gave up);
    in mode auto, ``fallback`` "model+ff" makes the search after the policy a dual one (with FF).

    Raises :class:`~up_gnnplan.runtime.ModelError` when an explicit mode needs a head the model lacks.
    """
    from up_gnnplan.runtime import ModelError

    if mode == "auto":
        first = "action-policy" if model.has_actions else "policy"
        second = "gbfs" if model.has_value else "policy-best-first"
        return [first, f"dual-{second}" if fallback == "model+ff" else second]
    need = MODE_NEEDS[mode]
    if not (model.has_value if need == "value" else model.has_actions):
        heads = " and ".join(model.outputs)
        other = "action-policy, policy-best-first" if need == "value" else "policy, gbfs"
        raise ModelError(f"mode '{mode}' needs a model with a {'value' if need == 'value' else 'action'} head; "
                         f"{model.path.name} computes {heads} (use mode auto or {other})")
    return [mode]


EXISTENTIAL_GOAL_WARNING = (
    "the goal has existentially quantified conjuncts, which the model cannot see (they give it no goal atoms): "
    "the policy and the search are guided by the rest of the goal only, so plans may be long or not found; "
    "mode 'ground' binds them with a learned goal-grounding model first (Funkquist et al. 2024)")

"""Compare planners: engines × problems × one time limit → per-task results and a report.

An engine is named by a spec: a UP ``OneshotPlanner`` name (``fast-downward`` is LAMA-first
through up-fast-downward), and for ``gnnplan`` optionally a mode: ``gnnplan:policy``,
``gnnplan:gbfs``, ``gnnplan:auto`` (the same as ``gnnplan``). Problems come from a domain file
and its problem files, or from suite folders (see :func:`suite_problems`).

Engines from other packages take part once a module that registers them in UP is named in
``register`` (``gnnplan compare --register MODULE``): it is imported before the engine names are
parsed, and again in each task's process. ``engine_params`` give any engine its params, for all
domains or one (``"wl-goose:model=blocksworld=bw.json"``, see :func:`parse_engine_param`).

Usage::

    from up_gnnplan.compare import compare, file_problems

    problems = file_problems("domain.pddl", ["p01.pddl", "p02.pddl"])
    outcome = compare(["gnnplan:gbfs", "fast-downward"], problems, "out", timeout=60,
                      model="model.onnx")
    print(outcome.summary)                 # also in out/summary.md

Every task runs in its own process with a wall-clock and a memory limit, on this machine or,
with ``executor="ray"``, on a Ray cluster (:mod:`up_gnnplan.executors`); each result is
appended to ``out/results.jsonl`` as it finishes (``resume=True`` skips recorded tasks), and
every plan of every engine is validated in that process. See :mod:`.runner` and :mod:`.report`.

Nothing fails silently: before any task runs, every problem must be for its domain file's domain
(:func:`check_problems`) and every engine must build with its params and open its models
(:func:`check_engines`); after the run, an engine whose every task ended in the same error
status is named in ``Comparison.faults`` (:func:`engine_faults`), and ``gnnplan compare`` fails.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = [
    "Comparison", "EngineParam", "EngineSpec", "FAULTS", "GRACE", "ProblemEntry", "RESULTS", "Task", "check_engines",
    "check_problems", "compare", "engine_faults", "file_problems", "is_solved", "make_tasks", "natural_key",
    "parse_engine", "parse_engine_param", "read_results", "register_modules", "suite_problems",
]

RESULTS = "results.jsonl"
GRACE = 10.0  # seconds past the time limit before a task's process is killed
SOLVED = ("solved_satisficing", "solved_optimally")


@dataclass(frozen=True)
class ProblemEntry:
    """One problem of a comparison: its domain's name, its own name, and the two files."""

    domain: str
    problem: str
    domain_file: Path
    problem_file: Path


def natural_key(path: Path | str) -> list:
    """Sort key that puts p2 before p10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(path))]


def _domain_name(domain_file: Path) -> str:
    """Name a domain by its folder (``blocksworld/domain.pddl``) or else by the file's stem."""
    return domain_file.resolve().parent.name if domain_file.name == "domain.pddl" else domain_file.stem


def file_problems(domain_file, problem_files, domain_name: str | None = None) -> list[ProblemEntry]:
    """Return the entries of a domain file and its problem files (named by file name)."""
    domain_file = Path(domain_file)
    if not domain_file.is_file():
        raise FileNotFoundError(f"{domain_file}: no such domain file")
    name = domain_name or _domain_name(domain_file)
    entries = []
    for problem in problem_files:
        problem = Path(problem)
        if not problem.is_file():
            raise FileNotFoundError(f"{problem}: no such problem file")
        entries.append(ProblemEntry(name, problem.name, domain_file, problem))
    return entries


def suite_problems(folder, max_up: int = 2) -> list[ProblemEntry]:
    """Return the problems of a suite folder: every ``*.pddl`` in it but the domain files.

    The domain file is ``domain.pddl`` in the folder or in one of its ``max_up`` parents
    (``blocksworld/testing/easy`` layouts); the domain is named after the folder that holds it,
    and each problem by its path below that folder, so two tiers of one domain never collide.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    resolved = folder.resolve()
    holder = next((d for d in [resolved, *resolved.parents][: max_up + 1] if (d / "domain.pddl").is_file()), None)
    if holder is None:
        raise FileNotFoundError(f"{folder}: no domain.pddl in it or in its {max_up} parent folders")
    problems = sorted((p for p in folder.glob("*.pddl") if "domain" not in p.name.lower()), key=natural_key)
    if not problems:
        raise FileNotFoundError(f"{folder}: no problem files (*.pddl other than the domain)")
    return [ProblemEntry(holder.name, str(p.resolve().relative_to(holder)), holder / "domain.pddl", p)
            for p in problems]


@dataclass(frozen=True)
class EngineSpec:
    """A parsed engine spec: the UP engine name and, for gnnplan, its mode."""

    name: str
    mode: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}:{self.mode}" if self.mode else self.name

    @property
    def is_gnnplan(self) -> bool:
        return self.name == "gnnplan"


def register_modules(names) -> None:
    """Import each module of ``names`` (which registers its engines in UP); raise ValueError if one fails."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001  (whatever the module raises, the user named it)
            raise ValueError(f"cannot import the engine module {name!r} (--register): "
                             f"{type(error).__name__}: {error}") from None


@dataclass(frozen=True)
class EngineParam:
    """One param of one engine (a UP engine name or an engine spec), for one domain or (None) for all."""

    engine: str
    key: str
    value: str
    domain: str | None = None

    def applies(self, spec: EngineSpec, domain: str) -> bool:
        return self.engine in (spec.name, spec.label) and self.domain in (None, domain)


def parse_engine_param(text: str) -> EngineParam:
    """Parse ``ENGINE:KEY=[DOMAIN=]VALUE`` (``wl-goose:model=blocksworld=bw.json``, ``gnnplan:threads=2``).

    ENGINE is a UP engine name or an engine spec (``gnnplan:gbfs:threads=2``); the text before a
    second ``=`` is a domain when it holds no ``/`` (the rule of ``--model DOMAIN=MODEL``).
    """
    head, sep, rest = text.partition("=")
    engine, colon, key = head.rpartition(":")
    if not (sep and colon and engine.strip() and key.strip()):
        raise ValueError(f"engine param {text!r}: write ENGINE:KEY=VALUE or ENGINE:KEY=DOMAIN=VALUE")
    domain, sep, value = rest.partition("=")
    if not sep or "/" in domain:
        domain, value = None, rest
    return EngineParam(engine.strip(), key.strip(), value, domain)


def parse_models(items) -> dict:
    """Return the ``--model`` texts as {domain: model}, key None for every other domain: ``DOMAIN=MODEL``
    names a domain (its DOMAIN holds no ``/``), any other text is the model of every domain."""
    model: dict = {}
    for item in items:
        domain, sep, path = item.partition("=")
        if sep and "/" not in domain:
            model[domain] = path
        else:
            model[None] = item
    return model


def _install_hint(name: str, registered) -> str:
    """Return why engine ``name`` is not there, if it is one UP knows by name: its package is missing."""
    from unified_planning.engines.factory import DEFAULT_ENGINES

    if name in registered:
        return " (registered, but not a OneshotPlanner)"
    if name not in DEFAULT_ENGINES:
        return " (an engine of another package needs --register MODULE)"
    package = DEFAULT_ENGINES[name][0].split(".")[0].replace("_", "-")
    install = "'up-gnnplan[fast-downward]'" if package == "up-fast-downward" else package
    return f": it is not installed (pip install {install})"


def parse_engine(text: str) -> EngineSpec:
    """Parse ``gnnplan[:MODE]`` or any registered UP OneshotPlanner name; raise ValueError if unknown."""
    import up_gnnplan  # noqa: F401  (registers gnnplan)
    from unified_planning.environment import get_environment

    from up_gnnplan.search.modes import MODES

    name, sep, mode = text.strip().partition(":")
    engines = get_environment().factory.engines
    planners = sorted(n for n in engines if get_environment().factory.engine(n).is_oneshot_planner())
    if name not in planners:
        raise ValueError(f"unknown engine {name!r}{_install_hint(name, engines)}; the registered OneshotPlanners "
                         f"are {', '.join(planners)}")
    if name == "gnnplan":
        mode = mode or "auto"
        if mode not in MODES:
            raise ValueError(f"unknown gnnplan mode {mode!r} in {text!r}; choose one of {', '.join(MODES)}")
        return EngineSpec(name, mode)
    if sep:
        raise ValueError(f"{text!r}: only gnnplan takes a mode (gnnplan:MODE, MODE one of {', '.join(MODES)})")
    return EngineSpec(name)


@dataclass(frozen=True)
class Task:
    """One engine on one problem under one time limit."""

    engine: str  # the engine spec's label
    domain: str
    problem: str
    domain_file: str
    problem_file: str
    timeout: float
    model: str | None = None  # gnnplan engines only
    params: tuple[tuple[str, str], ...] = ()  # more engine params, (key, value) sorted by key

    def __post_init__(self):  # a task read back from JSON has lists: keep it hashable
        object.__setattr__(self, "params", tuple(tuple(p) for p in self.params))

    @property
    def key(self) -> tuple:
        return record_key(asdict(self))

    def engine_call(self) -> tuple[str, dict]:
        """Return the UP engine name and its params."""
        name, _, mode = self.engine.partition(":")
        params = {"mode": mode} if mode else {}
        if self.model:
            params["model"] = self.model
        params.update(self.params)
        return name, params


def record_key(record: dict) -> tuple:
    """Return what identifies a task: engine, domain, problem, time limit (and gnnplan's model, engine params)."""
    params = tuple(tuple(p) for p in record.get("params") or ())
    return record["engine"], record["domain"], record["problem"], float(record["timeout"]), record.get("model"), params


def is_solved(record: dict) -> bool:
    """Return whether a record holds a plan that was not found invalid."""
    return record.get("status") in SOLVED and record.get("valid") is not False


def _model_for(model, domain: str) -> str | None:
    if isinstance(model, dict):
        model = model.get(domain, model.get(None))
    if model is None:
        return None
    path = Path(model)
    return str(path.resolve()) if path.suffix == ".onnx" or path.is_file() else str(model)  # a file or a zoo name


def _params_for(engine_params, spec: EngineSpec, domain: str) -> tuple[tuple[str, str], ...]:
    """Return the params of ``spec`` on ``domain``: a domain's own value wins over the one for all."""
    chosen = {}
    for param in sorted(engine_params, key=lambda p: p.domain is not None):
        if param.applies(spec, domain):
            path = Path(param.value)
            chosen[param.key] = str(path.resolve()) if path.is_file() else param.value  # tasks run elsewhere
    return tuple(sorted(chosen.items()))


def make_tasks(specs, problems, timeout: float, model=None, engine_params=()) -> list[Task]:
    """Return the tasks of every engine on every problem, the engines taking turns per problem."""
    return [Task(spec.label, p.domain, p.problem, str(p.domain_file), str(p.problem_file), float(timeout),
                 _model_for(model, p.domain) if spec.is_gnnplan else None, _params_for(engine_params, spec, p.domain))
            for p in problems for spec in specs]


def check_problems(problems: list[ProblemEntry]) -> None:
    """Raise at the first problem whose ``(:domain NAME)`` is not the name its domain file defines."""
    from up_gnnplan.problems.loading import check_domain_names

    by_domain: dict[Path, list[Path]] = {}
    for entry in problems:
        by_domain.setdefault(Path(entry.domain_file), []).append(Path(entry.problem_file))
    for domain_file, files in by_domain.items():
        check_domain_names(domain_file, files)


def _check_domains_named(model, engine_params, problems: list[ProblemEntry]) -> None:
    """Refuse a ``DOMAIN=MODEL`` or ``ENGINE:KEY=DOMAIN=VALUE`` whose domain has no problem: it would be ignored."""
    known = sorted({p.domain for p in problems})
    named = [(f"--model {d}={m}", d) for d, m in (model.items() if isinstance(model, dict) else ()) if d is not None]
    named += [(f"engine param {p.engine}:{p.key}={p.domain}={p.value}", p.domain) for p in engine_params if p.domain]
    for what, domain in named:
        if domain not in known:
            raise ValueError(f"{what}: no problem of domain {domain!r} in the comparison (its domains: "
                             f"{', '.join(known)})")


def _names_a_file(key: str, value) -> bool:
    """Return whether engine param ``key=value`` names a file: a ``model``/``*_model``/``*_file`` param
    whose value is a path (``models/bw.json``, ``bw.json``)."""
    if not isinstance(value, str) or not (key == "model" or key.endswith(("_model", "_file"))):
        return False
    return len(Path(value).parts) > 1 or Path(value).suffix[1:].isalpha()


def _readable(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except OSError:
        return False
    return True


def _check_model(value: str, where: str) -> None:
    """Open gnnplan's model ``value`` (a shipped name or an ONNX file) as its tasks will; raise ModelError if it fails."""
    from up_gnnplan.models_zoo import resolve
    from up_gnnplan.runtime.value_function import ModelError, OnnxValueFunction

    try:
        OnnxValueFunction(resolve(value), device="cpu")
    except ModelError as error:
        raise ModelError(f"{where}: {error}") from None


def check_engines(tasks: list[Task]) -> None:
    """Raise ValueError or GnnplanError naming the first engine configuration of ``tasks`` that cannot run.

    Each engine is built once per distinct set of params (per domain where they differ), as each
    task's process builds it, so that unknown or invalid params and models that are missing or
    unreadable end the comparison before any task runs instead of failing every task of the engine.
    """
    from unified_planning.environment import get_environment
    from unified_planning.shortcuts import OneshotPlanner

    from up_gnnplan.errors import GnnplanError

    configs: dict[tuple, set[str]] = {}
    for task in tasks:
        name, params = task.engine_call()
        configs.setdefault((task.engine, name, tuple(sorted(params.items()))), set()).add(task.domain)
    everywhere = {task.domain for task in tasks}
    environment = get_environment()
    for (label, name, params), domains in configs.items():
        where = f"engine {label}" + ("" if domains == everywhere else f" on {', '.join(sorted(domains))}")
        for key, value in params:
            if name == "gnnplan" and key in ("model", "grounding_model"):
                _check_model(value, where)
            elif _names_a_file(key, value) and not _readable(value):
                raise ValueError(f"{where}: param {key!r}: {value}: no such file, or it cannot be read")
        credits, environment.credits_stream = environment.credits_stream, None  # a check prints no credits
        try:
            with OneshotPlanner(name=name, params=dict(params) or None):
                pass
        except GnnplanError:
            raise
        except Exception as error:  # noqa: BLE001  (UP and each engine raise their own types for bad params)
            raise ValueError(f"{where}: {str(error).strip() or type(error).__name__}") from None
        finally:
            environment.credits_stream = credits


# Statuses that, when every task of an engine ends in the same one, say the engine could not run at all.
FAULTS = ("unsupported_problem", "internal_error", "error")


def engine_faults(records: list[dict], labels) -> list[str]:
    """Return, for each engine whose every task ended in the same status of :data:`FAULTS`, why (its first message)."""
    faults = []
    for label in labels:
        mine = [r for r in records if r.get("engine") == label]
        statuses = {r.get("status") for r in mine}
        if not mine or len(statuses) != 1 or not statuses <= set(FAULTS):
            continue
        said = next((r.get("error") or r.get("notes") for r in mine if r.get("error") or r.get("notes")), None)
        reason = (said or "").strip().splitlines()[0] if (said or "").strip() else "no message"
        faults.append(f"engine {label}: every task ({len(mine)}) ended in {statuses.pop()}: {reason}")
    return faults


def read_results(path) -> list[dict]:
    """Return the records of a ``results.jsonl`` file (a torn last line is skipped)."""
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a run killed while writing
    return records


@dataclass
class Comparison:
    """What :func:`compare` returns: the records of the run's tasks and the written files."""

    records: list[dict]
    summary: str
    files: list[Path] = field(default_factory=list)
    engines: list[str] = field(default_factory=list)
    baseline: str | None = None
    faults: list[str] = field(default_factory=list)  # engines that failed every task alike (engine_faults)


def compare(engines, problems: list[ProblemEntry], out_dir, *, timeout: float = 60.0, jobs: int | None = None,
            memory_mb: int = 4096, model=None, resume: bool = False, baseline: str | None = None,
            grace: float = GRACE, progress: bool | None = None, plots: bool = True, register=(),
            engine_params=(), executor: str = "local", address: str | None = None) -> Comparison:
    """Run every engine on every problem, write the results and the reports into ``out_dir``.

    Args:
        engines: engine specs (``"gnnplan:gbfs"``, ``"fast-downward"``, ...).
        problems: from :func:`file_problems` and :func:`suite_problems`.
        timeout: seconds given to the planner of one task.
        jobs: tasks run in parallel (default: 1 with the local executor; with Ray, as many as
            the cluster has CPUs).
        memory_mb: address-space limit of each task's process.
        model: for gnnplan engines, a model (name or ONNX file), or a dict from domain name to
            model with key ``None`` for every other domain; default: the shipped model.
        resume: keep the tasks already recorded in ``results.jsonl`` instead of starting anew.
        baseline: the engine ratios are taken against (default: the last engine).
        grace: seconds past the time limit before a task's process is killed.
        progress: show a live display (default: when stderr is a terminal).
        plots: write PNG plots when matplotlib is installed.
        register: modules to import, here and in each task's process, before the engines are
            looked up: they register more UP engines.
        engine_params: :class:`EngineParam` (or their text, see :func:`parse_engine_param`)
            given to the engines they name.
        executor: ``"local"`` (a process pool on this machine) or ``"ray"`` (each task a Ray
            task, with the same limits; see :mod:`up_gnnplan.executors`).
        address: with ``"ray"``, the cluster's ``HOST:PORT`` (``auto``, ``local``, or None for
            Ray's own choice).
    """
    from up_gnnplan.compare.report import write_reports
    from up_gnnplan.compare.runner import run_tasks
    from up_gnnplan.executors import make_executor

    register = tuple(register)
    register_modules(register)
    specs = list(dict.fromkeys(parse_engine(e) for e in engines))  # gnnplan and gnnplan:auto are one engine
    if not specs:
        raise ValueError("give at least one engine")
    labels = [s.label for s in specs]
    baseline = parse_engine(baseline).label if baseline else labels[-1]
    if baseline not in labels:
        raise ValueError(f"baseline {baseline!r} is not one of the engines ({', '.join(labels)})")
    engine_params = [parse_engine_param(p) if isinstance(p, str) else p for p in engine_params]
    for param in engine_params:
        if not any(param.engine in (s.name, s.label) for s in specs):
            raise ValueError(f"engine param {param.engine}:{param.key} names no engine of the comparison "
                             f"({', '.join(labels)})")
    check_problems(problems)
    _check_domains_named(model, engine_params, problems)
    tasks = make_tasks(specs, problems, timeout, model, engine_params)
    check_engines(tasks)  # once per engine configuration, before any task runs
    records = run_tasks(tasks, out_dir, jobs=jobs, memory_mb=memory_mb, grace=grace, resume=resume, progress=progress,
                        register=register, executor=make_executor(executor, jobs, address))
    summary, files = write_reports(records, out_dir, labels, baseline, plots=plots)
    return Comparison(records, summary, [Path(out_dir) / RESULTS, *files], labels, baseline,
                      engine_faults(records, labels))

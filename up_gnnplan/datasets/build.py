"""Build a dataset from PDDL files: the pipeline behind ``gnnplan dataset``.

For each problem: load and check it, then label its states, either by expanding the whole
state space (``expand``), along optimal plans (``optimal``), or by expanding when the space
fits under the state limit and falling back to optimal plans otherwise (``auto``).

:func:`build_dataset` labels the problems one after the other in this process;
:func:`sweep_dataset` makes each problem a job of an executor (local processes or a Ray
cluster, :mod:`up_gnnplan.executors`) and joins the parts in the order of the problems, so both
write the same dataset.
"""

from __future__ import annotations

import gc
import logging
import os
import re
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from up_gnnplan import __version__
from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.optimal import label_optimal
from up_gnnplan.datasets.store import Dataset, ProblemRecord, check_signature, file_sha256
from up_gnnplan.errors import DatasetError, GnnplanError, StateLimitExceeded, UnsolvableProblemError
from up_gnnplan.limits import Limits, MemoryLimitReached
from up_gnnplan.problems import load_task
from up_gnnplan.problems.loading import check_domain_names
from up_gnnplan.states.atoms import StateAtoms

log = logging.getLogger(__name__)
METHODS = ("auto", "expand", "optimal")
# Imported once by the forkserver of a sweep, so that each problem's process starts with them loaded.
PRELOAD = ["up_gnnplan", "unified_planning.shortcuts", "unified_planning.io", "pymimir", "up_gnnplan.datasets.build"]


@dataclass
class BuildOptions:
    """How to label the states of each problem."""

    method: str = "auto"  # auto | expand | optimal
    max_states: int = 100_000  # state limit of a full expansion
    allow_unsolvable: bool = False  # keep problems whose initial state is a dead end
    heuristic: str = "hmax"  # admissible heuristic of the optimal planner
    plan_time_limit: float = 300.0  # seconds for one optimal plan
    successor_time_limit: float = 5.0  # seconds for labelling one successor off the plan
    successor_expansion_limit: int | None = None  # expansions of one successor's search (reproducible, unlike time)
    include_successors: bool = True  # also label successors of plan states (method optimal)
    memory_mb: int | None = None  # limit on the process's resident memory in MB while labelling;
    #                               None: limits.default_memory_mb() (half the RAM at most), 0: none


class ProblemsSkipped(DatasetError):
    """No problem could be labelled: each was over the state or the memory limit (``args[1]``: each one's reason)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _expand(task, options: BuildOptions, progress, limits: Limits):
    """Return the expanded and labelled state space of ``task``; raise :class:`StateLimitExceeded` or
    :class:`~up_gnnplan.limits.MemoryLimitReached` when it is over the limits."""
    memory = f" and {limits.memory_mb:,} MB" if limits.memory_mb else ""
    _phase(progress)(f"expanding the state space (at most {options.max_states:,} states{memory})")
    return expand(task, options.max_states, progress=_update(progress), limits=limits, phase=_phase(progress))


def _label_optimal(task, options: BuildOptions, progress, limits: Limits):
    """Return the states of an optimal plan of ``task`` and their successors, labelled."""
    return label_optimal(
        task,
        heuristic=options.heuristic,
        plan_time_limit=options.plan_time_limit,
        successor_time_limit=options.successor_time_limit,
        successor_expansion_limit=options.successor_expansion_limit,
        include_successors=options.include_successors,
        progress=_update(progress),
        phase=_phase(progress),
        limits=limits,
    )


def _update(progress):
    return progress.update if progress is not None else None


def _phase(progress):
    return getattr(progress, "phase", None) or (lambda text: None)


def _skip(problem, error: Exception) -> None:
    """Say that ``problem`` is left out of the dataset, and why (a warning: ``gnnplan`` prints it as a line)."""
    warnings.warn(f"{problem}: skipped: {error}", stacklevel=3)


def build_dataset(domain: str | Path, problems: list[str | Path], options: BuildOptions | None = None, progress=None) -> Dataset:
    """Label the states of ``problems`` (all of ``domain``) and return one dataset.

    ``progress`` is an optional object with ``start(problem, index)``, ``update(done, total)``
    and, optionally, ``phase(text)`` methods (the CLI passes :class:`~up_gnnplan.progress.ProblemProgress`).
    A problem whose state space is over ``options.max_states`` or would take the process's memory
    over ``options.memory_mb`` is labelled along an optimal plan instead (method auto) or skipped
    with a warning (method expand; method optimal, when the memory limit stops its plan search);
    :class:`ProblemsSkipped` is raised when every problem was skipped.
    """
    options = options or BuildOptions()
    if options.method not in METHODS:
        raise ValueError(f"unknown labelling method {options.method!r}; choose one of {', '.join(METHODS)}")
    problems = list(problems)
    check_domain_names(domain, problems)  # every pair, before hours of labelling
    dataset = None
    limits = Limits(memory_mb=options.memory_mb)
    skipped = []
    for index, problem in enumerate(problems):
        if progress is not None:
            progress.start(Path(problem).name, index)
        task = load_task(domain, problem)
        if dataset is None:
            dataset = Dataset(_domain_name(domain), task.signature, package_version=__version__,
                              action_signature=task.action_signature, types=task.types)
        else:
            check_signature(dataset, task.signature, str(problem))
        labelled, reload = None, False
        if options.method in ("auto", "expand"):
            try:
                labelled = _expand(task, options, progress, limits)
            except (StateLimitExceeded, MemoryLimitReached) as error:
                if options.method == "expand":
                    _skip(problem, error)
                    skipped.append((problem, str(error)))
                    continue
                log.info("%s: %s; labelling along optimal plans", problem, error)
                _phase(progress)(f"{error}: labelling along an optimal plan instead")
                reload = isinstance(error, MemoryLimitReached)
        if reload:  # a task of its own, so that the states the expansion left in the old one's repository go
            task = None
            gc.collect()
            task = load_task(domain, problem)
        if labelled is None:
            try:
                labelled = _label_optimal(task, options, progress, limits)
            except MemoryLimitReached as error:
                _skip(problem, error)
                skipped.append((problem, str(error)))
                continue
        if labelled.initial_value == float("inf") and not options.allow_unsolvable:
            raise UnsolvableProblemError(
                f"{problem}: unsolvable (no goal state is reachable from the initial state among "
                f"{len(labelled)} states); pass --allow-unsolvable to keep its dead-end states"
            )
        atoms = StateAtoms(task)
        record = ProblemRecord(
            name=Path(problem).stem,
            domain_file=str(domain),
            problem_file=str(problem),
            domain_sha256=file_sha256(Path(domain)),
            problem_sha256=file_sha256(Path(problem)),
            object_names=task.object_names,
            static=atoms.static,
            goal=atoms.goal,
            negative_goal=atoms.negative_goal,
            method="expanded" if int(labelled.label.max(initial=0)) == 0 else "optimal-plan",
            stats={
                "states": len(labelled),
                "dead_ends": int(labelled.dead_end.sum()),
                "initial_value": labelled.initial_value,
                "objects": task.num_objects,
                **{f"left_out_by_{limit}_limit": count for limit, count in getattr(labelled, "left_out", {}).items()},
            },
        )
        dataset.add_problem(record, labelled.states, labelled.value, labelled.steps, labelled.dead_end, labelled.is_goal,
                            labelled.label, labelled.transitions)
    if dataset is None:
        raise ValueError("no problem files given")
    if len(skipped) == len(problems):
        raise ProblemsSkipped("no problem could be labelled, each was skipped: "
                              + "; ".join(f"{Path(p).name} ({why})" for p, why in skipped), [why for _, why in skipped])
    return dataset


def _domain_name(domain: str | Path) -> str:
    """Return the PDDL name of the domain (``(define (domain NAME)``), else the file's folder."""
    found = re.search(r"\(\s*define\s*\(\s*domain\s+([^\s)]+)", Path(domain).read_text(), re.IGNORECASE)
    return found.group(1) if found else Path(domain).parent.name


def label_problem(domain: str, problem: str, options: dict, names: tuple[str, str], phase=None) -> Dataset:
    """Return the dataset of one problem: the job of :func:`sweep_dataset`.

    The job reads the files at their absolute paths (it runs in a folder of its own) and records
    them by ``names``, the paths as the user gave them, as :func:`build_dataset` does.
    """
    options = BuildOptions(**options)
    options.memory_mb = _under_address_limit(options.memory_mb)
    dataset = build_dataset(domain, [problem], options)
    dataset.problems[0].domain_file, dataset.problems[0].problem_file = names
    return dataset


def _under_address_limit(memory_mb: int | None) -> int | None:
    """Return the resident-memory limit of a job whose process has an address-space limit (``RLIMIT_AS``,
    set by the executor from ``--memory-mb``): that limit less what the process maps without holding it
    resident, so that the labelling stops with its own message before an allocation fails."""
    import resource

    from up_gnnplan.limits import resident_mb

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/status") as handle:
            mapped = next(int(line.split()[1]) for line in handle if line.startswith("VmSize:")) / 1024
    except (OSError, StopIteration, ValueError, IndexError):
        return memory_mb
    if soft == resource.RLIM_INFINITY:
        return memory_mb
    room = max(1, int(soft / 2**20 - (mapped - resident_mb())))
    return room if not memory_mb else min(memory_mb, room)


def sweep_dataset(domain: str | Path, problems: list[str | Path], options: BuildOptions | None, executor, *,
                  memory_mb: int | None = None, timeout: float | None = None, progress=None) -> Dataset:
    """Label each of ``problems`` as a job of ``executor`` (not yet entered) and return one dataset.

    Each problem's process gets ``timeout`` seconds and an address space of ``memory_mb``; the
    first problem that fails ends the sweep with its error, as in :func:`build_dataset`, but a
    problem over the state or memory limit is skipped with a warning, as there. The parts are
    joined in the order of ``problems``, whatever order they finish in.
    """
    from contextlib import closing

    from up_gnnplan.executors import Job

    options = options or BuildOptions()
    if options.method not in METHODS:
        raise ValueError(f"unknown labelling method {options.method!r}; choose one of {', '.join(METHODS)}")
    if not problems:
        raise ValueError("no problem files given")
    check_domain_names(domain, problems)  # every pair, before any job starts
    jobs = [Job(i, "up_gnnplan.datasets.build:label_problem",
                (os.path.abspath(domain), os.path.abspath(problem), asdict(options), (str(domain), str(problem))),
                timeout, memory_mb) for i, problem in enumerate(problems)]
    parts: dict[int, Dataset] = {}
    skipped: list[str] = []
    with executor, closing(executor.run(jobs, PRELOAD)) as outcomes:
        for outcome in outcomes:
            problem = problems[outcome.key]
            if isinstance(outcome.exception, ProblemsSkipped):  # over the limits: the others go on
                warnings.warn(f"{problem}: skipped: {outcome.exception.args[1][0]}", stacklevel=2)
                skipped.append(f"{Path(problem).name} ({outcome.exception.args[1][0]})")
                continue
            if outcome.status != "ok":
                if isinstance(outcome.exception, GnnplanError):
                    raise outcome.exception
                limit = {"timeout": f" (--task-timeout {timeout:g} s)" if timeout else "",
                         "memout": f" (--memory-mb {memory_mb})"}.get(outcome.status, "")
                raise DatasetError(f"{problem}: labelling ended with {outcome.status}{limit}: {outcome.error}")
            parts[outcome.key] = outcome.value
            if progress is not None:
                progress.start(Path(problem).name, len(parts))
                if hasattr(progress, "phase"):
                    progress.phase(f"labelled, {len(outcome.value)} states ({len(parts)}/{len(problems)} problems)")
    if not parts:
        raise ProblemsSkipped("no problem could be labelled, each was skipped: " + "; ".join(skipped),
                              [why for why in skipped])
    order = sorted(parts)
    dataset = parts[order[0]]
    for i in order[1:]:
        check_signature(parts[i], dataset.signature, str(problems[i]))
        dataset.extend(parts[i])
    return dataset

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

import logging
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from up_gnnplan import __version__
from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.optimal import label_optimal
from up_gnnplan.datasets.store import Dataset, ProblemRecord, check_signature, file_sha256
from up_gnnplan.errors import DatasetError, GnnplanError, StateLimitExceeded, UnsolvableProblemError
from up_gnnplan.problems import load_task
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


def _label(task, options: BuildOptions, progress):
    update = progress.update if progress is not None else None
    phase = getattr(progress, "phase", None) or (lambda text: None)
    if options.method in ("auto", "expand"):
        phase(f"expanding the state space (at most {options.max_states:,} states)")
        try:
            return expand(task, options.max_states, progress=update)
        except StateLimitExceeded:
            if options.method == "expand":
                raise
            log.info("%s: more than %d states, labelling along optimal plans", task.source.describe(), options.max_states)
            phase(f"more than {options.max_states:,} states: labelling along an optimal plan instead")
    return label_optimal(
        task,
        heuristic=options.heuristic,
        plan_time_limit=options.plan_time_limit,
        successor_time_limit=options.successor_time_limit,
        successor_expansion_limit=options.successor_expansion_limit,
        include_successors=options.include_successors,
        progress=update,
        phase=phase,
    )


def build_dataset(domain: str | Path, problems: list[str | Path], options: BuildOptions | None = None, progress=None) -> Dataset:
    """Label the states of ``problems`` (all of ``domain``) and return one dataset.

    ``progress`` is an optional object with ``start(problem, index)``, ``update(done, total)``
    and, optionally, ``phase(text)`` methods (the CLI passes :class:`~up_gnnplan.progress.ProblemProgress`).
    """
    options = options or BuildOptions()
    if options.method not in METHODS:
        raise ValueError(f"unknown labelling method {options.method!r}; choose one of {', '.join(METHODS)}")
    dataset = None
    for index, problem in enumerate(problems):
        if progress is not None:
            progress.start(Path(problem).name, index)
        task = load_task(domain, problem)
        if dataset is None:
            dataset = Dataset(_domain_name(domain), task.signature, package_version=__version__,
                              action_signature=task.action_signature, types=task.types)
        else:
            check_signature(dataset, task.signature, str(problem))
        labelled = _label(task, options, progress)
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
    dataset = build_dataset(domain, [problem], BuildOptions(**options))
    dataset.problems[0].domain_file, dataset.problems[0].problem_file = names
    return dataset


def sweep_dataset(domain: str | Path, problems: list[str | Path], options: BuildOptions | None, executor, *,
                  memory_mb: int | None = None, timeout: float | None = None, progress=None) -> Dataset:
    """Label each of ``problems`` as a job of ``executor`` (not yet entered) and return one dataset.

    Each problem's process gets ``timeout`` seconds and an address space of ``memory_mb``; the
    first problem that fails ends the sweep with its error, as in :func:`build_dataset`. The
    parts are joined in the order of ``problems``, whatever order they finish in.
    """
    from contextlib import closing

    from up_gnnplan.executors import Job

    options = options or BuildOptions()
    if options.method not in METHODS:
        raise ValueError(f"unknown labelling method {options.method!r}; choose one of {', '.join(METHODS)}")
    if not problems:
        raise ValueError("no problem files given")
    jobs = [Job(i, "up_gnnplan.datasets.build:label_problem",
                (os.path.abspath(domain), os.path.abspath(problem), asdict(options), (str(domain), str(problem))),
                timeout, memory_mb) for i, problem in enumerate(problems)]
    parts: dict[int, Dataset] = {}
    with executor, closing(executor.run(jobs, PRELOAD)) as outcomes:
        for outcome in outcomes:
            problem = problems[outcome.key]
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
    dataset = parts[0]
    for i in range(1, len(problems)):
        check_signature(parts[i], dataset.signature, str(problems[i]))
        dataset.extend(parts[i])
    return dataset

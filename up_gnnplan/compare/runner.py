"""Run comparison tasks, each in its own process with a wall-clock and a memory limit.

A task is one engine on one problem under one time limit. Each task is a job of an executor
(:mod:`up_gnnplan.executors`: a local process pool by default, or a Ray cluster), which forks
it from a ``forkserver`` that has UP, pymimir and onnxruntime imported already (a fresh
interpreter spends about 2 s importing them), then watches it:

- the task's process limits its address space to ``memory_mb`` (``RLIMIT_AS``; a planner's
  own subprocesses, like Fast Downward's, inherit it) and writes its output to ``logs/``;
- it reports when it starts solving and when it starts validating; the executor allows each
  phase ``timeout + grace`` seconds (and the start-up before them as much), then kills the
  process group and records ``timeout``; a failed allocation (a ``MemoryError``, a shared
  library that cannot be mapped, a fork that fails) is ``memout``, any other exception
  ``error``, and a process that dies without a result ``crash``;
- the child validates every plan (:func:`check_plan`) before it reports, so a plan is judged
  by the same code whichever engine found it.

Results are appended to ``results.jsonl`` by the parent as tasks finish, one JSON object a line,
whichever executor ran them.

Engines of other packages: the modules named in ``register`` are imported by each task's process
(on the parent's ``sys.path``) before the engine is looked up, and preloaded by the forkserver
when it is started by this run.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import time
from dataclasses import asdict
from pathlib import Path

from up_gnnplan.compare import GRACE, RESULTS, SOLVED, Task, is_solved, read_results, record_key
from up_gnnplan.executors import Job, Outcome, ProcessPool

# Imported once by the forkserver, so that each task's process starts with them loaded.
PRELOAD = ["up_gnnplan", "unified_planning.shortcuts", "unified_planning.io", "up_gnnplan.plugins.engine",
           "up_gnnplan.plugins.validation", "up_gnnplan.problems", "up_gnnplan.compare.runner", "up_gnnplan.executors",
           "onnxruntime",
           "pymimir", "up_fast_downward"]


# -- the task's process ----------------------------------------------------------------------

_COUNT_IN_LOG = {"expanded": re.compile(r"Expanded (\d+) state"), "evaluated": re.compile(r"Evaluated (\d+) state")}


# A message of an engine longer than this is output, not a note (see _notes).
NOTE_CHARS = 400


LAMA_FIRST = "fast-downward"  # up-fast-downward's LAMA-first: run on the task's files (_lama_first_on_files)


def _number(value) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _search_counts(result) -> dict:
    """Return expansions and evaluations: gnnplan's metrics, else Fast Downward's log lines."""
    counts = {}
    for key, pattern in _COUNT_IN_LOG.items():
        value = _number((result.metrics or {}).get(key))
        if value is None:
            found = [n for log in result.log_messages or () for n in pattern.findall(log.message)]  # None: no log
            value = _number(found[-1]) if found else None
        counts[key] = None if value is None else int(value)
    return counts


def _notes(result, levels) -> str | None:
    """Return the engine's short messages below ERROR (gnnplan's say how each phase ended), or None.

    Long messages (a planner's whole log, as Fast Downward's) are left out: the record keeps
    what explains the outcome, not the output.
    """
    short = [m.message for m in result.log_messages or () if m.level != levels.ERROR and len(m.message) <= NOTE_CHARS]
    return " | ".join(short)[:4 * NOTE_CHARS] or None


def _has_existential_goal(problem) -> bool:
    stack = list(problem.goals)
    while stack:
        node = stack.pop()
        if node.is_exists():
            return True
        stack.extend(node.args)
    return False


def check_plan(problem, plan) -> tuple[bool | None, str | None, float | None]:
    """Return (valid, what is wrong or why it was not checked, plan cost) for any engine's plan.

    gnnplan's plans of tasks read from files (:class:`~up_gnnplan.problems.plans.PddlPlan`) are
    replayed by their PDDL lines on the task read anew with pymimir, without a UP problem.

    UP's ``SequentialPlanValidator`` checks the plan and evaluates the problem's metric. It is
    extremely slow on existential goals, and it refuses some kinds it cannot establish that it
    handles (action costs read from static numeric fluents, as in Elevators: every LAMA-first plan
    was recorded as an error); those plans are replayed on pymimir and checked with gnnplan's
    validation helper; outside gnnplan's fragment they are left unchecked (None).
    """
    from unified_planning.engines import ValidationResultStatus
    from unified_planning.engines.plan_validator import SequentialPlanValidator
    from unified_planning.plans import SequentialPlan

    from up_gnnplan.problems.plans import PddlPlan

    if isinstance(plan, PddlPlan):
        return _replay(plan)
    if not isinstance(plan, SequentialPlan):
        return None, f"not validated: a {type(plan).__name__}, not a sequential plan", None
    if not _has_existential_goal(problem) and SequentialPlanValidator.supports(problem.kind):
        result = SequentialPlanValidator(environment=problem.environment).validate(problem, plan)
        if result.status != ValidationResultStatus.VALID:
            return False, " ".join(m.message for m in result.log_messages) or str(result.reason), None
        values = list((result.metric_evaluations or {}).values())
        return True, None, float(values[0]) if values else float(len(plan.actions))
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.problems import Task as MimirTask

    try:
        mimir = MimirTask(problem)
    except GnnplanError as error:
        return None, f"not validated: outside UP's validator and gnnplan's fragment ({error})", None

    def ground_action(state, action):
        try:
            return mimir.find_ground_action(state, action)
        except GnnplanError:
            return None

    return _replay_steps(mimir, plan, plan.actions, ground_action)


def _replay(plan) -> tuple[bool, str | None, float | None]:
    """Check gnnplan's plan of a task read from files on a task read from the files anew (no UP
    problem: reading one is what reading the files with pymimir saved), and sum its cost."""
    from up_gnnplan.problems import Task as MimirTask

    files = plan.task.source
    task = MimirTask.from_files(files.domain, files.problem)

    def ground_action(state, line):
        name, *args = line.strip("()").split()
        return task.ground_action(state, name, args)

    return _replay_steps(task, None, plan.actions, ground_action)


def _replay_steps(task, plan, steps, ground_action) -> tuple[bool, str | None, float | None]:
    """Replay ``steps`` on pymimir from ``task``'s initial state (``ground_action(state, step)``: the
    applicable ground action a step names, or None), then check the plan with gnnplan's helper;
    return (valid, what is wrong, cost)."""
    from up_gnnplan.plugins.validation import validate_plan

    state, ground, cost = task.initial_state(), [], 0.0
    for number, step in enumerate(steps, start=1):
        action = ground_action(state, step)
        if action is None:
            return False, f"step {number}, {step}, is not applicable", None
        ground.append(action)
        state, action_cost = action.apply(state, return_cost=True)
        cost += action_cost
    wrong = validate_plan(task, plan, ground)
    return wrong is None, wrong, None if wrong else cost


def engine_memory_mb(memory_mb: int) -> int:
    """Return the resident-memory limit given to gnnplan under an address-space limit of ``memory_mb``
    (:func:`up_gnnplan.limits.resident_under`: gnnplan ends with a clean MEMOUT before an allocation fails)."""
    from up_gnnplan.limits import resident_under

    return resident_under(memory_mb)


def solve_and_check(task: Task, phase=lambda name: None, memory_mb: int | None = None, register=()) -> dict:
    """Solve ``task`` in this process, validate the plan, and return the record's fields.

    ``phase`` is told ``"solving"`` and ``"validating"`` as they start; ``memory_mb`` is the
    task's address-space limit, from which gnnplan engines get their own memory limit;
    ``register`` names modules to import first (they register more engines in UP).
    """
    import warnings

    import up_gnnplan  # noqa: F401  (registers gnnplan)
    from unified_planning.engines import LogLevel
    from unified_planning.environment import get_environment
    from unified_planning.shortcuts import OneshotPlanner

    from up_gnnplan.problems.loading import load_pddl
    from up_gnnplan.search.lama import fast_downward_installed

    for module in register:
        importlib.import_module(module)
    get_environment().credits_stream = None
    name, params = task.engine_call()
    if name == "gnnplan" and memory_mb:
        params["memory_mb"] = engine_memory_mb(memory_mb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UP's "cannot establish whether ..." notes
        if name == "gnnplan":  # pymimir reads the files (UP's reader took minutes on IPC 2023 medium tasks)
            from up_gnnplan.plugins.engine import GnnplanEngine
            from up_gnnplan.problems import Task as MimirTask

            mimir = MimirTask.from_files(task.domain_file, task.problem_file)
            engine = GnnplanEngine(**(params or {}))
            phase("solving")
            start = time.perf_counter()
            result = engine.solve_task(mimir, timeout=task.timeout)
            seconds = time.perf_counter() - start
            problem = None if mimir.from_files_only else mimir.up_problem
        elif name == LAMA_FIRST and not params and fast_downward_installed():
            result, problem, seconds = _lama_first_on_files(task, memory_mb, phase)
        else:
            problem = load_pddl(task.domain_file, task.problem_file)
            with OneshotPlanner(name=name, params=params or None) as planner:
                phase("solving")
                start = time.perf_counter()
                result = planner.solve(problem, timeout=task.timeout)
                seconds = time.perf_counter() - start
        status, metrics = result.status.name.lower(), result.metrics or {}
        errors = " ".join(m.message for m in result.log_messages or () if m.level == LogLevel.ERROR)
        fields = {"status": status, "solve_time": round(seconds, 4),
                  "engine_time": _number(metrics.get("engine_internal_time")), **_search_counts(result),
                  "error": errors[:1000] or None, "notes": _notes(result, LogLevel),
                  "found_by": metrics.get("found_by")}  # gnnplan model+lama: learned, lama-first, walk+lama-first
        if result.plan is None:
            if status in SOLVED:
                fields.update(valid=False, validation_note="solved without a plan")
            return fields
        phase("validating")
        valid, note, cost = check_plan(problem, result.plan)
    fields.update(plan_length=len(getattr(result.plan, "actions", [])), valid=valid, validation_note=note,
                  plan_cost=cost if cost is not None else _number(metrics.get("plan_cost")))
    return fields


def _lama_first_on_files(task: Task, memory_mb: int | None, phase):
    """Return (UP result, None, seconds) of LAMA-first on the task's own files: the driver and alias of
    up-fast-downward (:func:`up_gnnplan.search.lama.lama_first`), the plan replayed on pymimir.

    Through UP's engine, UP's PDDL writer alone took 24 s of a 51 s solve of a small Sokoban task (grid
    16, 3 boxes) whose search took 1 s: the baseline measured UP's writer, not LAMA-first. The files are
    read by pymimir first (not counted, as for gnnplan); the time limit counts from the solve.
    """
    from up_gnnplan.limits import Limits
    from up_gnnplan.problems import Task as MimirTask
    from up_gnnplan.problems.plans import PddlPlan
    from up_gnnplan.search import Status
    from up_gnnplan.search.lama import lama_first, up_result

    mimir = MimirTask.from_files(task.domain_file, task.problem_file)
    phase("solving")
    start = time.perf_counter()
    limits = Limits(task.timeout, engine_memory_mb(memory_mb) if memory_mb else None, start=start)
    found = lama_first(mimir, limits)
    seconds = time.perf_counter() - start
    plan = PddlPlan(mimir, found.actions, found.cost) if found.status is Status.SOLVED else None
    return up_result(found, plan, LAMA_FIRST, {"engine_internal_time": f"{seconds:.6f}"}), None, seconds


def run_task(task: dict, memory_mb: int | None, register=(), phase=lambda name: None) -> dict:
    """Solve and check one task (its fields) in a job's process: the function the executors call."""
    return solve_and_check(Task(**task), phase, memory_mb, register)


# -- the parent ------------------------------------------------------------------------------

def _absolute(task: Task) -> dict:
    """Return the fields of ``task`` with absolute file paths: the job runs in another directory
    (and the forkserver that starts it may have been started from another one)."""
    fields = asdict(task)
    for key in ("domain_file", "problem_file"):
        fields[key] = os.path.abspath(fields[key])
    if fields.get("model") and os.path.exists(fields["model"]):
        fields["model"] = os.path.abspath(fields["model"])
    return fields


def _log_path(out: Path, task: Task) -> Path:
    name = re.sub(r"[^\w.-]+", "_", f"{task.engine}--{task.domain}--{task.problem}")
    return out / "logs" / f"{name}.log"


def _finish(task: Task, outcome: Outcome, memory_mb: int) -> dict:
    """Return the full record of a finished (or killed) task."""
    if outcome.status == "ok":
        fields = dict(outcome.value)
    elif outcome.status == "timeout":
        fields = {"status": "timeout", "error": f"killed after {outcome.wall:.1f} s while {outcome.phase} "
                                                f"(limit {task.timeout:g} s + grace)"}
    else:  # error, memout, crash: the executor's words
        fields = {"status": outcome.status, "error": outcome.error}
    record = {**asdict(task), "status": fields.pop("status"), "solved": False, "plan_length": None,
              "plan_cost": None, "wall_time": outcome.wall, "solve_time": None, "engine_time": None,
              "expanded": None, "evaluated": None, "valid": None, "validation_note": None, "error": None, "notes": None,
              "found_by": None, "killed": outcome.killed, "memory_mb": memory_mb, "max_rss_mb": outcome.max_rss_mb}
    record["params"] = [list(p) for p in task.params]  # as results.jsonl reads back
    record.update(fields)
    record["solved"] = is_solved(record)
    record["log"] = outcome.log
    return record


def task_budget(task: Task, grace: float) -> float:
    """Return the seconds one phase of ``task`` (solving, validating) may take before a kill."""
    return task.timeout + grace


def run_tasks(tasks: list[Task], out_dir, *, jobs: int | None = 1, memory_mb: int = 4096, grace: float = GRACE,
              resume: bool = False, progress: bool | None = None, on_record=None, register=(),
              executor=None) -> list[dict]:
    """Run ``tasks`` (``jobs`` at a time) and return their records in the order of ``tasks``.

    With ``resume``, tasks already in ``out_dir/results.jsonl`` are not run again; without it
    the file is started anew. ``register`` names modules each task's process imports first.
    ``executor`` (from :func:`up_gnnplan.executors.make_executor`, not yet entered) runs the
    tasks; by default a :class:`~up_gnnplan.executors.ProcessPool` of ``jobs`` processes.
    """
    from contextlib import closing, nullcontext

    from up_gnnplan.compare.report import LiveDisplay

    out = Path(out_dir)
    path = out / RESULTS
    known = {record_key(r): r for r in read_results(path)} if resume else {}
    done = {t.key: known[t.key] for t in tasks if t.key in known}
    pending = {t.key: t for t in tasks if t.key not in done}
    executor = executor if executor is not None else ProcessPool(jobs)
    # Connect first: a cluster that cannot be reached leaves the results of an earlier run as they were.
    with executor if pending else nullcontext():
        (out / "logs").mkdir(parents=True, exist_ok=True)
        if not resume:
            path.write_text("")
        order = list(pending.values())
        work = [Job(n, "up_gnnplan.compare.runner:run_task", (_absolute(t), memory_mb, tuple(register)),
                    task_budget(t, grace), memory_mb, str(_log_path(out, t).resolve())) for n, t in enumerate(order)]
        with LiveDisplay(tasks, list(done.values()), progress) as display, path.open("a") as sink:
            if work:
                with closing(executor.run(work, PRELOAD + list(register))) as outcomes:
                    for outcome in outcomes:
                        task = order[outcome.key]
                        record = _finish(task, outcome, memory_mb)
                        sink.write(json.dumps(record) + "\n")
                        sink.flush()
                        done[task.key] = record
                        display.add(record)
                        if on_record:
                            on_record(record)
    if (out / "logs").is_dir() and not any((out / "logs").iterdir()):
        (out / "logs").rmdir()  # logs are kept only for tasks that printed something
    return [done[t.key] for t in tasks if t.key in done]

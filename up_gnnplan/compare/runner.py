"""Run comparison tasks, each in its own process with a wall-clock and a memory limit.

A task is one engine on one problem under one time limit. The parent forks each task from a
``forkserver`` that has UP, pymimir and onnxruntime imported already (a fresh interpreter
spends about 2 s importing them), then watches it:

- the task's process limits its address space to ``memory_mb`` (``RLIMIT_AS``; a planner's
  own subprocesses, like Fast Downward's, inherit it) and writes its output to ``logs/``;
- it reports when it starts solving and when it starts validating; the parent allows each
  phase ``timeout + grace`` seconds (and the start-up before them as much), then kills the
  process group and records ``timeout``; a failed allocation (a ``MemoryError``, a shared
  library that cannot be mapped, a fork that fails) is ``memout``, any other exception
  ``error``, and a process that dies without a result ``crash``;
- the child validates every plan (:func:`check_plan`) before it reports, so a plan is judged
  by the same code whichever engine found it.

Results are appended to ``results.jsonl`` by the parent as tasks finish, one JSON object a line.

Engines of other packages: the modules named in ``register`` are imported by each task's process
(on the parent's ``sys.path``) before the engine is looked up, and preloaded by the forkserver
when it is started by this run.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import re
import signal
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path

from up_gnnplan.compare import GRACE, RESULTS, SOLVED, Task, is_solved, read_results, record_key

# Imported once by the forkserver, so that each task's process starts with them loaded.
PRELOAD = ["up_gnnplan", "unified_planning.shortcuts", "unified_planning.io", "up_gnnplan.plugins.engine",
           "up_gnnplan.plugins.validation", "up_gnnplan.problems", "up_gnnplan.compare.runner", "onnxruntime",
           "pymimir", "up_fast_downward"]


# -- the task's process ----------------------------------------------------------------------

_COUNT_IN_LOG = {"expanded": re.compile(r"Expanded (\d+) state"), "evaluated": re.compile(r"Evaluated (\d+) state")}


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

    UP's ``SequentialPlanValidator`` checks the plan and evaluates the problem's metric. It is
    extremely slow on existential goals, so those plans are replayed on pymimir and checked with
    gnnplan's validation helper; outside gnnplan's fragment they are left unchecked (None).
    """
    from unified_planning.engines import ValidationResultStatus
    from unified_planning.engines.plan_validator import SequentialPlanValidator
    from unified_planning.plans import SequentialPlan

    if not isinstance(plan, SequentialPlan):
        return None, f"not validated: a {type(plan).__name__}, not a sequential plan", None
    if not _has_existential_goal(problem):
        result = SequentialPlanValidator(environment=problem.environment).validate(problem, plan)
        if result.status != ValidationResultStatus.VALID:
            return False, " ".join(m.message for m in result.log_messages) or str(result.reason), None
        values = list((result.metric_evaluations or {}).values())
        return True, None, float(values[0]) if values else float(len(plan.actions))
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.plugins.validation import validate_plan
    from up_gnnplan.problems import Task as MimirTask

    try:
        mimir = MimirTask(problem)
    except GnnplanError as error:
        return None, f"not validated: existential goal outside gnnplan's fragment ({error})", None
    state, ground, cost = mimir.initial_state(), [], 0.0
    for step, action in enumerate(plan.actions, start=1):
        try:
            ground.append(mimir.find_ground_action(state, action))
        except GnnplanError:
            return False, f"step {step}, {action}, is not applicable", None
        state, action_cost = ground[-1].apply(state, return_cost=True)
        cost += action_cost
    wrong = validate_plan(mimir, plan, ground)
    return wrong is None, wrong, None if wrong else cost


def engine_memory_mb(memory_mb: int) -> int:
    """Return the resident-memory limit given to gnnplan under an address-space limit of ``memory_mb``.

    A solve's address space exceeds its resident memory by about 200 MB (libraries mapped but
    not touched, thread stacks): measured 374 MB against 190 MB on Blocksworld. gnnplan's own
    limit is set below that margin, so that it ends with a clean MEMOUT before an allocation fails.
    """
    return max(128, min(int(0.85 * memory_mb), memory_mb - 384))


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

    for module in register:
        importlib.import_module(module)
    get_environment().credits_stream = None
    problem = load_pddl(task.domain_file, task.problem_file)
    name, params = task.engine_call()
    if name == "gnnplan" and memory_mb:
        params["memory_mb"] = engine_memory_mb(memory_mb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UP's "cannot establish whether ..." notes
        with OneshotPlanner(name=name, params=params or None) as planner:
            phase("solving")
            start = time.perf_counter()
            result = planner.solve(problem, timeout=task.timeout)
            seconds = time.perf_counter() - start
        status, metrics = result.status.name.lower(), result.metrics or {}
        errors = " ".join(m.message for m in result.log_messages or () if m.level == LogLevel.ERROR)
        fields = {"status": status, "solve_time": round(seconds, 4),
                  "engine_time": _number(metrics.get("engine_internal_time")), **_search_counts(result),
                  "error": errors[:1000] or None}
        if result.plan is None:
            if status in SOLVED:
                fields.update(valid=False, validation_note="solved without a plan")
            return fields
        phase("validating")
        valid, note, cost = check_plan(problem, result.plan)
    fields.update(plan_length=len(getattr(result.plan, "actions", [])), valid=valid, validation_note=note,
                  plan_cost=cost if cost is not None else _number(metrics.get("plan_cost")))
    return fields


# How a failed allocation reads when it does not surface as a MemoryError: a shared library that
# cannot be mapped on import, a subprocess that cannot be forked, C++'s std::bad_alloc.
_ALLOCATION_FAILURES = ("failed to map segment", "cannot allocate memory", "bad_alloc", "out of memory")


def _out_of_memory(error: BaseException) -> bool:
    """Return whether ``error`` is, or was raised while handling, a failed allocation."""
    while error is not None:
        if isinstance(error, MemoryError) or (isinstance(error, OSError) and error.errno == errno.ENOMEM):
            return True
        if any(sign in str(error).lower() for sign in _ALLOCATION_FAILURES):
            return True
        error = error.__cause__ or error.__context__  # load_pddl re-raises parser errors "from None"
    return False


def _cannot_allocate(megabytes: int = 16) -> bool:
    """Return whether this process fails to allocate ``megabytes`` more right now (it is at its limit).

    Under a tight limit a failed allocation inside native code can surface as an unrelated error
    (seen: ``SystemError: error return without exception set`` from the PDDL parser, re-raised as
    a load error); if the process cannot allocate even this much afterwards, it ran out of memory.
    """
    try:
        bytearray(megabytes * 2**20)
    except MemoryError:
        return True
    return False


def _child(task: dict, memory_mb: int, log_path: str, conn, workdir: str, register=(), paths=()) -> None:
    """Run one task in this process and send ``("result", fields)`` through ``conn``.

    The task runs in ``workdir``: planners that write files into the working
    directory (Fast Downward's ``output.sas``) neither litter the user's folder nor overwrite
    each other's files when tasks run in parallel. ``register`` modules are imported from the
    parent's ``paths`` too (a forkserver started earlier may have another ``sys.path``).
    """
    import faulthandler
    import resource

    os.setsid()  # own process group: a kill reaches the planner's subprocesses too
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)  # the parent made every path in ``task`` absolute
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    faulthandler.enable()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.path.extend(p for p in paths if p not in sys.path)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if memory_mb:  # the soft limit only, so that the result can still be sent after a MemoryError
        resource.setrlimit(resource.RLIMIT_AS, (int(memory_mb) * 2**20, hard))
    try:
        fields = solve_and_check(Task(**task), lambda phase: conn.send((phase, None)), memory_mb, register)
    except BaseException as error:  # noqa: BLE001  (anything a planner raises is a result)
        fields = {"status": "error", "error": f"{type(error).__name__}: {error}"[:1000]}
        if _out_of_memory(error) or (memory_mb and _cannot_allocate()):
            fields = {"status": "memout", "error": f"out of memory at the {memory_mb} MB limit ({fields['error']})"}
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    usage = [resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    fields["max_rss_mb"] = round(max(usage) / 1024, 1)  # the largest of this process and its planner processes
    conn.send(("result", fields))
    conn.close()


# -- the parent ------------------------------------------------------------------------------

@dataclass
class _Running:
    task: Task
    process: object
    conn: object
    log: Path
    start: float
    deadline: float
    phase: str = "starting"  # then "solving", "validating"
    fields: dict | None = None
    killed: bool = False


def _absolute(task: Task) -> dict:
    """Return the fields of ``task`` with absolute file paths: the child runs in another directory
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


def _finish(run: _Running, wall: float, memory_mb: int) -> dict:
    """Return the full record of a finished (or killed) task."""
    fields = dict(run.fields or {})
    if run.killed:
        fields = {"status": "timeout",
                  "error": f"killed after {wall:.1f} s while {run.phase} (limit {run.task.timeout:g} s + grace)"}
    elif run.fields is None:
        code = run.process.exitcode
        died = code is not None and code < 0
        reason = f"killed by {signal.Signals(-code).name}" if died else f"exited with code {code}"
        tail = run.log.read_text(errors="replace")[-400:].strip() if run.log.is_file() else ""
        message = f"the task's process {reason} without a result" + (f": {tail}" if tail else "")
        fields = {"status": "crash", "error": message}
    record = {**asdict(run.task), "status": fields.pop("status"), "solved": False, "plan_length": None,
              "plan_cost": None, "wall_time": round(wall, 4), "solve_time": None, "engine_time": None,
              "expanded": None, "evaluated": None, "valid": None, "validation_note": None, "error": None,
              "killed": run.killed, "memory_mb": memory_mb, "max_rss_mb": None}
    record["params"] = [list(p) for p in run.task.params]  # as results.jsonl reads back
    record.update(fields)
    record["solved"] = is_solved(record)
    if run.log.is_file() and run.log.stat().st_size == 0:
        run.log.unlink()
    record["log"] = str(run.log) if run.log.is_file() else None
    return record


def _kill(run: _Running) -> None:
    try:
        os.killpg(run.process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # not yet in its own group, or gone
    run.process.kill()


def task_budget(task: Task, grace: float) -> float:
    """Return the seconds one phase of ``task`` (solving, validating) may take before a kill."""
    return task.timeout + grace


def run_tasks(tasks: list[Task], out_dir, *, jobs: int = 1, memory_mb: int = 4096, grace: float = GRACE,
              resume: bool = False, progress: bool | None = None, on_record=None, register=()) -> list[dict]:
    """Run ``tasks`` (``jobs`` at a time) and return their records in the order of ``tasks``.

    With ``resume``, tasks already in ``out_dir/results.jsonl`` are not run again; without it
    the file is started anew. ``register`` names modules each task's process imports first.
    """
    import itertools
    import multiprocessing
    import shutil
    import tempfile
    from multiprocessing.connection import wait

    from up_gnnplan.compare.report import LiveDisplay

    out = Path(out_dir)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    path = out / RESULTS
    if not resume:
        path.write_text("")
    known = {record_key(r): r for r in read_results(path)}
    done = {t.key: known[t.key] for t in tasks if t.key in known}
    pending = deque(t for t in dict.fromkeys(tasks) if t.key not in done)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD + list(register))  # only if this run starts the forkserver
    if pending:
        warm_up = context.Process(target=time.sleep, args=(0,))  # the forkserver imports PRELOAD first
        warm_up.start()
        warm_up.join()
    running: dict[object, _Running] = {}
    scratch = Path(tempfile.mkdtemp(prefix="gnnplan-compare-"))  # one working directory per task, removed at the end
    numbers = itertools.count()
    with LiveDisplay(tasks, list(done.values()), progress) as display, path.open("a") as sink:
        try:
            while pending or running:
                while pending and len(running) < max(1, jobs):
                    task = pending.popleft()
                    receive, send = context.Pipe(duplex=False)
                    log = _log_path(out, task)
                    workdir = scratch / f"task-{next(numbers)}"
                    process = context.Process(target=_child, args=(_absolute(task), memory_mb, str(log.resolve()), send,
                                                                   str(workdir), tuple(register), list(sys.path)))
                    process.start()
                    start = time.monotonic()
                    send.close()
                    running[receive] = _Running(task, process, receive, log, start, start + task_budget(task, grace))
                timeout = max(0.0, min(r.deadline for r in running.values()) - time.monotonic())
                wait([*running, *(r.process.sentinel for r in running.values())], timeout=timeout)
                for conn, run in list(running.items()):
                    while run.fields is None and conn.poll():
                        try:
                            phase, fields = conn.recv()
                        except (EOFError, OSError):
                            break
                        if phase == "result":
                            run.fields = fields
                        else:  # "solving" or "validating": each phase gets the time limit plus grace
                            run.phase, run.deadline = phase, time.monotonic() + task_budget(run.task, grace)
                    now = time.monotonic()
                    if run.fields is None and run.process.is_alive() and now < run.deadline:
                        continue
                    if run.fields is None and run.process.is_alive():
                        run.killed = True
                        _kill(run)
                    run.process.join(5)
                    if run.process.is_alive():  # sent its result but hangs on the way out
                        _kill(run)
                        run.process.join()
                    record = _finish(run, now - run.start, memory_mb)
                    conn.close()
                    del running[conn]
                    sink.write(json.dumps(record) + "\n")
                    sink.flush()
                    done[run.task.key] = record
                    display.add(record)
                    if on_record:
                        on_record(record)
        finally:
            for run in running.values():
                _kill(run)
            shutil.rmtree(scratch, ignore_errors=True)
    if not any((out / "logs").iterdir()):
        (out / "logs").rmdir()  # logs are kept only for tasks that printed something
    return [done[t.key] for t in tasks if t.key in done]

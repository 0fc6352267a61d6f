"""Run many independent jobs, each in its own process under a time and a memory limit, here or on a Ray cluster.

A :class:`Job` names a function (``"module:function"``) and its arguments. Wherever it runs, it
runs the same way, in a child process forked from a ``forkserver`` that has the heavy modules
imported already (a fresh interpreter spends about 2 s importing UP, pymimir and onnxruntime):

- the child starts its own process group, works in a scratch folder of its own, and writes its
  output to the job's log;
- it limits its address space to ``memory_mb`` (``RLIMIT_AS``; its own subprocesses inherit it);
- the function may report phases (``phase("solving")``); the start-up and each phase get
  ``timeout`` seconds, after which the process group is killed (``timeout``);
- it sends back what the function returned (``ok``), or what it raised: ``memout`` for a failed
  allocation, ``error`` for anything else. A child that dies without a result is a ``crash``.

Two executors run a list of jobs and yield one :class:`Outcome` per job as each finishes:

- :class:`ProcessPool`: ``jobs`` children at once on this machine;
- :class:`RayExecutor`: each job is a Ray task (one CPU) that runs the same child on its node,
  so the limits are the same; a task whose worker or node is lost is run again (``retries``).
  Ray is imported only here, when the executor starts.

Usage::

    with make_executor("ray", address="HOST:6379") as executor:
        for outcome in executor.run([Job(0, "mypkg.work:solve", ("p01.pddl",), timeout=70, memory_mb=4096)]):
            print(outcome.key, outcome.status, outcome.value)
"""

from __future__ import annotations

import errno
import importlib
import itertools
import os
import pickle
import signal
import sys
import time
import warnings
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path

from up_gnnplan.errors import GnnplanError
from up_gnnplan.processes import adopt_orphans, kill_descendants

EXECUTORS = ("local", "ray")
STATUSES = ("ok", "error", "memout", "timeout", "crash")
RAY_RETRIES = 3  # times a Ray task is run again when its worker or node is lost
RAY_PORT = 6379  # the port `ray start --head` listens on
BEAT_SECONDS = 30.0  # run(beat=...): how often the jobs still running are reported while none finishes
INSTALL_RAY = "pip install 'up-gnnplan[ray]'"


class ExecutorError(GnnplanError):
    """An executor cannot run jobs: Ray is missing, or its cluster cannot be reached."""


@dataclass(frozen=True)
class Job:
    """One call of ``target`` (``"module:function"``) with ``args``, in its own process.

    The function is called as ``function(*args, phase=report)``; ``report(name)`` starts a new
    phase, which gets ``timeout`` seconds of its own.
    """

    key: object  # what the caller knows the job by
    target: str
    args: tuple = ()
    timeout: float | None = None  # seconds for the start-up and for each phase; None: no limit
    memory_mb: int | None = None  # address-space limit of the job's process; None or 0: none
    log: str | None = None  # where the job's output is kept (only when it printed something)


@dataclass
class Outcome:
    """How one job ended (``status`` is one of :data:`STATUSES`)."""

    key: object
    status: str
    value: object = None  # what the function returned (status ok)
    error: str | None = None  # why it did not return (every other status)
    exception: BaseException | None = None  # what the function raised, when it could be sent back
    phase: str = "starting"  # the last phase reported
    wall: float = 0.0  # seconds from the start of the job's process to its end
    killed: bool = False  # killed at the time limit
    max_rss_mb: float | None = None  # the largest resident memory of the process and its subprocesses
    log: str | None = None  # the log file, if the job printed something
    log_text: str | None = None  # the log's text, on its way back from a Ray worker


# -- the job's process -----------------------------------------------------------------------

# How a failed allocation reads when it does not surface as a MemoryError: a shared library that
# cannot be mapped on import, a subprocess that cannot be forked, C++'s std::bad_alloc.
_ALLOCATION_FAILURES = ("failed to map segment", "cannot allocate memory", "bad_alloc", "out of memory")


def out_of_memory(error: BaseException) -> bool:
    """Return whether ``error`` is, or was raised while handling, a failed allocation."""
    while error is not None:
        if isinstance(error, MemoryError) or (isinstance(error, OSError) and error.errno == errno.ENOMEM):
            return True
        if any(sign in str(error).lower() for sign in _ALLOCATION_FAILURES):
            return True
        error = error.__cause__ or error.__context__  # load_pddl re-raises parser errors "from None"
    return False


def cannot_allocate(megabytes: int = 16) -> bool:
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


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent (the forkserver) ends.

    The forkserver ends with the process that started it, so a job whose Ray worker is lost does
    not live on beside the retried one.
    """
    from up_gnnplan.processes import die_with_parent

    die_with_parent()


def _sendable(error: BaseException) -> BaseException | None:
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:  # noqa: BLE001  (an exception that does not pickle is sent as text only)
        return None
    return error


def _child(job: Job, log_path: str, conn, workdir: str, paths=()) -> None:
    """Run ``job`` in this process and send ``("done", fields)`` through ``conn``.

    The job runs in ``workdir``: programs that write files into the working directory (Fast
    Downward's ``output.sas``) neither litter the user's folder nor overwrite each other's files
    when jobs run in parallel. Modules are found on the parent's ``paths`` too (a forkserver
    started earlier may have another ``sys.path``).
    """
    import faulthandler
    import resource

    os.setsid()  # own process group: a kill reaches the job's subprocesses too
    _die_with_parent()
    adopt_orphans()  # Fast Downward runs in a session of its own: keep it below this job, where a kill finds it
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)  # the caller made every path in the job absolute
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    faulthandler.enable()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.path.extend(p for p in paths if p not in sys.path)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    memory_mb = job.memory_mb
    if memory_mb:  # the soft limit only, so that the result can still be sent after a MemoryError
        resource.setrlimit(resource.RLIMIT_AS, (int(memory_mb) * 2**20, hard))
    try:
        module, _, name = job.target.partition(":")
        function = getattr(importlib.import_module(module), name)
        fields = {"status": "ok", "value": function(*job.args, phase=lambda phase: conn.send(("phase", phase)))}
    except BaseException as error:  # noqa: BLE001  (anything the job raises is an outcome)
        text = f"{type(error).__name__}: {error}"[:1000]
        fields = {"status": "error", "error": text, "exception": _sendable(error)}
        if out_of_memory(error) or (memory_mb and cannot_allocate()):
            fields = {"status": "memout", "error": f"out of memory at the {memory_mb} MB limit ({text})"}
    kill_descendants()  # a search the job left running (its own limit did not end it) ends with the job
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    usage = [resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    fields["max_rss_mb"] = round(max(usage) / 1024, 1)  # the largest of this process and its subprocesses
    conn.send(("done", fields))
    conn.close()


# -- running jobs on this machine ------------------------------------------------------------

@dataclass
class _Running:
    job: Job
    process: object
    conn: object
    log: Path
    start: float
    deadline: float
    phase: str = "starting"  # then whatever the job reports
    fields: dict | None = None
    killed: bool = False


def _kill(run: _Running) -> None:
    kill_descendants(run.process.pid)  # those in sessions of their own too (Fast Downward), which killpg misses
    try:
        os.killpg(run.process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # not yet in its own group, or gone
    run.process.kill()


def _outcome(run: _Running, wall: float) -> Outcome:
    """Return the outcome of a finished (or killed) job; keep its log only if it holds something."""
    fields = dict(run.fields or {})
    if run.killed:
        limit = f"limit {run.job.timeout:g} s" if run.job.timeout is not None else "no limit"
        fields = {"status": "timeout", "error": f"killed after {wall:.1f} s while {run.phase} ({limit})"}
    elif run.fields is None:
        code = run.process.exitcode
        died = code is not None and code < 0
        reason = f"killed by {signal.Signals(-code).name}" if died else f"exited with code {code}"
        tail = run.log.read_text(errors="replace")[-400:].strip() if run.log.is_file() else ""
        fields = {"status": "crash", "error": f"the task's process {reason} without a result" + (f": {tail}" if tail else "")}
    if run.log.is_file() and run.log.stat().st_size == 0:
        run.log.unlink()
    kept = run.job.log is not None and run.log.is_file()  # a job without a log of its own prints into the scratch
    return Outcome(run.job.key, phase=run.phase, wall=round(wall, 4), killed=run.killed,
                   log=str(run.log) if kept else None, **fields)


class ProcessPool:
    """Run jobs on this machine, ``jobs`` processes at a time (the default executor)."""

    name = "local"

    def __init__(self, jobs: int | None = 1):
        self.jobs = max(1, jobs or 1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, jobs, preload=(), beat=None):
        """Yield the :class:`Outcome` of each of ``jobs`` as it finishes.

        ``preload`` names modules the forkserver imports before it forks the first job (only if
        this call starts the forkserver). ``beat``, where given, is called every :data:`BEAT_SECONDS`
        that no job finishes, with the (key, seconds) of the jobs running, so that long jobs are seen.
        """
        import multiprocessing
        import shutil
        import tempfile
        from multiprocessing.connection import wait

        pending = deque(jobs)
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(preload))
        if pending:
            warm_up = context.Process(target=time.sleep, args=(0,))  # the forkserver imports ``preload`` first
            warm_up.start()
            warm_up.join()
        running: dict[object, _Running] = {}
        scratch = Path(tempfile.mkdtemp(prefix="gnnplan-jobs-"))  # one working directory per job, removed at the end
        numbers = itertools.count()
        heard = time.monotonic()
        try:
            while pending or running:
                while pending and len(running) < self.jobs:
                    job = pending.popleft()
                    receive, send = context.Pipe(duplex=False)
                    workdir = scratch / f"job-{next(numbers)}"
                    log = Path(job.log).resolve() if job.log else workdir.with_suffix(".log")
                    process = context.Process(target=_child, args=(job, str(log), send, str(workdir), list(sys.path)))
                    process.start()
                    start = time.monotonic()
                    send.close()
                    budget = job.timeout if job.timeout is not None else float("inf")
                    running[receive] = _Running(job, process, receive, log, start, start + budget)
                until = min(r.deadline for r in running.values())
                if beat is not None:
                    until = min(until, heard + BEAT_SECONDS)
                timeout = max(0.0, until - time.monotonic())
                wait([*running, *(r.process.sentinel for r in running.values())],
                     timeout=None if timeout == float("inf") else timeout)
                if beat is not None and time.monotonic() >= heard + BEAT_SECONDS:
                    heard = time.monotonic()
                    beat([(r.job.key, heard - r.start) for r in running.values()])
                for conn, run in list(running.items()):
                    while run.fields is None and conn.poll():
                        try:
                            kind, fields = conn.recv()
                        except (EOFError, OSError):
                            break
                        if kind == "done":
                            run.fields = fields
                        else:  # a new phase: it gets the time limit anew
                            run.phase = fields
                            run.deadline = time.monotonic() + (run.job.timeout if run.job.timeout is not None
                                                               else float("inf"))
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
                    conn.close()
                    del running[conn]
                    heard = time.monotonic()
                    yield _outcome(run, now - run.start)
        finally:
            for run in running.values():
                _kill(run)
            shutil.rmtree(scratch, ignore_errors=True)


# -- running jobs on a Ray cluster -----------------------------------------------------------

def _ray_job(job: Job, preload, paths) -> Outcome:
    """Run ``job`` on this Ray worker as :class:`ProcessPool` would, and return its outcome with the log's text.

    The log is written on the worker's node and travels back in the outcome: the driver's
    folders need not exist there.
    """
    import tempfile
    import types

    sys.path.extend(p for p in paths if p not in sys.path)
    # multiprocessing makes a child import its parent's main module first. In a Ray worker that is
    # Ray's worker script, which imports all of Ray: 35 MB more in every job's address space (and
    # so closer to its memory limit) than in the same job started by `gnnplan compare`.
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with tempfile.TemporaryDirectory(prefix="gnnplan-ray-") as folder:
            local = replace(job, log=os.path.join(folder, "job.log"))
            with ProcessPool(1) as pool:
                outcome = next(iter(pool.run([local], preload)))
            if outcome.log:
                outcome.log_text = Path(outcome.log).read_text(errors="replace")
            outcome.log = None
    finally:
        sys.modules["__main__"] = main
    return outcome


def import_ray():
    """Return the ``ray`` module, or raise :class:`ExecutorError` saying how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as error:
        raise ExecutorError(f"--executor ray needs Ray, which is not installed ({error}): {INSTALL_RAY}") from None


def check_reachable(address: str, seconds: float = 5.0) -> None:
    """Raise :class:`ExecutorError` unless a TCP connection to ``HOST[:PORT]`` opens within ``seconds``.

    Ray itself retries an unreachable address for minutes before it gives up.
    """
    import socket

    where = address.split("://", 1)[-1]
    host, sep, port = where.rpartition(":")
    if not sep:
        host, port = where, str(RAY_PORT)
    if not host or not port.isdigit():
        raise ExecutorError(f"--address {address!r}: write HOST:PORT (the head node's, e.g. 10.0.0.5:{RAY_PORT}), "
                            "'auto' for the cluster started on this machine, or 'local' for a new local instance")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=seconds):
            pass
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise ExecutorError(f"cannot reach the Ray cluster at {address} ({reason}); start its head with "
                            f"`ray start --head --port={port}` or give the head node's HOST:PORT in --address") from None


class RayExecutor:
    """Run each job as a Ray task on a cluster (or a local Ray instance).

    Args:
        address: the head node's ``HOST:PORT`` (``ray start --head`` prints it), ``auto`` for the
            cluster running on this machine, ``local`` for a new local instance, or None for Ray's
            own choice (``RAY_ADDRESS``, else a cluster on this machine, else a new local instance).
        jobs: jobs in flight at once; None: all of them, and the cluster's CPUs decide.
        retries: times a task is run again when its worker or node is lost (Ray's ``max_retries``).

    If Ray is already initialised in this process, its connection is used and left open.
    """

    name = "ray"

    def __init__(self, address: str | None = None, jobs: int | None = None, retries: int = RAY_RETRIES):
        self.address, self.jobs, self.retries = address, jobs, retries
        self._ray = None
        self._started = False

    def __enter__(self):
        import logging

        ray = import_ray()
        if not ray.is_initialized():
            options = {"logging_level": logging.WARNING, "log_to_driver": False}
            if self.address == "local":
                options.update(include_dashboard=False, num_cpus=self.jobs)
            elif self.address not in (None, "auto"):
                check_reachable(self.address)
            try:
                ray.init(address=self.address, **options)
            except Exception as error:  # noqa: BLE001  (Ray raises ConnectionError, RuntimeError, ...)
                where = f"at {self.address}" if self.address else "(Ray's default address)"
                text = str(error).strip().splitlines()[0] if str(error).strip() else ""
                hint = ("; if the cluster uses token authentication, set RAY_AUTH_MODE=token and give the head's "
                        "token (`ray get-auth-token` there) in RAY_AUTH_TOKEN or ~/.ray/auth_token" if self.address not in (None, "local") and "RAY_AUTH_MODE" not in os.environ
                        else "")
                raise ExecutorError(f"cannot connect to the Ray cluster {where}: {type(error).__name__}: {text}"
                                    f"{hint}") from None
            self._started = True
        self._ray = ray
        if not self.cpus():
            warnings.warn("the Ray cluster has no CPU yet: the tasks wait until a node with CPUs joins it")
        return self

    def __exit__(self, *exc):
        if self._started:
            self._ray.shutdown()
            self._started = False
        return False

    def cpus(self) -> int:
        """Return the CPUs of the cluster (0 until a node with CPUs has joined)."""
        return int(self._ray.cluster_resources().get("CPU", 0))

    def run(self, jobs, preload=(), beat=None):
        """Yield the :class:`Outcome` of each of ``jobs`` as its Ray task finishes; ``beat`` as
        :meth:`ProcessPool.run` calls it (the seconds counted from each task's submission)."""
        ray = self._ray
        if ray is None:
            raise RuntimeError("use the RayExecutor in a with-statement: it connects to the cluster there")
        remote = ray.remote(num_cpus=1, max_retries=self.retries, retry_exceptions=False)(_ray_job)
        paths = list(sys.path)
        pending, flying, submitted = deque(jobs), {}, {}
        heard = time.monotonic()
        try:
            while pending or flying:
                while pending and (not self.jobs or len(flying) < self.jobs):
                    job = pending.popleft()
                    ref = remote.remote(replace(job, log=None), tuple(preload), paths)
                    flying[ref], submitted[ref] = job, time.monotonic()
                wait = None if beat is None else max(0.0, heard + BEAT_SECONDS - time.monotonic())
                ready, _ = ray.wait(list(flying), num_returns=1, timeout=wait)
                if not ready:  # only with a beat: none finished in BEAT_SECONDS
                    heard = time.monotonic()
                    beat([(job.key, heard - submitted[ref]) for ref, job in flying.items()])
                    continue
                heard = time.monotonic()
                for ref in ready:
                    job = flying.pop(ref)
                    submitted.pop(ref, None)
                    try:
                        outcome = ray.get(ref)
                    except ray.exceptions.RayError as error:  # lost more often than it is retried, or cancelled
                        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                        outcome = Outcome(job.key, "crash", error=f"the Ray task failed after {self.retries} "
                                                                   f"retries: {type(error).__name__}: {text}"[:1000])
                    outcome.key = job.key
                    if job.log and outcome.log_text:
                        Path(job.log).parent.mkdir(parents=True, exist_ok=True)
                        Path(job.log).write_text(outcome.log_text)
                        outcome.log = str(Path(job.log).resolve())
                    outcome.log_text = None
                    yield outcome
        finally:
            for ref in flying:
                ray.cancel(ref, force=True)


def make_executor(name: str = "local", jobs: int | None = None, address: str | None = None):
    """Return the executor ``name`` (one of :data:`EXECUTORS`), to be entered with ``with``."""
    if name == "local":
        if address:
            raise ExecutorError("--address is for --executor ray; the local executor runs on this machine")
        return ProcessPool(jobs)
    if name == "ray":
        return RayExecutor(address, jobs)
    raise ExecutorError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")

"""The FF heuristic (Hoffmann & Nebel 2001) of pymimir, as the second open list of the dual searches.

pymimir grounds the relaxed task when the heuristic is built, in one call that cannot be
interrupted: 0.1 s for the largest Childsnack task of IPC 2023 ``testing/easy`` (2,049 actions
applicable in its initial state), 11 s for a generated one with 130,575, where each value then
takes 0.2 s (against about 1 ms); 32 s and 377 MB for 300 blocks, 105 s for a Sokoban grid of 30
with 15 boxes (about 25,000 ground actions: the time is not proportional to their number). So a
heuristic is built only where it fits the solve's limits (:func:`build_within`):

- left out when the initial state has more than :data:`MAX_INITIAL_ACTIONS` applicable actions
  (each value would then take too long), or when the estimated ground actions
  (:mod:`up_gnnplan.problems.size`) at :data:`KB_PER_ACTION` exceed the memory left;
- built at once when the estimate is small (:data:`DIRECT_BUILD_ACTIONS`) or the solve has no deadline;
- otherwise built first in a forked child process (:class:`Trial`), which is stopped when it passes
  :data:`BUILD_SHARE` of the time left or the memory left; only a build that finished there is
  repeated here (it then costs twice, which the share leaves room for).

Mode auto's policy needs FF's estimate of the initial state only for its step limit, so there the
trial runs beside the policy (:func:`initial_estimate`, with :data:`BESIDE_SHARE` of the time left)
and reports the estimate while the policy walks, where another core is idle (:func:`free_core`):
before, the walk waited for the trial and then for a second build here (12-25 s of a minute for
250 blocks).
The dual fallback, if it runs, waits for the same trial and builds FF here only then.

The solve's limits are checked between values.
"""

from __future__ import annotations

import math
import os
import select
import signal
import time
import weakref
from dataclasses import dataclass

MAX_INITIAL_ACTIONS = 10_000
# Memory of the built heuristic per estimated ground action: 0.3-4.8 KB measured on ten generated
# domains (Blocksworld 2.2 KB), so the largest.
KB_PER_ACTION = 5.0
# Below this many estimated ground actions a build takes well under a second (Blocksworld of 40
# blocks, 3,300 actions: 0.1 s), so it is not tried in a child first.
DIRECT_BUILD_ACTIONS = 2_000
BUILD_SHARE = 0.2  # of the time left, for trying the build in a child
# The fastest build measured per estimated ground action (Logistics, 2.4 µs; Blocksworld 60-270 µs,
# Sokoban over 4 ms): a build whose estimate at this speed exceeds the share is not even tried.
MIN_SECONDS_PER_ACTION = 2e-6
POLL_SECONDS = 0.02
ASTRAY_FLOOR = 50  # steps a policy may always take before an FF-relative step limit applies
CHECK_EVERY = 32  # values between limit checks, unless one value took longer than SLOW_SECONDS
SLOW_SECONDS = 0.01
# Per task, the heuristic built for it (or None) and why it was left out: a solve asks once for the
# policy's step limit (the engine's astray_factor) and again for the dual fallback.
_BUILT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# Per task, its FF build tried in a child process (:class:`Trial`): started beside mode auto's policy,
# it is waited for by the dual fallback instead of trying again.
_TRIALS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# The share of the time left for a trial beside mode auto's policy: the policy walks meanwhile, so
# only the build repeated for the fallback, if one runs, costs the solve's own time.
BESIDE_SHARE = 0.4
# The idle share of a core (cores less the load average or the threads running now, either counting this solve's
# own process) that counts as a core free for the trial: a quiet 2-core machine running one solve shows a load
# near 1.
FREE_CORE = 0.75
# Threads running now: the mean of this many readings of /proc/loadavg, this far apart (seconds).
RUNNING_READINGS = 5
RUNNING_GAP = 0.01


class FFHeuristic:
    """pymimir's FF heuristic of one task; ``None`` for a state it proves a dead end (relaxed-unsolvable)."""

    def __init__(self, task, limits=None):
        import pymimir

        from up_gnnplan.native import quiet_stdout

        with quiet_stdout():
            self.heuristic = pymimir.FFHeuristic(task.mimir_problem)
        self.limits, self.calls = limits, 0

    @classmethod
    def for_search(cls, task, limits, generate) -> tuple["FFHeuristic | None", str]:
        """Return (the heuristic, "") for a dual search of ``task``, or (None, why it is left out).

        ``generate`` is the search's :class:`~up_gnnplan.limits.Uninterruptible` action generation:
        counting the initial state's actions through it tells the search how long its first
        expansion's generation will take. Built once per task: a later call gets the same
        heuristic, checking ``limits`` from then on.
        """
        if task in _BUILT:
            heuristic, note = _BUILT[task]
            if heuristic is not None:
                heuristic.limits = limits
            return heuristic, note
        _BUILT[task] = build_within(task, limits, generate)
        return _BUILT[task]

    def __call__(self, state) -> float | None:
        start = time.perf_counter()
        value = self.heuristic.compute_value(state)
        self.calls += 1
        if self.limits is not None and (self.calls % CHECK_EVERY == 0 or time.perf_counter() - start > SLOW_SECONDS):
            self.limits.check(f"while computing FF values ({self.calls:,} so far)")
        return None if value is None or not math.isfinite(value) else float(value)


def build_within(task, limits, generate=None) -> tuple[FFHeuristic | None, str]:
    """Return (FF of ``task``, "") if building it fits ``limits``, else (None, why it is left out).

    ``generate``: an :class:`~up_gnnplan.limits.Uninterruptible` that runs the initial state's
    action generation (default: a plain call). Raises :class:`~up_gnnplan.limits.LimitReached`
    only where a limit was reached before or after the build, never by starting a build that
    would break one. A :class:`Trial` already started for ``task`` (beside mode auto's policy:
    :func:`initial_estimate`) is waited for instead of starting another.
    """
    verdict = _fits(task, limits, generate)
    if verdict.why:
        return None, verdict.why
    if verdict.trial_seconds is not None:
        trial = _TRIALS.get(task)
        if trial is None or trial.failed_early():
            trial = _TRIALS[task] = Trial(task, verdict.trial_seconds, verdict.trial_memory_mb)
        trial.wait(limits)
        if trial.took is None:
            return None, (f"FF left out: grounding it (about {verdict.actions:,} actions) {trial.why}, so it was "
                          f"stopped and not built for the search")
        limits.deadline.check_room(trial.took, "before building the FF heuristic")
    limits.check("before building the FF heuristic")
    heuristic = FFHeuristic(task, limits)
    limits.check("after building the FF heuristic")
    return heuristic, ""


def left_out(task, limits, generate=None) -> str:
    """Why FF of ``task`` is left out under ``limits`` (:func:`build_within` says the same), without building it;
    empty where it may be built (directly, or tried in a child first)."""
    return _fits(task, limits, generate).why


def initial_estimate(task, limits, generate=None, beside: bool = False) -> tuple[float | None, "Trial | None", str]:
    """FF's estimate of ``task``'s initial state: (the estimate, None, "") where FF is built here at once
    (small tasks, no deadline); with ``beside``, where building it needs a :class:`Trial` and a core is
    free for it (:func:`free_core`), (None, the trial, "") with the trial started, to report the
    estimate while the caller goes on (mode auto's policy walks meanwhile); (None, None, why) where FF
    is left out or the initial state is a dead end.
    Without ``beside``, as :meth:`FFHeuristic.for_search` and then the value."""
    verdict = _fits(task, limits, generate) if beside and task not in _BUILT else None
    if verdict is not None and not verdict.why and verdict.trial_seconds is not None and free_core():
        seconds = BESIDE_SHARE / BUILD_SHARE * verdict.trial_seconds  # that share of the time left
        try:
            _TRIALS[task] = Trial(task, seconds, verdict.trial_memory_mb)
            return None, _TRIALS[task], ""
        except OSError:  # no process to be had (fork refused): FF is tried first, as without a free core
            pass
    heuristic, note = FFHeuristic.for_search(task, limits, generate)
    if heuristic is None:
        return None, None, note
    estimate = heuristic(task.initial_state())
    return estimate, None, "" if estimate is not None else "FF finds the initial state a dead end"


def free_core() -> bool:
    """Whether a whole core is idle for a process beside this one: the cores this process may run on, less the
    lower of the load average of the last minute and the threads running now (:func:`running_now`). On a busy
    machine a trial beside the policy only slows the policy down (measured: a 250-block walk took 47.2 s instead
    of 34.4 s at load 3.5 on 2 cores), so there the trial runs first, as before. The load average lags: a solve
    that follows one that kept two cores busy saw none free; the threads running now flicker: a solve's own
    harness, busy for a moment, hid the free core from one of its two readings (FF's trial, then the translator
    at once, on hard-lower Blocksworld)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        loads = [os.getloadavg()[0]]
    except OSError:
        loads = []
    now = running_now()
    if now is not None:
        loads.append(now)
    if not loads:
        return cores > 1
    return cores - min(loads) >= FREE_CORE


def running_now() -> float | None:
    """The threads running or ready to run on the machine now, this one among them: the mean of
    :data:`RUNNING_READINGS` readings of /proc/loadavg's fourth field; None where there is none (not Linux)."""
    counts = []
    try:
        for reading in range(RUNNING_READINGS):
            if reading:
                time.sleep(RUNNING_GAP)
            with open("/proc/loadavg") as file:
                counts.append(int(file.read().split()[3].split("/")[0]))
    except (OSError, ValueError, IndexError):
        return None
    return sum(counts) / len(counts)


def astray_limit(most: int, factor: float, estimate: float) -> int:
    """The policy's step limit of mode auto (engine param ``astray_factor``): ``factor`` times FF's
    ``estimate`` of the initial state plus :data:`ASTRAY_FLOOR` steps, at most ``most``."""
    return min(most, ASTRAY_FLOOR + math.ceil(factor * estimate))


def stop_trial(task) -> None:
    """Stop the :class:`Trial` of ``task`` if it still runs (its outcome, if it had one, is kept)."""
    trial = _TRIALS.get(task)
    if trial is not None:
        trial.stop()


@dataclass
class _Fit:
    """How FF of a task fits a solve's limits: ``why`` it is left out, or built directly
    (``trial_seconds`` None), or tried in a child first within ``trial_seconds`` and ``trial_memory_mb``."""

    why: str = ""
    actions: int = 0
    trial_seconds: float | None = None
    trial_memory_mb: float | None = None


def _fits(task, limits, generate=None) -> _Fit:
    from up_gnnplan.problems.size import estimate_ground_actions

    applicable = len(generate(task.initial_state().generate_applicable_actions, "the initial state")
                     if generate is not None else task.initial_state().generate_applicable_actions())
    limits.check(f"after generating the {applicable:,} applicable actions of the initial state")
    if applicable > MAX_INITIAL_ACTIONS:
        return _Fit(f"FF left out: the initial state has {applicable:,} applicable actions (above "
                    f"{MAX_INITIAL_ACTIONS:,}), where grounding FF takes seconds that cannot be interrupted")
    estimate = estimate_ground_actions(task)
    memory_mb = estimate * KB_PER_ACTION / 1024
    headroom = limits.headroom_mb()
    if headroom is not None and memory_mb > 0.5 * headroom:
        return _Fit(f"FF left out: grounding it for about {estimate:,} actions would take about {memory_mb:,.0f} MB, "
                    f"more than half the {headroom:,.0f} MB left under the memory limit")
    remaining = limits.deadline.remaining()
    if estimate <= DIRECT_BUILD_ACTIONS or remaining is None or not hasattr(os, "fork"):
        return _Fit(actions=estimate)
    budget = BUILD_SHARE * remaining
    if estimate * MIN_SECONDS_PER_ACTION > budget:
        return _Fit(f"FF left out: grounding it for about {estimate:,} actions would take at least "
                    f"{estimate * MIN_SECONDS_PER_ACTION:.1f} s, more than {budget:.1f} s, a {BUILD_SHARE:.0%} "
                    "share of the time left")
    return _Fit(actions=estimate, trial_seconds=budget, trial_memory_mb=None if headroom is None else 0.5 * headroom)


class Trial:
    """FF of a task built in a forked child process, stopped after ``seconds`` or above ``memory_mb``
    more resident memory than this process has; the child reports FF's estimate of the initial state.

    The child only builds the heuristic, values one state and exits: it touches nothing of the
    parent's (no model session, no file), so forking a process that holds onnxruntime's threads is
    safe. It dies with the solve (``PR_SET_PDEATHSIG``) and within a CPU-time limit of its own. After
    :meth:`poll` or :meth:`wait` says it ended: ``took`` (seconds, None where it was stopped or
    failed), ``estimate`` (None also for a dead end) and ``why`` (where it was stopped).
    """

    def __init__(self, task, seconds: float, memory_mb: float | None):
        from up_gnnplan.limits import resident_mb

        self.seconds, self.memory_mb, self.base_mb = seconds, memory_mb, resident_mb()
        self.took: float | None = None
        self.estimate: float | None = None
        self.why, self.ended, self._peak = "", False, 0.0
        self._read, write = os.pipe()
        self.start = time.perf_counter()
        try:
            self.pid = os.fork()
        except OSError:
            os.close(self._read)
            os.close(write)
            raise
        if self.pid == 0:  # the child
            try:
                import resource

                from up_gnnplan.processes import die_with_parent

                die_with_parent()
                cpu = math.ceil(seconds) + 1
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
                os.close(self._read)
                value = FFHeuristic(task)(task.initial_state())
                os.write(write, f"{'dead' if value is None else value}\n".encode())
            finally:
                os._exit(0)
        os.close(write)

    def failed_early(self) -> bool:
        """Whether this trial ended without a heuristic before its own time share (a fresh one may do better)."""
        return self.ended and self.took is None and not self.why.startswith("took more than")

    def poll(self) -> bool:
        """Return whether the trial has ended (reported, failed or been stopped), without waiting."""
        if self.ended:
            return True
        from up_gnnplan.limits import MB

        if select.select([self._read], [], [], 0)[0]:
            report = os.read(self._read, 64).decode().strip()
            if report:
                self.took = time.perf_counter() - self.start
                self.estimate = None if report == "dead" else float(report)
            else:
                self.why = "failed in a trial process"
            self.stop()
            return True
        if time.perf_counter() - self.start > self.seconds:
            self.why = f"took more than {self.seconds:.1f} s, its share of the time left"
        elif self.memory_mb is not None:
            self._peak = max(self._peak, _resident_mb_of(self.pid, MB) - self.base_mb)
            if self._peak > self.memory_mb:
                self.why = f"took more than {self.memory_mb:,.0f} MB, half the memory left under the limit"
        if self.why:
            self.stop()
            return True
        return False

    def wait(self, limits=None) -> None:
        """Wait until the trial ends, checking ``limits`` between polls."""
        while not self.poll():
            select.select([self._read], [], [], POLL_SECONDS)
            if limits is not None:
                try:
                    limits.check("while grounding FF in a trial process")
                except BaseException:
                    self.stop()
                    raise

    def stop(self) -> None:
        """Stop the child if it still runs, and reap it."""
        if self.pid is None:
            return
        self.ended = True
        if self.took is None and not self.why:
            self.why = "was stopped when the search it served ended"
        os.close(self._read)
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        self.pid = None


def _resident_mb_of(pid: int, mb: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / mb
    except (OSError, ValueError, IndexError):
        return 0.0

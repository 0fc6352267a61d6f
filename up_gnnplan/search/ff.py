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
- otherwise built first in a forked child process, which is stopped when it passes
  :data:`BUILD_SHARE` of the time left or the memory left; only a build that finished there is
  repeated here (it then costs twice, which the share leaves room for).

The solve's limits are checked between values.
"""

from __future__ import annotations

import math
import os
import select
import signal
import time
import weakref

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
    would break one.
    """
    from up_gnnplan.problems.size import estimate_ground_actions

    applicable = len(generate(task.initial_state().generate_applicable_actions, "the initial state")
                     if generate is not None else task.initial_state().generate_applicable_actions())
    limits.check(f"after generating the {applicable:,} applicable actions of the initial state")
    if applicable > MAX_INITIAL_ACTIONS:
        return None, (f"FF left out: the initial state has {applicable:,} applicable actions (above "
                      f"{MAX_INITIAL_ACTIONS:,}), where grounding FF takes seconds that cannot be interrupted")
    estimate = estimate_ground_actions(task)
    memory_mb = estimate * KB_PER_ACTION / 1024
    headroom = limits.headroom_mb()
    if headroom is not None and memory_mb > 0.5 * headroom:
        return None, (f"FF left out: grounding it for about {estimate:,} actions would take about {memory_mb:,.0f} MB, "
                      f"more than half the {headroom:,.0f} MB left under the memory limit")
    remaining = limits.deadline.remaining()
    if estimate > DIRECT_BUILD_ACTIONS and remaining is not None and hasattr(os, "fork"):
        budget = BUILD_SHARE * remaining
        if estimate * MIN_SECONDS_PER_ACTION > budget:
            return None, (f"FF left out: grounding it for about {estimate:,} actions would take at least "
                          f"{estimate * MIN_SECONDS_PER_ACTION:.1f} s, more than {budget:.1f} s, a {BUILD_SHARE:.0%} "
                          "share of the time left")
        seconds, why = _trial_build(task, budget, None if headroom is None else 0.5 * headroom)
        if seconds is None:
            return None, (f"FF left out: grounding it (about {estimate:,} actions) {why}, so it was stopped "
                          f"and not built for the search")
        limits.deadline.check_room(seconds, "before building the FF heuristic")
    limits.check("before building the FF heuristic")
    heuristic = FFHeuristic(task, limits)
    limits.check("after building the FF heuristic")
    return heuristic, ""


def _trial_build(task, seconds: float, memory_mb: float | None) -> tuple[float | None, str]:
    """Build FF of ``task`` in a forked child process, stopped after ``seconds`` or above ``memory_mb``
    more resident memory than this process has; return (the seconds it took, "") or (None, why stopped).

    The child only builds the heuristic and exits: it touches nothing of the parent's (no model
    session, no file), so forking a process that holds onnxruntime's threads is safe.
    """
    from up_gnnplan.limits import MB, resident_mb

    base_mb = resident_mb()
    read, write = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read)
            FFHeuristic(task)
            os.write(write, b"1")
        finally:
            os._exit(0)
    os.close(write)
    peak = 0.0
    try:
        while True:
            ready, _, _ = select.select([read], [], [], POLL_SECONDS)
            if ready:
                finished = os.read(read, 1) == b"1"
                return (time.perf_counter() - start, "") if finished else (None, "failed in a trial process")
            elapsed = time.perf_counter() - start
            if elapsed > seconds:
                return None, f"took more than {seconds:.1f} s, a {BUILD_SHARE:.0%} share of the time left"
            if memory_mb is not None:
                peak = max(peak, _resident_mb_of(pid, MB) - base_mb)
                if peak > memory_mb:
                    return None, f"took more than {memory_mb:,.0f} MB, half the memory left under the limit"
    finally:
        os.close(read)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


def _resident_mb_of(pid: int, mb: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / mb
    except (OSError, ValueError, IndexError):
        return 0.0

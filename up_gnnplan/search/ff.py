"""The FF heuristic (Hoffmann & Nebel 2001) of pymimir, as the second open list of the dual searches.

pymimir grounds the relaxed task when the heuristic is built, in one call that cannot be
interrupted: 0.1 s for the largest Childsnack task of IPC 2023 ``testing/easy`` (2,049 actions
applicable in its initial state), 11 s for a generated one with 130,575, where each value then
takes 0.2 s (against about 1 ms). The dual searches therefore leave FF out, and say so, when the
initial state has more than :data:`MAX_INITIAL_ACTIONS` applicable actions, and check the
solve's limits between values.
"""

from __future__ import annotations

import math
import time
import weakref

MAX_INITIAL_ACTIONS = 10_000
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
        applicable = len(generate(task.initial_state().generate_applicable_actions, "the initial state"))
        limits.check(f"after generating the {applicable:,} applicable actions of the initial state")
        if applicable > MAX_INITIAL_ACTIONS:
            _BUILT[task] = None, (f"FF left out: the initial state has {applicable:,} applicable actions (above "
                                  f"{MAX_INITIAL_ACTIONS:,}), where grounding FF takes seconds that cannot be interrupted")
            return _BUILT[task]
        limits.check("before building the FF heuristic")
        _BUILT[task] = cls(task, limits), ""
        limits.check("after building the FF heuristic")
        return _BUILT[task]

    def __call__(self, state) -> float | None:
        start = time.perf_counter()
        value = self.heuristic.compute_value(state)
        self.calls += 1
        if self.limits is not None and (self.calls % CHECK_EVERY == 0 or time.perf_counter() - start > SLOW_SECONDS):
            self.limits.check(f"while computing FF values ({self.calls:,} so far)")
        return None if value is None or not math.isfinite(value) else float(value)

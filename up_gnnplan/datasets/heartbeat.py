"""Long labelling work that says how it goes and stops at the memory limit.

Expanding a state space or searching an optimal plan runs for minutes, much of it inside
pymimir. A :class:`Heartbeat` is called for every unit of such work (a state expanded, a state
labelled, a successor searched), from pymimir's callbacks and from the Python loops after them.
Every :data:`CHECK_EVERY` calls it compares the process's resident memory with the limit, raising
:class:`~up_gnnplan.limits.MemoryLimitReached` with what was under way, and every
:data:`REPORT_SECONDS` it tells ``phase`` how far the work is, so a log never goes quiet for long.
"""

from __future__ import annotations

import time

from up_gnnplan.limits import Limits, resident_mb

REPORT_SECONDS = 5.0  # at most this long between two progress lines
CHECK_EVERY = 256  # calls between two looks at the clock and the memory (reading /proc takes ~10 us)


class Heartbeat:
    """Count units of work; check the memory limit and report progress every so often.

    Args:
        limits: the :class:`~up_gnnplan.limits.Limits` whose memory limit holds (its deadline too with ``deadline``:
            :class:`~up_gnnplan.limits.TimeLimitReached` once it has passed).
        phase: ``phase(text)`` is told the progress (None: nobody is told).
        describe: ``describe(count, seconds)`` returns what is under way, e.g. ``"expanding the state
            space: 12,000 states so far"``; it also names the work in the memory limit's message.
        since: when the last line was given (default: now), so that one stage of a long job that
            follows another keeps to the same pace of lines.
    """

    def __init__(self, limits: Limits, phase, describe, every: int = CHECK_EVERY, since: float | None = None,
                 deadline: bool = False):
        self.limits, self.phase, self.describe, self.every, self.deadline = limits, phase, describe, every, deadline
        self.count = 0
        self.start = time.perf_counter()
        self.reported = self.start if since is None else since

    def __call__(self, units: int = 1) -> None:
        """Count ``units`` more; at every multiple of ``every``, :meth:`check`."""
        before = self.count
        self.count += units
        if self.count // self.every != before // self.every:
            self.check()

    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def rate(self) -> float:
        """Units per second so far."""
        return self.count / max(self.seconds(), 1e-9)

    def check(self) -> None:
        """Raise :class:`~up_gnnplan.limits.MemoryLimitReached` above the limit (and, with ``deadline``,
        :class:`~up_gnnplan.limits.TimeLimitReached` past it); report if it is time to."""
        what = f"while {self.describe(self.count, self.seconds())}"
        if self.deadline:
            self.limits.check(what)
        else:
            self.limits.check_memory(what)
        now = time.perf_counter()
        if self.phase is not None and now - self.reported >= REPORT_SECONDS:
            self.reported = now
            self.phase(self.line())

    def line(self) -> str:
        """The progress line: what is under way, the rate, and the memory against its limit."""
        limit = f" of at most {self.limits.memory_mb:,} MB" if self.limits.memory_mb else ""
        return (f"{self.describe(self.count, self.seconds())} ({self.rate():,.0f}/s, {self.seconds():.0f} s; "
                f"resident memory {resident_mb():,.0f} MB{limit})")

"""The limits of one solve: a wall-clock deadline and a bound on the process's resident memory.

A solve checks both between every unit of work it cannot interrupt (a stage of loading the
task, one chunk of successor evaluation, one expansion, one validated plan step), so a limit
given by the user holds to within the longest such unit. Reaching a limit raises
:class:`TimeLimitReached` or :class:`MemoryLimitReached`; the engine turns them into UP's
``TIMEOUT`` and ``MEMOUT`` statuses with a message naming what was too large.

Memory is the process's resident set size (RSS), read from ``/proc/self/statm`` where it
exists and otherwise from the peak ``ru_maxrss`` (an over-estimate, so still safe). The
default limit is derived from the machine: half of its physical memory, and no more than
the memory available when the solve starts plus what the process already holds, nor than an
address-space limit the process runs under (``ulimit -v``) allows it to hold.
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import sys
import threading
import time

from up_gnnplan.errors import GnnplanError

MB = 2**20
# The uninterruptible work every search does: one pymimir call per expanded state.
GENERATING = "generating the applicable actions"

# Never default to less than this: the runtime alone (UP, pymimir, onnxruntime) takes ~200 MB.
MIN_DEFAULT_MB = 1024


_freezing = threading.Lock()
_frozen_by_us = 0


@contextlib.contextmanager
def frozen_heap():
    """Keep the objects the process holds before a solve out of its garbage collections (CPython's
    ``gc.freeze``), so that a limit holds in a process with a large heap too.

    A full collection scans every object the process holds: 0.35 s for 3 million lists, more in a
    notebook or a test run that has read many problems. Run between two checks of the deadline, it
    made a 2 s limit end 0.6 s late. Frozen, those objects are left out of every collection until the
    solve ends; garbage among them is collected after it. Nested solves freeze once; a heap the caller
    froze is left as it is.
    """
    global _frozen_by_us
    with _freezing:
        ours = _frozen_by_us > 0 or gc.get_freeze_count() == 0
        if ours:
            if _frozen_by_us == 0:
                gc.freeze()
            _frozen_by_us += 1
    try:
        yield
    finally:
        if ours:
            with _freezing:
                _frozen_by_us -= 1
                if _frozen_by_us == 0:
                    gc.unfreeze()


class LimitReached(GnnplanError):
    """A limit of the solve was reached; ``what`` names the work that was under way."""


class TimeLimitReached(LimitReached):
    """The wall-clock limit passed."""


class MemoryLimitReached(LimitReached):
    """The resident memory of the process went beyond the memory limit."""


class Overtaken(TimeLimitReached):
    """A solver beside this part of the solve found a plan first: its time is over (``Limits.overtaken``)."""


def _meminfo() -> dict[str, int]:
    """Return /proc/meminfo in bytes (empty where there is none)."""
    try:
        with open("/proc/meminfo") as handle:
            return {line.split(":")[0]: int(line.split()[1]) * 1024 for line in handle if line.split()[1:]}
    except (OSError, ValueError, IndexError):
        return {}


def resident_mb() -> float:
    """Return the resident set size of this process in MB."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / MB if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KB on Linux


def default_memory_mb() -> int:
    """Return the default memory limit: half the machine's RAM, within what is available now and
    within the process's address-space limit, if it has one."""
    info = _meminfo()
    total = info.get("MemTotal")
    if total is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            total = 8192 * MB
    limit = total / 2 / MB
    available = info.get("MemAvailable")
    if available is not None:
        limit = min(limit, 0.9 * available / MB + resident_mb())
    space = address_space_mb()
    if space is not None:  # below it, a limit check ends the solve before an allocation fails
        return max(128, min(int(limit), resident_under(space)))
    return max(MIN_DEFAULT_MB, int(limit))


def address_space_mb() -> int | None:
    """Return the address-space limit (``RLIMIT_AS``, ``ulimit -v``) this process runs under, in MB
    (the lower of the soft and hard limits), or None where there is none."""
    limits = [value for value in resource.getrlimit(resource.RLIMIT_AS) if value != resource.RLIM_INFINITY]
    return min(limits) // MB if limits else None


# A process's address space exceeds its resident memory by about 200 MB (libraries mapped but not
# touched, thread stacks): measured 374 MB against 190 MB on Blocksworld.
ADDRESS_SPACE_MARGIN_MB = 384


def resident_under(address_space_mb: int) -> int:
    """Return the resident-memory limit to keep under an address-space limit (``RLIMIT_AS``), below the
    margin of what a process maps without holding it, so that a limit check ends it cleanly before an
    allocation fails."""
    return max(128, min(int(0.85 * address_space_mb), address_space_mb - ADDRESS_SPACE_MARGIN_MB))


def address_space_for(memory_mb: int | None) -> int | None:
    """Return the address-space limit of a process whose resident memory is limited to ``memory_mb``
    (the inverse of :func:`resident_under`; None or 0: no limit)."""
    if not memory_mb:
        return memory_mb
    space = max(memory_mb + ADDRESS_SPACE_MARGIN_MB, int(memory_mb / 0.85))
    while resident_under(space) < memory_mb:
        space += 1
    return space


def process_start() -> float:
    """Return the :func:`time.perf_counter` value at which this process started.

    A command's limit counts from its start, the interpreter's and the imports' seconds
    included (about 2 s before a command's own code runs). Linux gives the start in
    ``/proc/self/stat`` (clock ticks since boot, against ``CLOCK_BOOTTIME``); elsewhere this is
    when this module was first imported, the earliest moment the package sees.
    """
    try:
        with open("/proc/self/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of stat(5), counted after the name
        elapsed = time.clock_gettime(time.CLOCK_BOOTTIME) - started
        if 0 <= elapsed < 86_400 * 365:
            return min(time.perf_counter() - elapsed, _IMPORTED)
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    return _IMPORTED


_IMPORTED = time.perf_counter()
_PROGRAM = {"on": False}  # set by the ``gnnplan`` program's entry point


def run_as_program() -> None:
    """Say that this process is the ``gnnplan`` program, so that its commands count from its start."""
    _PROGRAM["on"] = True


def command_start() -> float:
    """Return the clock value a command's limits count from: the process's start where the process
    is the ``gnnplan`` program (its interpreter's start and imports count too), else now (a command
    run inside another program, such as a test's ``CliRunner``)."""
    return process_start() if _PROGRAM["on"] else time.perf_counter()


class Deadline:
    """A wall-clock limit measured from ``start``; ``None`` seconds means no limit."""

    def __init__(self, seconds: float | None, start: float | None = None):
        self.start = time.perf_counter() if start is None else start
        self.seconds = seconds
        self.end = None if seconds is None else self.start + seconds

    def passed(self) -> bool:
        return self.end is not None and time.perf_counter() > self.end

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        """Return the seconds left (never negative), or None without a limit."""
        return None if self.end is None else max(0.0, self.end - time.perf_counter())

    def extend_to(self, end: float) -> None:
        """Move the deadline to the clock value ``end`` (a part of a solve given more of its time)."""
        self.end, self.seconds = end, end - self.start

    @property
    def said(self) -> str:
        """The limit's seconds as messages say them: as given (60, 0.05), or to a tenth where a share of the
        solve's time was extended to a clock value (55.6, not 55.5899)."""
        return f"{self.seconds:g}" if self.seconds == round(self.seconds, 2) else f"{self.seconds:.1f}"

    def check(self, what: str) -> None:
        """Raise :class:`TimeLimitReached` if the deadline has passed, naming ``what`` was under way."""
        if self.passed():
            raise TimeLimitReached(f"time limit of {self.said} s reached {what} (after {self.elapsed():.2f} s)")

    def check_room(self, seconds: float, what: str, basis: str = "it took last time") -> None:
        """Raise :class:`TimeLimitReached` if fewer than ``seconds`` are left for ``what``.

        For work that cannot be interrupted: started with less time left than it is expected
        to take, it would end past the deadline and break the limit by its whole length.
        """
        self.check(what)  # passed already: said as such
        remaining = self.remaining()
        if remaining is not None and remaining < seconds:
            raise TimeLimitReached(f"time limit of {self.said} s reached {what}: {remaining:.2f} s left, "
                                   f"less than the {seconds:.2f} s {basis} (after {self.elapsed():.2f} s)")


class Limits:
    """The deadline and the memory limit of one solve, checked together.

    Args:
        seconds: wall-clock limit, or None.
        memory_mb: limit on the process's resident memory in MB; None for :func:`default_memory_mb`,
            0 for no limit.
        start: the clock value the deadline counts from (default: now).
    """

    def __init__(self, seconds: float | None = None, memory_mb: int | None = None, start: float | None = None):
        self.deadline = Deadline(seconds, start)
        self.memory_mb = default_memory_mb() if memory_mb is None else int(memory_mb)
        self.peak_mb = resident_mb()
        self._work: dict[str, Uninterruptible] = {}
        # Another solver beside this part of the solve: ``overtaken(what)`` says why to stop at the check of
        # ``what`` (it found a plan first), else is empty (mode auto's learned part beside LAMA-first's search).
        self.overtaken = None

    def uninterruptible(self, what: str) -> "Uninterruptible":
        """Return the :class:`Uninterruptible` work ``what`` of this solve (one per name, so that a
        fallback search after the policy goes by the policy's last run)."""
        return self._work.setdefault(what, Uninterruptible(self, what))

    def share(self, fraction: float) -> "Limits":
        """Return the limits of a part of this solve that may take ``fraction`` of the time left
        (all of it without a deadline): the same memory limit and the same uninterruptible work's
        records; fold its peak back with :meth:`absorb`."""
        remaining = self.deadline.remaining()
        part = Limits(None if remaining is None else fraction * remaining, self.memory_mb)
        part.peak_mb, part._work = self.peak_mb, self._work
        return part

    def absorb(self, part: "Limits") -> None:
        """Take the peak memory of ``part`` (from :meth:`share`) into this solve's."""
        self.peak_mb = max(self.peak_mb, part.peak_mb)

    def check(self, what: str) -> None:
        """Raise a :class:`LimitReached` if either limit is reached, naming ``what`` was under way
        (:class:`Overtaken` where a solver beside it found a plan first: ``overtaken``)."""
        self.deadline.check(what)
        self.check_memory(what)
        if self.overtaken is not None:
            why = self.overtaken(what)
            if why:
                raise Overtaken(why)

    def check_memory(self, what: str) -> None:
        rss = resident_mb()
        self.peak_mb = max(self.peak_mb, rss)
        if self.memory_mb and rss > self.memory_mb:
            raise MemoryLimitReached(f"memory limit of {self.memory_mb} MB reached {what} "
                                     f"(resident memory {rss:.0f} MB)")

    def headroom_mb(self) -> float | None:
        """Return the memory still free under the limit in MB (None without a limit)."""
        if not self.memory_mb:
            return None
        return max(0.0, self.memory_mb - resident_mb())


class Uninterruptible:
    """One kind of work that cannot be interrupted (such as generating a state's applicable
    actions: one pymimir call, over a second for 130,575 actions), run so that a deadline holds.

    Each run is refused with :class:`TimeLimitReached` when less time is left than the previous
    run took, the best guess of the next one's length; the first run has no guess.
    """

    def __init__(self, limits: Limits, what: str):
        self.limits, self.what, self.last = limits, what, 0.0
        self.basis = "it took last time"

    def expect(self, seconds: float, basis: str) -> None:
        """Take ``seconds`` as the first run's length (until one is measured); ``basis`` says whence."""
        self.last, self.basis = seconds, basis

    def __call__(self, work, where: str):
        """Return ``work()``, unless the time left is shorter than the last run; ``where`` names the step."""
        self.limits.deadline.check_room(self.last, f"before {self.what} of {where}", self.basis)
        start = time.perf_counter()
        result = work()
        self.last, self.basis = time.perf_counter() - start, "it took last time"
        return result


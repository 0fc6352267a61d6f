"""The processes a job or command started, however deep, so that none outlives it.

UP starts Fast Downward in a session of its own (``start_new_session=True``), so a kill of a job's
process group misses it, and a job or command that ends or is killed while LAMA or A* runs would
leave it running without any limit: seen here, a LAMA-first search of a ``gnnplan compare`` task
went on for half an hour (1 GB, a full core) after its task had been killed. A process that calls
:func:`adopt_orphans` gets the orphans of its subprocesses as children (Linux's child subreaper),
so :func:`descendants` still finds a search whose parent died, and :func:`kill_descendants` ends
them all.
"""

from __future__ import annotations

import os
import signal
import sys

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1


def adopt_orphans() -> None:
    """Make this process the parent of its descendants' orphans (Linux; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent ends (``PR_SET_PDEATHSIG``; elsewhere nothing):
    a forked helper then never outlives the solve or the job that started it."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _parents() -> dict[int, int]:
    """Return {pid: parent pid} of every process of this machine that /proc shows."""
    parents = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return parents
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            parents[int(name)] = int(fields[1])
    return parents


def descendants(pid: int | None = None) -> list[int]:
    """Return the processes below ``pid`` (default: this one), parents before their children."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found, frontier = [], [root]
    while frontier:
        below = [c for p in frontier for c in children.get(p, [])]
        found.extend(below)
        frontier = below
    return found


def kill_descendants(pid: int | None = None) -> int:
    """Kill every process below ``pid`` (default: this one); return how many were signalled."""
    killed = 0
    for child in descendants(pid):
        try:
            os.kill(child, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            pass
    return killed

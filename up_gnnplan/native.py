"""Helpers around pymimir's native code."""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def quiet_stdout():
    """Silence output that native code writes straight to file descriptor 1.

    pymimir's grounder prints its statistics from C++ when some heuristics are built; that
    would corrupt a plan printed on stdout, so it is sent to /dev/null for the duration.
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real stdout (some embedded interpreters)
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)

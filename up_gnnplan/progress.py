"""A rich progress display for per-problem work (datasets, training data, comparisons)."""

from __future__ import annotations

import sys


class ProblemProgress:
    """Show one bar over problems and one over the states of the current problem, and the phase under way.

    Used as a context manager. On a terminal the bars are live and the phase (expanding,
    searching an optimal plan, labelling successors) is their caption; elsewhere (logs, CI)
    there are no bars, but each phase is one line on stderr, so a long wait says what it waits for.
    """

    def __init__(self, total: int, enabled: bool | None = None, log=None):
        self.total = total
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._log = log if log is not None else (None if self.enabled else sys.stderr)
        self._progress = None
        self._name = ""

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                console=Console(stderr=True), transient=True,
            )
            self._progress.__enter__()
            self._problems = self._progress.add_task("problems", total=self.total)
            self._states = self._progress.add_task("states", total=None)
        return self

    def start(self, name: str, index: int) -> None:
        self._name = name
        if self._progress is not None:
            self._progress.update(self._problems, completed=index, description=f"problems ({name})")
            self._progress.reset(self._states, total=None)

    def phase(self, text: str) -> None:
        """Say what the current problem's work is waiting for (``expanding its state space ...``)."""
        if self._progress is not None:
            self._progress.update(self._states, description=text)
        elif self._log is not None:
            print(f"{self._name}: {text}", file=self._log, flush=True)

    def update(self, done: int, total: int) -> None:
        if self._progress is not None:
            self._progress.update(self._states, completed=done, total=total)

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.update(self._problems, completed=self.total)
            self._progress.__exit__(*exc)
        return False

"""The FF heuristic (Hoffmann & Nebel 2001) of pymimir, as the second open list of the dual searches."""

from __future__ import annotations

import math


class FFHeuristic:
    """pymimir's FF heuristic of one task; ``None`` for a state it proves a dead end (relaxed-unsolvable)."""

    def __init__(self, task):
        import pymimir

        from up_gnnplan.native import quiet_stdout

        with quiet_stdout():
            self.heuristic = pymimir.FFHeuristic(task.mimir_problem)

    def __call__(self, state) -> float | None:
        value = self.heuristic.compute_value(state)
        return None if value is None or not math.isfinite(value) else float(value)

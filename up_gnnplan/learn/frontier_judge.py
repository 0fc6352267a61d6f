"""Close epochs told apart by the learned search on larger problems: ``gnnplan learn``'s ``frontier-judge`` stage.

The training's judge walks the greedy policy on the largest training problems, and breaks ties by the action error
on labelled problems held out. Where the walks fail on most judge problems, mode auto's plans come from the search
after the walk (``dual-policy-best-first``, the model beside FF), which neither figure measures. Floortile's trainings
of one labelled set solved 11 to 25 of testing/easy with the same judge verdict (1 of 4) and close action errors. The
learned part as mode auto runs it (``fallback=model+ff``, 20 s a problem) on eight training problems that were neither
labelled nor judges (4x6 to 6x4 tiles, 2 robots, just past the labelled sizes) told them apart: 1 of 8 solved by the
model of 13, 3 by a model of 25, 5 by the shipped model (25) (``benchmarks/results/learn_eval/frontier-judge/``).

So where this matters (the walks lowered the learned part's share and LAMA-first failed a judge problem: the search
judge's condition), ``learn`` keeps the best few epochs of its training (:class:`~up_gnnplan.training.run.Candidates`)
and runs the learned part of each that solved as many judge problems as the chosen one on the same *frontier*
problems: training problems the labelling did not reach, spread over their sizes (:func:`frontier_problems`). An
epoch replaces the chosen one only where it solves more of them (:func:`better`).
"""

from __future__ import annotations

CANDIDATES = 3  # epochs kept for the stage: the chosen one and two more
PROBLEMS = 6  # frontier problems, at most
MIN_PROBLEMS = 3  # fewer than this, and the stage does not run
SECONDS = 12.0  # a frontier problem's time, at most (Floortile, 4x6 tiles and 2 robots: good models solve in 6-11 s)
MIN_SECONDS = 6.0  # less than this a problem, and the stage does not run
SHARE = 0.12  # of the budget, at most, kept back for the stage
START = 1.0  # a job's start (a process from the forkserver) beyond the solve's own clock
FRONTIER_STATUSES = ("not-tried", "too-large")  # labelling outcomes of the problems the labelling did not reach


def frontier_problems(problems: list, labels: dict, judges: list, most: int = PROBLEMS) -> list:
    """Return the training ``problems`` (:class:`~up_gnnplan.learn.inputs.ProblemFile`) that are not judges and
    whose labelling (``labels``: name -> summary) did not reach them, at most ``most`` of them spread evenly over their
    sizes, smallest first; none where there are fewer than :data:`MIN_PROBLEMS`."""
    judged = {p.name for p in judges}
    left = sorted((p for p in problems if p.name not in judged
                   and (labels.get(p.name) or {}).get("status") in FRONTIER_STATUSES), key=lambda p: (p.objects, p.name))
    if len(left) < MIN_PROBLEMS:
        return []
    if len(left) <= most:
        return left
    return [left[round(i * (len(left) - 1) / (most - 1))] for i in range(most)]


def reserve(budget: float, problems: int) -> float:
    """Seconds kept back after training for the stage on ``problems`` frontier problems (:data:`SHARE` of
    ``budget`` at most)."""
    return min(SHARE * budget, CANDIDATES * problems * (SECONDS + START)) if problems else 0.0


def seconds_each(left: float, candidates: int, problems: int) -> float:
    """A frontier problem's time where ``left`` seconds are there for ``candidates`` epochs on ``problems`` problems:
    at most :data:`SECONDS`; 0 where that is less than :data:`MIN_SECONDS`."""
    each = min(SECONDS, left / max(1, candidates * problems) - START)
    return each if each >= MIN_SECONDS else 0.0


def better(found: dict, best: dict) -> bool:
    """Whether an epoch's frontier results (``solved``) beat the best so far: strictly more solved (the greedy
    judge's choice stays on a tie)."""
    return found["solved"] > best["solved"]


def hopeless(found: dict, best: dict | None, left: int) -> bool:
    """Whether an epoch with ``left`` frontier problems still to run can no longer beat ``best`` (None: it is the
    first, and runs them all)."""
    return best is not None and found["solved"] + left <= best["solved"]

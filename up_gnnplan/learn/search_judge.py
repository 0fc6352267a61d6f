"""The learned part against LAMA-first on the judge problems: ``gnnplan learn``'s ``search-judge`` stage.

The training's judge walks the greedy policy alone. Mode auto walks it too, then searches with the model beside
FF (``dual-policy-best-first``, seeded with the walk's path) before LAMA-first gets the time left, and gives that
learned part a share of the time that ``learn`` lowers where the walks solved few judge problems
(:func:`~up_gnnplan.learn.run._choose_handoff_share`). On Floortile the walk fails from the first sizes past the
labelled ones while the search after it succeeds, and LAMA-first is weaker than both: the shipped model, whose walks
solved 1 of its 4 judge problems (so the share was 0.2), solved 25 of testing/easy in the default mode and 28 by the
learned part alone, LAMA-first 11. So where the walks leave judge problems unsolved that LAMA-first did not solve
either (``learn``'s ``judge-plans`` stage, :data:`~up_gnnplan.learn.recipe.JUDGE_PLAN_SECONDS` a problem), this
stage runs the exported model as mode auto does, without the hand-off, for as long on each of them: where the
learned part then solves more of the judge problems than LAMA-first did, the share is not lowered.

Each problem runs in its own process (:mod:`up_gnnplan.executors`) under the run's memory limit.
"""

from __future__ import annotations

import time

# LAMA-first's outcomes on a judge problem that say nothing of it: not run (the stage's time was spent), or Fast
# Downward missing or failing.
NOT_TRIED = ("not-tried", "unavailable")
# The job's start-up (the forkserver's child, the model's session) beyond the solve's own limit, before it is killed.
JOB_GRACE = 10.0


def search_one(domain: str, problem: str, model: str, seconds: float, memory_mb: int | None = None,
               phase=None) -> dict:
    """Solve ``problem`` with ``model`` in mode auto without the hand-off to LAMA-first (``fallback=model+ff``)
    within ``seconds``; return what the job's outcome carries: solved, the plan's length, the seconds, which
    search found it and, where it failed, the engine's reason."""
    from unified_planning.engines import PlanGenerationResultStatus as Status

    from up_gnnplan.plugins.engine import GnnplanEngine
    from up_gnnplan.problems import Task

    start = time.perf_counter()
    engine = GnnplanEngine(model=model, fallback="model+ff", **({"memory_mb": memory_mb} if memory_mb else {}))
    engine.error_on_failed_checks = False
    engine.clock_start = start  # the limit counts the reading of the files
    task = Task.from_files(domain, problem)
    result = engine.solve_task(task, timeout=seconds)
    solved = result.status in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY)
    metrics = result.metrics or {}
    return {"solved": solved, "length": len(result.plan.actions) if solved else None,
            "seconds": round(time.perf_counter() - start, 1), "found_by": metrics.get("found_by"),
            **({} if solved else {"status": result.status.name.lower()})}


def to_search(judges: list, walks: list | None, plans: dict) -> tuple[list, int, int, int]:
    """Return (the judge problems to search, the learned part's count so far, LAMA-first's count, the count of
    problems compared) over the judge problems LAMA-first was tried on (``plans``: the ``judge-plans`` stage's
    outcomes by name). The walks (``walks``: the greedy judge's steps per judge problem, in order, None where it
    failed; None: not recorded) count for the learned part; those they did not solve are searched. Nothing to
    search where LAMA-first solved every one tried (the learned part cannot solve more), nor where the walks solved
    more of them than LAMA-first (the comparison is decided)."""
    tried = [(p, i) for i, p in enumerate(judges) if (plans.get(p.name) or {}).get("status", "not-tried")
             not in NOT_TRIED]
    lama = sum(1 for p, _ in tried if plans[p.name].get("length") is not None)
    walked = {p.name for p, i in tried if walks is not None and i < len(walks) and walks[i] is not None}
    todo = [p for p, _ in tried if p.name not in walked]
    if lama >= len(tried) or len(walked) > lama:  # the learned part cannot solve more, or the walks did already
        return [], len(walked), lama, len(tried)
    return todo, len(walked), lama, len(tried)

"""Mode auto's learned fallback hands over once it stalls, or at once where it is too slow to be judged
(:class:`up_gnnplan.search.common.Progress`)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from up_gnnplan.search.common import PACE_EXPANSIONS, Progress
from up_gnnplan.limits import Deadline


class Clock:
    """time.perf_counter, moved by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(time, "perf_counter", clock)
    return clock


def expand(progress: Progress, clock: Clock, count: int, seconds_each: float, h: float | None = 5.0) -> None:
    """``count`` expansions of ``seconds_each``, of FF value ``h`` (None: lower at each, progress all along)."""
    for _ in range(count):
        progress.expanded(-progress.count if h is None else h)
        clock.now += seconds_each


def test_a_search_makes_progress_until_no_lower_ff_value_comes_in_stall_expansions(clock):
    progress = Progress(10)
    expand(progress, clock, 1, 0.01, h=3)
    expand(progress, clock, 9, 0.01, h=4)
    assert not progress.stalled
    expand(progress, clock, 1, 0.01, h=4)
    assert progress.stalled and progress.note == "stalled: no lower FF value than 3 in 10 expansions"
    assert not Progress(None).stalled and not Progress(0).stalled


@pytest.mark.parametrize("seconds_each, slow", [(0.07, True), (0.01, False)])
def test_a_search_too_slow_for_its_stall_limit_in_its_share_gives_up_once_its_pace_is_known(clock, seconds_each, slow):
    progress = Progress(500, Deadline(15.0, start=clock.now))
    expand(progress, clock, PACE_EXPANSIONS, seconds_each, h=50 - 1)
    assert not progress.stalled  # the pace is judged after the timed expansions
    progress.expanded(1.0)  # a lower FF value: progress, but the pace is what counts here
    assert progress.stalled is slow
    if slow:  # 70 ms an expansion: about 15 s / 0.07 = 214 in all, fewer than 500
        assert progress.note.startswith("too slow to search: at 70 ms an expansion it could make ")
        assert "fewer than the 500 without progress" in progress.note


def test_the_pace_is_judged_only_with_a_deadline_and_a_stall_limit(clock):
    unlimited = Progress(500, Deadline(None))
    no_share = Progress(500)
    no_stall = Progress(None, Deadline(15.0, start=clock.now))
    for progress in (unlimited, no_share, no_stall):
        expand(progress, clock, PACE_EXPANSIONS + 1, 0.07)
        assert not progress.stalled


def test_a_steady_pace_keeps_its_verdict_as_the_share_runs_out_and_a_slower_one_is_handed_over(clock):
    """At 20 ms an expansion a share of 15 s allows 750 expansions however far the search has got;
    if it slows to 200 ms, the count it could make in all falls below 500 and it is handed over."""
    steady = Progress(500, Deadline(15.0, start=clock.now))
    expand(steady, clock, 700, 0.02, h=None)
    assert not steady.stalled
    slowing = Progress(500, Deadline(15.0, start=clock.now))
    expand(slowing, clock, 100, 0.02, h=None)
    assert not slowing.stalled
    expand(slowing, clock, 30, 0.2, h=None)
    assert slowing.stalled and slowing.note.startswith("too slow to search")


@pytest.fixture(scope="module")
def blocks12(tmp_path_factory):
    """A Blocksworld task of 12 blocks (plans of 20 steps and more)."""
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.problems import Task

    folder = tmp_path_factory.mktemp("blocksworld")
    (problem,) = [p for p in generate("blocksworld", folder, count=1, seed=5, blocks=12) if p.name != "domain.pddl"]
    return Task.from_files(folder / "domain.pddl", problem)


def test_a_slow_fallback_hands_over_once_its_pace_is_known(blocks12):
    """A value function of 60 ms a call: in a share of 4 s the dual search could make about 60
    expansions, fewer than its stall limit of 500: it gives up after its timed expansions and says why."""
    from up_gnnplan.search import Status, dual_gbfs

    def slow(inputs):
        time.sleep(0.06)
        return np.zeros(len(inputs))

    result = dual_gbfs(blocks12, slow, time_limit=4.0, stall=500)
    assert result.status is Status.GAVE_UP and result.message.startswith("too slow to search: at ")
    assert result.expanded == PACE_EXPANSIONS + 1 and result.seconds < 3.0
    fast = dual_gbfs(blocks12, lambda inputs: np.zeros(len(inputs)), time_limit=30.0, stall=500)
    assert fast.expanded > PACE_EXPANSIONS + 1 and not fast.message.startswith("too slow"), fast.message

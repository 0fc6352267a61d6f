"""``gnnplan learn``'s search judge: the exported model's learned part (the policy, then the search, as mode auto runs
them without the hand-off) against LAMA-first on the judge problems, and the share of the time it keeps."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from up_gnnplan.datasets.generators import generate
from up_gnnplan.learn.inputs import ProblemFile


def _judges(*names: str) -> list[ProblemFile]:
    return [ProblemFile(Path(f"/nowhere/{name}.pddl"), 10 + i) for i, name in enumerate(names)]


PLANS = {"a": {"status": "solved", "length": 40}, "b": {"status": "timeout", "length": None},
         "c": {"status": "timeout", "length": None}, "d": {"status": "not-tried", "length": None}}


@pytest.mark.parametrize("walks, plans, expected", [
    ([12, None, None, None], PLANS, (["b", "c"], 1, 1, 3)),  # d not tried by LAMA-first: left out of the comparison
    ([None, 30, None, 25], PLANS, (["a", "c"], 1, 1, 3)),  # b walked: the learned part's already
    (None, PLANS, (["a", "b", "c"], 0, 1, 3)),  # no walks recorded: every problem LAMA-first was tried on
    ([None, 9, None, None], {**PLANS, "b": PLANS["a"], "c": PLANS["a"]}, ([], 1, 3, 3)),  # LAMA-first solved all
    ([None] * 4, {}, ([], 0, 0, 0)),  # LAMA-first tried on none: nothing to compare with
    ([None, 30, 20, None], PLANS, ([], 2, 1, 3)),  # the walks solved more than LAMA-first: decided, nothing to search
    ([None] * 4, {**PLANS, "b": {"status": "unavailable", "length": None}}, (["a", "c"], 0, 1, 2)),  # no Fast Downward
    ([None, None, 30, None], {**PLANS, "b": PLANS["a"]}, (["a", "b"], 1, 2, 3)),  # c walked; a, b to LAMA-first
])
def test_the_search_judge_runs_where_neither_the_walks_nor_lama_first_solved(walks, plans, expected):
    from up_gnnplan.learn.search_judge import to_search

    todo, learned, lama, tried = to_search(_judges("a", "b", "c", "d"), walks, plans)
    assert ([p.name for p in todo], learned, lama, tried) == expected


@pytest.mark.parametrize("learned, lama, share", [
    (3, 0, 0.5),  # Floortile's case: the learned part solved what LAMA-first did not: the engine's default
    (1, 1, 0.2),  # as many as LAMA-first: the greedy judge's share
    (0, 2, 0.2),
])
def test_the_share_is_not_lowered_where_the_learned_part_solved_more_than_lama_first(learned, lama, share):
    from up_gnnplan.learn.run import _choose_handoff_share

    record = {"policy_validation": {"solved": 1},
              "search_judge": {"seconds": 15.0, "tried": 4, "learned": learned, "lama": lama, "problems": {"x": {}}}}
    _choose_handoff_share(record, list(range(4)))
    assert record["handoff_share"] == share
    if learned > lama:
        assert record["handoff_share_why"] == (
            f"its learned part (the policy, then the search) solved {learned} of the 4 judge problems LAMA-first was "
            f"tried on, LAMA-first {lama}, in 15 s each (by the greedy judge alone: 20%, as its greedy policy solved "
            "1 of its 4 judge problems)")
    else:
        assert record["handoff_share_why"] == "its greedy policy solved 1 of its 4 judge problems"


def test_the_search_judge_solves_with_the_exported_model_in_processes_of_its_own(tmp_path):
    """The stage on real files: the shipped Blocksworld model (``learn``'s, both heads) on two generated problems,
    the first said walked by the judge and solved by LAMA-first, the second failed by both: only it is searched."""
    from up_gnnplan.learn.run import LearnOptions, _Clock, _open_run, _search_judge_stage
    from up_gnnplan.models_zoo import zoo_dir

    files = [generate("blocksworld", tmp_path, count=1, seed=seed, blocks=blocks)[0]
             for seed, blocks in ((0, 7), (1, 9))]
    judges = [ProblemFile(path, 7 + 2 * i) for i, path in enumerate(files)]
    plans = {judges[0].name: {"status": "solved", "length": 21, "seconds": 0.4},
             judges[1].name: {"status": "timeout", "length": None, "seconds": 15.0}}
    record = {"policy_validation": {"solved": 1, "walks": [20, None]}}
    run, _ = _open_run(tmp_path / "run", {"domain": "blocksworld"})
    clock = _Clock(600.0, 0.0, time.perf_counter(), run, tmp_path / "run")
    lines = []
    _search_judge_stage(tmp_path / "domain.pddl", zoo_dir() / "blocksworld.onnx", LearnOptions(), record, judges,
                        plans, clock, lines.append)
    found = record["search_judge"]
    assert (found["learned"], found["lama"], found["tried"], found["seconds"]) == (2, 1, 2, 15.0), found
    assert list(found["problems"]) == [judges[1].name]
    solved = found["problems"][judges[1].name]
    assert solved["solved"] and solved["length"] >= 2 and solved["seconds"] < 15.0
    assert lines[0].startswith("search judge: mode auto's learned part") and "against LAMA-first's 1 of 2" in lines[0]
    assert lines[1].startswith(f"  {judges[1].name}: a plan of {solved['length']} steps")


def test_walks_that_solved_more_than_lama_first_decide_without_a_search():
    from up_gnnplan.learn.run import LearnOptions, _choose_handoff_share, _search_judge_stage

    judges = _judges("a", "b", "c", "d")
    record = {"policy_validation": {"solved": 1, "walks": [None, 30, None, None]}}
    plans = {**PLANS, "a": PLANS["b"]}  # LAMA-first solved none of the three it was tried on
    lines = []
    _search_judge_stage(Path("/nowhere/domain.pddl"), Path("/nowhere/model.onnx"), LearnOptions(), record, judges,
                        plans, None, lines.append)  # no clock: nothing is run
    assert record["search_judge"] == {"seconds": 0.0, "tried": 3, "learned": 1, "lama": 0, "problems": {}}
    assert lines == ["search judge: the greedy walks solved 1 of the 3 judge problem(s) LAMA-first was tried on, "
                     "LAMA-first 0: nothing to search"]
    _choose_handoff_share(record, judges)
    assert record["handoff_share"] == 0.5 and "LAMA-first 0 (by the walks alone)" in record["handoff_share_why"]

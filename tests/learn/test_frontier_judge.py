"""``gnnplan learn``'s frontier judge: the best few epochs of a training kept, and among those the greedy judge ranks
alike, the one whose learned part (the policy, then the search) solves the most training problems the labelling did not
reach."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from up_gnnplan.learn.inputs import ProblemFile

pytest.importorskip("torch")


def _files(sizes: dict[str, int]) -> list[ProblemFile]:
    return [ProblemFile(Path(f"/nowhere/{name}.pddl"), objects) for name, objects in sizes.items()]


def test_candidates_keep_the_best_few_epochs_earliest_first_on_a_tie():
    from up_gnnplan.training.run import Candidates, Chosen

    kept = Candidates(3)
    for epoch, key in enumerate([(-1, 0.08), (-1, 0.06), (-2, 0.09), (-1, 0.06), (-1, 0.07), (0, 0.01)], start=1):
        if kept.wants(key):
            kept.offer(Chosen((key[0], 100, key[1]), epoch, {"w": epoch}), key, [None, epoch])
    assert kept.epochs() == [3, 2, 4]  # solved 2 first, then the lower error; epoch 2 before 4 on the same key
    assert not kept.wants((-1, 0.07)) and kept.wants((-1, 0.05))
    assert [walks for _, _, walks in kept.kept] == [[None, 3], [None, 2], [None, 4]]


def test_frontier_problems_are_the_unlabelled_ones_spread_over_their_sizes():
    from up_gnnplan.learn.frontier_judge import frontier_problems

    problems = _files({f"p{i:02d}": 10 + i for i in range(1, 21)})
    judges = problems[-2:]
    labels = {p.name: {"status": "expanded"} for p in problems[:5]}
    labels.update({"p06": {"status": "unsolvable"}, "p07": {"status": "too-large"}, "p08": {"status": "error"}})
    labels.update({p.name: {"status": "not-tried"} for p in problems[8:]})
    picked = frontier_problems(problems, labels, judges, most=4)
    # p07 and p09-p18 (11 problems, the judges p19, p20 left out): the smallest, the largest, two between
    assert [p.name for p in picked] == ["p07", "p11", "p15", "p18"]
    assert [p.name for p in frontier_problems(problems, labels, judges, most=20)] == ["p07"] + [
        f"p{i}" if i > 9 else f"p0{i}" for i in range(9, 19)]
    # fewer than three: the stage does not run
    assert frontier_problems(problems, {"p07": {"status": "too-large"}, "p09": {"status": "not-tried"}}, judges) == []


def test_the_frontier_judge_keeps_its_time_within_its_share():
    from up_gnnplan.learn.frontier_judge import (
        SECONDS,
        SHARE,
        better,
        hopeless,
        reserve,
        seconds_each,
    )

    assert reserve(1800.0, 6) == pytest.approx(SHARE * 1800.0) and reserve(1800.0, 0) == 0.0
    assert reserve(36000.0, 6) == 3 * 6 * (SECONDS + 1.0)  # a long budget: all it needs, no more
    assert seconds_each(1000.0, 3, 6) == SECONDS
    assert seconds_each(216.0, 3, 6) == pytest.approx(11.0)
    assert seconds_each(90.0, 3, 6) == 0.0  # 4 s a problem: not run
    assert better({"solved": 3}, {"solved": 2}) and not better({"solved": 2}, {"solved": 2})
    assert hopeless({"solved": 1}, {"solved": 3}, 2) and not hopeless({"solved": 1}, {"solved": 3}, 3)
    assert not hopeless({"solved": 0}, None, 0)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A small Blocksworld model of both heads, trained a few epochs with the greedy judge on a larger problem, and
    the epochs it kept."""
    from up_gnnplan.datasets.build import BuildOptions, build_dataset
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.problems import load_task
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.loop import train
    from up_gnnplan.training.run import Candidates

    folder = tmp_path_factory.mktemp("blocksworld")
    problems = [generate("blocksworld", folder, count=1, seed=seed, blocks=blocks)[0]
                for seed, blocks in ((10, 3), (11, 4), (12, 5))]
    data = build_dataset(folder / "domain.pddl", problems[:2], BuildOptions(method="expand"))
    config = TrainConfig(hidden=8, layers=2, batch_size=8, epoch_states=64, max_epochs=4, max_seconds=600.0,
                         patience=1000, head="logits", policy_steps=40)
    kept = Candidates(3)
    model, encoding, record = train(data, config, validation_tasks=[load_task(folder / "domain.pddl", problems[2])],
                                    candidates=kept)
    return model, encoding, config, record, data, kept, folder


def test_training_offers_every_epoch_and_keeps_the_chosen_one_first(trained):
    _, _, _, record, _, kept, _ = trained
    assert len(kept.kept) == 3 and kept.epochs()[0] == record["best_epoch"]
    for key, chosen, walks in kept.kept:
        assert chosen.weights and len(walks) == 1 and -key[0] == -chosen.score[0]


def _stage(tmp_path, trained, chosen_epoch: int, searches=None, monkeypatch=None):
    """Run the stage with the epoch ``chosen_epoch`` as the greedy judge's choice, on three generated problems."""
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.learn import run as learn_run
    from up_gnnplan.learn.run import CANDIDATE_FILE, LearnOptions, _Clock, _export, _frontier_stage, _open_run

    model, encoding, config, record, data, kept, folder = trained
    record = dict(record, best_epoch=chosen_epoch, policy_validation=dict(record["policy_validation"]))
    for _, candidate, _ in kept.kept:  # the test's epochs all solved as many judge problems
        record["policy_validation"]["solved"] = -candidate.score[0]
    frontier = [ProblemFile(generate("blocksworld", tmp_path / "frontier", count=1, seed=seed, blocks=blocks)[0], blocks)
                for seed, blocks in ((0, 5), (1, 6), (2, 6))]
    work = tmp_path / "run"
    run, _ = _open_run(work, {"domain": "blocksworld"})
    clock = _Clock(600.0, 0.0, time.perf_counter(), run, work)
    by_epoch = {c.epoch: c for _, c, _ in kept.kept}
    model.load_state_dict(by_epoch[chosen_epoch].weights)
    _export(model, encoding, config, record, data.domain, work / CANDIDATE_FILE)
    if searches is not None:
        monkeypatch.setattr(learn_run, "_searches", searches)
    lines = []
    _frontier_stage(folder / "domain.pddl", model, encoding, config, record, data.domain, kept, frontier,
                    LearnOptions(), clock, lines.append, work)
    return record, lines, work, frontier


def test_the_frontier_judge_runs_each_epoch_s_learned_part_in_processes_of_its_own(tmp_path, trained):
    """On real files: the greedy judge's choice solves the small frontier problems (the search beside FF does, if not
    the walk), so it stays, and no other epoch is run."""
    chosen = trained[5].epochs()[0]
    record, lines, work, frontier = _stage(tmp_path, trained, chosen)
    judged = record["frontier_judge"]
    assert judged["chosen"] == judged["greedy_choice"] == chosen and judged["problems"] == [p.name for p in frontier]
    [found] = judged["epochs"]  # the chosen epoch solved all three: no other can solve more, and none runs
    assert found["epoch"] == chosen and found["solved"] == 3, found
    assert all(r["solved"] and r["length"] >= 2 and r["seconds"] < judged["seconds"] for r in found["problems"].values())
    assert lines[0].startswith(f"frontier judge: the learned part (the policy, then the search; no hand-off) of epochs "
                               f"{', '.join(map(str, trained[5].epochs()))} (the chosen one first;")
    assert lines[1].startswith(f"  epoch {chosen}: 3 of 3 solved ({frontier[0].name}: a plan of ")
    assert lines[2:] == ["  the chosen epoch solved all 3: no other epoch can solve more",
                         f"  the chosen epoch {chosen} stays"]
    assert sorted(p.name for p in work.glob("*.onnx")) == ["model.onnx"]


def test_an_epoch_that_solves_more_frontier_problems_replaces_the_greedy_judge_s_choice(tmp_path, trained,
                                                                                         monkeypatch):
    model, _, _, _, _, kept, _ = trained
    chosen, other, last = kept.epochs()[1], kept.epochs()[0], kept.epochs()[2]
    solves = {chosen: 1, other: 2, last: 0}  # frontier problems each epoch's file solves
    ran = []

    def searches(domain, path, problems, seconds, options):
        epoch = _epoch_of(path, chosen)
        for i, problem in enumerate(problems):
            ran.append((epoch, problem.name))
            yield problem.name, ({"solved": True, "length": 9, "seconds": 1.0, "found_by": "action-policy"}
                                 if i < solves[epoch] else {"solved": False, "status": "timeout", "seconds": seconds})

    record, lines, work, frontier = _stage(tmp_path, trained, chosen, searches, monkeypatch)
    judged = record["frontier_judge"]
    assert judged["chosen"] == other and judged["greedy_choice"] == chosen and record["best_epoch"] == other
    assert [(f["epoch"], f["solved"]) for f in judged["epochs"]] == [(chosen, 1), (other, 2), (last, 0)]
    # the last epoch stopped once it could no longer solve more than 2
    assert [name for epoch, name in ran if epoch == last] == [frontier[0].name]
    assert record["policy_validation"]["walks"] == kept.kept[0][2]
    assert record["best_validation_mae"] == pytest.approx(kept.kept[0][1].score[2], abs=1e-4)
    assert f"epoch {other} solved 2 of the 3 frontier problems, the greedy judge's epoch {chosen} 1" in judged["why"]
    assert lines[-1] == f"  epoch {other} is kept instead of epoch {chosen}: 2 against 1 of the frontier problems"
    assert sorted(p.name for p in work.glob("*.onnx")) == ["model.onnx"]
    for name, tensor in kept.kept[0][1].weights.items():  # the model holds the kept epoch's weights
        assert (model.state_dict()[name] == tensor).all(), name


def _epoch_of(path: Path, chosen: int) -> int:
    """The epoch a file of the stage holds: ``epoch-N.onnx``, or the chosen one's ``model.onnx``."""
    return int(path.stem.split("-")[1]) if path.stem.startswith("epoch-") else chosen

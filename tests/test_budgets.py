"""Budgets that hold: ``gnnplan train --timeout`` counts the whole command, and a full expansion
stops at the memory limit with a message saying so, and says how it goes while it runs."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from up_gnnplan.cli import main
from up_gnnplan.limits import Limits, MemoryLimitReached, resident_mb

# Imported here, so that the budget of the training below is not spent importing them (2 s on a busy machine).
torch = pytest.importorskip("torch")
import up_gnnplan.training.loop  # noqa: E402,F401


def gnnplan(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="session")
def blocks_dataset(tmp_path_factory):
    """The bundled Blocksworld example labelled by the real pipeline (152 states)."""
    path = tmp_path_factory.mktemp("budgets") / "blocks.npz"
    result = gnnplan("dataset", "--example", "blocksworld", "-o", path)
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="session")
def seven_blocks(tmp_path_factory):
    """(domain, problem) of a Blocksworld problem of 7 blocks: 65,990 states, expanded in about a second."""
    folder = tmp_path_factory.mktemp("seven-blocks")
    result = gnnplan("generate", "blocksworld", "-o", folder, "--count", "1", "-p", "blocks=7")
    assert result.exit_code == 0, result.output
    return folder / "domain.pddl", next(folder.glob("p*.pddl"))


def test_train_ends_within_max_seconds_from_its_start_and_writes_a_checkpoint(blocks_dataset, tmp_path):
    from up_gnnplan.training.checkpoint import load_checkpoint

    checkpoint = tmp_path / "m.pt"
    began = time.perf_counter()
    result = gnnplan("train", blocks_dataset, "-o", checkpoint, "--timeout", 3, "--patience", 1000)
    seconds = time.perf_counter() - began
    assert result.exit_code == 0, (result.output, result.exception)
    assert seconds < 3 + 0.5, result.output
    _, _, config, data = load_checkpoint(checkpoint)
    record = data["record"]
    assert config.max_seconds == 3 and record["epochs"] >= 1 and record["seconds"] <= 3, (record["seconds"], seconds)


def test_full_expansion_over_the_memory_limit_is_skipped_with_the_reason(seven_blocks, tmp_path):
    limit = int(resident_mb()) + 20  # the 65,990 states and their graph take about 100 MB
    with pytest.warns(UserWarning, match="p-b7-0-0.pddl: skipped: memory limit of"):  # a "warning:" line of gnnplan
        result = gnnplan("dataset", *seven_blocks, "-o", tmp_path / "o.npz", "--method", "expand", "--memory-mb", limit)
    assert result.exit_code == 4, result.output
    last = result.output.splitlines()[-1]
    assert last.startswith("error: no problem could be labelled") and f"memory limit of {limit:,} MB" in last
    assert not (tmp_path / "o.npz").exists()


def test_auto_labels_along_an_optimal_plan_when_the_expansion_is_over_the_memory_limit(seven_blocks, tmp_path):
    limit = int(resident_mb()) + 20
    result = gnnplan("dataset", *seven_blocks, "-o", tmp_path / "o.npz", "--memory-mb", limit, "--no-successors")
    assert result.exit_code == 0, result.output
    assert "labelling along an optimal plan instead" in result.output and "(optimal-plan)" in result.output


def test_expansion_stops_at_the_memory_limit_while_it_runs_and_reports_progress(seven_blocks, tmp_path, monkeypatch):
    from up_gnnplan.datasets import heartbeat
    from up_gnnplan.datasets.expansion import expand
    from up_gnnplan.problems import load_task

    lines = []
    monkeypatch.setattr(heartbeat, "REPORT_SECONDS", 0.0)  # every check makes a line
    with pytest.raises(MemoryLimitReached, match=r"memory limit of \d+ MB reached while expanding the state space: "
                                                 r"256 states so far"):
        expand(load_task(*seven_blocks), 10**6, limits=Limits(memory_mb=max(1, int(resident_mb()) - 1)),
               phase=lines.append)
    assert lines == []  # the first check is over the limit: no line before the error
    result = gnnplan("generate", "blocksworld", "-o", tmp_path, "--count", "1", "-p", "blocks=5")
    assert result.exit_code == 0, result.output
    labelled = expand(load_task(tmp_path / "domain.pddl", next(tmp_path.glob("p*.pddl"))), 10**6,
                      limits=Limits(memory_mb=0), phase=lines.append)
    assert len(labelled) > 256
    assert any("states so far" in line and "/s" in line and "resident memory" in line for line in lines), lines[:3]


def test_the_final_record_is_planned_at_what_its_figures_cost():
    """An action head's record values each state twice (its choice, then V*): the time kept back for it,
    and the states it is taken on within the time left, count both (a sokoban ``learn`` run's record,
    planned as one evaluation a state, ran 91 s past its training time)."""
    from up_gnnplan.training.budget import Budget

    budget = Budget(100.0, time.perf_counter())
    budget.timed_evaluation(1.0, 1000)  # 1 ms a state
    one = (budget.final_reserve(2000), budget.affordable_states())
    budget.record_cost = 2.0
    two = (budget.final_reserve(2000), budget.affordable_states())
    assert two[0] - budget.write - 0.15 == pytest.approx(2 * (one[0] - budget.write - 0.15))
    assert two[1] == pytest.approx(one[1] / 2, rel=0.01)


def test_an_epochs_evaluation_values_what_the_time_left_lets_it():
    """All of an epoch's monitored states where there is time (or nothing is measured yet); where a state costs
    seconds (pddlgym's Maze: 0.6 s), as many as fit before the final steps and a judge as long as the last."""
    from up_gnnplan.training.budget import MIN_EPOCH_STATES, SAFETY, Budget

    budget = Budget(100.0, time.perf_counter())
    assert budget.evaluable_states(426, 2000) == 426  # nothing measured yet
    budget.timed_evaluation(1.0, 1000)  # 1 ms a state
    assert budget.evaluable_states(426, 2000) == 426
    budget.timed_evaluation(60.0, 100)  # 0.6 s a state
    budget.judge = 10.0
    fit = budget.evaluable_states(426, 100)
    room = budget.remaining() - budget.final_reserve(100) - SAFETY * 10.0
    assert MIN_EPOCH_STATES < fit < 426 and fit == pytest.approx(room / (SAFETY * 0.6), abs=1)
    assert Budget(1.0, time.perf_counter() - 0.9).evaluable_states(426, 100) == 426  # unmeasured: all
    late = Budget(10.0, time.perf_counter() - 9.0)
    late.timed_evaluation(6.0, 10)
    assert late.evaluable_states(426, 100) == MIN_EPOCH_STATES  # at least a few, however late


def test_train_with_an_action_and_a_value_head_ends_within_max_seconds(blocks_dataset, tmp_path):
    began = time.perf_counter()
    result = gnnplan("train", blocks_dataset, "-o", tmp_path / "m.pt", "--timeout", 3, "--patience", 1000,
                     "--head", "logits+value")
    seconds = time.perf_counter() - began
    assert result.exit_code == 0, (result.output, result.exception)
    assert seconds < 3 + 0.5, result.output


def test_an_epochs_evaluation_is_kept_to_its_share_of_the_epochs_time():
    """With ``epoch_seconds``, an epoch values the monitored states that half of it values at a state's cost
    (at least a few); without it, or unmeasured, all of them."""
    from types import SimpleNamespace

    import numpy as np

    from up_gnnplan.training.budget import MIN_EPOCH_STATES, Budget
    from up_gnnplan.training.config import TrainConfig
    from up_gnnplan.training.run import EVAL_SHARE, TrainingRun

    budget = Budget(300.0, time.perf_counter())
    run = SimpleNamespace(budget=budget, config=TrainConfig(epoch_seconds=20.0), monitor=np.arange(426))
    assert TrainingRun.monitored(run) == 426  # nothing measured yet
    budget.timed_evaluation(0.5, 1000)  # 0.5 ms a state
    assert TrainingRun.monitored(run) == 426
    budget.timed_evaluation(6.0, 10)  # 0.6 s a state: Maze's
    assert TrainingRun.monitored(run) == int(EVAL_SHARE * 20.0 / 0.6) >= MIN_EPOCH_STATES
    run.config = TrainConfig()
    assert TrainingRun.monitored(run) == 426

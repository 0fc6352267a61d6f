"""The ranking objective (``--loss rank``, ``l1+rank``, ``mse+rank``) on the bundled Gripper example:
it fits the order of a small space's successors, its error is the greedy policy's, the trained
model solves, and it refuses what it cannot train."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from up_gnnplan.cli import main
from up_gnnplan.data import example
from up_gnnplan.datasets.build import build_dataset
from up_gnnplan.problems import load_task
from up_gnnplan.search import Status, policy_rollout

torch = pytest.importorskip("torch")

from up_gnnplan.training import TrainConfig  # noqa: E402
from up_gnnplan.training.adapters import TorchValueFunction  # noqa: E402
from up_gnnplan.training.loop import train  # noqa: E402
from up_gnnplan.training.ranking import RankingObjective  # noqa: E402

GRIPPER = example("gripper")
PROBLEMS = [example("gripper", "p01.pddl"), example("gripper", "p02.pddl")]


@pytest.fixture(scope="module")
def data():
    return build_dataset(GRIPPER, PROBLEMS)


def config(**changes):
    base = dict(hidden=16, layers=4, max_epochs=25, max_seconds=60, epoch_states=0, batch_size=16, patience=25,
                validation_fraction=0.0, seed=0)
    return TrainConfig(**{**base, **changes})


def test_the_optimal_successors_are_those_of_the_labels(data):
    objective = RankingObjective(config(loss="rank"))
    chosen = objective.select(data, np.arange(len(data)))
    assert 0 < len(chosen) == int((~data.is_goal & ~data.dead_end).sum())
    for i in chosen[:50]:
        rows, optimal, cost = objective._successors(data, i)
        assert optimal.any()
        np.testing.assert_allclose(cost[optimal] + data.value[rows[optimal]], data.value[i])
        assert (cost[~optimal] + data.value[rows[~optimal]] > data.value[i]).all()


def test_ranking_fits_the_order_of_a_small_space_and_the_policy_solves(data):
    model, encoding, record = train(data, config(loss="rank"))
    assert record["error_name"] == "successor error"
    assert record["train"]["best_successor_optimal"] == 1.0  # every state's lowest-valued successor is optimal
    assert "mae" not in record["train"]  # values free in scale and offset: no V* error to report
    first, last = record["curve"][0][3], min(row[3] for row in record["curve"])
    assert last < first or first == 0.0
    for p, problem in enumerate(PROBLEMS):
        task = load_task(GRIPPER, problem)
        result = policy_rollout(task, TorchValueFunction(model, encoding))
        assert result.status is Status.SOLVED
        initial = int(np.flatnonzero(data.state_problem == p)[0])  # a problem's first row is its initial state
        assert result.cost == data.value[initial]  # an optimal successor at every step: an optimal plan


def test_ranking_with_regression_also_reports_the_value_error(data):
    _, _, record = train(data, config(loss="l1+rank", max_epochs=3))
    assert {"best_successor_optimal", "mae"} <= set(record["train"])


def test_ranking_refuses_action_heads_and_datasets_without_actions(data, tmp_path):
    with pytest.raises(ValueError, match="--loss rank ranks a state's successors .* value heads"):
        train(data, config(loss="rank", head="logits"))
    path = data.save(tmp_path / "gripper.npz")
    result = CliRunner().invoke(main, ["train", str(path), "--loss", "rank", "--head", "q", "-o", str(tmp_path / "m.pt")])
    assert result.exit_code != 0 and "value heads" in result.output


def test_cli_trains_with_ranking(data, tmp_path):
    path = data.save(tmp_path / "gripper.npz")
    out = tmp_path / "rank.pt"
    result = CliRunner().invoke(main, ["train", str(path), "--loss", "mse+rank", "--rank-siblings", "2", "--hidden", "8",
                                       "--layers", "2", "--max-epochs", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    checkpoint = torch.load(out, weights_only=True)
    assert (checkpoint["config"]["loss"], checkpoint["config"]["rank_siblings"]) == ("mse+rank", 2)
    assert checkpoint["record"]["error_name"] == "successor error"

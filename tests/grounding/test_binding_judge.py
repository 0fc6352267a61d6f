"""The binding judge: a grounding model's epoch chosen by its greedy binding, solved by LAMA-first
(``gnnplan train --validation-problem`` on goal-grounding data)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.grounding.cases import PROBLEMS
from up_gnnplan.cli import main
from up_gnnplan.grounding import judge
from up_gnnplan.grounding.dataset import GroundingDataOptions, build_grounding_dataset
from up_gnnplan.problems import load_task
from up_gnnplan.runtime import load_value_function

torch = pytest.importorskip("torch")

from up_gnnplan.training import TrainConfig  # noqa: E402
from up_gnnplan.training.loop import train  # noqa: E402


@pytest.fixture(scope="module")
def data(files):
    return build_grounding_dataset(files / "domain.pddl", [files / f"{name}.pddl" for name in PROBLEMS],
                                   GroundingDataOptions(goals_per_problem=40, states_per_goal=4))


def config(**changes):
    # As the package fixture's model (conftest.py): an epoch limit, so the model does not depend on the machine.
    base = dict(hidden=32, layers=6, lr=3e-3, loss="mse", max_seconds=900, max_epochs=80, epoch_states=256,
                validation_fraction=0.0, patience=200, seed=0)
    return TrainConfig(**{**base, **changes})


def tasks(files, *names):
    return [load_task(files / "domain.pddl", files / f"{name}.pddl") for name in names]


def test_the_judge_binds_each_goal_and_counts_lama_firsts_plan_length(files, model):
    value_fn = load_value_function(model)  # the package fixture's model (conftest.py)
    # red-on-blue: b is already on d, the binding the model ranks first, so LAMA-first's plan is empty;
    # tower: any valid binding is a tower of three from the table, 4 actions.
    assert judge.binding_validation(value_fn, tasks(files, "red-on-blue"), failed_cost=99) == (1, 0)
    assert judge.binding_validation(value_fn, tasks(files, "red-on-blue", "tower"), failed_cost=99) == (2, 4)
    # A goal that no binding can satisfy counts the failed cost and is not solved.
    assert judge.binding_validation(value_fn, tasks(files, "no-binding", "tower"), failed_cost=99) == (1, 103)


def test_training_chooses_the_epoch_by_the_judge_and_plans_each_binding_once(files, data, monkeypatch):
    calls = []
    real = judge.lama_first_length
    monkeypatch.setattr(judge, "_PLANS", {})
    monkeypatch.setattr(judge, "lama_first_length", lambda problem, seconds: calls.append(problem.name) or
                        real(problem, seconds))
    epochs = 4
    _, _, record = train(data, config(max_epochs=epochs), validation_tasks=tasks(files, "red-on-blue", "tower"))
    judged = record["policy_validation"]
    assert "LAMA-first" in judged["judge"] and judged["problems"] == ["red-on-blue", "tower"]
    assert all(len(row) == 6 for row in record["curve"])  # epoch, seconds, loss, error, solved, plan steps
    best = next(row for row in record["curve"] if row[0] == record["best_epoch"])
    assert (best[4], best[5]) == (judged["solved"], judged["steps"]) and judged["solved"] == 2
    assert min(row[5] for row in record["curve"]) == judged["steps"]
    # One planner call per distinct (problem, binding), not one per epoch.
    assert len(calls) == len(judge._PLANS) and len(calls) < 2 * epochs


def test_cli_train_judges_grounding_models_only_on_existential_goals(files, data, tmp_path):
    path = tmp_path / "grounding.npz"
    data.save(path)
    common = ["train", str(path), "-o", str(tmp_path / "g.pt"), "--hidden", "8", "--layers", "2", "--max-epochs", "1",
              "--validation-domain", str(files / "domain.pddl")]
    result = CliRunner().invoke(main, [*common, "--validation-problem", str(files / "ground.pddl")])
    assert result.exit_code != 0 and "no existentially quantified variable" in result.output
    result = CliRunner().invoke(main, [*common, "--validation-problem", str(files / "tower.pddl")])
    assert result.exit_code == 0, result.output
    assert "greedy binding + LAMA-first solved 1/1 validation problems, plans of 4 steps" in result.output

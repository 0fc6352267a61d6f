"""Check training: overfitting a tiny instance, seeding, the validation split, the V*-covering
sampler, dead ends, checkpoints (round trip and bad files), the training record and ``gnnplan train``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from up_gnnplan.data import example
from up_gnnplan.datasets.build import BuildOptions, build_dataset
from up_gnnplan.errors import GnnplanError
from up_gnnplan.models import ARCHITECTURES
from up_gnnplan.training import TrainConfig
from up_gnnplan.training.checkpoint import load_checkpoint, save_checkpoint
from up_gnnplan.training.data import ValueCoveringSampler, split
from up_gnnplan.training.loop import predict, train

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture(*parts: str) -> Path:
    return FIXTURES.joinpath(*parts)

torch.set_num_threads(1)

_DATASETS: dict[tuple, object] = {}


def blocksworld(*problems: str):
    """Return (cached) the fully expanded dataset of bundled Blocksworld ``problems``."""
    if problems not in _DATASETS:
        _DATASETS[problems] = build_dataset(
            example("blocksworld"), [example("blocksworld", p) for p in problems], BuildOptions(method="expand")
        )
    return _DATASETS[problems]


def oneway_deadends():
    key = ("oneway-deadends",)
    if key not in _DATASETS:
        _DATASETS[key] = build_dataset(fixture("oneway", "domain.pddl"), [fixture("oneway", "deadends.pddl")],
                                       BuildOptions(method="expand"))
    return _DATASETS[key]


def tiny(**overrides) -> TrainConfig:
    """A small, fast configuration."""
    params = {"hidden": 8, "layers": 2, "batch_size": 8, "max_epochs": 2, "max_seconds": 30.0, "patience": 1000}
    return TrainConfig(**{**params, **overrides})


# --- learning ---------------------------------------------------------------------------------


def test_overfit_blocksworld_p03():
    data = blocksworld("p03.pddl")
    assert len(data) == 22 and not data.dead_end.any()
    # Deterministic for a seed: the best train MAE falls below 0.2 after about 100 epochs and
    # to about 0.14 by epoch 140 (some 10 s on one thread); max_seconds bounds a slow machine.
    config = TrainConfig(hidden=16, layers=4, lr=5e-3, batch_size=8, validation_fraction=0.0,
                         max_epochs=150, max_seconds=20.0, patience=40, seed=0)
    model, encoding, record = train(data, config)
    assert record["train_states"] == 22 and record["validation_states"] == 0
    errors = np.abs(predict(model, encoding, data, np.arange(len(data))) - data.value)
    assert errors.mean() == pytest.approx(record["train"]["mae"], abs=1e-6)
    assert errors.mean() < 0.2, record


def run(data, config):
    losses = []
    model, _, record = train(data, config, on_epoch=lambda epoch, loss, val, best, **_: losses.append(loss))
    return losses, model.state_dict(), record


def test_same_seed_same_run_other_seed_other_run():
    data = blocksworld("p03.pddl")
    losses_a, weights_a, _ = run(data, tiny(seed=7))
    losses_b, weights_b, _ = run(data, tiny(seed=7))
    losses_c, weights_c, _ = run(data, tiny(seed=8))
    assert len(losses_a) == 2
    assert losses_a[0] == losses_b[0] and losses_a == losses_b
    assert weights_a.keys() == weights_b.keys()
    assert all(torch.equal(weights_a[k], weights_b[k]) for k in weights_a)
    assert losses_c[0] != losses_a[0]
    assert not all(torch.equal(weights_a[k], weights_c[k]) for k in weights_a)


# --- data: split, sampler, dead ends ----------------------------------------------------------


@pytest.mark.parametrize("problems", [("p02.pddl", "p03.pddl"), ("p02.pddl", "p03.pddl", "p04.pddl")])
def test_validation_holds_out_whole_problems_never_all(problems):
    data = blocksworld(*problems)
    assert len(data.problems) == len(problems)
    for fraction in (0.01, 0.2, 0.5, 0.99, 1.0):
        for seed in range(4):
            train_idx, val_idx, names = split(data, fraction, np.random.default_rng(seed))
            held = set(np.unique(data.state_problem[val_idx]).tolist())
            kept = set(np.unique(data.state_problem[train_idx]).tolist())
            assert held and kept and not held & kept, (fraction, seed)
            assert held | kept == set(range(len(problems)))
            assert sorted(names) == sorted(data.problems[p].name for p in held)
            # Whole problems: every state of a held-out problem is in validation.
            for p in held:
                assert set(val_idx[data.state_problem[val_idx] == p]) == set(np.flatnonzero(data.state_problem == p))
            assert len(train_idx) + len(val_idx) == len(data)


def test_single_problem_splits_states():
    data = blocksworld("p03.pddl")
    train_idx, val_idx, names = split(data, 0.2, np.random.default_rng(0))
    assert names == [] and len(val_idx) == round(0.2 * 22) and len(train_idx) == 22 - len(val_idx)
    assert not set(train_idx) & set(val_idx)
    train_idx, val_idx, _ = split(data, 0.0, np.random.default_rng(0))
    assert len(train_idx) == 22 and len(val_idx) == 0


def test_sampler_batches_hold_distinct_values_synthetic():
    rng = np.random.default_rng(0)
    values = rng.permutation(np.repeat(np.arange(20, dtype=float), 5))  # 100 states, 20 values
    indices = np.arange(100)[::-1].copy()
    sampler = ValueCoveringSampler(indices, values, 8, np.random.default_rng(1))
    batches = list(sampler.epoch())
    assert len(batches) == 13  # ceil(100 / 8): an epoch draws as many states as there are
    seen = set()
    for batch in batches:
        assert len(batch) == 8 and set(batch) <= set(indices)
        assert len(set(values[batch].tolist())) == 8
        seen |= set(values[batch].tolist())
    assert len(seen) == 20


def test_curriculum_admits_the_problems_from_the_smallest_to_all():
    from up_gnnplan.training.data import curriculum_order

    data = blocksworld("p04.pddl", "p02.pddl", "p03.pddl")  # 4, 2 and 3 blocks: listed out of size order
    indices = np.flatnonzero(~data.dead_end)
    rank = curriculum_order(data, indices)
    objects = np.array([len(data.problems[p].object_names) for p in data.state_problem[indices]])
    assert all(objects[rank == r].max() < objects[rank == r + 1].min() for r in range(2))
    sampler = ValueCoveringSampler(indices, data.value, 8, np.random.default_rng(0), curriculum=6, size_rank=rank)
    drawn = {e: {int(i) for batch in sampler.epoch(e) for i in batch} for e in (1, 3, 5, 6, 9)}
    smallest = set(indices[rank == 0].tolist())
    assert drawn[1] <= smallest and drawn[3] <= smallest | set(indices[rank == 1].tolist())
    assert max(objects[np.isin(indices, list(drawn[5]))]) == objects.max() and sampler.admit(9) == 3
    assert ValueCoveringSampler(indices, data.value, 8, np.random.default_rng(0)).admit(1) == 0  # no curriculum
    with pytest.raises(ValueError, match="size ranks"):
        ValueCoveringSampler(indices, data.value, 8, np.random.default_rng(0), curriculum=2)
    model, _, record = train(data, tiny(curriculum=2, max_epochs=3))
    assert record["epochs"] == 3


def test_sampler_on_dataset_values():
    data = blocksworld("p02.pddl", "p03.pddl", "p04.pddl")
    indices = np.flatnonzero(data.state_problem == 2)  # p04: 125 states, V* from 0 to 12
    assert len(indices) == 125 and len(np.unique(data.value[indices])) == 13
    for batch in ValueCoveringSampler(indices, data.value, 8, np.random.default_rng(0)).epoch():
        assert len(np.unique(data.value[batch])) == 8 and set(batch) <= set(indices)
    # More batch slots than values: every batch covers every value, each about equally often.
    for batch in ValueCoveringSampler(indices, data.value, 32, np.random.default_rng(0)).epoch():
        counts = np.unique(data.value[batch], return_counts=True)[1]
        assert len(counts) == 13 and counts.max() - counts.min() <= 1
    # A random batch of 8 would repeat values most of the time; covering never does.
    random_batches = [np.random.default_rng(s).choice(indices, 8, replace=False) for s in range(20)]
    assert sum(len(np.unique(data.value[b])) < 8 for b in random_batches) > 10


def test_dead_ends_excluded_and_counted():
    data = oneway_deadends()
    dead = np.flatnonzero(data.dead_end)
    assert len(dead) == 2 and np.isinf(data.value[dead]).all()  # at(trap), at(pit)
    for fraction in (0.0, 0.5):
        train_idx, val_idx, _ = split(data, fraction, np.random.default_rng(0))
        assert not set(dead) & (set(train_idx) | set(val_idx))
        assert len(train_idx) + len(val_idx) == len(data) - 2
    losses = []
    config = tiny(batch_size=4, max_epochs=3, validation_fraction=0.3)
    _, _, record = train(data, config, on_epoch=lambda e, loss, val, best, **_: losses.append((loss, val)))
    assert record["dead_ends_excluded"] == 2
    assert record["train_states"] + record["validation_states"] == len(data) - 2
    assert np.isfinite(losses).all()
    assert np.isfinite(record["train"]["mae"]) and np.isfinite(record["validation"]["mae"])


# --- the record ---------------------------------------------------------------------------------


def test_record():
    data = blocksworld("p02.pddl", "p03.pddl", "p04.pddl")
    epochs = []
    _, _, record = train(data, tiny(max_epochs=3, batch_size=32), on_epoch=lambda e, *rest, **_: epochs.append((e, *rest)))
    assert isinstance(record["seconds"], float) and record["seconds"] >= 0
    assert record["epochs"] == 3 == len(epochs)
    assert 1 <= record["best_epoch"] <= 3
    assert record["best_validation_mae"] == pytest.approx(min(e[3] for e in epochs))
    assert record["best_validation_mae"] == pytest.approx(epochs[record["best_epoch"] - 1][2])
    (held,) = record["validation_problems"]  # 0.2 of 3 problems: one
    held_id = [p.name for p in data.problems].index(held)
    assert record["validation_states"] == int((data.state_problem == held_id).sum())
    assert record["train_states"] == len(data) - record["validation_states"]
    for part in ("train", "validation"):
        assert set(record[part]) >= {"mae", "max_error", "within_0.5"}
        assert 0 <= record[part]["mae"] <= record[part]["max_error"]
    # The returned model is the best epoch's, so the final validation MAE is the best one.
    assert record["validation"]["mae"] == pytest.approx(record["best_validation_mae"], rel=1e-5)
    assert record["dead_ends_excluded"] == 0
    assert record["problems"] == [p.name for p in data.problems]


# --- checkpoints --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(ARCHITECTURES))
def test_checkpoint_round_trip(key, tmp_path):
    data = blocksworld("p03.pddl")
    config = tiny(architecture=key, max_epochs=1, aggregation="mean", share_weights=False)
    model, encoding, record = train(data, config)
    path = save_checkpoint(tmp_path / "sub" / "model.pt", model, encoding, config, record, data.domain)
    loaded, loaded_encoding, loaded_config, raw = load_checkpoint(path)
    assert loaded_config == config
    assert loaded_encoding.config() == encoding.config()
    assert raw["record"] == record and raw["domain"] == data.domain
    everything = np.arange(len(data))
    np.testing.assert_array_equal(predict(loaded, loaded_encoding, data, everything),
                                  predict(model, encoding, data, everything))
    assert not loaded.training


def test_corrupt_and_foreign_checkpoints(tmp_path):
    data = blocksworld("p02.pddl")
    config = tiny(max_epochs=1)
    model, encoding, record = train(data, config)
    good = save_checkpoint(tmp_path / "good.pt", model, encoding, config, record, data.domain)

    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"this is not a torch file\x00\x01\x02" * 10)
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    tensor = tmp_path / "tensor.pt"
    torch.save(torch.zeros(3), tensor)
    pickled = tmp_path / "pickled.pt"
    torch.save(TrainConfig(), pickled)  # needs unpickling code: refused by weights_only
    future = tmp_path / "future.pt"
    raw = torch.load(good, weights_only=True)
    torch.save({**raw, "version": 999}, future)
    for path in (truncated, garbage, empty, foreign, tensor, pickled, future, tmp_path / "missing.pt"):
        with pytest.raises(GnnplanError) as info:
            load_checkpoint(path)
        assert str(path) in str(info.value), str(info.value)


# --- the command line ---------------------------------------------------------------------------


def test_cli_dataset_then_train(tmp_path):
    from up_gnnplan.cli import main

    runner = CliRunner()
    dataset_path, checkpoint = tmp_path / "blocks.npz", tmp_path / "out" / "blocks.pt"
    result = runner.invoke(main, ["dataset", "--example", "blocksworld", "-o", str(dataset_path)])
    assert result.exit_code == 0, result.output
    assert dataset_path.is_file()
    result = runner.invoke(main, ["train", str(dataset_path), "-o", str(checkpoint), "--timeout", "5",
                                  "--layers", "2", "--hidden", "8"])
    assert result.exit_code == 0, (result.output, result.exception)
    lines = [line for line in result.output.splitlines() if line.strip()]
    summary = lines[-1]
    assert summary.startswith(f"{checkpoint}: rgnn (value) on 'blocksworld', "), summary
    assert re.search(r"\d+ epochs in [\d.]+ s, best epoch \d+, validation MAE [\d.]+ \(max [\d.]+\) on \d+ states", summary), summary
    model, encoding, config, raw = load_checkpoint(checkpoint)
    assert (config.layers, config.hidden, config.max_seconds) == (2, 8, 5.0)
    assert raw["record"]["seconds"] < 5 + 10  # the budget plus one epoch and the record
    assert raw["record"]["datasets"] == [str(dataset_path)]
    assert len(raw["record"]["validation_problems"]) == 1  # three bundled problems: one held out


def test_cli_options_of_an_architecture_reach_its_model(tmp_path):
    """--heads and --dropout reach a GATv2, whose --layers default is its own (4); the learning
    rate schedule runs."""
    from up_gnnplan.cli import main
    from up_gnnplan.models.muller import MullerGNN

    dataset_path, checkpoint = tmp_path / "blocks.npz", tmp_path / "gatv2.pt"
    blocksworld("p02.pddl", "p03.pddl").save(dataset_path)
    result = CliRunner().invoke(main, ["train", str(dataset_path), "-o", str(checkpoint), "--arch", "gatv2", "--heads", "2",
                                       "--dropout", "0.1", "--hidden", "8", "--max-epochs", "3", "--lr-patience", "1"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert f"{checkpoint}: gatv2 (value) on 'blocksworld'" in result.output
    model, _, config, _ = load_checkpoint(checkpoint)
    assert (config.layers, config.heads, config.dropout, config.lr_patience) == (4, 2, 0.1, 1)
    assert isinstance(model, MullerGNN) and len(model.layers) == 4 and model.layers[0].heads == 2
    assert model.dropout.p == 0.1


def test_builders_get_only_their_architectures_options():
    assert TrainConfig(architecture="gcn").model_params() == {"hidden": 32, "layers": 4, "dropout": 0.0}
    assert set(TrainConfig(architecture="gatv2").model_params()) == {"hidden", "layers", "dropout", "heads"}
    assert set(TrainConfig().model_params()) == {"hidden", "layers", "aggregation", "beta", "share_weights"}
    assert TrainConfig(architecture="rgnn_t", t=2).encoding_params() == {"goal_mode": "separate", "t": 2}
    assert TrainConfig(architecture="ploi").encoding_params() == {"goal_mode": "separate", "decompose_higher_arity": False}
    # Checkpoints written before these fields existed load with the defaults.
    old = {k: v for k, v in TrainConfig().to_dict().items()
           if k not in ("dropout", "heads", "lr_patience", "decompose_higher_arity", "ema")}
    assert TrainConfig.from_dict(old) == TrainConfig()


@pytest.mark.parametrize("key", sorted(ARCHITECTURES))
def test_an_architectures_own_defaults_reach_the_config_api(key):
    """TrainConfig(architecture=key) takes the registry's defaults, as `gnnplan train --arch key`
    does; a value given is kept; and only fields left open for the architecture have defaults there."""
    from up_gnnplan.training.config import ARCHITECTURE_DEFAULTS

    own = dict(ARCHITECTURES[key].defaults)
    assert set(own) <= set(ARCHITECTURE_DEFAULTS)
    config = TrainConfig(architecture=key)
    for name, common in ARCHITECTURE_DEFAULTS.items():
        assert getattr(config, name) == own.get(name, common)
    assert TrainConfig(architecture=key, layers=3, heads=2).model_params().get("layers", 3) == 3
    assert TrainConfig.from_dict(config.to_dict()) == config


# --- choosing the epoch by the greedy policy ------------------------------------------------------


def test_policy_validation_chooses_the_epoch_that_solves_most_in_fewest_steps():
    from up_gnnplan.problems import load_task
    from up_gnnplan.training.judging import policy_validation

    data = blocksworld("p02.pddl", "p03.pddl")
    tasks = [load_task(example("blocksworld"), example("blocksworld", p)) for p in ("p03.pddl", "p04.pddl")]
    config = tiny(max_epochs=4, batch_size=16, policy_steps=40, hidden=16, layers=4, lr=5e-3)
    model, encoding, record = train(data, config, validation_tasks=tasks)
    rows = record["curve"]
    assert len(rows) == 4 and all(len(row) == 6 for row in rows)
    best = max(rows, key=lambda row: (row[4], -row[5], -row[3]))
    assert record["best_epoch"] == best[0]
    summary = record["policy_validation"]
    walks = summary.pop("walks")  # the chosen epoch's steps per problem, None where the walk failed
    assert summary == {"problems": ["p03", "p04"], "solved": best[4], "steps": best[5], "step_limit": 40}
    assert len(walks) == 2 and sum(w is not None for w in walks) == best[4]
    assert sum(40 if w is None else w for w in walks) == best[5]
    # The returned weights are that epoch's: running the policy again gives the same figures, problem by problem.
    again = []
    assert policy_validation(model, encoding, tasks, 40, walks=again) == (best[4], best[5]) and again == walks
    for row in rows:
        assert 0 <= row[4] <= 2 and row[5] <= 2 * 40


def test_settled_needs_every_judge_problem_no_error_and_the_same_steps_in_a_row():
    from up_gnnplan.training.judging import settled

    row = lambda epoch, error=0.0, solved=2, steps=30: [epoch, 1.0, 0.1, error, solved, steps]  # noqa: E731
    curve = [row(1, 0.2), row(2), row(3), row(4)]
    assert settled(curve, 2, 3) and not settled(curve, 2, 4) and not settled(curve, 2, 0)
    assert settled([row(1, solved=1), row(2), row(3)], 2, 2) and not settled([row(1), row(2, solved=1), row(3)], 2, 2)
    assert not settled([row(1), row(2, error=0.01), row(3)], 2, 3)  # an error left: a later epoch may err less
    assert not settled([row(1), row(2, steps=28), row(3, steps=28)], 2, 3)  # the steps still change
    assert not settled([row(1), row(2)], 3, 2)  # not every judge problem solved
    assert not settled([[1, 1.0, 0.1, 0.0], [2, 1.0, 0.1, 0.0]], 1, 2)  # no judge


def test_a_run_whose_judge_has_settled_stops_before_its_time(monkeypatch):
    """Every epoch scores as the first (all judge problems, no error, the same steps): the run stops after
    settle_epochs of them, keeps the first, and says why; without settle_epochs it trains on."""
    from up_gnnplan.problems import load_task
    from up_gnnplan.training import loop

    monkeypatch.setattr(loop, "epoch_score", lambda run, epoch: (-1, 12, 0.0))
    data = blocksworld("p02.pddl")
    tasks = [load_task(example("blocksworld"), example("blocksworld", "p03.pddl"))]
    _, _, record = train(data, tiny(max_epochs=20, settle_epochs=3, epoch_states=16), validation_tasks=tasks)
    assert record["epochs"] == 3 and record["best_epoch"] == 1 and record["settled"]["epoch"] == 3
    _, _, record = train(data, tiny(max_epochs=5, epoch_states=16), validation_tasks=tasks)
    assert record["epochs"] == 5 and "settled" not in record


def test_cli_validation_problems_are_checked(tmp_path):
    from up_gnnplan.cli import main

    runner = CliRunner()
    dataset_path = tmp_path / "blocks.npz"
    blocksworld("p02.pddl").save(dataset_path)
    base = ["train", str(dataset_path), "-o", str(tmp_path / "m.pt"), "--timeout", "3", "--layers", "2", "--hidden", "8"]
    result = runner.invoke(main, [*base, "--validation-problem", str(example("blocksworld", "p04.pddl"))])
    assert result.exit_code != 0 and "--validation-domain" in result.output
    result = runner.invoke(main, [*base, "--validation-domain", str(example("gripper")),
                                  "--validation-problem", str(example("gripper", "p01.pddl"))])
    assert result.exit_code != 0 and "p01.pddl: not of the training data's domain" in result.output, result.output
    result = runner.invoke(main, [*base, "--validation-domain", str(example("blocksworld")), "--max-epochs", "2",
                                  "--validation-problem", str(example("blocksworld", "p04.pddl")), "--policy-steps", "30"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert re.search(r"greedy policy solved [0-1]/1 validation problems in \d+ steps", result.output), result.output


def test_an_epoch_past_its_time_ends_and_the_later_ones_are_as_long(monkeypatch):
    """With ``epoch_seconds``, an epoch whose steps run past 1.5x that ends (after a few steps at least), and the
    later epochs take as many steps; the judge stops after ``judge_seconds``, its epoch noted as judged in part."""
    from up_gnnplan.problems import load_task
    from up_gnnplan.training import loop

    data = blocksworld("p03.pddl", "p04.pddl")  # 147 states, all trained on
    _, _, record = train(data, tiny(max_epochs=3, epoch_states=96, epoch_seconds=1e-6, validation_fraction=0.0))
    assert record["states_trained"] == 3 * loop.MIN_EPOCH_BATCHES * 8  # not 3 epochs of 96 states
    _, _, record = train(data, tiny(max_epochs=2, epoch_states=96, validation_fraction=0.0))
    assert record["states_trained"] == 2 * 96  # without it, the epochs' size
    data = blocksworld("p02.pddl", "p03.pddl")
    tasks = [load_task(example("blocksworld"), example("blocksworld", "p04.pddl"))]
    _, _, record = train(data, tiny(max_epochs=2, epoch_states=16, judge_seconds=1e-6, policy_steps=500),
                         validation_tasks=tasks)
    assert [row[4] for row in record["curve"]] == [0, 0]  # stopped before it could solve it
    assert record["policy_validation"]["stopped_by_time_limit"].startswith("its time limit stopped")


def test_an_epochs_error_valued_in_chunks_is_the_whole_samples_and_stops_at_its_time():
    """The chunks' errors, weighted by the states each counts, are the error of the whole sample; past its time
    the evaluation stops after the chunk that reaches a few states."""
    import time
    from types import SimpleNamespace

    from up_gnnplan.training.budget import MIN_EPOCH_STATES, Budget
    from up_gnnplan.training.judging import _monitored_error
    from up_gnnplan.training.loop import make_objective

    data = blocksworld("p03.pddl", "p04.pddl")
    for head in ("value", "logits", "logits+value"):
        config = tiny(head=head, max_epochs=1)
        model, encoding, _ = train(data, config)
        objective = make_objective(config, data)
        monitor = np.arange(len(data.value))
        budget = Budget(60.0, time.perf_counter())
        budget.timed_evaluation(0.2, 100)  # 2 ms a state: chunks of at most 128 states
        run = SimpleNamespace(objective=objective, monitor_data=data, model=model, encoding=encoding, budget=budget)
        error, valued = _monitored_error(run, monitor, time.perf_counter() + 60)
        assert valued == len(monitor)
        assert error == pytest.approx(objective.error(model, encoding, data, monitor), abs=1e-6)
        parts = [(len(part), objective.metrics(model, encoding, data, part)) for part in np.array_split(monitor, 3)]
        merged, whole = objective.merge_metrics(parts), objective.metrics(model, encoding, data, monitor)
        assert merged.keys() == whole.keys()
        for key, value in whole.items():  # the figures of the states in parts are the figures of all of them
            assert merged[key] == pytest.approx(value, abs=1e-6), key
        budget.timed_evaluation(1.0, 10)  # 0.1 s a state: chunks of 20
        error, valued = _monitored_error(run, monitor, time.perf_counter() - 1)
        assert valued == 20 >= MIN_EPOCH_STATES
        assert error == pytest.approx(objective.error(model, encoding, data, monitor[:20]), abs=1e-6)

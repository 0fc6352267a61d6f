"""A training run stopped and continued from its state file ends where an unstopped run ends;
the state is refused for other data or settings; snapshots hold the best model so far."""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner
from safetensors import safe_open

from up_gnnplan.data import example
from up_gnnplan.datasets.build import BuildOptions, build_dataset
from up_gnnplan.errors import GnnplanError
from up_gnnplan.training import TrainConfig
from up_gnnplan.training.checkpoint import load_checkpoint
from up_gnnplan.training.loop import train

torch.set_num_threads(1)

_DATA: dict = {}


def blocksworld(*problems: str):
    if problems not in _DATA:
        _DATA[problems] = build_dataset(example("blocksworld"), [example("blocksworld", p) for p in problems],
                                        BuildOptions(method="expand"))
    return _DATA[problems]


def config(**overrides) -> TrainConfig:
    params = {"hidden": 8, "layers": 2, "batch_size": 8, "epoch_states": 64, "max_epochs": 4, "max_seconds": 600.0,
              "patience": 1000, "lr_patience": 1}
    return TrainConfig(**{**params, **overrides})


def weights(model) -> dict:
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("head", ["value", "logits"])
def test_a_stopped_run_continued_ends_with_the_weights_of_an_unstopped_run(tmp_path, head):
    data = blocksworld("p02.pddl", "p03.pddl", "p04.pddl")
    straight, _, record = train(data, config(head=head))
    state = tmp_path / "run.safetensors"
    _, _, first = train(data, config(head=head, max_epochs=2), state_path=state)
    assert first["epochs"] == 2 and state.is_file()
    resumed, _, second = train(data, config(head=head), state_path=state)  # a larger budget: continue
    assert second["epochs"] == 4 and second["steps"] == record["steps"]
    assert second["sessions"] == [[1, pytest.approx(0.0)], [3, pytest.approx(first["seconds"], abs=1.0)]]
    assert [row[0] for row in second["curve"]] == [1, 2, 3, 4]
    assert [row[2:] for row in second["curve"]] == [row[2:] for row in record["curve"]]  # same losses, errors
    assert second["best_epoch"] == record["best_epoch"]
    for name, tensor in weights(straight).items():
        assert torch.equal(tensor, resumed.state_dict()[name]), name


def test_a_finished_run_is_not_trained_again_and_a_raised_budget_extends_it(tmp_path):
    data = blocksworld("p02.pddl", "p03.pddl")
    state = tmp_path / "run.safetensors"
    _, _, first = train(data, config(max_epochs=2), state_path=state)
    model, _, again = train(data, config(max_epochs=2), state_path=state)
    assert again["epochs"] == 2 and again["steps"] == first["steps"]
    _, _, longer = train(data, config(max_epochs=3), state_path=state)
    assert longer["epochs"] == 3 and longer["steps"] > first["steps"]


def test_the_state_file_holds_tensors_and_a_json_header(tmp_path):
    state = tmp_path / "run.safetensors"
    train(blocksworld("p02.pddl"), config(max_epochs=1), state_path=state)
    with safe_open(str(state), framework="pt") as handle:
        header = handle.metadata()
        keys = set(handle.keys())
    assert header["format"] == "up-gnnplan-training-state"
    assert json.loads(header["progress"])["epoch"] == 1
    assert "torch_rng" in keys and any(k.startswith("optimiser/") for k in keys) and any(k.startswith("best/") for k in keys)
    assert not (tmp_path / "run.safetensors.partial").exists()


def test_a_state_of_other_settings_or_data_is_refused_by_name(tmp_path):
    state = tmp_path / "run.safetensors"
    train(blocksworld("p02.pddl", "p03.pddl"), config(max_epochs=1), state_path=state)
    with pytest.raises(GnnplanError, match=r"other settings: hidden 8 there, 16 here"):
        train(blocksworld("p02.pddl", "p03.pddl"), config(max_epochs=2, hidden=16), state_path=state)
    with pytest.raises(GnnplanError, match="other training or validation data"):
        train(blocksworld("p02.pddl", "p04.pddl"), config(max_epochs=2), state_path=state)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a state")
    with pytest.raises(GnnplanError, match="bad.safetensors: not a readable training state"):
        train(blocksworld("p02.pddl", "p03.pddl"), config(max_epochs=1), state_path=bad)


def _atoms_reversed(data, path):
    """A copy of ``data`` whose states list their atoms in the reverse order (the same states)."""
    from up_gnnplan.datasets.store import Dataset

    copy = Dataset.load(data.save(path))
    for state in range(len(copy.value)):
        start, end = copy.fluent_ptr[state], copy.fluent_ptr[state + 1]
        copy.fluent_pred[start:end] = copy.fluent_pred[start:end][::-1].copy()
        copy.fluent_args[start:end] = copy.fluent_args[start:end][::-1].copy()
    return copy


def test_the_same_states_stored_in_another_order_continue_with_a_note(tmp_path, capsys):
    from up_gnnplan.training.resume import canonical_digest, data_digest

    data = blocksworld("p02.pddl", "p03.pddl")
    reordered = _atoms_reversed(data, tmp_path / "copy.npz")
    assert data_digest(reordered) != data_digest(data) and canonical_digest(reordered) == canonical_digest(data)
    state = tmp_path / "run.safetensors"
    train(data, config(max_epochs=1), state_path=state)
    _, _, record = train(reordered, config(max_epochs=2), state_path=state)
    assert record["epochs"] == 2 and "stored in another order" in capsys.readouterr().err
    changed = _atoms_reversed(data, tmp_path / "changed.npz")
    changed.value[3] += 1.0  # one value differs: other data
    with pytest.raises(GnnplanError, match="other training or validation data"):
        train(changed, config(max_epochs=3), state_path=state)


def test_cli_state_and_snapshots(tmp_path):
    from up_gnnplan.cli import main

    runner = CliRunner()
    dataset = tmp_path / "bw.npz"
    result = runner.invoke(main, ["dataset", str(example("blocksworld")), str(example("blocksworld", "p02.pddl")),
                                  str(example("blocksworld", "p03.pddl")), "-o", str(dataset)])
    assert result.exit_code == 0, result.output
    common = [str(dataset), "-o", str(tmp_path / "bw.pt"), "--hidden", "8", "--layers", "2", "--epoch-states", "32",
              "--state", str(tmp_path / "bw.safetensors"), "--snapshot-minutes", "0.0001"]
    result = runner.invoke(main, ["train", *common, "--max-epochs", "1"])
    assert result.exit_code == 0, result.output
    snapshot = tmp_path / "bw-0.0001min.pt"
    assert snapshot.is_file() and (tmp_path / "bw-0.0001min-last.pt").is_file()
    _, _, _, data = load_checkpoint(snapshot)
    assert data["record"]["states_trained"] == 32 and data["record"]["epochs"] == 1
    result = runner.invoke(main, ["train", *common, "--max-epochs", "2"])
    assert result.exit_code == 0, result.output
    _, _, _, data = load_checkpoint(tmp_path / "bw.pt")
    assert data["record"]["epochs"] == 2 and len(data["record"]["sessions"]) == 2
    result = runner.invoke(main, ["train", *common[:-2], "--snapshot-minutes", "soon"])
    assert result.exit_code != 0 and "--snapshot-minutes" in result.output


def test_a_state_written_before_a_config_field_existed_continues(tmp_path):
    """A field added to TrainConfig since (at its default) does not make the state "other settings"."""
    from safetensors.torch import load_file, save_file

    data = blocksworld("p02.pddl", "p03.pddl")
    state = tmp_path / "run.safetensors"
    train(data, config(max_epochs=1), state_path=state)
    with safe_open(str(state), framework="pt") as handle:
        header = handle.metadata()
    older = json.loads(header["config"])
    del older["curriculum"]
    save_file(load_file(str(state)), str(state), metadata={**header, "config": json.dumps(older)})
    _, _, record = train(data, config(max_epochs=2), state_path=state)
    assert record["epochs"] == 2 and len(record["sessions"]) == 2


def test_weight_averaging_continues_across_sessions_and_keeps_the_average(tmp_path):
    data = blocksworld("p02.pddl", "p03.pddl", "p04.pddl")
    straight, _, record = train(data, config(ema=0.9))
    state = tmp_path / "run.safetensors"
    train(data, config(ema=0.9, max_epochs=2), state_path=state)
    with safe_open(str(state), framework="pt") as handle:
        assert any(k.startswith("average/") for k in handle.keys())
    resumed, _, second = train(data, config(ema=0.9), state_path=state)
    assert [row[2:] for row in second["curve"]] == [row[2:] for row in record["curve"]]
    for name, tensor in weights(straight).items():
        assert torch.equal(tensor, resumed.state_dict()[name]), name
    # The kept weights are the average, not the last step's: a run without averaging ends elsewhere.
    plain, _, _ = train(data, config())
    assert any(not torch.equal(tensor, plain.state_dict()[name]) for name, tensor in weights(straight).items())


def test_a_state_without_an_average_is_refused_by_a_run_with_one(tmp_path):
    data = blocksworld("p02.pddl")
    state = tmp_path / "run.safetensors"
    train(data, config(max_epochs=1), state_path=state)
    with pytest.raises(GnnplanError, match="ema 0.0 there, 0.9 here"):
        train(data, config(ema=0.9, max_epochs=2), state_path=state)


def test_the_weight_average_is_the_warmed_up_exponential_average():
    from up_gnnplan.training.averaging import WeightAverage

    model = torch.nn.Linear(2, 1)
    average = WeightAverage(model, 0.5)
    expected = model.weight.detach().clone()
    for step in range(1, 6):
        with torch.no_grad():
            model.weight.add_(1.0)
        average.update(model)
        decay = min(0.5, (1 + step) / (10 + step))
        expected = decay * expected + (1 - decay) * model.weight.detach()
    assert torch.allclose(average.tensors()["weight"], expected)
    live = average.swap_in(model)
    assert torch.allclose(model.weight, expected) and not torch.allclose(live["weight"], expected)

"""Training devices and processes: ``--device``, mixed precision, checkpoints across devices, torchrun.

This machine has no GPU: the device tests run on every device torch sees (here the CPU only),
and a checkpoint "from a GPU" is one whose tensors are tagged ``cuda:0`` as torch.save tags them
on a GPU. The distributed test starts two gloo processes with torchrun.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from up_gnnplan.cli import main
from up_gnnplan.data import example
from up_gnnplan.datasets.build import BuildOptions, build_dataset

torch = pytest.importorskip("torch")

from up_gnnplan.training import TrainConfig, loop  # noqa: E402
from up_gnnplan.training.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from up_gnnplan.training.devices import DeviceError, available_devices, resolve_device  # noqa: E402
from up_gnnplan.training.distributed import ProcessGroup  # noqa: E402
from up_gnnplan.training.loop import predict, train  # noqa: E402

DDP_TOLERANCE = 1e-5  # max |weight difference| of 2 gloo processes vs 1 process (measured: 3e-8)


@pytest.fixture(scope="module")
def blocks():
    return build_dataset(example("blocksworld"), [example("blocksworld", "p03.pddl")], BuildOptions(method="expand"))


def tiny(**overrides) -> TrainConfig:
    params = {"hidden": 8, "layers": 2, "batch_size": 8, "max_epochs": 2, "max_seconds": 30.0, "patience": 1000}
    return TrainConfig(**{**params, **overrides})


@pytest.fixture
def forward_log(monkeypatch):
    """Record, for every forward pass in training, the devices of the inputs and parameters and the output dtype."""
    seen = []

    def build(*args, **kwargs):
        encoding, model = original(*args, **kwargs)

        def hook(module, inputs, output):
            tensors = [t for t in inputs if torch.is_tensor(t)]
            outputs = output if isinstance(output, tuple) else (output,)
            seen.append({"inputs": {str(t.device) for t in tensors}, "parameters": {str(p.device) for p in module.parameters()},
                         "outputs": {str(t.device) for t in outputs}, "dtype": outputs[0].dtype, "training": module.training})

        model.register_forward_hook(hook)
        return encoding, model

    original = loop.build
    monkeypatch.setattr(loop, "build", build)
    return seen


# --- devices -------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", available_devices())
def test_model_batches_and_loss_are_on_the_chosen_device(blocks, device, forward_log):
    model, _, record = train(blocks, tiny(device=device))
    steps = [call for call in forward_log if call["training"]]
    assert len(steps) == record["steps"] > 0
    for call in forward_log:  # the optimisation steps and the validation passes
        assert call["inputs"] == call["parameters"] == call["outputs"] == {device}, call
    assert record["device"] == device and record["world_size"] == 1 and record["distributed_backend"] is None
    # The returned model is on the CPU, ready for export and searches.
    assert {p.device.type for p in model.parameters()} == {"cpu"}


def test_auto_is_cuda_when_torch_sees_a_gpu_else_the_cpu():
    assert resolve_device("auto") == torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    assert resolve_device(" CPU ") == torch.device("cpu")


def test_an_unavailable_device_is_refused_with_what_is_available(blocks, tmp_path):
    missing = f"cuda:{torch.cuda.device_count()}"  # one past the last GPU; on this machine there is none
    names = [missing] + ([] if torch.cuda.is_available() else ["cuda"])
    for name in names:
        with pytest.raises(DeviceError) as info:
            resolve_device(name)
        message = str(info.value)
        assert f"'{name}'" in message and f"available: {', '.join(available_devices())}" in message, message
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        resolve_device("tpu")
    with pytest.raises(DeviceError, match=f"'{missing}'"):
        train(blocks, tiny(device=missing))
    data = tmp_path / "blocks.npz"
    blocks.save(data)
    result = CliRunner().invoke(main, ["train", str(data), "-o", str(tmp_path / "m.pt"), "--device", missing])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert result.output.startswith(f"error: device '{missing}' is not available") and "Traceback" not in result.output
    assert not (tmp_path / "m.pt").exists()


def test_mixed_precision_trains_in_bfloat16_and_keeps_float32_weights(blocks, forward_log):
    model, _, record = train(blocks, tiny(amp=True, max_epochs=3))
    assert {call["dtype"] for call in forward_log if call["training"]} == {torch.bfloat16}
    assert {call["dtype"] for call in forward_log if not call["training"]} == {torch.float32}  # validation
    assert all(np.isfinite(row[2]) for row in record["curve"]) and np.isfinite(record["validation"]["mae"])
    assert {p.dtype for p in model.parameters()} == {torch.float32}


# --- checkpoints across devices --------------------------------------------------------------------


def test_a_checkpoint_written_on_a_gpu_loads_and_exports_on_the_cpu(blocks, tmp_path, monkeypatch):
    model, encoding, record = train(blocks, tiny(max_epochs=1))
    path = tmp_path / "gpu.pt"
    with monkeypatch.context() as patch:  # tag every tensor as torch.save does on a GPU
        patch.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
        save_checkpoint(path, model, encoding, tiny(max_epochs=1, device="cuda"), record, blocks.domain)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):  # what loading without map_location would do here
            torch.load(path, weights_only=True)
    loaded, loaded_encoding, config, _ = load_checkpoint(path)
    assert config.device == "cuda" and {p.device.type for p in loaded.parameters()} == {"cpu"}
    everything = np.arange(len(blocks))
    np.testing.assert_array_equal(predict(loaded, loaded_encoding, blocks, everything),
                                  predict(model, encoding, blocks, everything))
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    result = CliRunner().invoke(main, ["export", str(path), "-o", str(tmp_path / "gpu.onnx")])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "onnxruntime vs torch: largest difference" in result.output


# --- processes ---------------------------------------------------------------------------------------


def test_a_process_group_shares_each_batch_with_weights_that_average_to_the_global_loss():
    batch = np.arange(7)
    parts = [ProcessGroup(rank=r, world_size=2).share(batch) for r in range(2)]
    assert np.array_equal(np.concatenate([part for part, _ in parts]), batch)
    # mean over processes of weight * (mean of the share) = mean of the batch
    assert np.mean([w * part.mean() for part, w in parts]) == pytest.approx(batch.mean())
    assert ProcessGroup().share(batch) == (batch, 1.0)


def test_a_batch_smaller_than_the_processes_is_refused(blocks, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "4")
    with pytest.raises(ValueError, match="--batch-size 2 leaves some of the 4 processes without states"):
        train(blocks, tiny(batch_size=2))


@pytest.mark.slow  # opt-in (--runslow): keeps the default run under 10 minutes
def test_two_gloo_processes_train_as_one_process_on_the_same_global_batches(tmp_path):
    """`gnnplan train` under torchrun: 2 gloo processes, each with its share (4 and 3 states) of
    every global batch of 7, end with the weights, losses and validation errors of one process."""
    data = tmp_path / "gripper.npz"
    build_dataset(example("gripper"), [example("gripper", "p01.pddl")]).save(data)
    options = [str(data), "--head", "logits+value", "--hidden", "8", "--layers", "2", "--batch-size", "7",
               "--epoch-states", "28", "--max-epochs", "2", "--seed", "3", "--device", "cpu"]
    one, two = tmp_path / "one.pt", tmp_path / "two.pt"
    result = CliRunner().invoke(main, ["train", *options, "-o", str(one)])
    assert result.exit_code == 0, (result.output, result.exception)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                          "-m", "up_gnnplan.cli", "train", *options, "-o", str(two)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count(f"{two}: rgnn (logits+value) on 'gripper'") == 1  # rank 0 alone reports
    single, double = torch.load(one, weights_only=True), torch.load(two, weights_only=True)
    assert (double["record"]["world_size"], double["record"]["distributed_backend"]) == (2, "gloo")
    assert double["record"]["steps"] == single["record"]["steps"] == 6
    difference = max((single["state_dict"][k] - double["state_dict"][k]).abs().max().item() for k in single["state_dict"])
    assert difference < DDP_TOLERANCE
    # [epoch, seconds, loss, validation error]: all but the seconds
    assert [row[2:] for row in double["record"]["curve"]] == [row[2:] for row in single["record"]["curve"]]
    assert double["record"]["validation"] == pytest.approx(single["record"]["validation"], abs=1e-6)

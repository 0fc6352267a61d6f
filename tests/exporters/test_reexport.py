"""``gnnplan export`` on an ONNX file: the model is rebuilt from the file's own weights and
metadata and written again with this version's graph, with the same values."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from click.testing import CliRunner  # noqa: E402

from up_gnnplan import model_format  # noqa: E402
from up_gnnplan.cli import main  # noqa: E402
from up_gnnplan.data import example  # noqa: E402
from up_gnnplan.errors import GnnplanError  # noqa: E402
from up_gnnplan.exporters import export_onnx  # noqa: E402
from up_gnnplan.exporters.parity import random_states  # noqa: E402
from up_gnnplan.exporters.reexport import load_exported  # noqa: E402
from up_gnnplan.models import ARCHITECTURES  # noqa: E402
from up_gnnplan.problems import load_task  # noqa: E402
from up_gnnplan.runtime import OnnxValueFunction  # noqa: E402
from up_gnnplan.training.checkpoint import build, save_checkpoint  # noqa: E402
from up_gnnplan.training.config import TrainConfig  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.filterwarnings("ignore::UserWarning")]


def task():
    return load_task(example("gripper"), example("gripper", "p01.pddl"))


def signature():
    return task().signature


def checkpoint(tmp_path, **config):
    torch.manual_seed(4)
    config = TrainConfig(hidden=8, layers=2, **config)
    encoding, model = build(config, signature(), None, task().types)
    record = {"seconds": 1.0, "command": "test"}
    return save_checkpoint(tmp_path / "model.pt", model, encoding, config, record, "gripper-strips"), model, encoding


def values(path, states):
    return OnnxValueFunction(path)(states)


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


@pytest.mark.parametrize("config", [{"architecture": key} for key in ARCHITECTURES]
                         + [{"architecture": "rgnn", "share_weights": False}, {"architecture": "gatv2", "heads": 2}],
                         ids=list(ARCHITECTURES) + ["rgnn-per-layer", "gatv2-2-heads"])
def test_reexport_keeps_weights_record_and_values(config, tmp_path):
    path, _, encoding = checkpoint(tmp_path, **config)
    first, second = tmp_path / "first.onnx", tmp_path / "second.onnx"
    assert invoke("export", path, "-o", first).exit_code == 0
    result = invoke("export", first, "-o", second)
    assert result.exit_code == 0, result.output
    assert "vs first.onnx: largest difference (relative above 1)" in result.output
    states = random_states(encoding.signature, 20, np.random.default_rng(1))
    np.testing.assert_allclose(values(second, states), values(first, states), rtol=1e-5, atol=1e-5)
    old, new = OnnxValueFunction(first).metadata, OnnxValueFunction(second).metadata
    assert new["training_record"] == old["training_record"] and new["train_config"] == old["train_config"]
    assert old["export_source"] == {"kind": "checkpoint"}
    assert new["export_source"]["kind"] == "onnx" and new["export_source"]["file"] == "first.onnx"


def test_reexport_of_a_per_relation_file(tmp_path):
    """Files from before the packed layout hold the relation weights as folded, unnamed
    constants; they are stacked back in the encoding's relation order."""
    path, model, encoding = checkpoint(tmp_path)
    packed = export_onnx(model, encoding, tmp_path / "packed.onnx", domain="gripper-strips",
                         train_config=TrainConfig(hidden=8, layers=2).to_dict(), training_record={"seconds": 1.0})
    legacy = tmp_path / "legacy.onnx"
    names = encoding.input_names()
    batch = encoding.encode(random_states(encoding.signature, 3, np.random.default_rng(0), objects=(4, 6)))
    model.per_relation = True
    dynamic = {n: {0: f"{n}_0"} for n in names}
    torch.onnx.export(model, tuple(torch.from_numpy(batch[n]) for n in names), str(legacy), input_names=names,
                      output_names=["value"], dynamic_axes={**dynamic, "value": {0: "states"}}, opset_version=18,
                      dynamo=False)
    model.per_relation = False
    proto, metadata = onnx.load(str(legacy)), onnx.load(str(packed)).metadata_props
    for entry in metadata:
        if entry.key not in (model_format.PREFIX + "layout", model_format.PREFIX + "input_names"):
            proto.metadata_props.add().CopyFrom(entry)
    onnx.save(proto, str(legacy))
    assert not any(i.name.startswith("relation_mlps") for i in proto.graph.initializer)
    rebuilt, *_ = load_exported(legacy)
    for key, value in model.state_dict().items():
        torch.testing.assert_close(rebuilt.state_dict()[key], value)
    result = invoke("export", legacy, "-o", tmp_path / "new.onnx")
    assert result.exit_code == 0, result.output
    assert OnnxValueFunction(tmp_path / "new.onnx").packed


def test_reexport_refusals(tmp_path):
    path, model, encoding = checkpoint(tmp_path)
    first = tmp_path / "first.onnx"
    assert invoke("export", path, "-o", first).exit_code == 0
    result = invoke("export", first, "-o", first)
    assert result.exit_code != 0 and "another file" in result.output
    # An ONNX file that is not ours, and one whose weights do not fit its recorded config.
    foreign = tmp_path / "foreign.onnx"
    proto = onnx.load(str(first))
    del proto.metadata_props[:]
    onnx.save(proto, str(foreign))
    with pytest.raises(GnnplanError, match="not an up-gnnplan model"):
        load_exported(foreign)
    mismatched = tmp_path / "mismatched.onnx"
    proto = onnx.load(str(first))
    for entry in proto.metadata_props:
        if entry.key == model_format.PREFIX + "train_config":
            entry.value = json.dumps({**json.loads(entry.value), "hidden": 16})
    onnx.save(proto, str(mismatched))
    result = invoke("export", mismatched, "-o", tmp_path / "out.onnx")
    assert result.exit_code != 0 and "mismatched.onnx: its weights do not fit" in result.output
    assert not (tmp_path / "out.onnx").exists()


@pytest.mark.parametrize("head", ["value", "logits+value"])
def test_a_graph_exported_ahead_takes_the_trained_weights_and_gives_the_values_of_a_new_export(tmp_path, head):
    """``gnnplan learn`` exports the untrained network before training and fills in the weights at the end
    (``refill_onnx``): the file gives the values a new export of the trained model gives; a graph of another
    network (other sizes) is refused, so that the caller exports anew."""
    from up_gnnplan.datasets.build import build_dataset
    from up_gnnplan.exporters.refill import refill_onnx

    data = build_dataset(example("gripper"), [example("gripper", "p01.pddl")])
    config = TrainConfig(hidden=8, layers=2, head=head)
    torch.manual_seed(1)
    encoding, untrained = build(config, data.signature, data.action_signature, data.types)
    graph = export_onnx(untrained, encoding, tmp_path / "graph.onnx", domain="gripper-strips",
                        train_config=config.to_dict(), training_record={})
    torch.manual_seed(2)
    _, trained = build(config, data.signature, data.action_signature, data.types)  # other weights: "trained"
    fresh = export_onnx(trained, encoding, tmp_path / "fresh.onnx", domain="gripper-strips",
                        train_config=config.to_dict(), training_record={"epochs": 3})
    filled = refill_onnx(graph, trained, encoding, tmp_path / "filled.onnx",
                         metadata={"training_record": {"epochs": 3}, "train_config": config.to_dict()})
    assert filled is not None
    states = random_states(data.signature, 6, np.random.default_rng(0))
    assert np.allclose(values(filled, states), values(fresh, states), atol=1e-5)
    assert not np.allclose(values(graph, states), values(fresh, states), atol=1e-3)  # the weights did change
    meta = {e.key: e.value for e in onnx.load(str(filled)).metadata_props}
    assert json.loads(meta[model_format.PREFIX + "training_record"]) == {"epochs": 3}

    other = TrainConfig(hidden=16, layers=2, head=head)
    _, wider = build(other, data.signature, data.action_signature, data.types)
    assert refill_onnx(graph, wider, encoding, tmp_path / "no.onnx", metadata={}) is None
    assert not (tmp_path / "no.onnx").exists()

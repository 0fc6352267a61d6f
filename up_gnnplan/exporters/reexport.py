"""Rebuild the torch model of an exported file, to export it again with this version's graph.

An exported file holds every weight as a named ONNX initializer (the torch parameter names,
prefixed with ``model.`` in the packed layout) and its training config, encoding and record
in the metadata. That is enough to rebuild the model exactly and write it anew when the
exported graph improves (as when the aggregation stopped using a scatter per layer), without
the training checkpoint. The values of the two files are compared before anything is kept.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from up_gnnplan import model_format
from up_gnnplan.errors import GnnplanError


def file_digest(path) -> str:
    """The first 16 hex digits of the SHA-256 of the file at ``path``: how records name a model file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def is_onnx_file(path) -> bool:
    """True for an ONNX file: by its suffix, or by its first byte (ONNX's ``ir_version`` field;
    torch checkpoints are zip files and start with ``PK``)."""
    path = Path(path)
    if path.suffix.lower() == ".onnx":
        return True
    with path.open("rb") as handle:
        return handle.read(1) == b"\x08"


_VALUE_READOUT = ("gnn.readout.", "readout.")  # the value head's MLP, by parameter name


def load_exported(path):
    """Return (model, encoding, config, data) rebuilt from an up-gnnplan ONNX file.

    ``data`` has the keys of a checkpoint that the exporter and ``ship`` read: ``domain``,
    ``record``, ``encoding`` and ``config``, and ``source``: where the weights came from.
    """
    import onnx
    import torch
    from onnx import numpy_helper

    from up_gnnplan.states.actions import ActionSignature
    from up_gnnplan.states.signature import PredicateSignature
    from up_gnnplan.training.checkpoint import build, types_of
    from up_gnnplan.training.config import TrainConfig

    path = Path(path)
    try:
        proto = onnx.load(str(path))
    except Exception as error:  # onnx raises protobuf's DecodeError and others
        raise GnnplanError(f"{path}: not a readable ONNX model ({error.__class__.__name__})") from None
    meta = {}
    for entry in proto.metadata_props:
        if entry.key.startswith(model_format.PREFIX):
            meta[entry.key[len(model_format.PREFIX):]] = json.loads(entry.value)
    if meta.get("format") != model_format.FORMAT:
        raise GnnplanError(f"{path}: not an up-gnnplan model (no up_gnnplan metadata)")
    if int(meta.get("version", 0)) > model_format.VERSION:
        raise GnnplanError(f"{path}: model format version {meta['version']} is newer than this up-gnnplan supports "
                           f"({model_format.VERSION})")
    if "train_config" not in meta or "architecture" not in meta["train_config"]:
        raise GnnplanError(f"{path}: the file records no training config, so its model cannot be rebuilt")
    config = TrainConfig.from_dict(meta["train_config"])
    heads = meta.get("heads") or {}
    actions = ActionSignature.from_json(heads["actions"]) if heads.get("actions") else None
    encoding, model = build(config, PredicateSignature.from_json(meta["encoding"]["signature"]), actions,
                            types_of(meta["encoding"]))
    if encoding.config() != meta["encoding"]:
        raise GnnplanError(f"{path}: its encoding {meta['encoding']} is not what its training config builds "
                           f"({encoding.config()})")
    prefix = "model." if meta.get("layout") == "packed" else ""
    weights = {init.name[len(prefix):]: torch.from_numpy(np.array(numpy_helper.to_array(init)))
               for init in proto.graph.initializer if init.name.startswith(prefix)}
    expected = model.state_dict()
    if meta.get("layout") != "packed" and hasattr(model, "relation_mlps"):
        weights.update(_folded_relation_weights(proto, model, expected))
    missing = sorted(set(expected) - set(weights))
    if "value" not in heads.get("outputs", ["value"]):
        # A file without a value output has no value readout: the exporter left out the weights no
        # output uses. The model's own initial ones stand in; the caller's comparison of the two
        # files' outputs shows that they change nothing.
        missing = [k for k in missing if not k.startswith(_VALUE_READOUT)]
    wrong = sorted(k for k in expected if k in weights and tuple(weights[k].shape) != tuple(expected[k].shape))
    if missing or wrong:
        detail = f"missing {', '.join(missing[:4])}" if missing else f"other shapes for {', '.join(wrong[:4])}"
        raise GnnplanError(f"{path}: its weights do not fit a {config.architecture} model of its config ({detail}); "
                           "export from the training checkpoint instead")
    model.load_state_dict({k: weights.get(k, v) for k, v in expected.items()})
    model.eval()
    digest = file_digest(path)
    data = {
        "domain": meta.get("domain", ""),
        "record": meta.get("training_record", {}),
        "encoding": meta["encoding"],
        "config": meta["train_config"],
        "source": {"kind": "onnx", "file": path.name, "sha256": digest, "package_version": meta.get("package_version")},
    }
    return model, encoding, config, data


def _folded_relation_weights(proto, model, expected) -> dict:
    """The relation MLP weights of an R-GNN file in the per-relation layout (before 0.1's packing).

    There the exporter folded each relation's slice of the weight stacks into an unnamed
    constant: four per relation (first matrix, first bias, second matrix, second bias), first
    used in the order of the encoding's relations. They are stacked back per arity here; a
    wrong assignment would show in the comparison of the two files' values, which the caller
    makes before keeping anything. Returns {} when the file does not have that shape.
    """
    import torch
    from onnx import numpy_helper

    if len(model.relation_mlps) != 1:  # one set of MLPs per layer: not rebuilt from folded constants
        return {}
    inits = {i.name: i for i in proto.graph.initializer}
    order, seen = [], set()
    for node in proto.graph.node:
        for name in node.input:
            if name in inits and name.startswith("onnx::") and name not in seen:
                seen.add(name)
                order.append(numpy_helper.to_array(inits[name]))
    nets, d = model.relation_mlps[0], model.hidden
    if len(order) != 4 * len(nets.arities):
        return {}
    stacks = {a: [[] for _ in range(4)] for a in nets.groups}
    for r, arity in enumerate(nets.arities):
        parts = order[4 * r: 4 * r + 4]
        width = arity * d
        if [p.shape for p in parts] != [(width, width), (width,), (width, width), (width,)]:
            return {}
        for i, part in enumerate(parts):
            stacks[arity][i].append(part)
    out = {}
    for g, arity in enumerate(nets.groups):
        for i in range(4):
            key = f"relation_mlps.0.weights.{4 * g + i}"
            out[key] = torch.from_numpy(np.stack(stacks[arity][i]))
            if tuple(out[key].shape) != tuple(expected[key].shape):
                return {}
    return out


def compare_files(old, new, encoding, states: int = 72, seed: int = 0) -> float:
    """Return the largest difference of two model files' outputs on random states (and actions) of their domain,
    relative where an output's size is above 1 (float rounding: the action scores of random Logistics states reach
    17,634, where the sums of a changed graph differ in their last bit, 0.0039)."""
    from up_gnnplan.encodings.actions import encode_actions
    from up_gnnplan.exporters.parity import random_actions, random_states, runtime_outputs
    from up_gnnplan.runtime.value_function import OnnxValueFunction

    a, b = OnnxValueFunction(old), OnnxValueFunction(new)
    if a.outputs != b.outputs:
        raise GnnplanError(f"{new}: it computes {', '.join(b.outputs)}, {old} {', '.join(a.outputs)}")
    rng = np.random.default_rng(seed)
    worst = 0.0
    for size in (1, 7, states - 8):
        batch = random_states(encoding.signature, size, rng)
        feed = {}
        if a.has_actions:
            feed, _ = encode_actions(a.actions, random_actions(a.actions, batch, rng), [s.num_objects for s in batch])
        first, second = runtime_outputs(a, batch, feed), runtime_outputs(b, batch, feed)
        worst = max([worst] + [float((np.abs(first[k] - second[k]) / np.maximum(1.0, np.abs(first[k]))).max(initial=0.0))
                               for k in first])
    return worst

"""Export a trained model to ONNX with dynamic sizes and metadata inside the file.

Every input's first dimension is dynamic (numbers of nodes, atoms, edges and states), so one
file serves any instance of the domain. The exporter knows no architecture: a model may name
the layout of its exported inputs (``export_layout``; ``packed``: relations stacked per arity,
see :mod:`up_gnnplan.encodings.packing`) and the module to write (``exported(encoding)``). The example batch used for tracing is synthetic: one
state whose objects satisfy one atom of every relation, so no relation is traced empty.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from up_gnnplan import __version__, model_format
from up_gnnplan.encodings.actions import ActionInput, action_input_names, encode_actions
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.packing import pack, packed_input_names
from up_gnnplan.states.actions import ActionSignature
from up_gnnplan.states.atoms import Atoms

OPSET = 18  # ScatterElements with reduction="max" (smooth max) needs opset 18


def example_states(signature) -> list[StateInput]:
    """Return two small states in which every predicate and goal copy has an atom.

    Goal atoms use the state atoms' arguments reversed and shifted, so that in goal mode
    ``achieved`` some goal atoms hold and some do not.
    """
    width = max(signature.max_arity, 1)
    n = width + 1
    pred = np.arange(len(signature), dtype=np.int32)
    state_args = np.full((len(signature), width), -1, dtype=np.int32)
    goal_args = np.full((len(signature), width), -1, dtype=np.int32)
    for p, arity in enumerate(signature.arities):
        state_args[p, :arity] = np.arange(arity)
        goal_args[p, :arity] = (np.arange(arity)[::-1] + 1) % n
    atoms, goal = Atoms(pred, state_args), Atoms(pred.copy(), goal_args)
    return [StateInput(atoms, goal, n, atoms), StateInput(atoms, atoms, n, None)]


def example_actions(signature: ActionSignature, states: list[StateInput]) -> list[ActionInput]:
    """Return, for each state, two ground actions of every schema over its first objects."""
    out = []
    for state in states:
        schema = np.repeat(np.arange(len(signature), dtype=np.int32), 2)
        args = np.full((len(schema), signature.width), -1, dtype=np.int32)
        for row, k in enumerate(schema.tolist()):
            arity = signature.arities[k]
            args[row, :arity] = (np.arange(arity) + row) % state.num_objects
        out.append(ActionInput(schema, args))
    return out


def heads_signature(heads: dict) -> ActionSignature:
    """Return the action signature recorded in a file's ``heads`` metadata."""
    return ActionSignature.from_json(heads["actions"])


def export_onnx(model, encoding, path, *, domain: str, train_config: dict, training_record: dict,
                source: dict | None = None) -> Path:
    """Write ``model`` to ``path`` as ONNX with dynamic axes and up-gnnplan metadata.

    ``source`` records where the weights came from (a training checkpoint by default; see
    :mod:`up_gnnplan.exporters.reexport` for files exported again from an earlier file).
    """
    import onnx
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = encoding.input_names()
    states = example_states(encoding.signature)
    batch = encoding.encode(states)
    layout, heads, outputs = getattr(model, "export_layout", "per-relation"), None, ["value"]
    if layout == "packed":  # one padded input per arity
        batch = pack(batch, encoding.relations)
        names = packed_input_names(encoding)
    if getattr(model, "actions", None) is not None:  # a model with an action head
        action_feed, _ = encode_actions(model.actions, example_actions(model.actions, states),
                                        [s.num_objects for s in states])
        batch.update(action_feed)
        heads = {"outputs": list(model.outputs), "action_kind": model.kind, "actions": model.actions.to_json()}
        outputs = list(model.outputs)
        names = names + action_input_names(heads_signature(heads))
    elif hasattr(model, "outputs"):
        outputs = list(model.outputs)
        heads = {"outputs": outputs}
    if hasattr(model, "exported"):  # the model's own form for export (the packed layout's)
        model = model.exported(encoding)
    tensors = tuple(torch.from_numpy(batch[name]) for name in names)
    dynamic = {name: {0: f"{name}_0"} for name in names}
    dynamic.update({name: {0: f"{name}_0", 1: f"{name}_1"} for name in names if name.startswith("arity_")})
    if "edge_index" in dynamic:
        dynamic["edge_index"] = {1: "edges"}
    dynamic["value"] = {0: "states"}
    dynamic["scores"] = {0: "actions"}
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, tensors, str(path), input_names=names, output_names=outputs,
                          dynamic_axes={k: v for k, v in dynamic.items() if k in names or k in outputs},
                          opset_version=OPSET, dynamo=False)
    proto = onnx.load(str(path))
    config = encoding.config()
    metadata = {
        "format": model_format.FORMAT,
        "version": model_format.VERSION,
        "architecture": train_config.get("architecture", encoding.name),
        "encoding": config,
        "schema": encoding.schema(),
        "domain": domain,
        "train_config": train_config,
        "training_record": training_record,
        "package_version": __version__,
        "opset": OPSET,
        "input_names": names,
        "layout": layout,
        "export_source": source or {"kind": "checkpoint"},
        "heads": heads or {"outputs": ["value"]},
    }
    del proto.metadata_props[:]
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = model_format.PREFIX + key, json.dumps(value)
    onnx.checker.check_model(proto)
    onnx.save(proto, str(path))
    return path

"""Check an exported file against the torch model on states of other sizes than the export's."""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.actions import ActionInput, encode_actions
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.errors import GnnplanError
from up_gnnplan.exporters.onnx_export import example_states
from up_gnnplan.states.atoms import Atoms


def random_states(signature, count: int, rng: np.random.Generator, objects=(2, 9)) -> list[StateInput]:
    """Return random states (random atoms over a random number of objects) with random goals."""
    width = max(signature.max_arity, 1)
    out = []
    for _ in range(count):
        n = int(rng.integers(*objects))

        def atoms(k):
            pred = rng.integers(0, len(signature), size=k).astype(np.int32)
            args = rng.integers(0, n, size=(k, width)).astype(np.int32)
            arity = np.array(signature.arities)[pred]
            args[np.arange(width)[None, :] >= arity[:, None]] = -1
            return Atoms(pred, args)

        out.append(StateInput(atoms(int(rng.integers(1, 4 * n))), atoms(int(rng.integers(1, n + 1))), n, atoms(1)))
    return out


def random_actions(signature, states: list[StateInput], rng: np.random.Generator) -> list[ActionInput]:
    """Return random ground actions (0-20 per state, random schemas over the state's objects)."""
    out = []
    for state in states:
        count = int(rng.integers(0, 21))
        schema = rng.integers(0, len(signature), size=count).astype(np.int32)
        args = rng.integers(0, state.num_objects, size=(count, signature.width)).astype(np.int32)
        args[np.arange(signature.width)[None, :] >= np.array(signature.arities)[schema][:, None]] = -1
        out.append(ActionInput(schema, args))
    return out


def runtime_outputs(runtime, states: list[StateInput], action_feed: dict) -> dict:
    """Return every output of an ONNX model file (``value``, ``scores``) on states and encoded actions."""
    return dict(zip(runtime.outputs, runtime.session.run(runtime.outputs, {**runtime._state_feed(states), **action_feed})))


def _error(got: np.ndarray, expected: np.ndarray) -> float:
    """The largest |got - expected| / max(1, |expected|): absolute near zero, relative above 1, as
    float32 rounding grows with the values (random states can score an action in the thousands).

    A value far below the largest of its batch is compared on a thousandth of that largest value
    instead: random states drive a trained model's scores up to 1e17, where float32 cancellation
    alone moves a score of 6e4 by 2e-4 of itself (a 30-minute Satellite model, 2026-11-26), while
    an export fault shows on the batch's own scale."""
    if expected.size == 0:
        return 0.0
    magnitude = np.abs(expected)
    scale = np.maximum(np.maximum(1.0, magnitude), 1e-3 * magnitude.max())
    return float((np.abs(got - expected) / scale).max())


def check_parity(model, encoding, path, tolerance: float = 1e-4, seed: int = 0) -> float:
    """Return the largest difference of onnxruntime from torch over several batches (absolute for
    values up to 1, relative above); raise above ``tolerance``.

    Models with an action head are compared on their values (if any) and on the scores of
    random ground actions of every state of each batch.
    """
    import torch

    from up_gnnplan.runtime import OnnxValueFunction
    from up_gnnplan.training.objectives import outputs

    runtime = OnnxValueFunction(path)
    rng = np.random.default_rng(seed)
    batches = [example_states(encoding.signature)[:1], random_states(encoding.signature, 1, rng),
               random_states(encoding.signature, 7, rng), random_states(encoding.signature, 64, rng)]
    worst = 0.0
    for batch in batches:
        tensors = [torch.from_numpy(a) for a in (encoding.encode(batch)[n] for n in encoding.input_names())]
        if not runtime.has_actions:
            with torch.no_grad():
                expected = model(*tensors).numpy()
            worst = max(worst, _error(runtime(batch), expected))
            continue
        action_feed, order = encode_actions(runtime.actions, random_actions(runtime.actions, batch, rng),
                                            [s.num_objects for s in batch])
        with torch.no_grad():
            expected = outputs(model, model(*tensors, *(torch.from_numpy(action_feed[n]) for n in runtime.action_names)))
        got = runtime_outputs(runtime, batch, action_feed)
        for name, value in expected.items():
            worst = max(worst, _error(got[name], value.numpy()))
    if worst > tolerance:
        raise GnnplanError(f"{path}: onnxruntime differs from torch by {worst:.2e} (> {tolerance:g}; absolute up to 1, "
                           "relative above)")
    return worst

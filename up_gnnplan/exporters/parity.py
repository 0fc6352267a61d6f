"""Check an exported file against the torch model on states of other sizes than the export's."""

from __future__ import annotations

import numpy as np

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


def check_parity(model, encoding, path, tolerance: float = 1e-4, seed: int = 0) -> float:
    """Return the largest |onnxruntime - torch| over several batches; raise above ``tolerance``."""
    import torch

    from up_gnnplan.runtime import OnnxValueFunction

    runtime = OnnxValueFunction(path)
    rng = np.random.default_rng(seed)
    batches = [example_states(encoding.signature)[:1], random_states(encoding.signature, 1, rng),
               random_states(encoding.signature, 7, rng), random_states(encoding.signature, 64, rng)]
    worst = 0.0
    for batch in batches:
        tensors = encoding.encode(batch)
        with torch.no_grad():
            expected = model(*(torch.from_numpy(tensors[n]) for n in encoding.input_names())).numpy()
        worst = max(worst, float(np.abs(runtime(batch) - expected).max()))
    if worst > tolerance:
        raise GnnplanError(f"{path}: onnxruntime differs from torch by {worst:.2e} (> {tolerance:g})")
    return worst

"""Torch models behind the searches' protocols, for the searches run during training and in benchmarks.

:class:`TorchValueFunction` values states and :class:`TorchActionScorer` scores actions as the
ONNX runtime's value function and action scorer do (:mod:`up_gnnplan.runtime`), so that a model
being trained can be judged by the same searches a shipped one runs.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.training.devices import device_of
from up_gnnplan.training.objectives import outputs, to_tensors


class TorchValueFunction:
    """A value function over a torch model, for searches during training and benchmarks."""

    def __init__(self, model, encoding):
        self.model, self.encoding = model, encoding

    def prepare(self, inputs) -> dict[str, np.ndarray]:
        """Return the model's input arrays for a batch of states (searches chunk by their size)."""
        return self.encoding.encode(inputs)

    def run(self, feed) -> np.ndarray:
        import torch

        with torch.no_grad():
            tensors = to_tensors([feed[name] for name in self.encoding.input_names()], device_of(self.model))
            return outputs(self.model, self.model(*tensors))["value"].float().cpu().numpy()

    def __call__(self, inputs) -> np.ndarray:
        return self.run(self.prepare(inputs))

    def check_signature(self, signature, where: str = "the problem") -> None:
        """Raise :class:`ModelError` unless the model's encoding is for ``signature`` (as the ONNX one)."""
        from up_gnnplan.runtime import ModelError

        if signature != self.encoding.signature:
            raise ModelError(f"the model being trained is for other predicates than {where} "
                             f"({self.encoding.signature.describe_difference(signature)})")


class TorchActionScorer:
    """An action scorer over a torch model with an action head (the searches' protocol, as the ONNX one)."""

    def __init__(self, model, encoding):
        self.model, self.encoding = model, encoding
        self.kind, self.actions = model.kind, model.actions

    def __call__(self, state, actions) -> np.ndarray:
        """Return the preference (higher is better) of each action of ``actions`` in ``state``."""
        import torch

        from up_gnnplan.encodings.actions import encode_actions
        from up_gnnplan.models.heads import preferences

        feed, order = encode_actions(self.actions, [actions], [state.num_objects])
        states = self.encoding.encode([state])
        tensors = to_tensors([states[n] for n in self.encoding.input_names()]
                             + [feed[f"action_{k}"] for k in range(len(self.actions))], device_of(self.model))
        with torch.no_grad():
            scores = outputs(self.model, self.model(*tensors))["scores"].float().cpu().numpy()[order]
        return preferences(scores, self.kind)

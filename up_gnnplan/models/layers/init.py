"""Parameter initialisation of the layers, chosen so that exported files keep every weight's name.

Weights are stored ``[inputs, outputs]`` and applied as ``x @ W``: torch's ONNX exporter turns a
bias-free ``nn.Linear`` into a MatMul with the transposed weight folded into an unnamed
constant. Biases start random, not at zero: the exporter merges initialisers of equal value
(two untrained zero biases of one size) into one. Either way the file would lose parameter
names, and :mod:`up_gnnplan.exporters.reexport` rebuilds models from those names.
"""

from __future__ import annotations

import torch
from torch import nn


def glorot(inputs: int, outputs: int) -> nn.Parameter:
    """Return a Glorot-uniform weight [inputs, outputs] (torch-geometric's choice for these layers)."""
    weight = nn.Parameter(torch.empty(inputs, outputs))
    nn.init.xavier_uniform_(weight)
    return weight


def uniform_bias(inputs: int, outputs: int) -> nn.Parameter:
    """Return a bias [outputs] uniform in ±1/sqrt(inputs), as ``nn.Linear``'s."""
    bound = 1.0 / max(inputs, 1) ** 0.5
    return nn.Parameter(torch.empty(outputs).uniform_(-bound, bound))

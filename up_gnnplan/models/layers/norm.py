"""Layer normalisation whose exported weights keep their own names."""

from __future__ import annotations

import torch
from torch import nn


class LayerNorm(nn.Module):
    """``nn.LayerNorm`` over the last axis with a gain and a bias, started slightly off 1 and 0.

    Exported files must keep every weight under its own name (:mod:`up_gnnplan.models.layers.init`),
    and torch's exporter merges initialisers of equal value: two untrained ``nn.LayerNorm`` of one
    size would share theirs. A start within 1% of (1, 0) is the same layer for training.

    Args:
        size: the size of the last axis.

    Shapes: ``x`` [..., size] → [..., size].
    """

    def __init__(self, size: int):
        super().__init__()
        self.size = size
        self.weight = nn.Parameter(1.0 + torch.empty(size).uniform_(-0.01, 0.01))
        self.bias = nn.Parameter(torch.empty(size).uniform_(-0.01, 0.01))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.layer_norm(x, (self.size,), self.weight, self.bias)

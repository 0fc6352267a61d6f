"""The MLP every relational model here builds on: Linear, Mish, Linear (the R-GNN paper's), with
Mish written for a fast ONNX export."""

from __future__ import annotations

import torch
from torch import nn


def mish(x: torch.Tensor) -> torch.Tensor:
    """Mish, ``x tanh(softplus(x))``; exported as ``x n / (n + 2)`` with ``n = e^x (e^x + 2)``.

    The two are equal (``tanh(log(1 + e^x)) = n / (n + 2)``); onnxruntime runs torch's export
    of Mish (Softplus, Tanh, Mul) 2.6x slower than the exponential form on this machine
    (benchmarks/HISTORY.md), and Softplus was 40% of the time of a batch of 64 states.
    Arguments are capped at 20 before the exponential (there the ratio is 1 to float precision).
    """
    if torch.onnx.is_in_onnx_export():
        e = torch.exp(torch.clamp(x, max=20.0))
        n = e * (e + 2.0)
        return x * n / (n + 2.0)
    return torch.nn.functional.mish(x)


class Mish(nn.Module):
    """:func:`mish` as a module (no parameters: checkpoints of ``nn.Mish`` models load unchanged)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mish(x)


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    """Return Linear → Mish → Linear."""
    return nn.Sequential(nn.Linear(inputs, hidden), Mish(), nn.Linear(hidden, outputs))

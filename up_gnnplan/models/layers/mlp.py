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
    if torch.onnx.is_in_onnx_export() or torch.jit.is_tracing():
        e = torch.exp(torch.clamp(x, max=20.0))
        n = e * (e + 2.0)
        return x * n / (n + 2.0)
    if x.dtype in (torch.float32, torch.float64):
        return _ExpMish.apply(x)
    return torch.nn.functional.mish(x)  # half precision: e^20 would overflow float16


def mish_and_slope(x: torch.Tensor, slope: bool = True):
    """Return (Mish of ``x``, its derivative at ``x`` or None) in the exponential form of :func:`mish`.

    With ``e = exp(x)``, ``n = e (e + 2)`` and ``t = n / (n + 2)``: ``mish(x) = x t`` and
    ``mish'(x) = t + 4 x e (e + 1) / (n + 2)^2``; both equal torch's within float rounding.
    """
    e = torch.clamp(x, max=20.0).exp_()
    n = (e + 2.0).mul_(e)
    d = n + 2.0
    t = n.div_(d)  # n / (n + 2), in n's memory
    if not slope:
        return x * t, None
    return x * t, torch.addcmul(t, x, (e + 1.0).mul_(e).div_(d.mul_(d)), value=4.0)


class _ExpMish(torch.autograd.Function):
    """Mish with its derivative written out (:func:`mish_and_slope`), for training.

    torch's own Mish kernels (Softplus and Tanh per element, forward and backward) were a
    fifth of a Blocks training step on one CPU thread (benchmarks/RESULTS.md, issue 14);
    one exponential and a few products are cheaper.
    """

    @staticmethod
    def forward(ctx, x):
        y, slope = mish_and_slope(x, ctx.needs_input_grad[0])
        ctx.save_for_backward(slope)
        return y

    @staticmethod
    def backward(ctx, grad):
        (slope,) = ctx.saved_tensors
        return grad * slope


class Mish(nn.Module):
    """:func:`mish` as a module (no parameters: checkpoints of ``nn.Mish`` models load unchanged)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mish(x)


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    """Return Linear → Mish → Linear."""
    return nn.Sequential(nn.Linear(inputs, hidden), Mish(), nn.Linear(hidden, outputs))

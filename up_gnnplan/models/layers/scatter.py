"""Sums, maxima and softmaxes over the incoming edges of each node, for any trailing shape.

All are ``scatter_add`` / ``scatter_reduce`` along dimension 0, which torch's ONNX exporter
turns into ScatterElements with a reduction, with the number of nodes and edges dynamic.
(Not ``index_add``: with repeated indices the exporter writes it as a plain scatter, where the
last write wins, silently.) ScatterElements takes one index per element, which is slow for
wide rows: :func:`segment_sum` adds whole rows instead, exported as ScatterND with
``reduction="add"`` (one index per row).
"""

from __future__ import annotations

import torch


def _expanded(index: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return index.reshape((-1,) + (1,) * (like.dim() - 1)).expand_as(like)


def scatter_sum(values: torch.Tensor, index: torch.Tensor, num_nodes) -> torch.Tensor:
    """Return ``out[v] = sum of values[e] over the e with index[e] = v``: [E, ...] → [num_nodes, ...]."""
    out = values.new_zeros((num_nodes,) + tuple(values.shape[1:]))
    return out.scatter_add(0, _expanded(index, values), values)


def scatter_max(values: torch.Tensor, index: torch.Tensor, num_nodes) -> torch.Tensor:
    """Return the maximum of ``values`` per node; -1e30 for nodes without an entry."""
    out = values.new_full((num_nodes,) + tuple(values.shape[1:]), -1e30)
    return out.scatter_reduce(0, _expanded(index, values), values, reduce="amax", include_self=True)


def segment_softmax(scores: torch.Tensor, index: torch.Tensor, num_nodes) -> torch.Tensor:
    """Return the softmax of ``scores`` [E, ...] over the entries of each node (``index`` [E])."""
    shifted = torch.exp(scores - scatter_max(scores, index, num_nodes)[index])  # every exponent <= 0
    return shifted / scatter_sum(shifted, index, num_nodes)[index]


class _SegmentSum(torch.autograd.Function):
    """Row sums by segment: ``index_add`` in torch, ScatterND with ``reduction="add"`` in ONNX.

    The number of segments is read from a tensor (``like``'s first dimension), so that an
    export keeps it dynamic: an int argument would be traced as a constant.
    """

    @staticmethod
    def forward(ctx, values, index, like):
        ctx.save_for_backward(index)
        out = values.new_zeros((like.shape[0],) + tuple(values.shape[1:]))
        return out.index_add_(0, index, values)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return grad[index], None, None

    @staticmethod
    def symbolic(g, values, index, like):
        count = g.op("Shape", like, start_i=0, end_i=1)
        row = g.op("Shape", values, start_i=1)
        zeros = g.op("ConstantOfShape", g.op("Concat", count, row, axis_i=0), value_t=torch.tensor([0.0]))
        rows = g.op("Unsqueeze", index, g.op("Constant", value_t=torch.tensor([1], dtype=torch.int64)))
        return g.op("ScatterND", zeros, rows, values, reduction_s="add")


def segment_sum(values: torch.Tensor, index: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """Return ``out[b] = sum of values[i] over the i with index[i] = b``: [N, ...] → [len(like), ...], float32.

    The same as :func:`scatter_sum` with ``len(like)`` segments, but each row of ``values`` is
    added whole. In onnxruntime (one thread), the Performer attention's sums over 64 states of
    40 objects (9,377 nodes, rows of 3,552 values, 4 layers) took 0.12 s, against 3.7 s as
    ScatterElements.
    """
    return _SegmentSum.apply(values, index, like)

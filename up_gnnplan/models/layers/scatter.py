"""Sums, maxima and softmaxes over the incoming edges of each node, for any trailing shape.

All are ``scatter_add`` / ``scatter_reduce`` along dimension 0, which torch's ONNX exporter
turns into ScatterElements with a reduction, with the number of nodes and edges dynamic.
(Not ``index_add``: with repeated indices the exporter writes it as a plain scatter, where the
last write wins, silently.)
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

"""The triangular attention of the Edge Transformer (Bergen, O'Donnell & Bahdanau 2021)."""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.models.layers.init import glorot, uniform_bias

# Added to the attention scores of padding slots: exp() of it is exactly 0 in float32, and
# unlike -inf it keeps a row whose slots are all padding (a state without objects) finite.
PADDING_SCORE = -1e9


class TriangularAttention(nn.Module):
    """Multi-head triangular attention over the embeddings ``x(i, j)`` of ordered pairs
    (Bergen et al. 2021; Ståhlberg, Bonet & Geffner 2024, section 6), ``K`` heads
    of size ``C = d / K``::

        q(i, l) = W_q x(i, l)      k(l, j) = W_k x(l, j)
        a(i, l, j) = softmax over l of  q(i, l) · k(l, j) / sqrt(C)             (per head)
        v(i, l, j) = (V_1 x(i, l)) ⊙ (V_2 x(l, j))                              (per head)
        out(i, j)  = W_o [ ||_k  Σ_l a_k(i, l, j) v_k(i, l, j) ] + b_o

    The pair ``(i, j)`` hears of every third object ``l`` through the two pairs that make a
    triangle with it, ``(i, l)`` and ``(l, j)``: the 2-FWL-like step that lets the network
    compose binary relations. ``W_q, W_k, V_1, V_2`` have no bias, as in Bergen et al.'s equations.

    Cost: ``a`` has ``n³`` entries per head and state, and so does each channel of the values
    before the sum over ``l``: ``O(n³ d)`` time. The heads are computed one after the other, so
    the largest temporaries are one head's ``[B, n, n, n]`` weights and ``[B, n, n, C, n]``
    products, never ``[B, n, n, n, d]`` (8x less memory with 8 heads). Measured against all
    heads at once (one thread, d = 32, 8 heads), this is also faster: 1.5-3x at 8-16 objects and
    2-5x at 64-100 objects, in torch and in onnxruntime. Scores, weights and products keep ``l``
    as the last axis, where onnxruntime's Softmax and ReduceSum are fast (with ``l`` first a
    30-layer model took 4.0 s per 64-object state in onnxruntime, with ``l`` last 0.7 s).
    Training keeps every head's products for the backward pass, so there a layer does hold
    ``n³ d`` floats per state.

    Args:
        hidden: the embedding size ``d``.
        heads: the number of heads ``K``; ``d`` must be a multiple.

    Shapes: ``x`` [B, n, n, d] (``x[b, i, j]`` is pair ``(i, j)`` of state ``b``), ``padding``
    [B, n] (0 for an object slot, :data:`PADDING_SCORE` for padding; padding slots are never
    an ``l``) → [B, n, n, d].
    """

    def __init__(self, hidden: int, heads: int = 8):
        super().__init__()
        if heads < 1 or hidden % heads:
            raise ValueError(f"the embedding size {hidden} is not a multiple of the number of heads {heads}")
        self.hidden, self.heads, self.size = hidden, heads, hidden // heads
        # x @ W (not bias-free nn.Linear): see up_gnnplan.models.layers.init.
        self.project = glorot(hidden, 4 * hidden)  # [W_q | W_k | V_1 | V_2], each head's C columns together
        self.out = glorot(hidden, hidden)
        self.out_bias = uniform_bias(hidden, hidden)

    def forward(self, x: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        B, n = x.shape[0], x.shape[1]
        K, C = self.heads, self.size
        parts = (x @ self.project).reshape(B, n, n, 4, K, C)
        scale = C ** -0.5
        padding = padding.reshape(B, 1, 1, n)  # over l
        heads = []
        for k in range(K):
            q, key, first, second = parts[:, :, :, :, k].unbind(3)  # each [B, n, n, C], pair (row, column)
            # q(i, l) · k(l, j): one matrix product per l, then l moved last, where onnxruntime's
            # Softmax and ReduceSum are fast (over axis 1 they were 10x slower at n = 64).
            scores = torch.matmul(q.transpose(1, 2), key.transpose(2, 3)).permute(0, 2, 3, 1)  # [B, i, j, l]
            weights = torch.softmax(scores * scale + padding, dim=3)
            left = first.transpose(2, 3).unsqueeze(2)  # V_1 x(i, l) as [B, i, 1, C, l]
            right = second.permute(0, 2, 3, 1).unsqueeze(1)  # V_2 x(l, j) as [B, 1, j, C, l]
            heads.append((weights.unsqueeze(3) * (left * right)).sum(4))  # [B, i, j, C]
        return torch.cat(heads, dim=3) @ self.out + self.out_bias

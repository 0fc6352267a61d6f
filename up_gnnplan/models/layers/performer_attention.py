"""The linear self-attention of the Performer (Choromanski et al. 2021), within each graph of a batch."""

from __future__ import annotations

import math

import torch
from torch import nn

from up_gnnplan.models.layers.init import glorot, uniform_bias
from up_gnnplan.models.layers.scatter import scatter_max, segment_sum

# The smallest denominator: a node whose features all underflowed gets 0, not 0/0 (its weights
# are positive, so the output is a convex combination of the values and stays bounded anyway).
TINY = 1e-30


def orthogonal_features(size: int, count: int, generator: torch.Generator) -> torch.Tensor:
    """Return ``count`` orthogonal random features of dimension ``size`` as the columns of a [size, count] matrix.

    Blocks of ``size`` orthonormal directions, each rescaled to the length of a Gaussian vector,
    so that every feature is marginally ``N(0, I)`` (FAVOR+'s orthogonal random features,
    Choromanski et al. 2021, section 2.4). A block is the Q of a Gaussian matrix's QR with its
    columns' signs set by R's diagonal (Mezzadri 2007): LAPACK's Q alone is not uniformly
    distributed, and on 8 dimensions it left the kernel estimate 35% off at 65,536 features
    (6% with the signs set).
    """
    blocks = []
    for _ in range(math.ceil(count / size)):
        q, r = torch.linalg.qr(torch.randn((size, size), generator=generator, dtype=torch.float64))
        blocks.append((q * torch.sign(torch.diagonal(r))).T)
    directions = torch.cat(blocks)[:count]
    lengths = torch.randn((count, size), generator=generator, dtype=torch.float64).norm(dim=1, keepdim=True)
    return (directions * lengths).T.to(torch.float32).contiguous()


class PerformerAttention(nn.Module):
    """Multi-head self-attention among the nodes of each graph, with the softmax kernel
    approximated by FAVOR+ positive orthogonal random features (Choromanski et al. 2021,
    "Rethinking Attention with Performers"; Müller et al. 2024, "Performer"), ``K`` heads of
    size ``C = d / K`` and ``m`` features::

        q, k, v   = W_q h + b_q,  W_k h + b_k,  W_v h + b_v               (per head, size C)
        phi(x)    = exp(w_1 . x - |x|²/2, ..., w_m . x - |x|²/2)         x = q / C^(1/4) or k / C^(1/4)
        out(i)    = W_o [ ||_k  sum_j phi(q_i) . phi(k_j) v_j  /  sum_j phi(q_i) . phi(k_j) ] + b_o

    with ``j`` over the nodes of ``i``'s graph only: ``E[phi(q) . phi(k)] = exp(q . k / sqrt(C))``,
    so this estimates softmax attention over the graph in ``O(N m C)`` instead of ``O(N² C)``.
    The sums over ``j`` are row sums per graph (:func:`~up_gnnplan.models.layers.scatter.segment_sum`
    over ``node_graph``) of ``phi(k_j) ⊗ v_j`` and of ``phi(k_j)``: states of one batch never
    attend to each other, and no graph is padded to the largest, so the exported file takes any
    number of nodes and graphs. Each layer holds ``N K m C`` floats twice (the outer products
    and each node's graph's sums): 3,552 per node at ``d = 32``, one head.

    The features ``w`` (one set shared by the heads) are drawn once, from ``generator``, when
    the layer is made, and stored as the buffer ``projection``: the Performer redraws them
    during training, we keep them fixed so that a model computes one function, in training,
    in its checkpoint and in its exported file. Numerical stability: each query's
    exponents are shifted by their maximum and each graph's key exponents by theirs (per
    head); both shifts cancel between numerator and denominator.

    Args:
        hidden: the embedding size ``d``.
        heads: the number of heads ``K``; ``d`` must be a multiple.
        features: ``m``; default ``C ln C`` (at least ``C``), the order the Performer's analysis
            asks for (``m = Θ(C log C)``).
        generator: the source of the random features (default: seed 0).

    Shapes: ``h`` [N, d], ``node_graph`` int64 [N] (each node's graph), ``graph_index`` int64 [B]
    (the graphs) → [N, d].
    """

    def __init__(self, hidden: int, heads: int = 1, features: int | None = None,
                 generator: torch.Generator | None = None):
        super().__init__()
        if heads < 1 or hidden % heads:
            raise ValueError(f"the embedding size {hidden} is not a multiple of the number of heads {heads}")
        self.heads, self.size = heads, hidden // heads
        count = features or max(self.size, round(self.size * math.log(self.size)))
        generator = generator if generator is not None else torch.Generator().manual_seed(0)
        self.register_buffer("projection", orthogonal_features(self.size, count, generator))  # [C, m]
        # x @ W (not nn.Linear): see up_gnnplan.models.layers.init.
        self.qkv = glorot(hidden, 3 * hidden)  # [W_q | W_k | W_v]
        self.qkv_bias = uniform_bias(hidden, 3 * hidden)
        self.out = glorot(hidden, hidden)
        self.out_bias = uniform_bias(hidden, hidden)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Return the exponents ``w . x - |x|²/2`` of ``phi(x)`` for ``x`` [N, K, C] (scaled): [N, K, m]."""
        x = x * self.size ** -0.25
        return x @ self.projection - 0.5 * (x * x).sum(-1, keepdim=True)

    def forward(self, h: torch.Tensor, node_graph: torch.Tensor, graph_index: torch.Tensor) -> torch.Tensor:
        K, C = self.heads, self.size
        q, k, v = (h @ self.qkv + self.qkv_bias).reshape(-1, 3, K, C).unbind(1)  # each [N, K, C]
        query = self.features(q)
        query = torch.exp(query - query.amax(-1, keepdim=True))
        key = self.features(k)
        shift = scatter_max(key.amax(-1), node_graph, graph_index.shape[0])  # [B, K]
        key = torch.exp(key - shift[node_graph].unsqueeze(-1))  # [N, K, m]
        m = key.shape[-1]
        # Outer products and their use as contiguous batches of matrices, one per node and head
        # ([N K, m, C]): a training step of a layer on 32 states (323 nodes) took 21 ms, against
        # 39 ms with broadcasting; whole rows of m C summed per graph with segment_sum, not
        # scatter_sum (see its docstring).
        outer = torch.bmm(key.reshape(-1, m, 1), v.reshape(-1, 1, C)).reshape(-1, K, m, C)
        memory = segment_sum(outer, node_graph, graph_index)  # [B, K, m, C]
        normaliser = segment_sum(key, node_graph, graph_index)  # [B, K, m]
        mine = torch.index_select(memory, 0, node_graph).reshape(-1, m, C)  # each node's graph's
        numerator = torch.bmm(query.reshape(-1, 1, m), mine).reshape(-1, K, C)
        denominator = (query * normaliser[node_graph]).sum(-1, keepdim=True).clamp(min=TINY)  # [N, K, 1]
        return (numerator / denominator).reshape(-1, K * C) @ self.out + self.out_bias

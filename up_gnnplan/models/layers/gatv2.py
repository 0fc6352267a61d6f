"""The dynamic graph attention of Brody, Alon & Yahav (2022), GATv2, with edge labels in messages and scores."""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.models.layers.init import glorot, uniform_bias
from up_gnnplan.models.layers.scatter import scatter_sum, segment_softmax


class GATv2Layer(nn.Module):
    """GATv2 attention (Brody, Alon & Yahav 2022, "How Attentive are Graph Attention Networks?";
    Müller et al. 2024, eqs. 4-6), ``K`` heads of size ``C = outputs / K`` concatenated::

        m_k(u, v)   = W_k h(u) + E_k y_uv                                      for u in N(v) + {v}
        s_k(v, u)   = a_k . LeakyReLU_0.2(m_k(u, v) + U_k h(v))
        alpha_k     = softmax over u of s_k(v, u)
        h'(v)       = ReLU( ||_k sum_u alpha_k(v, u) m_k(u, v) + b )

    ``W_k h(u) + U_k h(v)`` is the paper's ``W [h(v) || h(u)]``, each with a bias. The edge label
    ``y_uv`` enters the message as well as the score: torch-geometric's ``GATv2Conv(edge_dim=L)``
    puts it in the score only, and then a label only reweighs messages that do not carry it,
    which at initialisation left ``on(a, b)`` and ``on(b, a)`` 1e-5 apart. The self-loop's label
    vector ``y_vv`` is the mean of the labels of ``v``'s incoming edges (0 without any), as
    torch-geometric's ``fill_value="mean"``. Without edge labels (``L = 0``) this layer equals
    ``ReLU(GATv2Conv(inputs, outputs / K, heads=K)(x, edge_index))`` on graphs without self-loops.

    Args:
        inputs: size of the input embeddings.
        outputs: size of the output embeddings, a multiple of ``heads``.
        heads: number of attention heads ``K``.
        edge_features: ``L``, the size of the edge label vectors (0: none).

    Shapes: ``h`` [N, inputs], ``edge_index`` int64 [2, E], ``edge_features`` [E, L] → [N, outputs].
    """

    def __init__(self, inputs: int, outputs: int, heads: int = 1, edge_features: int = 0):
        super().__init__()
        if heads < 1 or outputs % heads:
            raise ValueError(f"GATv2: {outputs} outputs do not split into {heads} heads; choose a divisor of the size")
        self.heads, self.channels = heads, outputs // heads
        self.source = nn.Linear(inputs, outputs)
        self.target = nn.Linear(inputs, outputs)
        self.edge_weight = glorot(edge_features, outputs) if edge_features else None  # E, stored [L, outputs]
        self.attention = nn.Parameter(torch.empty(1, heads, self.channels))
        nn.init.xavier_uniform_(self.attention)
        self.bias = uniform_bias(inputs, outputs)

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor, edge_features: torch.Tensor) -> torch.Tensor:
        num_nodes, K, C = h.shape[0], self.heads, self.channels
        loops = torch.arange(num_nodes, dtype=edge_index.dtype, device=h.device)
        sources = torch.cat([edge_index[0], loops])
        targets = torch.cat([edge_index[1], loops])
        messages = self.source(h).reshape(-1, K, C)[sources]
        if self.edge_weight is not None:
            count = scatter_sum(torch.ones_like(edge_index[1], dtype=h.dtype), edge_index[1], num_nodes)
            mean = scatter_sum(edge_features, edge_index[1], num_nodes) / count.clamp(min=1.0).unsqueeze(1)
            messages = messages + (torch.cat([edge_features, mean]) @ self.edge_weight).reshape(-1, K, C)
        pre = messages + self.target(h).reshape(-1, K, C)[targets]
        scores = (torch.nn.functional.leaky_relu(pre, 0.2) * self.attention).sum(-1)  # [E + N, K]
        alpha = segment_softmax(scores, targets, num_nodes)
        out = scatter_sum(alpha.unsqueeze(-1) * messages, targets, num_nodes)
        return torch.relu(out.reshape(-1, K * C) + self.bias)

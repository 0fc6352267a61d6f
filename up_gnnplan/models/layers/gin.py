"""The graph isomorphism network layer of Xu et al. (2019), with edge labels as in GINE."""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.models.layers.scatter import scatter_sum


class GINLayer(nn.Module):
    """Graph isomorphism layer (Xu, Hu, Leskovec & Jegelka 2019, "How Powerful are Graph Neural
    Networks?"; Müller et al. 2024, eq. 7) with edge labels as in GINE (Hu et al. 2020,
    "Strategies for Pre-training Graph Neural Networks")::

        h'(v) = MLP( (1 + eps) h(v) + sum_{u in N(v)} ReLU(h(u) + W_e y_uv + b_e) )

    with the MLP Linear, ReLU, Linear and ``eps`` a fixed number (0, as Müller et al.). This is
    ``torch_geometric.nn.GINEConv(MLP, edge_dim=L)``; without edge features (``L = 0``) the
    message is ``h(u)``, as ``GINConv``.

    Args:
        inputs: size of the input embeddings.
        outputs: size of the output embeddings (and of the MLP's hidden layer).
        edge_features: ``L``, the size of the edge label vectors (0: none).
        eps: the weight of a node's own embedding beyond 1.

    Shapes: ``h`` [N, inputs], ``edge_index`` int64 [2, E], ``edge_features`` [E, L] → [N, outputs].
    """

    def __init__(self, inputs: int, outputs: int, edge_features: int = 0, eps: float = 0.0):
        super().__init__()
        self.eps = float(eps)  # a number, not a buffer: the exporter may fold it away
        self.edge_linear = nn.Linear(edge_features, inputs) if edge_features else None
        self.mlp = nn.Sequential(nn.Linear(inputs, outputs), nn.ReLU(), nn.Linear(outputs, outputs))

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor, edge_features: torch.Tensor) -> torch.Tensor:
        sources, targets = edge_index[0], edge_index[1]
        messages = h[sources]
        if self.edge_linear is not None:
            messages = torch.relu(messages + self.edge_linear(edge_features))
        return self.mlp((1.0 + self.eps) * h + scatter_sum(messages, targets, h.shape[0]))

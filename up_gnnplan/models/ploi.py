"""A message-passing GNN over PLOI graphs (node features, multi-hot edge labels).

See :class:`PloiGNN` and :mod:`up_gnnplan.encodings.ploi`.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from up_gnnplan.models.layers.aggregation import AGGREGATIONS, Aggregator, TableAggregator
from up_gnnplan.models.layers.mlp import mlp


class PloiGNN(nn.Module):
    """Value function over PLOI graphs (Chen 2024, "Relational GNNs Cannot Learn C2 Features
    for Planning", section 4): a GNN reading node features and edge-label vectors, which can
    express C2 features over the unary and binary predicates of state and goal, unlike R-GNN.

    Update rule (every MLP is Linear, Mish, Linear; weights shared across layers by default)::

        h_0(v)  = W x(v) + b                                   (x: node features)
        m_e     = MLP_M([h(u), h(v), y_e])       for each edge e = (u → v), labels y_e
        agg(v)  = aggregate_{e = (u → v)} m_e   (smooth max by default; 0 without edges)
        h'(v)   = h(v) + MLP_U([h(v), agg(v)])
        V       = MLP_R(sum_{v in readout of the state} h_L(v))

    Shapes (N nodes, G states, R readout nodes, E edges, F features, L labels, k hidden):
    ``node_graph`` int64[N], ``readout_nodes`` int64[R], ``readout_graph`` int64[R],
    ``graph_index`` int64[G], ``node_features`` float32[N, F], ``edge_index`` int64[2, E]
    (row 0 source, row 1 target), ``edge_features`` float32[E, L] → values float32[G].

    Args:
        node_features: ``F``, from the encoding's ``schema()["node_features"]``.
        edge_labels: ``L``, from the encoding's ``schema()["edge_labels"]``.
        hidden: embedding size ``k``.
        layers: number of message-passing rounds.
        aggregation: ``smoothmax``, ``max``, ``sum`` or ``mean``.
        beta: sharpness of the smooth maximum.
        share_weights: one message/update MLP pair for every layer, or one per layer.
    """

    def __init__(self, node_features: int, edge_labels: int, hidden: int = 32, layers: int = 30,
                 aggregation: str = "smoothmax", beta: float = 8.0, share_weights: bool = True):
        super().__init__()
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
        self.node_features, self.edge_labels = int(node_features), int(edge_labels)
        self.hidden, self.layers, self.aggregation, self.beta = hidden, layers, aggregation, float(beta)
        self.share_weights = share_weights
        rounds = 1 if share_weights else layers
        with warnings.catch_warnings():  # F = 0 (only binary predicates): h_0 is the bias, here 0
            warnings.filterwarnings("ignore", "Initializing zero-element tensors")
            self.initial = nn.Linear(self.node_features, hidden)
        self.message_mlps = nn.ModuleList(
            mlp(2 * hidden + self.edge_labels, 2 * hidden, hidden) for _ in range(rounds)
        )
        self.update_mlps = nn.ModuleList(mlp(2 * hidden, 2 * hidden, hidden) for _ in range(rounds))
        self.readout = mlp(hidden, hidden, 1)

    def embed(self, node_graph: torch.Tensor, node_features: torch.Tensor, edge_index: torch.Tensor,
              edge_features: torch.Tensor) -> torch.Tensor:
        """Return the final node embeddings [N, hidden]."""
        num_nodes = node_graph.shape[0]
        h = self.initial(node_features)
        sources, targets = edge_index[0], edge_index[1]
        # The targets are the same in every layer: the index work is done once. onnxruntime
        # gets the gathering aggregator (no scatter per layer), torch the scattering one.
        how = TableAggregator if torch.onnx.is_in_onnx_export() else Aggregator
        aggregate = how(targets, num_nodes, self.hidden, self.aggregation, self.beta)
        for layer in range(self.layers):
            weights = 0 if self.share_weights else layer
            messages = self.message_mlps[weights](torch.cat([h[sources], h[targets], edge_features], dim=1))
            agg = aggregate(messages)
            h = h + self.update_mlps[weights](torch.cat([h, agg], dim=1))
        return h

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, node_features, edge_index, edge_features):
        h = self.embed(node_graph, node_features, edge_index, edge_features)
        # Sum per state. scatter_add rather than index_add: the same sum, but torch.onnx's
        # TorchScript exporter turns index_add with repeated indices into a plain scatter
        # (last write wins), silently changing the exported values.
        index = readout_graph.unsqueeze(1).expand(-1, self.hidden)
        pooled = h.new_zeros((graph_index.shape[0], self.hidden)).scatter_add(0, index, h[readout_nodes])
        return self.readout(pooled).squeeze(-1)

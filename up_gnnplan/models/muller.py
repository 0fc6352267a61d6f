"""The GNN baselines of Müller et al. (2024): GCN, GATv2 and GIN over object-atom graphs.

See :class:`MullerGNN`, the layers in :mod:`up_gnnplan.models.layers` and the graphs in
:mod:`up_gnnplan.encodings.muller`.
"""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.models.layers import GATv2Layer, GCNLayer, GINLayer

LAYERS = ("gcn", "gatv2", "gin")


class MullerGNN(nn.Module):
    """Value function of Müller, Sánchez, Hoffmann, Wolf & Gros (2024), "Comparing State-of-the-art
    Graph Neural Networks and Transformers for General Policy Learning": ``L`` layers of one
    off-the-shelf kind, each with its own weights, then a sum readout and an MLP::

        h_0(v)  = x(v)                                  (one-hot node kind and predicate)
        h_l(v)  = Dropout(layer_l(h_{l-1}, edges, edge labels))        l = 1..L
        h_G     = sum_v h_L(v)                      (gcn, gatv2)
        h_G     = ||_{l=0..L} sum_v h_l(v)          (gin: every layer's sum, concatenated, Xu et al.)
        V       = Linear(ReLU(Linear(h_G)))

    The sum is the readout the paper uses (the most expressive of sum, mean and max, Xu et al.).
    Dropout (the paper's grid: 0.1, 0.5) acts on the node embeddings after each layer in
    training only, so exported models do not contain it.

    Shapes (N nodes, G states, R readout nodes, E edges, F features, L labels):
    ``node_graph`` int64[N], ``readout_nodes`` int64[R], ``readout_graph`` int64[R],
    ``graph_index`` int64[G], ``node_features`` float32[N, F], ``edge_index`` int64[2, E],
    ``edge_features`` float32[E, L] → values float32[G].

    Args:
        layer: ``gcn``, ``gatv2`` or ``gin`` (:mod:`up_gnnplan.models.layers`).
        node_features: ``F``, from the encoding's ``schema()["node_features"]``.
        edge_labels: ``L``, from the encoding's ``schema()["edge_labels"]``.
        hidden: embedding size.
        layers: number of layers ``L`` (the paper's grid: 2, 4).
        dropout: dropout probability after each layer.
        heads: attention heads (gatv2 only; ``hidden`` must be a multiple).
    """

    def __init__(self, layer: str, node_features: int, edge_labels: int, hidden: int = 32, layers: int = 4,
                 dropout: float = 0.0, heads: int = 1):
        super().__init__()
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r}; choose one of {', '.join(LAYERS)}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout {dropout} is not a probability below 1")
        self.layer, self.hidden, self.num_layers = layer, int(hidden), int(layers)
        sizes = [int(node_features)] + [self.hidden] * self.num_layers

        def make(inputs, outputs):
            if layer == "gcn":
                return GCNLayer(inputs, outputs, edge_labels)
            if layer == "gatv2":
                return GATv2Layer(inputs, outputs, heads, edge_labels)
            return GINLayer(inputs, outputs, edge_labels)

        self.layers = nn.ModuleList(make(a, b) for a, b in zip(sizes, sizes[1:]))
        self.dropout = nn.Dropout(dropout)
        self.concatenate = layer == "gin"
        pooled = sum(sizes) if self.concatenate else sizes[-1]
        self.readout = nn.Sequential(nn.Linear(pooled, self.hidden), nn.ReLU(), nn.Linear(self.hidden, 1))

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, node_features, edge_index, edge_features):
        # The node count is read from node_graph, so that the exported graph keeps that input (the
        # runtime feeds every input of the encoding by name).
        h = node_features.reshape(node_graph.shape[0], node_features.shape[1])
        kept = [h]
        for layer in self.layers:
            h = self.dropout(layer(h, edge_index, edge_features))
            kept.append(h)
        h = torch.cat(kept, dim=1) if self.concatenate else h
        # Sum per state (scatter_add, see up_gnnplan.models.layers.scatter).
        index = readout_graph.unsqueeze(1).expand(-1, h.shape[1])
        pooled = h.new_zeros((graph_index.shape[0], h.shape[1])).scatter_add(0, index, h[readout_nodes])
        return self.readout(pooled).squeeze(-1)

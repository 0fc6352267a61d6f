"""The Transformers of Müller et al. (2024): Performer and GPS over object-atom graphs.

See :class:`GraphTransformer`, its layer in :mod:`up_gnnplan.models.layers.gps` and its
attention in :mod:`up_gnnplan.models.layers.performer_attention`; the graphs are those of
:mod:`up_gnnplan.encodings.muller`.
"""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.models.layers.gps import GPSLayer
from up_gnnplan.models.layers.init import glorot, uniform_bias
from up_gnnplan.models.layers.scatter import segment_sum


class GraphTransformer(nn.Module):
    """Value function of a Performer (``local=False``) or a GPS network (``local=True``) over the
    nodes of object-atom graphs (Müller, Sánchez, Hoffmann, Wolf & Gros 2024, "Comparing
    State-of-the-art Graph Neural Networks and Transformers for General Policy Learning")::

        h_0(v) = W_x x(v) + b  +  sum_{u -> v} W_{y_uv} x(u)            (tokens: see below)
        h_l    = GPSLayer_l(h_{l-1})                                      l = 1..L, own weights each
        V      = Linear(ReLU(Linear(sum_v h_L(v))))

    Each layer lets every node attend to every node of its own state (Performer attention) and,
    in GPS, also passes messages along the graph's edges (GCN); see :class:`GPSLayer`. The sum
    readout and its MLP are the paper's (and :class:`~up_gnnplan.models.muller.MullerGNN`'s).

    **Tokens, and why they read the edges once.** Müller et al. give their Performer the nodes'
    feature vectors as tokens and disregard the edges; their features hold the object names and
    each atom's argument names, which is how attention can relate an atom to its arguments.
    Our features are permutation-invariant (:mod:`up_gnnplan.encodings.muller`): without the
    edges every object token would be the same and a Performer would see only how many atoms of
    each predicate there are. So each token also gets a sum over its incoming edges of its
    neighbour's features, one projection ``W_y`` per edge label (argument position): an object
    token says in which argument position of which predicates (state and goal) it occurs, a
    structural encoding of the kind GPS adds to its tokens. The Performer reads the edges only
    there; how objects relate beyond one hop (which object is on which) it cannot see, where the
    paper's names would let it in principle. GPS gets the same tokens, so that the two differ
    only in GPS's local message passing.

    Dropout (the paper's grid: 0.1, 0.5) acts in training only, so exported files hold none.

    Shapes (N nodes, G states, R readout nodes, E edges, F features, L labels):
    ``node_graph`` int64[N], ``readout_nodes`` int64[R], ``readout_graph`` int64[R],
    ``graph_index`` int64[G], ``node_features`` float32[N, F], ``edge_index`` int64[2, E],
    ``edge_features`` float32[E, L] → values float32[G].

    Args:
        node_features: ``F``, from the encoding's ``schema()["node_features"]``.
        edge_labels: ``L``, from the encoding's ``schema()["edge_labels"]``.
        hidden: embedding size ``d``.
        layers: number of layers ``L`` (the paper's grid: 2, 4).
        dropout: dropout probability.
        heads: attention heads (the paper's grid: 1, 2); ``hidden`` must be a multiple.
        local: GPS (a GCN beside the attention in every layer) or the Performer (attention alone).
        seed: seeds the attention's random features, drawn once when the model is made.
    """

    def __init__(self, node_features: int, edge_labels: int, hidden: int = 32, layers: int = 4, dropout: float = 0.0,
                 heads: int = 1, local: bool = True, seed: int = 0):
        super().__init__()
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout {dropout} is not a probability below 1")
        self.hidden, self.num_layers, self.labels = int(hidden), int(layers), int(edge_labels)
        self.embedding = glorot(int(node_features), self.hidden)  # W_x
        self.embedding_bias = uniform_bias(int(node_features), self.hidden)
        self.neighbours = glorot(int(node_features), self.labels * self.hidden) if self.labels else None  # W_y, all y
        generator = torch.Generator().manual_seed(int(seed))
        self.layers = nn.ModuleList(GPSLayer(self.hidden, heads, self.labels, dropout, local, generator)
                                    for _ in range(self.num_layers))
        self.readout = nn.Sequential(nn.Linear(self.hidden, self.hidden), nn.ReLU(), nn.Linear(self.hidden, 1))

    def tokens(self, x: torch.Tensor, edge_index: torch.Tensor, edge_features: torch.Tensor) -> torch.Tensor:
        """Return ``h_0`` [N, d]: each node's features and its neighbours' by edge label, projected."""
        h = x @ self.embedding + self.embedding_bias
        if self.neighbours is None:
            return h
        sources, targets = edge_index[0], edge_index[1]
        by_label = (x[sources] @ self.neighbours).reshape(-1, self.labels, self.hidden)  # [E, L, d]
        messages = (edge_features.unsqueeze(-1) * by_label).sum(1)
        return h + segment_sum(messages, targets, x)

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, node_features, edge_index, edge_features):
        # The node count is read from node_graph, so that the exported graph keeps that input.
        x = node_features.reshape(node_graph.shape[0], node_features.shape[1])
        h = self.tokens(x, edge_index, edge_features)
        for layer in self.layers:
            h = layer(h, edge_index, edge_features, node_graph, graph_index)
        pooled = segment_sum(h[readout_nodes], readout_graph, graph_index)  # sum per state
        return self.readout(pooled).squeeze(-1)

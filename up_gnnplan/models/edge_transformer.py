"""The Edge Transformer value function (Ståhlberg, Bonet & Geffner 2024, section 6).

See :class:`EdgeTransformer`, its attention in :mod:`up_gnnplan.models.layers.triangular_attention`
and its input in :mod:`up_gnnplan.encodings.edge_transformer`.
"""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.models.layers.init import glorot, uniform_bias
from up_gnnplan.models.layers.norm import LayerNorm
from up_gnnplan.models.layers.triangular_attention import PADDING_SCORE, TriangularAttention
from up_gnnplan.models.layers.mlp import mlp


class EdgeTransformerLayer(nn.Module):
    """One Edge Transformer layer: triangular attention, then a feed-forward block, each with a
    residual connection followed by layer normalisation (post-norm, as Vaswani et al. 2017)::

        x  = LayerNorm(x + TriangularAttention(x))
        x  = LayerNorm(x + W_2 ReLU(W_1 x + b_1) + b_2)          (W_1: d → 4d, as Vaswani et al.)

    Args:
        hidden: the embedding size ``d``.
        heads: attention heads (``d`` must be a multiple).

    Shapes: ``x`` [B, n, n, d], ``padding`` [B, n] (see :class:`TriangularAttention`) → [B, n, n, d].
    """

    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.attention = TriangularAttention(hidden, heads)
        self.attention_norm = LayerNorm(hidden)
        self.w1, self.b1 = glorot(hidden, 4 * hidden), uniform_bias(hidden, 4 * hidden)
        self.w2, self.b2 = glorot(4 * hidden, hidden), uniform_bias(4 * hidden, hidden)
        self.feed_forward_norm = LayerNorm(hidden)

    def forward(self, x: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        x = self.attention_norm(x + self.attention(x, padding))
        return self.feed_forward_norm(x + torch.relu(x @ self.w1 + self.b1) @ self.w2 + self.b2)


class EdgeTransformer(nn.Module):
    """Value function of an Edge Transformer over the object pairs of a state (Ståhlberg, Bonet &
    Geffner 2024, "Learning General Policies for Classical Planning Domains: Getting Beyond C2",
    section 6; Bergen, O'Donnell & Bahdanau 2021, "Systematic Generalization with Edge
    Transformers")::

        x_0(o, o') = Σ_f E_f [pair (o, o') has feature f]  +  E_OBJ [o = o']
        x_l        = Layer(x_{l-1})                                    l = 1..L  (weights shared)
        V          = MLP( Σ_o x_L(o, o) )

    The features ``f`` are the state's and the goal's predicates (:mod:`up_gnnplan.encodings.edge_transformer`).
    As in the paper, the layers share their weights (30 layers, 8 heads) and the readout is
    R-GNN[t]'s: the pairs of identical objects summed, then Linear-Mish-Linear.

    **Where this differs from the paper.** ``E_OBJ`` marks the pairs ``⟨o, o⟩``: section 6 gives
    no such term, but the readout sums exactly those pairs, and an object without unary atoms
    starts with ``x_0(o, o) = 0`` like any unrelated pair; the paper's R-GNN[t] marks them with
    its ``OBJ`` atoms for this reason (end of section 4), and we do the same here. Nullary atoms
    are features of every pair (the paper's domains have none). Section 6 does not give the
    embedding size, the feed-forward width, the normalisation order or the attention scale; we
    take the Transformer's (Vaswani et al. 2017: feed-forward width 4d with ReLU, residual then
    layer norm, scores over sqrt(C)) around Bergen et al.'s triangular attention.

    Shapes (B states, n object slots per state, R readout pairs, K pair features set):
    ``node_graph`` int64 [B·n], ``readout_nodes`` int64 [R], ``readout_graph`` int64 [R],
    ``graph_index`` int64 [B], ``slot_mask`` float32 [B·n], ``pair_atoms`` int64 [K, 2]
    → values float32 [B]. Time and memory grow as ``n³`` per layer (see
    :data:`~up_gnnplan.encodings.edge_transformer.MAX_OBJECTS`).

    Args:
        features: the number of pair features (``schema()["pair_features"]``).
        hidden: embedding size ``d``.
        layers: number of layers ``L``.
        heads: attention heads (``hidden`` must be a multiple).
        share_weights: one layer's weights for all ``L`` (paper) or one set per layer.
    """

    def __init__(self, features: int, hidden: int = 32, layers: int = 30, heads: int = 8, share_weights: bool = True):
        super().__init__()
        self.hidden, self.num_layers, self.share_weights = int(hidden), int(layers), bool(share_weights)
        self.features = nn.Parameter(torch.randn(int(features), self.hidden))  # E_p, E_{p_g}, one row each
        self.same_object = nn.Parameter(torch.randn(self.hidden))  # E_OBJ
        rounds = 1 if self.share_weights else self.num_layers
        self.layers = nn.ModuleList(EdgeTransformerLayer(self.hidden, heads) for _ in range(rounds))
        self.readout = mlp(self.hidden, self.hidden, 1)

    def embed(self, node_graph, graph_index, slot_mask, pair_atoms) -> torch.Tensor:
        """Return the final pair embeddings [B, n, n, d] (padding slots hold meaningless values)."""
        B, d = graph_index.shape[0], self.hidden
        # Slots per state; in an export B is a traced size (never 0 there), in eager an int.
        n = node_graph.shape[0] // (max(B, 1) if isinstance(B, int) else B)
        slots = pair_atoms[:, 0].unsqueeze(1).expand(-1, d)
        x = torch.zeros((B * n * n, d), dtype=torch.float32, device=node_graph.device)
        x = x.scatter_add(0, slots, self.features[pair_atoms[:, 1]]).reshape(B, n, n, d)
        index = torch.arange(n, device=node_graph.device)
        diagonal = (index.unsqueeze(1) == index.unsqueeze(0)).to(torch.float32).unsqueeze(2)  # [n, n, 1]
        x = x + diagonal * self.same_object
        padding = (1.0 - slot_mask.reshape(B, n)) * PADDING_SCORE
        for layer in range(self.num_layers):
            x = self.layers[0 if self.share_weights else layer](x, padding)
        return x

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, slot_mask, pair_atoms):
        x = self.embed(node_graph, graph_index, slot_mask, pair_atoms)
        h = x.reshape(-1, self.hidden)[readout_nodes]
        # scatter_add, not index_add (see up_gnnplan.models.layers.scatter).
        index = readout_graph.unsqueeze(1).expand(-1, self.hidden)
        pooled = h.new_zeros((graph_index.shape[0], self.hidden)).scatter_add(0, index, h)
        return self.readout(pooled).squeeze(-1)

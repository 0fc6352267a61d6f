"""One layer of the GPS graph Transformer (Rampášek et al. 2022): local message passing and global attention."""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.models.layers.gcn import GCNLayer
from up_gnnplan.models.layers.init import glorot, uniform_bias
from up_gnnplan.models.layers.norm import LayerNorm
from up_gnnplan.models.layers.performer_attention import PerformerAttention


class GPSLayer(nn.Module):
    """A GPS layer (Rampášek, Galkin, Dwivedi, Luu, Wolf & Beaini 2022, "Recipe for a General,
    Powerful, Scalable Graph Transformer", eqs. 2-4; Müller et al. 2024, "GPS") with a GCN as the
    local model and Performer attention as the global one::

        local  = Norm(h + Dropout(GCN(h, edges, edge labels)))
        global = Norm(h + Dropout(Attention(h)))            (within each graph, see PerformerAttention)
        h'     = Norm(x + Dropout(W_2 Dropout(ReLU(W_1 x + b_1)) + b_2))     x = local + global,  W_1: d → 2d

    The feed-forward width 2d, the dropout places and the post-norm order are GPS's; its norm
    is layer normalisation here (GPS's default is batch norm, which would make a state's value
    depend on the others in its training batch). The GCN is :class:`GCNLayer`, with its ReLU
    and edge labels. Without the local model (``local=False``) this is a Transformer encoder
    layer (Vaswani et al. 2017, post-norm, as Müller et al. describe it):
    ``h' = Norm(x + FFN(x))`` with ``x = Norm(h + Dropout(Attention(h)))``.

    Args:
        hidden: the embedding size ``d``.
        heads: attention heads (``d`` must be a multiple).
        edge_labels: ``L``, the size of the edge label vectors (for the GCN).
        dropout: dropout probability (training only).
        local: with the GCN (GPS) or attention alone (Performer).
        generator: the source of the attention's random features.

    Shapes: ``h`` [N, d], ``edge_index`` int64 [2, E], ``edge_features`` [E, L], ``node_graph``
    int64 [N], ``graph_index`` int64 [B] → [N, d].
    """

    def __init__(self, hidden: int, heads: int, edge_labels: int, dropout: float = 0.0, local: bool = True,
                 generator: torch.Generator | None = None):
        super().__init__()
        self.local = GCNLayer(hidden, hidden, edge_labels) if local else None
        self.local_norm = LayerNorm(hidden) if local else None
        self.attention = PerformerAttention(hidden, heads, generator=generator)
        self.attention_norm = LayerNorm(hidden)
        self.w1, self.b1 = glorot(hidden, 2 * hidden), uniform_bias(hidden, 2 * hidden)
        self.w2, self.b2 = glorot(2 * hidden, hidden), uniform_bias(2 * hidden, hidden)
        self.feed_forward_norm = LayerNorm(hidden)
        self.dropout = nn.Dropout(dropout)

    def forward(self, h, edge_index, edge_features, node_graph, graph_index) -> torch.Tensor:
        x = self.attention_norm(h + self.dropout(self.attention(h, node_graph, graph_index)))
        if self.local is not None:
            x = x + self.local_norm(h + self.dropout(self.local(h, edge_index, edge_features)))
        hidden = self.dropout(torch.relu(x @ self.w1 + self.b1))
        return self.feed_forward_norm(x + self.dropout(hidden @ self.w2 + self.b2))

"""Heads on object embeddings: the state value, and scores of ground actions (action decoders).

An action decoder is one MLP per action schema, as in Zhang & Geißer's policy network: a
ground action ``a(o1..ok)`` of state ``s`` is scored from ``[pool(s), f(o1), ..., f(ok)]``, the
state's pooled embedding and its arguments' embeddings. The R-GNN's pooled embedding for the
decoders is the *mean* of its object embeddings (the value readout keeps the paper's sum): the
scores of one state are compared with each other, and a mean keeps the decoders' input on the
same scale on instances much larger than the training ones. One forward pass embeds a state once and scores all its
applicable actions, where a value policy needs one graph per successor.

What a score means is the head's *kind*:

- ``logits``: trained with cross-entropy towards the optimal actions; higher is better;
- ``q``: ``c(a) + V(s')`` regressed on the datasets' V* labels; lower is better.

:func:`preferences` turns either into "higher is better" for the searches.

Shapes: ``h`` [N, d] node embeddings, ``pooled`` [G, d], ``action_k`` [A_k, 1 + a_k] (state,
argument nodes; see :mod:`up_gnnplan.encodings.actions`) → scores [sum_k A_k], schema by schema.
"""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.encodings.packing import packed_names
from up_gnnplan.models import ACTION_KINDS
from up_gnnplan.models.layers.mlp import mlp

class ActionDecoders(nn.Module):
    """One Linear-Mish-Linear per action schema (see the module docstring).

    Args:
        arities: the arity of each action schema, in the action signature's order.
        hidden: the embedding size ``d``.
    """

    def __init__(self, arities: list[int], hidden: int):
        super().__init__()
        self.arities = [int(a) for a in arities]
        self.decoders = nn.ModuleList(mlp((1 + a) * hidden, 2 * hidden, 1) for a in self.arities)

    def forward(self, h: torch.Tensor, pooled: torch.Tensor, rows: list[torch.Tensor]) -> torch.Tensor:
        parts = []
        for decoder, arity, row in zip(self.decoders, self.arities, rows):
            x = pooled[row[:, 0]]
            if arity:
                x = torch.cat([x, h[row[:, 1:]].flatten(1)], dim=1)
            parts.append(decoder(x).squeeze(-1))
        return torch.cat(parts) if parts else h.new_zeros((0,))  # a domain without actions scores nothing


def preferences(scores, kind: str):
    """Return scores as preferences (higher is better): logits as they are, Q-values negated."""
    return scores if kind == "logits" else -scores


class RGNNWithHeads(nn.Module):
    """An R-GNN with an action head (and optionally its value head) on its object embeddings.

    ``forward(node_graph, readout_nodes, readout_graph, graph_index, *relations, *actions)``
    returns the tuple named by ``outputs``: ``("scores",)`` or ``("value", "scores")``.

    Args:
        gnn: the :class:`~up_gnnplan.models.rgnn.RelationalGNN` whose embeddings the heads read.
        actions: the domain's :class:`~up_gnnplan.states.actions.ActionSignature`.
        kind: ``logits`` or ``q`` (see the module docstring).
        value: whether the GNN's value readout is a head of the model too.
    """

    def __init__(self, gnn, actions, kind: str, value: bool):
        super().__init__()
        if kind not in ACTION_KINDS:
            raise ValueError(f"unknown action head kind {kind!r}; choose one of {', '.join(ACTION_KINDS)}")
        self.gnn, self.kind, self.value = gnn, kind, value
        self.actions = actions  # the domain's ActionSignature: the schemas the decoders score
        self.decoders = ActionDecoders(actions.arities, gnn.hidden)
        self.num_relations = len(gnn.arities)
        self.outputs = ("value", "scores") if value else ("scores",)

    # The exported file takes the relations packed per arity, as the R-GNN's.
    export_layout = "packed"

    def exported(self, encoding) -> nn.Module:
        """Return the module the exporter writes: these heads on the packed layout."""
        return PackedRGNNWithHeads(self, len(packed_names(encoding.relations)))

    def heads(self, h, readout_nodes, readout_graph, graph_index, actions):
        pooled = self.gnn.pool(h, readout_nodes, readout_graph, graph_index)
        count = h.new_zeros((graph_index.shape[0], 1)).scatter_add(
            0, readout_graph.unsqueeze(1), h.new_ones((readout_graph.shape[0], 1)))
        scores = self.decoders(h, pooled / count.clamp(min=1.0), list(actions))
        if self.value:
            return self.gnn.readout(pooled).squeeze(-1), scores
        return (scores,)

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, *inputs):
        relations, actions = inputs[: self.num_relations], inputs[self.num_relations:]
        h = self.gnn.embed(node_graph, list(relations))
        return self.heads(h, readout_nodes, readout_graph, graph_index, actions)


class PackedRGNNWithHeads(nn.Module):
    """:class:`RGNNWithHeads` on the packed layout (``arity_a``, ``active_a`` per arity); what gets exported."""

    def __init__(self, model: RGNNWithHeads, packed_inputs: int):
        super().__init__()
        self.model, self.packed_inputs = model, packed_inputs
        self.outputs, self.actions = model.outputs, model.actions

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, *inputs):
        packed, actions = inputs[: self.packed_inputs], inputs[self.packed_inputs:]
        h = self.model.gnn.embed_packed(node_graph, list(packed[0::2]), list(packed[1::2]))
        return self.model.heads(h, readout_nodes, readout_graph, graph_index, actions)

"""The relational GNN (R-GNN) of Ståhlberg, Bonet & Geffner (2024), section 3.4, Algorithm 1.

Nodes start from zero embeddings ``f_0(v) = 0``. In each of ``L`` layers every atom
``q = p(v1..vm)`` sends one message to each of its nodes, ``m_{q,vj} = [MLP_p(f(v1),..,f(vm))]_j``;
each node aggregates its messages (smooth maximum by default) and updates residually,
``f'(v) = f(v) + MLP_U([f(v), agg])``. Every MLP is Linear, Mish, Linear. Weights are shared
across layers by default. The value is ``V = MLP(sum_{v in readout} f_L(v))``.

The same network serves R-GNN[t]: that encoding only changes the nodes (object pairs) and the
relations (``A_t(S)``), see :mod:`up_gnnplan.encodings.rgnn_t`.

Shapes (N nodes, G states, R readout nodes, relation r with k_r atoms of arity a_r):
``node_graph`` [N], ``readout_nodes`` [R], ``readout_graph`` [R], ``graph_index`` [G],
``rel_r`` [k_r, a_r] (int64) → values [G] (float32).
"""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.encodings.packing import row_width
from up_gnnplan.models.layers.aggregation import AGGREGATIONS, Aggregator, TableAggregator  # noqa: F401  (re-exported)
from up_gnnplan.models.layers.mlp import Mish, mish, mlp  # noqa: F401  (re-exported)
from up_gnnplan.models.layers.packed_layers import PackedLayers


class RelationMLPs(nn.Module):
    """One Linear-Mish-Linear per relation, stored stacked per arity.

    Two evaluation paths with the same weights: ``packed`` runs the relations of an arity on
    their own rows of atoms in one batched product (training, torch inference and the packed
    export); ``single`` runs one relation on its atoms (the per-relation export).
    """

    def __init__(self, arities: list[int], hidden: int):
        super().__init__()
        self.arities = arities
        self.groups = sorted(set(arities))
        # position of each relation inside its arity group
        self.slot = [sum(1 for b in arities[:r] if b == a) for r, a in enumerate(arities)]
        self.weights = nn.ParameterList()
        for a in self.groups:
            count, width = sum(1 for b in arities if b == a), a * hidden
            bound = 1.0 / width**0.5  # nn.Linear's default initialisation
            for shape in ((count, width, width), (count, width), (count, width, width), (count, width)):
                self.weights.append(nn.Parameter(torch.empty(shape).uniform_(-bound, bound)))

    def params(self, arity: int):
        g = self.groups.index(arity)
        return [self.weights[4 * g + i] for i in range(4)]

    def single(self, x: torch.Tensor, relation: int) -> torch.Tensor:
        """Apply relation ``relation``'s MLP to ``x`` [k, a*d]."""
        w1, b1, w2, b2 = self.params(self.arities[relation])
        slot = self.slot[relation]
        return mish(x @ w1[slot] + b1[slot]) @ w2[slot] + b2[slot]

    def packed(self, x: torch.Tensor, weights) -> torch.Tensor:
        """Apply stacked relation MLPs to their own rows: ``x`` [R', M, a*d] → [R', M, a*d].

        ``weights`` are this arity's (w1, b1, w2, b2) with the R' relations selected.
        """
        w1, b1, w2, b2 = weights
        return mish(x @ w1 + b1.unsqueeze(1)) @ w2 + b2.unsqueeze(1)


class RelationalGNN(nn.Module):
    """R-GNN value function over relational hyperedges.

    Args:
        relations: ``[(name, arity), ...]`` in the encoding's order (one MLP each).
        hidden: embedding size ``k``.
        layers: number of message-passing rounds ``L``.
        aggregation: ``smoothmax`` (paper), ``max``, ``sum`` or ``mean``.
        beta: sharpness of the smooth maximum.
        share_weights: one set of MLPs for every layer (paper) or one per layer.
    """

    def __init__(self, relations, hidden: int = 32, layers: int = 30, aggregation: str = "smoothmax",
                 beta: float = 8.0, share_weights: bool = True):
        super().__init__()
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
        self.arities = [int(a) for _, a in relations]
        self.hidden, self.layers, self.aggregation, self.beta = hidden, layers, aggregation, float(beta)
        self.share_weights = share_weights
        self.per_relation = False  # True: always take the per-relation (export) path
        self.table_aggregation = False  # True: TableAggregator in embed_packed outside export too
        self.written_out = True  # False: embed_packed by autograd even where PackedLayers applies (tests)
        rounds = 1 if share_weights else layers
        self.relation_mlps = nn.ModuleList(RelationMLPs(self.arities, hidden) for _ in range(rounds))
        self.update_mlps = nn.ModuleList(mlp(2 * hidden, 2 * hidden, hidden) for _ in range(rounds))
        self.readout = mlp(hidden, hidden, 1)

    # The exported file takes the relations packed per arity (up_gnnplan.encodings.packing).
    export_layout = "packed"

    def exported(self, encoding) -> nn.Module:
        """Return the module the exporter writes: this network on the packed layout."""
        return PackedRGNN(self)

    def embed(self, node_graph: torch.Tensor, relations: list[torch.Tensor]) -> torch.Tensor:
        """Return the final node embeddings [N, hidden]."""
        num_nodes = node_graph.shape[0]
        if not (self.per_relation or torch.jit.is_tracing() or torch.onnx.is_in_onnx_export()):
            # Training and torch inference: the packed layout, built here once per forward pass.
            return self.embed_packed(node_graph, *self.pack(node_graph, relations))
        # Export: every relation is an input whose size varies, so no branch on emptiness.
        d = self.hidden
        h = torch.zeros((num_nodes, d), dtype=torch.float32, device=node_graph.device)
        order = list(range(len(relations)))
        targets = torch.cat([relations[r].reshape(-1) for r in order])
        how = TableAggregator if self.table_aggregation else Aggregator
        aggregator = how(targets, num_nodes, d, self.aggregation, self.beta)
        for layer in range(self.layers):
            nets = self.relation_mlps[0 if self.share_weights else layer]
            messages = torch.cat([nets.single(h[relations[r]].flatten(1), r).reshape(-1, d) for r in order])
            agg = aggregator(messages)
            h = h + self.update_mlps[0 if self.share_weights else layer](torch.cat([h, agg], dim=1))
        return h

    def pack(self, node_graph: torch.Tensor, relations: list[torch.Tensor]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Return the packed layout (``groups``, ``active``) of the per-relation atoms ``relations``.

        The same layout as :func:`up_gnnplan.encodings.packing.pack` builds in numpy (rows split
        by :func:`~up_gnnplan.encodings.packing.row_width`), built with a few tensor operations.
        In training, one batched product per arity and layer (``embed_packed``) was faster than
        running every relation of an arity on all its atoms and keeping each atom's own (the
        training path before issue 14), which multiplied the arithmetic by the relation count.
        """
        nets, num_nodes = self.relation_mlps[0], node_graph.shape[0]
        groups, active = [], []
        for a in nets.groups:
            members = [r for r, b in enumerate(self.arities) if b == a and relations[r].shape[0] > 0]
            sizes = [relations[r].shape[0] for r in members]
            width = row_width(sizes)
            parts, slots = [], []
            for r, k in zip(members, sizes):
                rows = -(-k // width)
                parts.append(relations[r])
                if rows * width > k:
                    parts.append(relations[r].new_full((rows * width - k, a), num_nodes))
                slots += [nets.slot[r]] * rows
            if not parts:  # no atoms of this arity: one padding row, as in the numpy layout
                parts, slots = [node_graph.new_full((1, a), num_nodes)], [0]
            groups.append(torch.cat(parts).view(len(slots), width, a))
            active.append(torch.tensor(slots, dtype=torch.long, device=node_graph.device))
        return groups, active

    def embed_packed(self, node_graph: torch.Tensor, groups: list[torch.Tensor], active: list[torch.Tensor]) -> torch.Tensor:
        """:meth:`embed` on the packed layout (:mod:`up_gnnplan.encodings.packing`).

        ``groups[i]`` [R', M, a] holds the atoms of the relations ``active[i]`` [R'] of the
        i-th arity, padded with the index N of a dummy node: it has a zero embedding and its
        messages are dropped, so the result equals :meth:`embed`'s. A relation may fill several
        rows (its index repeated in ``active[i]``). Exported graphs aggregate with
        :class:`TableAggregator`, torch with the scatter of :class:`Aggregator`; with smooth
        max in float32, torch runs all layers as one :class:`PackedLayers` node (the backward
        pass written out: 2.3x the training rate, benchmarks/RESULTS.md, issue 14).
        """
        num_nodes, d = node_graph.shape[0], self.hidden
        arities = self.relation_mlps[0].groups
        # The weights of the relations present, selected once (once per layer without sharing).
        selected = [[[w.index_select(0, act) for w in nets.params(a)] for a, act in zip(arities, active)]
                    for nets in self.relation_mlps]
        if self._written_out():
            weights = [t for rel, upd in zip(selected, self.update_mlps)
                       for t in [w for ws in rel for w in ws] + [upd[0].weight, upd[0].bias, upd[2].weight, upd[2].bias]]
            shape = (num_nodes, d, self.layers, self.beta, self.share_weights)
            return PackedLayers.apply(shape, *groups, *weights)
        h = torch.zeros((num_nodes, d), dtype=torch.float32, device=node_graph.device)
        pad = torch.zeros((1, d), dtype=torch.float32, device=node_graph.device)  # the dummy node (also with no objects)
        targets = torch.cat([g.reshape(-1) for g in groups])
        if self.table_aggregation or torch.onnx.is_in_onnx_export():
            aggregator = TableAggregator(targets, num_nodes, d, self.aggregation, self.beta)  # leaves the dummy out
        else:
            scatter = Aggregator(targets, num_nodes + 1, d, self.aggregation, self.beta)
            aggregator = lambda m: scatter(torch.cat(m))[:num_nodes]  # noqa: E731
        for layer in range(self.layers):
            k = 0 if self.share_weights else layer
            padded = torch.cat([h, pad])
            messages = [self.relation_mlps[k].packed(padded[g].reshape(g.shape[0], -1, a * d), w).reshape(-1, d)
                        for a, g, w in zip(arities, groups, selected[k])]
            agg = aggregator(messages)
            h = h + self.update_mlps[k](torch.cat([h, agg], dim=1))
        return h

    def _written_out(self) -> bool:
        """Whether :meth:`embed_packed` runs :class:`PackedLayers` (smooth max in float32 torch, not exporting)."""
        return (self.aggregation == "smoothmax" and not self.table_aggregation and self.written_out
                and not torch.onnx.is_in_onnx_export() and not torch.jit.is_tracing()
                and not torch.is_autocast_enabled("cpu") and not torch.is_autocast_enabled("cuda")
                and self.readout[0].weight.dtype == torch.float32)

    def pool(self, h, readout_nodes, readout_graph, graph_index):
        """Return the sum of each state's readout-node embeddings [G, hidden]."""
        # scatter_add, not index_add: torch's ONNX exporter turns index_add with repeated
        # indices into a last-write-wins scatter, which silently breaks the sum.
        index = readout_graph.unsqueeze(1).expand(-1, self.hidden)
        return h.new_zeros((graph_index.shape[0], self.hidden)).scatter_add(0, index, h[readout_nodes])

    def readout_values(self, h, readout_nodes, readout_graph, graph_index):
        return self.readout(self.pool(h, readout_nodes, readout_graph, graph_index)).squeeze(-1)

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, *relations):
        h = self.embed(node_graph, list(relations))
        return self.readout_values(h, readout_nodes, readout_graph, graph_index)


class PackedRGNN(nn.Module):
    """The same network taking the packed layout (``arity_a``, ``active_a`` inputs per arity); what gets exported."""

    def __init__(self, model: RelationalGNN):
        super().__init__()
        self.model = model

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, *packed):
        h = self.model.embed_packed(node_graph, list(packed[0::2]), list(packed[1::2]))
        return self.model.readout_values(h, readout_nodes, readout_graph, graph_index)

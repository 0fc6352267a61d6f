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

from up_gnnplan.models.layers.aggregation import AGGREGATIONS, Aggregator, TableAggregator  # noqa: F401  (re-exported)
from up_gnnplan.models.layers.mlp import Mish, mish, mlp  # noqa: F401  (re-exported)


class RelationMLPs(nn.Module):
    """One Linear-Mish-Linear per relation, stored stacked per arity.

    Two evaluation paths with the same weights: ``fused`` runs every relation of an arity on
    all atoms of that arity in two matrix products and keeps each atom's own relation's rows
    (more arithmetic, far fewer operations: the fast path for training batches of small
    states); the per-relation path runs each relation on its own atoms (the path exported to
    ONNX, where per-operation overhead is small and arithmetic should not be multiplied).
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

    def fused(self, x: torch.Tensor, rid: torch.Tensor, arity: int, active: torch.Tensor) -> torch.Tensor:
        """Apply each atom's relation MLP to ``x`` [K, a*d].

        ``active`` [R'] lists the slots (in the arity group) of the relations that have atoms in
        this batch, and ``rid`` [K] indexes into ``active``: only those relations are computed.
        """
        w1, b1, w2, b2 = (w.index_select(0, active) for w in self.params(arity))
        count, width, _ = w1.shape
        pick = rid.view(-1, 1, 1).expand(-1, 1, width)
        y = (x @ w1.permute(1, 0, 2).reshape(width, count * width)).view(-1, count, width)
        y = torch.nn.functional.mish(y.gather(1, pick).squeeze(1) + b1[rid])
        z = (y @ w2.permute(1, 0, 2).reshape(width, count * width)).view(-1, count, width)
        return z.gather(1, pick).squeeze(1) + b2[rid]

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
        num_nodes, d = node_graph.shape[0], self.hidden
        h = torch.zeros((num_nodes, d), dtype=torch.float32, device=node_graph.device)
        if self.per_relation or torch.jit.is_tracing() or torch.onnx.is_in_onnx_export():
            # Export: every relation is an input whose size varies, so no branch on emptiness.
            order = list(range(len(relations)))
            targets = torch.cat([relations[r].reshape(-1) for r in order])
            step = lambda h, nets: torch.cat(  # noqa: E731
                [nets.single(h[relations[r]].flatten(1), r).reshape(-1, d) for r in order]
            )
        else:
            # Training and torch inference: concatenate the atoms of each arity once.
            groups = []
            for a in self.relation_mlps[0].groups:
                members = [r for r, b in enumerate(self.arities) if b == a and relations[r].shape[0] > 0]
                if members:
                    atoms = torch.cat([relations[r] for r in members])
                    # Atom i of relation members[j] gets local index j; ``active`` maps j to its slot.
                    local = torch.cat([torch.full((relations[r].shape[0],), j, dtype=torch.long, device=atoms.device)
                                       for j, r in enumerate(members)])
                    active = torch.tensor([self.relation_mlps[0].slot[r] for r in members], dtype=torch.long,
                                          device=atoms.device)
                    groups.append((a, atoms, local, active))
            targets = torch.cat([atoms.reshape(-1) for _, atoms, _, _ in groups]) if groups else node_graph[:0]
            step = lambda h, nets: torch.cat(  # noqa: E731
                [nets.fused(h[atoms].flatten(1), local, a, active).reshape(-1, d) for a, atoms, local, active in groups]
            ) if groups else h[:0]
        how = TableAggregator if self.table_aggregation else Aggregator
        aggregator = how(targets, num_nodes, d, self.aggregation, self.beta)
        for layer in range(self.layers):
            weights = 0 if self.share_weights else layer
            agg = aggregator(step(h, self.relation_mlps[weights]))
            h = h + self.update_mlps[weights](torch.cat([h, agg], dim=1))
        return h

    def embed_packed(self, node_graph: torch.Tensor, groups: list[torch.Tensor], active: list[torch.Tensor]) -> torch.Tensor:
        """:meth:`embed` on the packed layout (:mod:`up_gnnplan.encodings.packing`).

        ``groups[i]`` [R', M, a] holds the atoms of the relations ``active[i]`` [R'] of the
        i-th arity, padded with the index N of a dummy node: it has a zero embedding and its
        messages are dropped, so the result equals :meth:`embed`'s. A relation may fill several
        rows (its index repeated in ``active[i]``). Exported graphs aggregate with
        :class:`TableAggregator`, torch with the scatter of :class:`Aggregator`.
        """
        num_nodes, d = node_graph.shape[0], self.hidden
        h = torch.zeros((num_nodes, d), dtype=torch.float32, device=node_graph.device)
        pad = torch.zeros((1, d), dtype=torch.float32, device=node_graph.device)  # the dummy node (also with no objects)
        arities = self.relation_mlps[0].groups
        targets = torch.cat([g.reshape(-1) for g in groups])
        if self.table_aggregation or torch.onnx.is_in_onnx_export():
            aggregator = TableAggregator(targets, num_nodes, d, self.aggregation, self.beta)  # leaves the dummy out
        else:
            scatter = Aggregator(targets, num_nodes + 1, d, self.aggregation, self.beta)
            aggregator = lambda m: scatter(torch.cat(m))[:num_nodes]  # noqa: E731
        # The weights of the relations present, selected once (once per layer without sharing).
        selected = [[[w.index_select(0, act) for w in nets.params(a)] for a, act in zip(arities, active)]
                    for nets in self.relation_mlps]
        for layer in range(self.layers):
            k = 0 if self.share_weights else layer
            padded = torch.cat([h, pad])
            messages = [self.relation_mlps[k].packed(padded[g].reshape(g.shape[0], -1, a * d), w).reshape(-1, d)
                        for a, g, w in zip(arities, groups, selected[k])]
            agg = aggregator(messages)
            h = h + self.update_mlps[k](torch.cat([h, agg], dim=1))
        return h

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

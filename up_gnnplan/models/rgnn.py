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

AGGREGATIONS = ("smoothmax", "max", "sum", "mean")


def mish(x: torch.Tensor) -> torch.Tensor:
    """Mish, ``x tanh(softplus(x))``; exported as ``x n / (n + 2)`` with ``n = e^x (e^x + 2)``.

    The two are equal (``tanh(log(1 + e^x)) = n / (n + 2)``); onnxruntime runs torch's export
    of Mish (Softplus, Tanh, Mul) 2.6x slower than the exponential form on this machine
    (benchmarks/HISTORY.md), and Softplus was 40% of the time of a batch of 64 states.
    Arguments are capped at 20 before the exponential (there the ratio is 1 to float precision).
    """
    if torch.onnx.is_in_onnx_export():
        e = torch.exp(torch.clamp(x, max=20.0))
        n = e * (e + 2.0)
        return x * n / (n + 2.0)
    return torch.nn.functional.mish(x)


class Mish(nn.Module):
    """:func:`mish` as a module (no parameters: checkpoints of ``nn.Mish`` models load unchanged)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mish(x)


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    """Return Linear → Mish → Linear."""
    return nn.Sequential(nn.Linear(inputs, hidden), Mish(), nn.Linear(hidden, outputs))


class Aggregator:
    """Aggregate messages into nodes by a fixed target list, with the index work done once.

    The targets are the same in every layer, so the expanded index and the "has a message"
    mask are computed once per forward pass, not once per layer.
    """

    def __init__(self, targets: torch.Tensor, num_nodes, hidden: int, how: str, beta: float):
        self.how, self.beta, self.num_nodes, self.hidden = how, beta, num_nodes, hidden
        self.index = targets.unsqueeze(1).expand(-1, hidden)
        ones = torch.ones((targets.shape[0], 1), dtype=torch.float32, device=targets.device)
        self.count = torch.zeros((num_nodes, 1), dtype=torch.float32, device=targets.device).scatter_add(0, targets.unsqueeze(1), ones)
        self.has = self.count > 0

    def __call__(self, messages: torch.Tensor) -> torch.Tensor:
        zeros = messages.new_zeros((self.num_nodes, self.hidden))
        if self.how == "sum":
            return zeros.scatter_add(0, self.index, messages)
        if self.how == "mean":
            return zeros.scatter_add(0, self.index, messages) / self.count.clamp(min=1.0)
        # Max and smooth max: the hard max first; nodes without messages keep 0.
        floor = torch.full_like(zeros, -1e30)
        hard = torch.where(self.has, floor.scatter_reduce(0, self.index, messages, reduce="amax", include_self=True), zeros)
        if self.how == "max":
            return hard
        # Smooth max: max + log(sum(exp(beta * (m - max)))) / beta, stable since every exponent <= 0.
        total = zeros.scatter_add(0, self.index, torch.exp(self.beta * (messages - hard.gather(0, self.index))))
        return hard + torch.log(torch.where(self.has, total, torch.ones_like(total))) / self.beta


class TableAggregator:
    """The same aggregation by gathering, for onnxruntime: no scatter in the layers.

    The targets are fixed for a forward pass, so they are sorted once into a table
    [N, D] (D = the largest number of messages a node receives) of message indices, padded
    with the index of an extra message row; each layer then gathers its messages into
    [N, D, d] and reduces over D. onnxruntime runs a ScatterElements with a reduction element
    by element, and the two per layer were 35% of the time of a batch of 8 Blocks states
    (benchmarks/HISTORY.md); a Gather copies whole rows. Targets outside [0, N) (the dummy
    node of the packed layout) are left out. Sums may differ from :class:`Aggregator`'s by
    float rounding, since the messages are added in another order.
    """

    def __init__(self, targets: torch.Tensor, num_nodes, hidden: int, how: str, beta: float):
        self.how, self.beta, self.hidden = how, beta, hidden
        total = targets.shape[0]
        device = targets.device
        bucket = torch.where(targets < num_nodes, targets, torch.full_like(targets, num_nodes))  # one bucket for the left-out
        counts = torch.zeros((num_nodes + 1,), dtype=torch.long, device=device).scatter_add(0, bucket, torch.ones_like(bucket))
        ordered, order = torch.sort(bucket)
        starts = torch.cumsum(counts, 0) - counts
        rank = torch.arange(total, dtype=torch.long, device=device) - starts[ordered]
        width = torch.cat([counts[:num_nodes], counts.new_ones((1,))]).max()
        # Left-out messages go to distinct slots past the table (no write collides with another).
        spare = num_nodes * width + torch.arange(total, dtype=torch.long, device=device)
        slots = torch.where(ordered < num_nodes, ordered * width + rank, spare)
        flat = torch.full((num_nodes * width + total,), total, dtype=torch.long, device=device)  # "no message"
        self.table = flat.scatter(0, slots, order)[: num_nodes * width].reshape(num_nodes, width)
        count = counts[:num_nodes].unsqueeze(1)
        self.count, self.has = count.to(torch.float32), count > 0

    def __call__(self, messages) -> torch.Tensor:
        """Aggregate ``messages`` [K, d] (or a list of parts, concatenated in order) into [N, d]."""
        parts = list(messages) if isinstance(messages, (list, tuple)) else [messages]
        fill = 0.0 if self.how in ("sum", "mean") else -1e30
        gathered = torch.cat(parts + [parts[0].new_full((1, self.hidden), fill)])[self.table]  # [N, D, d]
        if self.how == "sum":
            return gathered.sum(1)
        if self.how == "mean":
            return gathered.sum(1) / self.count.clamp(min=1.0)
        # Scalars in ``where`` (not zeros_like) keep the exported graph free of shape computations.
        hard = torch.where(self.has, gathered.amax(1), 0.0)
        if self.how == "max":
            return hard
        total = torch.exp(self.beta * (gathered - hard.unsqueeze(1))).sum(1)
        return hard + torch.log(torch.where(self.has, total, 1.0)) * (1.0 / self.beta)


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

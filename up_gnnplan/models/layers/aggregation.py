"""Aggregating messages into nodes by a fixed target list: smooth maximum (the R-GNN paper's),
maximum, sum or mean; :class:`Aggregator` by scatter (training), :class:`TableAggregator` by
gathering (the exported graph)."""

from __future__ import annotations

import torch

AGGREGATIONS = ("smoothmax", "max", "sum", "mean")


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
        if self.how == "max":
            return _hard_max(messages, self.index, self.has, zeros)
        return _SmoothMax.apply(messages, self.index, self.has, self.beta)


def _hard_max(messages, index, has, zeros):
    """Return the largest message of each node; nodes without messages get 0."""
    floor = torch.full_like(zeros, -1e30)
    return torch.where(has, floor.scatter_reduce(0, index, messages, reduce="amax", include_self=True), zeros)


class _SmoothMax(torch.autograd.Function):
    """Smooth max by scatter, ``max + log(sum(exp(beta * (m - max)))) / beta``, with its gradient written out.

    The result does not depend on the hard max (it only keeps every exponent <= 0), so the
    gradient of a message is its softmax weight within its node, ``exp(beta * (m - max)) /
    total``: one gather in the backward pass, where autograd went back through the scatters of
    the maximum and of the sum (issue 14).
    """

    @staticmethod
    def forward(ctx, messages, index, has, beta):
        zeros = messages.new_zeros((has.shape[0], messages.shape[1]))
        hard = _hard_max(messages, index, has, zeros)
        weight = (messages - hard.gather(0, index)).mul_(beta).exp_()  # exp(beta * (m - max)) <= 1
        total = torch.where(has, zeros.scatter_add(0, index, weight), 1.0)
        ctx.save_for_backward(index, weight, total)
        return hard + torch.log(total) / beta

    @staticmethod
    def backward(ctx, grad):
        index, weight, total = ctx.saved_tensors
        return (grad / total).gather(0, index).mul_(weight), None, None, None


def slot_sum(x: torch.Tensor) -> torch.Tensor:
    """The sum of ``x`` [R, K, d] over its slots (axis 1) [R, d]: in an exported graph a running sum's last slot.

    onnxruntime's ReduceSum over a middle axis is slow on these shapes: 190 µs for [976, 3, 32] (the tables of 488
    blocks) against 51 µs for a ReduceMax of the same, and the sums were 13% of a call; CumSum and a Gather of the
    last slot take 66 µs (one thread, benchmarks/results/tier_steps/slot-sums/).
    """
    if torch.onnx.is_in_onnx_export():
        return torch.cumsum(x, 1)[:, -1]
    return x.sum(1)


class TableAggregator:
    """The same aggregation by gathering, for onnxruntime: no scatter in the layers.

    onnxruntime runs a ScatterElements with a reduction element by element, and the two per layer
    were 35% of the time of a batch of 8 Blocks states (benchmarks/HISTORY.md); a Gather copies
    whole rows. The targets are fixed for a forward pass, so they are sorted once into tables of
    message indices, and each layer gathers and reduces in two levels: the messages of a node
    fill ceil(count / K) rows of K slots, each row is reduced, then the rows of each node. One
    table [N, D] (D the largest number of messages a node receives) would do with one level, but
    one hub (a Gripper room that 400 balls are in, a Rovers rover in every ``can_traverse`` atom)
    makes it N x D: quadratic in the problem's size (1.6 s for one state of Gripper with 400
    balls).

    K and the second level's width W are sized by the usual node, not by the hub: U = min(D, 2 *
    ceil(E / N) + 2) messages, K = ceil(sqrt(U)), W = ceil(U / K), so the tables hold about E + N * K
    and N * W slots. A hub's rows past its first W - 1 are reduced on their own first (one more
    table, of the hubs alone), and its last slot of the second level holds that result. Sized by
    the hub (K = ceil(sqrt(D)) before 2026-12-01), every node's rows and second level were as wide
    as the hub's square root: Sokoban's four direction objects (1,383 messages each among 2,439
    nodes of 8 on average) padded a call's tables to 10 times its messages, and a call took about
    twice the time it takes now; Spanner's gate (250 nuts), 1.35x; where no node is a hub
    (Blocksworld, Ferry, Transport) the tables are the same as before, the hub table is empty, and
    a call takes as long (benchmarks/results/tier_steps/usual-width/). The first level has one row
    more, all padding, whose result is the second level's fill: no Concat of a fill row per layer
    (with one, the hub table's two operators made a Blocksworld call 3-5% slower).

    The smooth maximum takes the hard maximum through the tables first, then one exponential per message,
    ``exp(beta * (m - max of its node))``, summed through the same tables: exponentials per slot of the padded
    tables (before 2026-11-30) cost up to 2.3x the time of a whole call where a hub makes them wide (Spanner's gate).

    Padding slots point at an extra fill row. Targets outside [0, N) (the dummy node of the
    packed layout) are left out. Sums may differ from :class:`Aggregator`'s by float rounding,
    since the messages are added in another order. :attr:`table`, the one-level [N, D] table,
    is built on demand for models that attend over a node's messages themselves.
    """

    def __init__(self, targets: torch.Tensor, num_nodes, hidden: int, how: str, beta: float):
        self.how, self.beta, self.hidden, self.num_nodes = how, beta, hidden, num_nodes
        self.total = total = targets.shape[0]
        device = targets.device
        bucket = torch.where(targets < num_nodes, targets, torch.full_like(targets, num_nodes))  # one bucket for the left-out
        counts = torch.zeros((num_nodes + 1,), dtype=torch.long, device=device).scatter_add(0, bucket, torch.ones_like(bucket))
        self.target = torch.cat([bucket, bucket.new_full((1,), num_nodes)])  # each message's node (N: left out), the fill row's
        self.ordered, self.order = torch.sort(bucket)
        self.rank = torch.arange(total, dtype=torch.long, device=device) - (torch.cumsum(counts, 0) - counts)[self.ordered]
        count = counts[:num_nodes]
        self.count, self.has = count.unsqueeze(1).to(torch.float32), count.unsqueeze(1) > 0
        # Per node and feature, once per forward pass: the floor of the hard maximum (0 for a node without
        # messages, below any message otherwise) and 1 to add to the smooth maximum's sum where there are none.
        # A same-shape Max and Add instead of a Where broadcasting ``has`` in every layer: 3x faster in onnxruntime.
        if how not in ("sum", "mean"):
            self.floor = torch.where(self.has, -1e30, 0.0).expand(-1, hidden)
            self.empty = (~self.has).to(torch.float32).expand(-1, hidden)
        self.width = torch.cat([count, counts.new_ones((1,))]).max()
        self._table = None

        # Level 1: rows of K slots; a node without messages gets one (empty) row. K is sized by the nodes that are not
        # hubs (at most ``width`` messages, at most about twice the mean), so that one hub does not pad every node's row.
        nodes = torch.clamp(torch.ones_like(count).sum(), min=1)  # N as a tensor: the exported graph's is not fixed
        mean = (count.sum() + nodes - 1) // nodes  # ceil(E / N)
        usual = torch.clamp(torch.minimum(self.width, 2 * mean + 2), min=1)  # a node with more messages is a hub
        k = torch.sqrt(usual.to(torch.float32)).ceil().to(torch.long)
        rows = torch.clamp((count + k - 1) // k, min=1)
        row_start = torch.cumsum(rows, 0) - rows
        num_rows = rows.sum()
        kept = self.ordered < num_nodes
        row = torch.cat([row_start, row_start.new_zeros((1,))])[self.ordered] + self.rank // k  # left-out: any row
        spare = num_rows * k + torch.arange(total, dtype=torch.long, device=device)
        slots = torch.where(kept, row * k + (self.rank - (self.rank // k) * k), spare)
        flat = torch.full((num_rows * k + total,), total, dtype=torch.long, device=device)  # "no message"
        # One more row, all padding: its result is the fill of the second level's tables (index num_rows), no Concat per
        # layer to append one.
        self.row_table = torch.cat([flat.scatter(0, slots, self.order)[: num_rows * k].reshape(num_rows, k),
                                    flat.new_full((1, 1), total).expand(1, k)])
        # Level 2: the rows of each node, as many as a node of ``usual`` messages fills, padded with the index of a fill
        # row (num_rows). A hub's rows past its first (wide - 1) are reduced first, per hub (``hub_table``, padded with
        # the fill row), and its last slot points at that result (rows num_rows + 1 + its rank among the hubs).
        wide = (usual + k - 1) // k
        hub = rows > wide
        hub_rank = torch.cumsum(hub.to(torch.long), 0) - 1
        column = torch.arange(wide, dtype=torch.long, device=device).unsqueeze(0)
        direct = torch.where(hub, wide - 1, rows).unsqueeze(1)
        overflow = torch.where(hub, num_rows + 1 + hub_rank, num_rows).unsqueeze(1)
        self.node_table = torch.where(column < direct, row_start.unsqueeze(1) + column,
                                      torch.where(column == wide - 1, overflow, num_rows))
        hubs = torch.nonzero(hub).reshape(-1)
        left = rows[hubs] - (wide - 1)  # each hub's rows not in the node table
        most = torch.cat([left, left.new_ones((1,))]).max()
        column = torch.arange(most, dtype=torch.long, device=device).unsqueeze(0)
        self.hub_table = torch.where(column < left.unsqueeze(1), (row_start[hubs] + wide - 1).unsqueeze(1) + column,
                                     num_rows)

    @property
    def table(self) -> torch.Tensor:
        """[N, D] message indices of each node, padded with the index of an extra message row."""
        if self._table is None:
            n, width = self.num_nodes, self.width
            spare = n * width + torch.arange(self.total, dtype=torch.long, device=self.order.device)
            slots = torch.where(self.ordered < n, self.ordered * width + self.rank, spare)
            flat = torch.full((n * width + self.total,), self.total, dtype=torch.long, device=self.order.device)
            self._table = flat.scatter(0, slots, self.order)[: n * width].reshape(n, width)
        return self._table

    def __call__(self, messages) -> torch.Tensor:
        """Aggregate ``messages`` [K, d] (or a list of parts, concatenated in order) into [N, d]."""
        parts = list(messages) if isinstance(messages, (list, tuple)) else [messages]
        low = 0.0 if self.how in ("sum", "mean") else -1e30
        padded = torch.cat(parts + [parts[0].new_full((1, self.hidden), low)])  # the messages, then a fill row
        gathered = padded[self.row_table]  # [R, K, d]
        if self.how in ("sum", "mean"):
            total = self._nodes(slot_sum(gathered), slot_sum)
            return total if self.how == "sum" else total / self.count.clamp(min=1.0)
        hard = torch.maximum(self._nodes(gathered.amax(1), _max_slot), self.floor)
        if self.how == "max":
            return hard
        # Smooth max: one exponential per message, exp(beta * (m - the max of its node)) <= 1, summed through the
        # same tables (the fill row's is 0; a left-out message's is never read). The tables' slots are padded (a
        # node fills whole rows of K, and every node has as many rows as the one with the most), so exponentials
        # per slot cost several times more: 48% of a call of Spanner's model on 370 objects, whose gate receives 99
        # messages (benchmarks/results/tier_steps/exp-per-message/).
        own = torch.cat([hard, hard.new_zeros((1, self.hidden))])[self.target]  # as ``padded``; the left-out's and the fill row's: 0
        weight = torch.exp(self.beta * (padded - own))
        total = self._nodes(slot_sum(weight[self.row_table]), slot_sum)
        return hard + torch.log(total + self.empty) * (1.0 / self.beta)

    def _nodes(self, rows: torch.Tensor, reduce) -> torch.Tensor:
        """Reduce the rows' results [R + 1, d] (the last: the fill's) into the nodes' [N, d] by the level-2 tables: the
        hubs' overflow rows first."""
        # The hubs' table is wide where it is not empty: a ReduceSum, not slot_sum's running sum (see there).
        hubs = rows[self.hub_table].sum(1) if reduce is slot_sum else reduce(rows[self.hub_table])  # [hubs, d]
        return reduce(torch.cat([rows, hubs])[self.node_table])


def _max_slot(x: torch.Tensor) -> torch.Tensor:
    """The maximum of ``x`` [R, K, d] over its slots."""
    return x.amax(1)

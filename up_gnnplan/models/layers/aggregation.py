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
    fill ceil(count / K) rows of K slots (K = ceil(sqrt(D)), D the largest number of messages a
    node receives), each row is reduced, then the rows of each node. One table [N, D] would do
    with one level, but one hub (a Gripper room that 400 balls are in, a Rovers rover in every
    ``can_traverse`` atom) makes it N x D: quadratic in the problem's size (1.6 s for one state
    of Gripper with 400 balls); the two levels hold about E + N * K and N * D / K slots.

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

        # Level 1: rows of K slots; a node without messages gets one (empty) row.
        k = torch.sqrt(self.width.to(torch.float32)).ceil().to(torch.long)
        rows = torch.clamp((count + k - 1) // k, min=1)
        row_start = torch.cumsum(rows, 0) - rows
        num_rows = rows.sum()
        kept = self.ordered < num_nodes
        row = torch.cat([row_start, row_start.new_zeros((1,))])[self.ordered] + self.rank // k  # left-out: any row
        spare = num_rows * k + torch.arange(total, dtype=torch.long, device=device)
        slots = torch.where(kept, row * k + (self.rank - (self.rank // k) * k), spare)
        flat = torch.full((num_rows * k + total,), total, dtype=torch.long, device=device)  # "no message"
        self.row_table = flat.scatter(0, slots, self.order)[: num_rows * k].reshape(num_rows, k)
        # Level 2: the rows of each node, padded with the index of a fill row.
        most = torch.cat([rows, rows.new_ones((1,))]).max()
        column = torch.arange(most, dtype=torch.long, device=device).unsqueeze(0)
        self.node_table = torch.where(column < rows.unsqueeze(1), row_start.unsqueeze(1) + column, num_rows)

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
            row_sums = torch.cat([slot_sum(gathered), gathered.new_zeros((1, self.hidden))])
            total = slot_sum(row_sums[self.node_table])
            return total if self.how == "sum" else total / self.count.clamp(min=1.0)
        row_max = gathered.amax(1)  # [R, d]
        maxima = torch.cat([row_max, row_max.new_full((1, self.hidden), -1e30)])[self.node_table]  # [N, rows, d]
        hard = torch.maximum(maxima.amax(1), self.floor)
        if self.how == "max":
            return hard
        # Smooth max: one exponential per message, exp(beta * (m - the max of its node)) <= 1, summed through the
        # same tables (the fill row's is 0; a left-out message's is never read). The tables' slots are padded (a
        # node fills whole rows of K, and every node has as many rows as the one with the most), so exponentials
        # per slot cost several times more: 48% of a call of Spanner's model on 370 objects, whose gate receives 99
        # messages (benchmarks/results/tier_steps/exp-per-message/).
        own = torch.cat([hard, hard.new_zeros((1, self.hidden))])[self.target]  # as ``padded``; the left-out's and the fill row's: 0
        weight = torch.exp(self.beta * (padded - own))
        total = slot_sum(torch.cat([slot_sum(weight[self.row_table]), hard.new_zeros((1, self.hidden))])[self.node_table])
        return hard + torch.log(total + self.empty) * (1.0 / self.beta)

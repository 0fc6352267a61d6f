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

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


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    """Return Linear → Mish → Linear."""
    return nn.Sequential(nn.Linear(inputs, hidden), nn.Mish(), nn.Linear(hidden, outputs))


def aggregate(messages: torch.Tensor, targets: torch.Tensor, num_nodes: torch.Tensor, how: str, beta: float) -> torch.Tensor:
    """Aggregate ``messages`` [M, d] into [N, d] by ``targets``; nodes without messages get 0."""
    d = messages.shape[1]
    index = targets.unsqueeze(1).expand(-1, d)
    zeros = messages.new_zeros((num_nodes, d))
    if how == "sum" or how == "mean":
        total = zeros.scatter_add(0, index, messages)
        if how == "sum":
            return total
        count = messages.new_zeros((num_nodes, 1)).scatter_add(0, targets.unsqueeze(1), torch.ones_like(messages[:, :1]))
        return total / count.clamp(min=1.0)
    # Max and smooth max: the hard max first; nodes without messages keep the initial 0.
    has = messages.new_zeros((num_nodes, 1)).scatter_add(0, targets.unsqueeze(1), torch.ones_like(messages[:, :1])) > 0
    floor = torch.full_like(zeros, -1e30)
    hard = floor.scatter_reduce(0, index, messages, reduce="amax", include_self=True)
    hard = torch.where(has, hard, zeros)
    if how == "max":
        return hard
    # Smooth max: max + log(sum(exp(beta * (m - max)))) / beta, stable since every exponent <= 0.
    shifted = torch.exp(beta * (messages - hard.gather(0, index)))
    total = zeros.scatter_add(0, index, shifted)
    return hard + torch.log(torch.where(has, total, torch.ones_like(total))) / beta


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
        rounds = 1 if share_weights else layers
        self.relation_mlps = nn.ModuleList(
            nn.ModuleList(mlp(a * hidden, a * hidden, a * hidden) for a in self.arities) for _ in range(rounds)
        )
        self.update_mlps = nn.ModuleList(mlp(2 * hidden, 2 * hidden, hidden) for _ in range(rounds))
        self.readout = mlp(hidden, hidden, 1)

    def embed(self, node_graph: torch.Tensor, relations: list[torch.Tensor]) -> torch.Tensor:
        """Return the final node embeddings [N, hidden]."""
        num_nodes = node_graph.shape[0]
        h = torch.zeros((num_nodes, self.hidden), dtype=torch.float32, device=node_graph.device)
        exporting = torch.jit.is_tracing() or torch.onnx.is_in_onnx_export()
        targets = torch.cat([rel.reshape(-1) for rel in relations if exporting or rel.shape[0] > 0])
        for layer in range(self.layers):
            weights = 0 if self.share_weights else layer
            messages = []
            for rel, arity, net in zip(relations, self.arities, self.relation_mlps[weights]):
                if rel.shape[0] == 0 and not exporting:
                    continue  # no atoms, no messages; kept in exported graphs, whose sizes vary
                gathered = h[rel].flatten(1)  # [k, arity * hidden]
                messages.append(net(gathered).reshape(-1, self.hidden))  # one message per argument
            agg = aggregate(torch.cat(messages), targets, num_nodes, self.aggregation, self.beta)
            h = h + self.update_mlps[weights](torch.cat([h, agg], dim=1))
        return h

    def forward(self, node_graph, readout_nodes, readout_graph, graph_index, *relations):
        h = self.embed(node_graph, list(relations))
        pooled = h.new_zeros((graph_index.shape[0], self.hidden)).index_add(0, readout_graph, h[readout_nodes])
        return self.readout(pooled).squeeze(-1)

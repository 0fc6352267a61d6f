"""The typed domain-graph policy network of Zhang & Geißer.

Zhang & Geißer, "Extending Graph Neural Networks for Generalized Stochastic Planning",
sections "Network Architecture" and "Action Decoders". The domain graph fixes the modules, the
instance graph of a state (:mod:`up_gnnplan.encodings.typed_policy`) is the input. With ``d``
the embedding size, objects ``h(o)`` and master vertices ``h(m)`` start at 0, relation vertices
at 0 beside their constant 0/1 features ``x(v)``, and each of ``K`` rounds computes::

    h'(v)   = h(v) + MLP_c([x(v), h(v), h(o_1), ..., h(o_n)])      relation vertex v = c(o_1..o_n)
    h'(u)   = h(u) + MLP_T([h(u), h(o), h(m)])                     (o, master) vertex u, T = type(o)
    h'(w)   = h(w) + MLP_0([x(w), h(w), h(m)])                     (master) vertex w (nullary atoms)
    a_e(o)  = sum_{v in N_e(o)} softmax_v(s_e(o, v)) W^v_e h'(v)    one GATv2 module per domain edge e
    s_e(o, v) = a_e . LeakyReLU(W^s_e h'(v) + W^t_e h(o))           that reaches objects: (t, i, c)
    h'(o)   = h(o) + W_O [a_e(o) for every object edge e]           (concatenation, projected)
    g_e(m)  = agg_{u in N_e(m)} W^v_e h'(u)                         edges (master, 2, (T, master)), (master, 1, ())
    h'(m)   = h(m) + W_M [g_e(m) for every master edge e]

``N_e(o)``: the relation vertices that reach ``o`` by an edge of label ``e = (t, i, c)`` (``o`` is
their ``i``-th argument, they are of class ``c``). An object has exactly one (o, master) vertex,
so its attention weight there is 1 and only the value projection is kept. A ground action
``a(o_1..o_k)`` of state ``s`` is scored by its schema's decoder from ``[h(m_s), h(o_1), ..,
h(o_k)]`` (:class:`~up_gnnplan.models.heads.ActionDecoders`); the value is ``MLP(h(m_s))``.

Departures from the paper, and why:

- **Attention**: GATv2 (Brody, Alon & Yahav 2022), single head, where the paper cites GAT
  (Veličković et al. 2018): GATv2's scores depend on the object and the neighbour jointly.
- **Combining the edges**: the paper's new object embedding is the concatenation of its
  edges' outputs, so its size depends on the type. We project the concatenation over *all*
  object edges back to ``d`` with one linear layer ``W_O``; for an object of type ``T`` only
  the blocks of the edges of ``T`` (and of the edges declared on its supertypes) are non-zero,
  so this is a per-type projection of the paper's concatenation whose weights are kept per
  domain edge. Modules are keyed by the domain edge ``(declared type, position, class)``: an
  object of a subtype uses the modules of the edges declared on its supertypes.
- **The master vertex** aggregates its (o, master) vertices per type with ``aggregation``
  (smooth maximum by default, as the R-GNN), not attention: its neighbours per edge are all
  objects of a type, and attention, a weighted mean, could not tell 2 of them from 20.
- **Residual updates** (``h' = h + ...``) and the constant features ``x(v)`` given to every
  round instead of only the first, so that one set of weights serves every round
  (``share_weights``, as the R-GNN; the paper used K = 5 rounds with separate weights).
  Every MLP is Linear, Mish, Linear.
- **Action decoders** read the master and the arguments, not the embedding of the action's own
  argument-tuple vertex: in our instance graphs that vertex exists only if some atom of the
  state or goal has the same tuple (see the encoding), which is the exception for actions.

Shapes (N objects, B states, V_j vertices of class j): the encoding's inputs (see
:mod:`up_gnnplan.encodings.typed_policy`), then ``action_k`` int64 [A_k, 1 + a_k] → the
outputs named by ``outputs``: ``value`` [B] and/or ``scores`` [sum_k A_k].

Aggregation is by gathering from a padded neighbour table built once per forward pass
(:class:`~up_gnnplan.models.layers.aggregation.TableAggregator`), the form onnxruntime runs fast.
"""

from __future__ import annotations

import torch
from torch import nn

from up_gnnplan.models import ACTION_KINDS, head_parts
from up_gnnplan.models.heads import ActionDecoders
from up_gnnplan.models.layers.aggregation import AGGREGATIONS, TableAggregator
from up_gnnplan.models.layers.mlp import mish, mlp

# The score of a table's padding: softmax weight 0 beside any real neighbour. Not -1e30: torch's
# TorchScript exporter fails on that constant in a Concat ("cannot be converted to int64_t").
NO_SCORE = -1e9


def _uniform(shape, fan_in: int) -> nn.Parameter:
    """Return a parameter initialised as nn.Linear's weights."""
    bound = 1.0 / max(fan_in, 1) ** 0.5
    return nn.Parameter(torch.empty(shape).uniform_(-bound, bound))


class TypedLinear(nn.Module):
    """One linear layer per type: row ``r`` of ``x`` goes through the layer of type ``t[r]``.

    Every type's layer runs on every row and each row keeps its own type's result: a few types,
    so more arithmetic but no per-type index sets.
    """

    def __init__(self, types: int, inputs: int, outputs: int):
        super().__init__()
        self.types, self.outputs = types, outputs
        self.weight = _uniform((inputs, types * outputs), inputs)
        self.bias = _uniform((types, outputs), inputs)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        y = (x @ self.weight).reshape(x.shape[0], self.types, self.outputs)
        pick = t.reshape(-1, 1, 1).expand(-1, 1, self.outputs)
        return y.gather(1, pick).squeeze(1) + self.bias[t]


class TypedMLP(nn.Module):
    """Linear, Mish, Linear, one per type (see :class:`TypedLinear`)."""

    def __init__(self, types: int, inputs: int, hidden: int, outputs: int):
        super().__init__()
        self.first, self.second = TypedLinear(types, inputs, hidden), TypedLinear(types, hidden, outputs)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.second(mish(self.first(x, t)), t)


class ClassAttention(nn.Module):
    """GATv2 scores and values of the edges of one relation class, one module per position.

    ``forward(hv [V, d], ho [V, n, d])`` (the vertices and their arguments' embeddings) returns
    scores [V, n] and values [V, n, d]: position ``i`` is the domain edge ``(c_i, i, c)``.
    """

    def __init__(self, arity: int, hidden: int):
        super().__init__()
        self.arity, self.hidden = arity, hidden
        self.source = nn.Linear(hidden, 2 * arity * hidden)  # W^s and W^v of every position at once
        self.target = _uniform((arity, hidden, hidden), hidden)
        self.vector = _uniform((arity, hidden), hidden)

    def forward(self, hv: torch.Tensor, ho: torch.Tensor):
        projected = self.source(hv).reshape(hv.shape[0], 2, self.arity, self.hidden)
        key = projected[:, 0] + torch.matmul(ho.transpose(0, 1), self.target).transpose(0, 1)
        scores = (torch.nn.functional.leaky_relu(key, 0.2) * self.vector).sum(-1)
        return scores, projected[:, 1]


class TypedRound(nn.Module):
    """The modules of one round (one for all rounds when weights are shared).

    Args:
        classes: ``(arity, features)`` of each predicate class, in the encoding's order.
        types: the number of types (classes ``(T, master)``).
        nullary: the features of the (master) vertex (0: the domain has none).
        hidden: the embedding size ``d``.
    """

    def __init__(self, classes, types: int, nullary: int, hidden: int):
        super().__init__()
        d = hidden
        self.relation_mlps = nn.ModuleList(mlp(f + (1 + n) * d, 2 * d, d) for n, f in classes)
        self.attention = nn.ModuleList(ClassAttention(n, d) for n, _ in classes)
        self.type_mlp = TypedMLP(types, 3 * d, 2 * d, d)
        self.type_values = TypedLinear(types, d, 2 * d)  # W^v towards the object, then towards the master
        self.nullary_mlp = mlp(nullary + 2 * d, 2 * d, d) if nullary else None
        self.nullary_value = nn.Linear(d, d) if nullary else None
        object_edges = sum(n for n, _ in classes) + types
        master_edges = types + (1 if nullary else 0)
        self.object_update = nn.Linear(object_edges * d, d)
        self.master_update = nn.Linear(master_edges * d, d)


class TypedPolicyNetwork(nn.Module):
    """Zhang & Geißer's typed domain-graph network with action decoders and/or a value head.

    ``forward(*encoding inputs, *action_k)`` returns the tuple named by ``outputs``
    (``("scores",)`` or ``("value", "scores")``), or the values [B] for a value-only model
    (``outputs == ("value",)``), which takes no action inputs.

    Args:
        schema: the encoding's :meth:`~up_gnnplan.encodings.typed_policy.TypedPolicyEncoding.schema`.
        actions: the domain's :class:`~up_gnnplan.states.actions.ActionSignature` (action heads).
        kind: ``logits``, ``q`` (see :mod:`up_gnnplan.models.heads`) or None (value only).
        value: whether the model has a value head.
        hidden: embedding size ``d``.
        layers: rounds ``K``.
        aggregation: how the master vertex aggregates: ``smoothmax``, ``max``, ``sum`` or ``mean``. For a value
            head ``sum`` fit better on the bundled Gripper examples (training MAE 0.39 against 0.96 with
            ``smoothmax``, hidden 16, 4 rounds, 30 epochs): V* there counts objects.
        beta: sharpness of the smooth maximum.
        share_weights: one set of modules for every round, or one per round.

    A value-only model has no ``actions`` attribute (the training and checkpoint code tells
    action models by it).
    """

    def __init__(self, schema: dict, actions=None, kind: str | None = None, value: bool = True, hidden: int = 32,
                 layers: int = 30, aggregation: str = "smoothmax", beta: float = 8.0, share_weights: bool = True):
        super().__init__()
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
        if kind is not None and kind not in ACTION_KINDS:
            raise ValueError(f"unknown action head kind {kind!r}; choose one of {', '.join(ACTION_KINDS)}")
        if kind is None and not value:
            raise ValueError("a model needs an action head or a value head")
        self.classes = [(len(c["types"]), len(c["features"])) for c in schema["classes"]]
        self.num_types, self.nullary = len(schema["types"]), len(schema["nullary_features"])
        self.object_edges = sum(n for n, _ in self.classes) + self.num_types
        self.master_edges = self.num_types + (1 if self.nullary else 0)
        self.num_inputs = 5 + (1 if self.nullary else 0) + 2 * len(self.classes)
        self.hidden, self.layers, self.aggregation, self.beta = hidden, layers, aggregation, float(beta)
        self.share_weights = share_weights
        rounds = 1 if share_weights else layers
        self.rounds = nn.ModuleList(TypedRound(self.classes, self.num_types, self.nullary, hidden) for _ in range(rounds))
        self.kind, self.value = kind, value
        self.outputs = ("value", "scores") if kind and value else ("scores",) if kind else ("value",)
        self.readout = mlp(hidden, hidden, 1) if value else None
        if kind is not None:
            self.actions = actions  # the domain's ActionSignature: the schemas the decoders score
            self.decoders = ActionDecoders(actions.arities, hidden)

    def embed(self, inputs) -> tuple[torch.Tensor, torch.Tensor]:
        """Return the object embeddings [N, d] and the master embeddings [B, d] after ``layers`` rounds."""
        node_graph, readout_nodes, readout_graph, graph_index, object_type = inputs[:5]
        nullary_x = inputs[5] if self.nullary else None
        rest = inputs[6:] if self.nullary else inputs[5:]
        args, features = list(rest[0::2]), list(rest[1::2])
        d, E, M = self.hidden, self.object_edges, self.master_edges
        N, B = node_graph.shape[0], graph_index.shape[0]
        zeros = lambda rows: torch.zeros((rows, d), dtype=torch.float32, device=node_graph.device)  # noqa: E731
        h, m = zeros(N), zeros(B)
        hv = [zeros(a.shape[0]) for a in args]
        hu = zeros(readout_nodes.shape[0])  # (o, master) vertices
        hw = zeros(B) if self.nullary else None  # (master) vertices
        vertex_type = object_type[readout_nodes]

        # Neighbour tables, the same in every round: slot o * E + e gathers the messages that
        # reach object o by object edge e; slot b * M + e those reaching state b's master by e.
        targets, base = [], 0
        for (n, _), a in zip(self.classes, args):
            label = torch.arange(base, base + n, dtype=torch.long, device=node_graph.device).unsqueeze(1)
            targets.append((a.transpose(0, 1) * E + label).reshape(-1))
            base += n
        targets.append(readout_nodes * E + base + vertex_type)
        objects = TableAggregator(torch.cat(targets), N * E, d, "sum", self.beta)  # its table; attention is ours
        master_targets = [readout_graph * M + vertex_type]
        if self.nullary:
            master_targets.append(graph_index * M + self.num_types)
        masters = TableAggregator(torch.cat(master_targets), B * M, d, self.aggregation, self.beta)

        for layer in range(self.layers):
            r = self.rounds[0 if self.share_weights else layer]
            scores, values = [], []
            for j, (a, x) in enumerate(zip(args, features)):
                ho = h[a]  # [V, n, d]
                hv[j] = hv[j] + r.relation_mlps[j](torch.cat([x, hv[j], ho.flatten(1)], dim=1))
                s, v = r.attention[j](hv[j], ho)
                scores.append(s.transpose(0, 1).reshape(-1))  # position-major, as the targets
                values.append(v.transpose(0, 1).reshape(-1, d))
            hu = hu + r.type_mlp(torch.cat([hu, h[readout_nodes], m[readout_graph]], dim=1), vertex_type)
            towards = r.type_values(hu, vertex_type)
            scores.append(hu[:, 0] * 0.0)  # one (o, master) vertex per object: weight 1 whatever the score
            values.append(towards[:, :d])
            master_messages = [towards[:, d:]]
            if self.nullary:
                hw = hw + r.nullary_mlp(torch.cat([nullary_x, hw, m], dim=1))
                master_messages.append(r.nullary_value(hw))
            attended = self._attend(objects.table, scores, values)
            h = h + r.object_update(attended.reshape(N, E * d))
            m = m + r.master_update(masters(master_messages).reshape(B, M * d))
        return h, m

    def _attend(self, table: torch.Tensor, scores: list, values: list) -> torch.Tensor:
        """Return the attention-weighted sum of each table row's values [S, d] (0 for rows without any)."""
        s = torch.cat(scores + [scores[0].new_full((1,), NO_SCORE)])[table]  # [S, D]
        v = torch.cat(values + [values[0].new_zeros((1, self.hidden))])[table]  # [S, D, d]
        weights = torch.softmax(s, dim=1)
        return (weights.unsqueeze(-1) * v).sum(1)

    def forward(self, *inputs):
        h, m = self.embed(inputs[: self.num_inputs])
        out = []
        if self.value:
            out.append(self.readout(m).squeeze(-1))
        if self.kind is not None:
            out.append(self.decoders(h, m, list(inputs[self.num_inputs:])))
        return tuple(out) if self.kind is not None else out[0]


def build_typed_policy(encoding, head: str = "value", actions=None, hidden: int = 32, layers: int = 30,
                       aggregation: str = "smoothmax", beta: float = 8.0, share_weights: bool = True) -> TypedPolicyNetwork:
    """Return the network for ``encoding`` (a :class:`~up_gnnplan.encodings.typed_policy.TypedPolicyEncoding`)
    with the heads of ``head`` (one of :data:`up_gnnplan.models.HEADS`); action heads need ``actions``."""
    kind, value = head_parts(head)
    if kind is not None and actions is None:
        raise ValueError(f"--head {head} needs the domain's action schemas (a dataset of format 2)")
    return TypedPolicyNetwork(encoding.schema(), actions if kind else None, kind, value, hidden=hidden, layers=layers,
                              aggregation=aggregation, beta=beta, share_weights=share_weights)

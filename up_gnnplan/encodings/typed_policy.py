"""Instance graphs of Zhang & Geißer's typed domain-graph policy network.

Zhang & Geißer, "Extending Graph Neural Networks for Generalized Stochastic Planning",
sections "Graph Representations of RMDPs" and "Network Architecture". The *domain graph* has a
vertex per type and per *relation class* (a tuple of parameter types), and an edge labelled
``i`` from each class to the type of its ``i``-th parameter; the *instance graph* of a state is
its grounding, whose vertices are fed to modules keyed by the domain graph.

Vertices of the instance graph of one state
    - **object vertices**: the objects, state ``b``'s object ``o`` being node ``offset_b + o``
      (``offset_b``: the objects of the earlier states of the batch), the numbering of every
      object-node encoding, so that action rows (:mod:`up_gnnplan.encodings.actions`) address
      them. They start empty (zeros). An object's type is its most specific ``type:T`` atom
      (deepest in the hierarchy; ties go to the first in :meth:`DomainTypes.names`), ``object``
      if it has none.
    - **the master vertex**: one per state (``master_i``).
    - **relation vertices** of a predicate class ``c`` (the declared parameter types of a
      predicate, :attr:`DomainTypes.predicates`): one per argument tuple that occurs in an atom
      of class ``c`` in the state or in its goal. Its constant input is the 0/1 vector of the
      predicates of ``c`` that hold of the tuple (in signature order, which is by name, as in the
      paper), then of their goal copies (``p@goal``, or ``p@goal-achieved`` / ``p@goal-open`` in
      goal mode ``achieved``, and ``p@goal-negative``; see :func:`~up_gnnplan.encodings.base.goal_relations`).
      Type predicates are not relations: they give the objects their types.
    - **(o, master) vertices**: one per object, of class ``(type(o), master)``, with an edge
      labelled 1 to the object and 2 to the master vertex; they carry no features.
    - **the (master) vertex**: one per state, with an edge labelled 1 to the master vertex,
      carrying the nullary atoms of the state and goal (``handempty``). A domain without
      nullary predicates has none: it would carry nothing but the master's own embedding.

**Departure from the paper (PDDL, not RDDL).** The paper has a vertex for every grounded
argument tuple of every fluent: in RDDL the groundings are given, in PDDL they are
``O(objects^arity)`` type-consistent tuples, mostly of atoms that are false. We make a vertex
only for the tuples that occur in the state's atoms or its goal atoms (a tuple of another class
is another vertex); a tuple that holds in no predicate of its class has no vertex, which is the
all-zero vector the paper would give it, minus its messages.

Edges are labelled by the domain graph's edges ``(type, position, class)``; the model keys its
attention modules by them (see :mod:`up_gnnplan.models.typed_policy`). The edges need no arrays
of their own: a class's argument array says, per vertex and position, which object it reaches.

Outputs, in :meth:`TypedPolicyEncoding.input_names` order (N objects, B states, V_j vertices of
predicate class j of arity n_j with F_j features, F_0 nullary features):

- ``node_graph`` int64[N]: the state of each object;
- ``readout_nodes`` int64[N], ``readout_graph`` int64[N]: the object and the state of each
  (o, master) vertex (every object, in node order);
- ``graph_index`` int64[B]: 0..B-1, the master vertices;
- ``object_type`` int64[N]: each object's type, an index into ``schema()["types"]``;
- ``nullary`` float32[B, F_0]: the (master) vertices' features (only if the domain has nullary
  predicates);
- ``class_j`` int64[V_j, n_j]: the object nodes of each relation vertex of class j, in position
  order (vertices sorted by their tuples); ``features_j`` float32[V_j, F_j].

Pure numpy: the runtime encodes with it and runs onnxruntime without torch.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.base import Encoding, StateInput, batch_atoms, goal_blocks, goal_relations
from up_gnnplan.encodings.rgnn import FIXED_INPUTS
from up_gnnplan.states.signature import TYPE_PREFIX
from up_gnnplan.states.types import DomainTypes

MASTER = "master"


class TypedPolicyEncoding(Encoding):
    """Instance graphs of the typed domain-graph policy network (see the module docstring).

    Args:
        signature: the domain's predicate signature.
        goal_mode: ``separate`` or ``achieved`` (see :func:`~up_gnnplan.encodings.base.goal_relations`).
        types: the domain's :class:`~up_gnnplan.states.types.DomainTypes` as JSON (its
            ``to_json()``); required, since the relation classes are the declared parameter types.
    """

    name = "typed_policy"

    def __init__(self, signature, goal_mode: str = "separate", types=None):
        super().__init__(signature, goal_mode)
        if types is None:
            raise ValueError("the typed_policy encoding needs the domain's types (types=DomainTypes.to_json()): "
                             "its relation classes are the declared parameter types of the predicates")
        self.types = types if isinstance(types, DomainTypes) else DomainTypes.from_json(types)
        self.type_names = self.types.names()
        type_id = {t: i for i, t in enumerate(self.type_names)}
        P = len(signature)

        # Type predicates: the type each marks, and its priority (deeper wins, then the first name).
        T = len(self.type_names)
        self._type_priority = np.full(4 * P, -1, dtype=np.int64)
        self._priority_type = np.zeros(T * (1 + max((self.types.depth(t) for t in self.type_names), default=0)), np.int64)
        for pid, (name, arity) in enumerate(signature.predicates):
            if name.startswith(TYPE_PREFIX):
                kind = name[len(TYPE_PREFIX):]
                if kind not in type_id or arity != 1:
                    raise ValueError(f"type predicate {name}/{arity} of the signature is not a type of the domain's types "
                                     f"({', '.join(self.type_names)})")
                priority = self.types.depth(kind) * T + (T - 1 - type_id[kind])
                self._type_priority[pid] = priority
                self._priority_type[priority] = type_id[kind]

        # Relation classes: the declared parameter types of the non-type predicates of arity >= 1.
        declared = {}
        for name, arity in signature.predicates:
            if name.startswith(TYPE_PREFIX):
                continue
            if name not in self.types.predicates:
                raise ValueError(f"predicate {name} has no declared parameter types in the domain's types")
            params = tuple(self.types.predicates[name])
            if len(params) != arity:
                raise ValueError(f"predicate {name}/{arity} is declared with {len(params)} parameter types in the domain's types")
            unknown = [t for t in params if t not in type_id]
            if unknown:
                raise ValueError(f"predicate {name} has parameters of unknown types {', '.join(unknown)}")
            declared[name] = params
        self.classes: list[tuple[str, ...]] = sorted({p for p in declared.values() if p}, key=lambda p: (len(p), p))
        class_id = {c: j for j, c in enumerate(self.classes)}
        NULLARY = len(self.classes)  # the (master) vertex's "class" in the lookup below

        # Per goal-block predicate id: its class and its feature column there (state predicates first,
        # then the goal copies kind by kind, as goal_relations lists them).
        self._class = np.full(4 * P, -1, dtype=np.int64)
        self._column = np.full(4 * P, -1, dtype=np.int64)
        self.feature_names: list[list[str]] = [[] for _ in range(len(self.classes) + 1)]
        relations = [(name, pid, arity) for pid, (name, arity) in enumerate(signature.predicates)]
        blocks = goal_blocks(goal_mode)
        relations += [(name, blocks[kind] * P + pid, arity) for name, pid, arity, kind in goal_relations(signature, goal_mode)]
        for name, block_id, arity in relations:
            base = signature.predicates[block_id % P][0]
            if base.startswith(TYPE_PREFIX):
                continue
            j = class_id[declared[base]] if arity else NULLARY
            self._class[block_id] = j
            self._column[block_id] = len(self.feature_names[j])
            self.feature_names[j].append(name)
        self.nullary_features = self.feature_names.pop()

    # -- the domain graph ---------------------------------------------------------------------------

    @property
    def has_nullary(self) -> bool:
        """Whether the domain has nullary predicates, and so the instance graphs a (master) vertex."""
        return bool(self.nullary_features)

    def object_labels(self) -> list[list]:
        """Return the domain-graph edges that reach object vertices, ``[type, position, class]``.

        Order: the predicate classes' positions class by class, then ``(T, 1, (T, master))`` per type.
        """
        out = [[c[i], i + 1, list(c)] for c in self.classes for i in range(len(c))]
        return out + [[t, 1, [t, MASTER]] for t in self.type_names]

    def master_labels(self) -> list[list]:
        """Return the domain-graph edges that reach the master vertex: ``(master, 2, (T, master))`` per type, then
        ``(master, 1, (master))`` if the domain has nullary predicates."""
        out = [[MASTER, 2, [t, MASTER]] for t in self.type_names]
        return out + ([[MASTER, 1, [MASTER]]] if self.has_nullary else [])

    def input_names(self) -> list[str]:
        names = FIXED_INPUTS + ["object_type"] + (["nullary"] if self.has_nullary else [])
        for j in range(len(self.classes)):
            names += [f"class_{j}", f"features_{j}"]
        return names

    def config(self) -> dict:
        out = super().config()
        out["types"] = self.types.to_json()
        return out

    def schema(self) -> dict:
        return {
            "types": list(self.type_names),
            "classes": [{"types": list(c), "features": list(f)} for c, f in zip(self.classes, self.feature_names)],
            "nullary_features": list(self.nullary_features),
            "object_labels": self.object_labels(),
            "master_labels": self.master_labels(),
        }

    # -- instance graphs ------------------------------------------------------------------------------

    def object_types(self, pred: np.ndarray, args: np.ndarray, num_objects: int) -> np.ndarray:
        """Return the type index of each of ``num_objects`` objects from atoms (global node ids in ``args``)."""
        priority = self._type_priority[pred]
        typed = priority >= 0
        best = np.full(num_objects, -1, dtype=np.int64)
        np.maximum.at(best, args[typed, 0], priority[typed])
        return np.where(best >= 0, self._priority_type[np.maximum(best, 0)], 0)

    def encode(self, states: list[StateInput]) -> dict[str, np.ndarray]:
        P = len(self.signature)
        B = len(states)
        batch = batch_atoms(states, self.signature, self.goal_mode)
        pred, arg, graph, node_graph, N = batch.pred, batch.args, batch.graph, batch.node_graph, batch.num_nodes
        # Type atoms of the state only (block 0): goal copies of type predicates do not exist.
        in_state = pred < P
        out = {
            "node_graph": node_graph,
            "readout_nodes": np.arange(N, dtype=np.int64),
            "readout_graph": node_graph.copy(),
            "graph_index": np.arange(B, dtype=np.int64),
            "object_type": self.object_types(pred[in_state], arg[in_state], N),
        }
        klass, column = self._class[pred], self._column[pred]
        if self.has_nullary:
            nullary = np.zeros((B, len(self.nullary_features)), dtype=np.float32)
            mask = klass == len(self.classes)
            nullary[graph[mask], column[mask]] = 1.0
            out["nullary"] = nullary
        for j, c in enumerate(self.classes):
            mask = klass == j
            rows = arg[mask, : len(c)]
            tuples, inverse = np.unique(rows, axis=0, return_inverse=True)
            features = np.zeros((len(tuples), len(self.feature_names[j])), dtype=np.float32)
            features[inverse.reshape(-1), column[mask]] = 1.0
            out[f"class_{j}"] = np.ascontiguousarray(tuples.reshape(-1, len(c)), dtype=np.int64)
            out[f"features_{j}"] = features
        return out

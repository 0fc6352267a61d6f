"""PLOI graphs: objects as nodes with multi-hot features, binary atoms as labelled edges.

Chen (2024), "Relational GNNs Cannot Learn C2 Features for Planning", section 4 (graphs
after Rivlin, Hazan & Karpas 2020 and Silver et al. 2021, "PLOI"). The graph of a state ``s`` with goal ``G`` over objects
``O`` is the relational structure ``(O, P ∪ P_G ∪ inv(P) ∪ inv(P_G), s ∪ s_G ∪ inv(s) ∪ inv(s_G))``:

- **nodes** are the objects of the state;
- **node features** (float32 ``[N, F]``, multi-hot): one column per unary predicate (type
  predicates ``type:T`` included) and per unary goal copy (``p@goal``; in goal mode
  ``achieved`` ``p@goal-achieved`` / ``p@goal-open``; and ``p@goal-negative``), then one
  column per nullary predicate and per nullary goal copy. A nullary atom (``handempty``) has
  no object to sit on; *we set its column on every node of its state*, so that every node
  sees the fact from layer 0 on (the same choice the ``rgnn`` encoding makes when it lifts
  nullary atoms to unary ones on every object);
- **edges**: one edge per ordered node pair ``(u, v)`` occurring in at least one binary atom
  of the state or of a goal copy; its float32 multi-hot label vector ``[L]`` ranges over
  ``P ∪ P_G ∪ inv(P) ∪ inv(P_G)`` restricted to binary predicates. An atom ``p(a, b)`` sets
  label ``p`` on edge ``a → b`` and label ``p^-1`` on edge ``b → a``; a self-loop ``p(a, a)``
  is the edge ``a → a`` with both labels ``p`` and ``p^-1``.

**Why edges are merged.** All atoms over the same ordered pair share *one* edge with several
labels set. Chen's counterexample (section 3) shows why this matters: with one binary
predicate ``q`` over objects ``{a, b}``, the state ``{q(a,a), q(b,b)}`` and the state
``{q(a,b), q(b,a)}``, both with goal ``{q(a,b), q(b,a)}``, are symmetric under a ↔ b, so
all nodes keep equal embeddings in every layer; with one single-label edge per atom and
direction, every node of either state receives exactly one message labelled ``q``, ``q^-1``,
``q@goal`` and ``q@goal^-1`` each, from a node with the same embedding — identical inputs,
identical values (R-GNN's one hyperedge per atom fails the same way). Nothing tells whether
``q`` and ``q@goal`` hold of the *same* pair. Merged, the second state has an edge ``b → a`` that carries ``q`` *and* ``q@goal``
together (the goal atom holds), which no edge of the first state does; a GNN reading edge
label vectors then distinguishes the two states (value 2 vs 0).

**Higher arity.** PLOI graphs are defined for predicates of arity at most 2. Predicates of
arity ``m ≥ 3`` are refused by default (:class:`ValueError` naming them). With
``decompose_higher_arity=True`` each atom ``p(o1..om)`` becomes the binary atoms
``p#i#j(oi, oj)`` for ``1 ≤ i < j ≤ m`` (goal copies likewise, ``p#i#j@goal``). This loses
information: which pairs belong to the same atom is forgotten, so distinct states can get
the same graph (Chen, Trevizan & Thiébaux 2024, "Return to Tradition", ICAPS, Theorem 4.4).

Outputs, in :meth:`PloiEncoding.input_names` order (N nodes, B states, E edges):
``node_graph`` int64[N], ``readout_nodes`` int64[N] (all nodes), ``readout_graph`` int64[N],
``graph_index`` int64[B], ``node_features`` float32[N, F], ``edge_index`` int64[2, E] (row 0
source, row 1 target; edges sorted by (source, target)), ``edge_features`` float32[E, L].
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.base import FeatureGraphEncoding, StateInput, batch_atoms, goal_blocks, goal_relations

INVERSE_SUFFIX = "^-1"


class PloiEncoding(FeatureGraphEncoding):
    """Objects as nodes with multi-hot unary/nullary features, merged multi-label binary edges.

    Args:
        signature: the domain's predicate signature.
        goal_mode: ``separate`` (one goal copy per predicate) or ``achieved`` (achieved and
            open goal copies).
        decompose_higher_arity: decompose predicates of arity ≥ 3 into pairwise binary
            predicates ``p#i#j`` (lossy); by default they are refused.
    """

    name = "ploi"

    def __init__(self, signature, goal_mode: str = "separate", decompose_higher_arity: bool = False):
        super().__init__(signature, goal_mode)
        self.decompose_higher_arity = bool(decompose_higher_arity)
        high = [f"{n}/{a}" for n, a in signature.predicates if a >= 3]
        if high and not self.decompose_higher_arity:
            raise ValueError(
                "the ploi encoding supports predicates of arity at most 2, but the domain has "
                + ", ".join(high)
                + "; `gnnplan train --decompose-higher-arity` (decompose_higher_arity=True in Python) splits them "
                "into pairwise binary predicates p#i#j (this loses information)"
            )
        P = len(signature)
        # Every relation: (name, block predicate id, arity), state predicates first.
        relations = [(name, pid, arity) for pid, (name, arity) in enumerate(signature.predicates)]
        blocks = goal_blocks(goal_mode)
        for name, pid, arity, kind in goal_relations(signature, goal_mode):
            relations.append((name, blocks[kind] * P + pid, arity))

        # Node feature columns: unary relations, then nullary ones.
        self._column = np.full(4 * P, -1, dtype=np.int64)
        self._nullary = np.zeros(4 * P, dtype=bool)
        self.feature_names: list[str] = []
        for wanted in (1, 0):
            for name, bid, arity in relations:
                if arity == wanted:
                    self._column[bid] = len(self.feature_names)
                    self._nullary[bid] = arity == 0
                    self.feature_names.append(name)

        # Edge labels: (block id, position i, position j) per forward label; inverses follow.
        self._pairs: list[tuple[int, int, int]] = []
        names: list[str] = []
        for name, bid, arity in relations:
            if arity == 2:
                self._pairs.append((bid, 0, 1))
                names.append(name)
            elif arity >= 3:
                base, _, suffix = name.partition("@")
                for i in range(arity):
                    for j in range(i + 1, arity):
                        self._pairs.append((bid, i, j))
                        names.append(f"{base}#{i + 1}#{j + 1}" + (f"@{suffix}" if suffix else ""))
        self.label_names = names + [n + INVERSE_SUFFIX for n in names]
        # Per block id, the forward labels it produces (for the loop over predicates in encode).
        self._labels_of: dict[int, list[tuple[int, int, int]]] = {}
        for label, (bid, i, j) in enumerate(self._pairs):
            self._labels_of.setdefault(bid, []).append((label, i, j))

    def config(self) -> dict:
        out = super().config()
        out["decompose_higher_arity"] = self.decompose_higher_arity
        return out

    def encode(self, states: list[StateInput]) -> dict[str, np.ndarray]:
        B = len(states)
        batch = batch_atoms(states, self.signature, self.goal_mode)
        pred, arg, graph, node_graph, N = batch.pred, batch.args, batch.graph, batch.node_graph, batch.num_nodes

        # Node features: unary atoms set their column on their object; nullary atoms on
        # every node of their state.
        features = np.zeros((N, self.num_features), dtype=np.float32)
        column = self._column[pred]
        nullary = self._nullary[pred]
        unary = (column >= 0) & ~nullary
        features[arg[unary, 0], column[unary]] = 1.0
        if nullary.any() and N:
            per_state = np.zeros((B, self.num_features), dtype=np.float32)
            per_state[graph[nullary], column[nullary]] = 1.0
            features = np.maximum(features, per_state[node_graph])

        # Edges: forward labels from atoms, inverse labels on the reversed pairs, merged by pair.
        sources, targets, labels = [], [], []
        order = np.argsort(pred, kind="stable")
        sorted_pred = pred[order]
        for bid, entries in self._labels_of.items():
            lo, hi = np.searchsorted(sorted_pred, [bid, bid + 1])
            if lo == hi:
                continue
            rows = arg[order[lo:hi]]
            for label, i, j in entries:
                sources.append(rows[:, i])
                targets.append(rows[:, j])
                labels.append(np.full(hi - lo, label, dtype=np.int64))
        half = len(self._pairs)
        if sources:
            src, dst, lab = np.concatenate(sources), np.concatenate(targets), np.concatenate(labels)
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            lab = np.concatenate([lab, lab + half])
            keys = src * max(N, 1) + dst
            unique, inverse = np.unique(keys, return_inverse=True)
            edge_index = np.stack([unique // max(N, 1), unique % max(N, 1)]).astype(np.int64)
            edge_features = np.zeros((len(unique), self.num_labels), dtype=np.float32)
            edge_features[inverse.reshape(-1), lab] = 1.0
        else:
            edge_index = np.zeros((2, 0), dtype=np.int64)
            edge_features = np.zeros((0, self.num_labels), dtype=np.float32)

        return {
            "node_graph": node_graph,
            "readout_nodes": np.arange(N, dtype=np.int64),
            "readout_graph": node_graph,
            "graph_index": np.arange(B, dtype=np.int64),
            "node_features": features,
            "edge_index": edge_index,
            "edge_features": edge_features,
        }

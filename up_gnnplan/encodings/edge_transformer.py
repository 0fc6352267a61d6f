"""Edge Transformer input: the atoms of a state and its goal as features of ordered object pairs.

Ståhlberg, Bonet & Geffner (2024), "Learning General Policies for Classical Planning Domains:
Getting Beyond C2", section 6, after Bergen, O'Donnell & Bahdanau (2021). Every ordered pair
``⟨o, o'⟩`` of objects of a state gets the initial embedding

    E(o, o') = Σ_p  E_p · [p(o, o') ∈ S]  +  E_{p_g} · [p(o, o') ∈ G]

with one learned vector per predicate and per goal copy (:class:`~up_gnnplan.models.edge_transformer.EdgeTransformer`
holds the vectors; this module says which of them each pair sums). An atom of

- a **binary** predicate ``p(a, b)`` is a feature of the pair ``⟨a, b⟩``;
- a **unary** predicate ``p(a)`` (``type:T`` included) is a feature of ``⟨a, a⟩``: the paper reads
  unary predicates as binary ones "by repeating the atom's first term";
- a **nullary** predicate (``handempty``) is a feature of every pair of the state. The paper
  keeps to domains without them; a nullary atom is a fact about the whole state, and every
  pair is where every object hears of it (as the R-GNN encodings lift it to every object).

Goal atoms are features of separate goal predicates, as for the R-GNN (``p@goal``; in goal
mode ``achieved``, ``p@goal-achieved`` / ``p@goal-open``; negative goals ``p@goal-negative``):
:func:`~up_gnnplan.encodings.base.split_goal`. Predicates of arity 3 or more have no pair to
be a feature of; such domains are refused, as the paper leaves them out ("unsuitable domain:
ternary predicates").

**Batches** are padded to the largest state: state ``b`` of ``n_b`` objects occupies object slots
``0..n_b-1`` of ``n = max_b n_b`` slots, and pair ``⟨o, o'⟩`` of state ``b`` is the flat slot
``b·n² + o·n + o'`` of a ``[B, n, n]`` grid. The model computes on the whole grid and masks the
padding slots out of every attention (``slot_mask``) and out of the readout (only real
objects are in ``readout_nodes``), so a state's value does not depend on its batch.

Outputs, in :meth:`EdgeTransformerEncoding.input_names` order (B states, n slots, K features set):

- ``node_graph`` int64 [B·n]: the state of each object slot, padding included (the model reads
  ``n`` as its length over ``B``);
- ``readout_nodes`` int64 [R]: the flat pair slot ``b·n² + o·(n + 1)`` of ``⟨o, o⟩`` for every real
  object (the readout sums the pairs of identical objects, as R-GNN[t]'s); ``readout_graph``
  int64 [R]: their states; ``graph_index`` int64 [B];
- ``slot_mask`` float32 [B·n]: 1 for an object, 0 for padding;
- ``pair_atoms`` int64 [K, 2]: (flat pair slot, feature column) for every feature a pair has,
  without repeats (the Iverson bracket is 0 or 1). Columns are :attr:`feature_names`.

Every input's size varies along its first axis only, which is what the exporter makes dynamic.

**Size limit.** The model's triangular attention costs ``O(n³)`` time and memory per state and
layer; :data:`MAX_OBJECTS` bounds ``n`` (see there), and :meth:`EdgeTransformerEncoding.encode`
refuses larger states with :class:`TooManyObjectsError` before anything is allocated.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.base import FIXED_INPUTS, Encoding, StateInput, batch_atoms, goal_blocks, goal_relations
from up_gnnplan.limits import MemoryLimitReached

# The largest state (in objects) the Edge Transformer values. Per state and layer the model
# does about 5·d·n³ multiply-adds (d: embedding size) and holds, one head at a time, about
# (2 + 2·d/heads)·n³ floats of temporaries. Measured with onnxruntime on one thread of the shared
# development machine (hidden 32, 8 heads, 30 layers, one state per call): 0.04 s at 16 objects,
# 0.14 s at 32, 0.7 s at 64 and 6 s at 128, with ~80 MB of working memory at 128. A greedy
# policy step values tens of successors, so beyond ~64 objects a solve is already slow; at 256
# a state would take 8x that (extrapolated: ~50 s and ~0.6 GB), and a chunk of successors
# gigabytes. 128 covers the paper's test sets (training on small instances such as 4-9 blocks,
# testing on up to 100 objects: Visitall).
MAX_OBJECTS = 128


class TooManyObjectsError(MemoryLimitReached):
    """A state has more objects than the Edge Transformer values (:data:`MAX_OBJECTS`).

    It is a memory limit: a solve that meets such a state ends with UP's ``MEMOUT`` status and
    this message, instead of exhausting the machine's memory first.
    """


class EdgeTransformerEncoding(Encoding):
    """Object pairs on a padded ``[B, n, n]`` grid with the state's and goal's atoms as pair features.

    Args:
        signature: the domain's predicate signature (no predicate of arity above 2).
        goal_mode: ``separate`` (one goal copy per predicate) or ``achieved`` (achieved and
            open goal copies).
    """

    name = "edge_transformer"

    def __init__(self, signature, goal_mode: str = "separate"):
        super().__init__(signature, goal_mode)
        wide = [f"{name}/{arity}" for name, arity in signature.predicates if arity > 2]
        if wide:
            raise ValueError(f"the Edge Transformer encodes atoms as features of object pairs and cannot take "
                             f"predicates of arity 3 or more ({', '.join(wide)}); Ståhlberg et al. (2024, §6) leave "
                             "such domains out too. Use --arch rgnn_t, which takes any arity.")
        P = len(signature)
        # Feature column of each goal-block predicate id (see base.split_goal), -1 for none.
        self._column = np.full(4 * P, -1, dtype=np.int64)
        self._column[:P] = np.arange(P)
        self.feature_names = list(signature.names)
        blocks = goal_blocks(goal_mode)
        for name, pid, _, kind in goal_relations(signature, goal_mode):
            self._column[blocks[kind] * P + pid] = len(self.feature_names)
            self.feature_names.append(name)
        self._arity = np.tile(np.array(signature.arities, dtype=np.int64), 4)

    def input_names(self) -> list[str]:
        return FIXED_INPUTS + ["slot_mask", "pair_atoms"]

    def schema(self) -> dict:
        return {"pair_features": len(self.feature_names), "feature_names": list(self.feature_names),
                "max_objects": MAX_OBJECTS}

    def encode(self, states: list[StateInput]) -> dict[str, np.ndarray]:
        sizes = np.array([s.num_objects for s in states], dtype=np.int64)
        if len(sizes) and sizes.max() > MAX_OBJECTS:
            raise TooManyObjectsError(
                f"edge_transformer: a state of {int(sizes.max())} objects is more than the {MAX_OBJECTS} the Edge "
                "Transformer takes (its attention costs n³ time and memory per layer; see "
                "up_gnnplan.encodings.edge_transformer.MAX_OBJECTS); use --arch rgnn or rgnn_t for instances this large")
        B = len(states)
        n = int(sizes.max(initial=0))
        grid = n * n
        first = np.cumsum(sizes) - sizes  # each state's first object in batch_atoms' numbering

        batch = batch_atoms(states, self.signature, self.goal_mode)
        column = self._column[batch.pred]
        keep = column >= 0
        column, graph, arity = column[keep], batch.graph[keep], self._arity[batch.pred[keep]]
        local = np.where(batch.args[keep] >= 0, batch.args[keep] - first[graph][:, None], -1)
        slots, columns = [], []
        # Binary p(a, b) → ⟨a, b⟩; unary p(a) → ⟨a, a⟩ (the first term repeated).
        for wanted, second in ((2, 1), (1, 0)):
            has = arity == wanted
            if has.any():
                rows = local[has]
                slots.append(graph[has] * grid + rows[:, 0] * n + rows[:, second])
                columns.append(column[has])
        # Nullary atoms → every pair of their state's objects.
        nullary = np.flatnonzero(arity == 0)
        if len(nullary):
            pairs = sizes[graph[nullary]] ** 2
            within = np.arange(pairs.sum(), dtype=np.int64) - np.repeat(np.cumsum(pairs) - pairs, pairs)
            width = np.repeat(sizes[graph[nullary]], pairs)
            slots.append(np.repeat(graph[nullary] * grid, pairs) + (within // width) * n + within % width)
            columns.append(np.repeat(column[nullary], pairs))
        pair_atoms = np.stack([np.concatenate(slots), np.concatenate(columns)], axis=1) if slots else np.zeros((0, 2))
        pair_atoms = np.unique(pair_atoms.astype(np.int64), axis=0).reshape(-1, 2)

        state_of_object = np.repeat(np.arange(B, dtype=np.int64), sizes)
        within_state = np.arange(int(sizes.sum()), dtype=np.int64) - first[state_of_object]
        return {
            "node_graph": np.repeat(np.arange(B, dtype=np.int64), n),
            "readout_nodes": state_of_object * grid + within_state * (n + 1),
            "readout_graph": state_of_object,
            "graph_index": np.arange(B, dtype=np.int64),
            "slot_mask": (np.arange(n)[None, :] < sizes[:, None]).astype(np.float32).reshape(-1),
            "pair_atoms": pair_atoms,
        }

"""R-GNN[t] input: an R-GNN over object pairs, ``R-GNN[t](S, O) = R-GNN(A_t(S), O²)``.

Ståhlberg, Bonet & Geffner (2024), "Learning General Policies for Classical Planning Domains:
Getting Beyond C2", section 4. The model is the plain
:class:`~up_gnnplan.models.rgnn.RelationalGNN`; only its input changes.

Nodes
    Every ordered pair ``⟨o, o'⟩`` of objects of a state: ``n²`` nodes for ``n`` objects, with
    node id ``offset + o * n + o'`` (``offset``: the number of pair nodes of the earlier states
    of the batch).

``A_0(S) = { p(⟨w⟩²) | p(w) ∈ S }``
    An atom ``p(o1..om)`` becomes an atom of relation ``p`` of arity ``m²`` over the pairs
    ``(o1,o1), (o1,o2), .., (o1,om), .., (om,o1), .., (om,om)``, in that order. ``S`` holds the
    state's atoms (fluent, static and ``type:`` atoms, see :mod:`up_gnnplan.states.signature`)
    and its goal atoms as atoms of separate goal predicates (``p@goal``, or in goal mode
    ``achieved`` ``p@goal-achieved`` / ``p@goal-open``, and ``p@goal-negative``), exactly as
    for the plain R-GNN (:func:`~up_gnnplan.encodings.base.split_goal`).

    Nullary atoms (``handempty``) have no object; as in the plain R-GNN each true nullary atom
    is first lifted to a unary atom on every object (:func:`~up_gnnplan.encodings.rgnn.lift_nullary`),
    which ``⟨·⟩²`` then maps to a unary atom on every pair ``⟨o, o⟩``. Nullary predicates
    therefore become unary relations (``1² = 1``).

``OBJ``
    A static unary atom ``OBJ(o)`` for every object, mapped to ``OBJ(⟨o, o⟩)``: it marks the
    pairs that the readout sums (paper, end of section 4). The relation ``OBJ`` is always
    present, right after the predicate and goal relations.

``Δ_t(S)`` (``t ≥ 1``), relation ``compose`` of arity 3, last in the relation list
    ``△(⟨o,o'⟩, ⟨o',o''⟩, ⟨o,o''⟩)`` for all ``⟨o,o'⟩, ⟨o',o''⟩ ∈ R_t``: the composed pair is
    the third argument. ``R_1`` holds ``⟨o, o'⟩`` iff ``o`` and ``o'`` occur together in an
    atom of ``S``, in either order; ``R_t = R_{t-1} ∘ R_{t-1}`` for ``t > 1``.

    Our reading of "``o`` and ``o'`` are both in an atom": ``o = o'`` is allowed. Since the
    ``OBJ(o)`` atoms are atoms of ``S``, every ``⟨o, o⟩`` is in ``R_1``; ``R_1`` is thus
    reflexive and symmetric, and so is every ``R_t``, which gives ``R_t ⊇ R_{t-1}``
    (compose with ``⟨o', o'⟩``) — larger ``t`` only adds compose atoms. Reflexivity also adds
    the "degenerate" atoms ``△(⟨o,o⟩, ⟨o,o'⟩, ⟨o,o'⟩)`` and ``△(⟨o,o'⟩, ⟨o',o'⟩, ⟨o,o'⟩)`` for
    each ``⟨o,o'⟩ ∈ R_t``, which link every pair in ``R_t`` with its two single-object pairs.
    Static and type atoms are atoms of ``S`` and count for ``R_1`` (so a static ``succ-x``
    or ``cell(x, y)`` links its objects); type atoms are unary and only add ``⟨o, o⟩``, which
    ``OBJ`` already adds. Goal atoms count as well (they are atoms of ``S`` in the paper's
    convention). Lifted nullary atoms are unary too and add nothing.

    For ``t = 0`` there is no ``compose`` relation at all (``A_0(S)`` has none), so an R-GNN[0]
    model has no ``compose`` MLP.

Readout
    Only the pairs ``⟨o, o⟩`` (``readout_nodes``, with their state in ``readout_graph``):
    ``V(S) = MLP(Σ_o f_L(⟨o, o⟩))``.

Outputs: ``node_graph`` [N], ``readout_nodes`` [R], ``readout_graph`` [R], ``graph_index`` [G],
then ``rel_0 .. rel_{R-1}`` (int64 [k, arity]); :meth:`RGNNTEncoding.schema` lists the
relations with their (squared) arities, so ``RelationalGNN(encoding.relations, ...)`` works
unchanged.

Implementation: everything is vectorised over atoms and pairs. ``A_0`` is one gather for all
atoms of the batch, sliced per relation; ``R_1`` is a boolean ``n × n`` matrix per state filled by
fancy indexing, ``R_t`` by ``t - 1`` squarings (float32 matrix products, ``> 0``); ``Δ_t`` is
one sparse join over the whole batch (for each edge ``⟨o,o'⟩`` of ``R_t``, all out-edges of
``o'`` from a CSR index, expanded with ``np.repeat``). ``|Δ_t| = Σ_{o'} indeg(o') · outdeg(o')``
over ``R_t``, at most ``n³`` per state.

Cost (one state, goal mode ``separate``; "A_0+OBJ" counts the atoms of every relation but
``compose``, which do not depend on ``t``; Δ_0 is empty). Encoding time in ms per state,
``OMP_NUM_THREADS=1``, best of 5 rounds on the shared development machine (repeat runs vary
by up to 2x), for one state per call and for batches of 32, with the plain ``rgnn``
encoding of the same state in parentheses::

    instance               objs  nodes  A_0+OBJ    Δ_1    Δ_2   ms/state t=0/1/2 (rgnn)
                                                                 batch of 1          batch of 32
    Blocksworld  5 blocks     5     25       29     35     75   0.19/0.28/0.25 (0.18)  0.06/0.11/0.16 (0.08)
    Blocksworld 10 blocks    10    100       54    152    662   0.27/0.36/0.31 (0.12)  0.09/0.19/0.16 (0.06)
    Blocksworld 20 blocks    20    400      107    342   1872   0.18/0.33/0.45 (0.15)  0.09/0.16/0.30 (0.07)
    Navig-xy  6 x  4         10    100       60    558   1000   0.19/0.37/0.35 (0.12)  0.06/0.12/0.17 (0.08)
    Navig-xy 10 x 10         20    400      185   3280   8000   0.17/0.39/0.39 (0.12)  0.07/0.42/0.73 (0.05)

Blocksworld: the initial state of a random configuration (towers built at random), goal one
tower ``b0`` on ``b1`` on ...; nodes grow as ``n²`` and Δ_1 stays near-linear because ``on``
links a block only to its neighbours (Δ_2 is larger: ``R_2`` also links blocks two steps
apart along the state's and the goal's ``on`` chains).
Navig-xy: a generated instance (``blocked_ratio`` 0.25), initial state. Its static
``cell(x, y)`` atoms put every ``⟨x, y⟩`` in ``R_1``, so ``R_2`` already holds every pair and
``Δ_2 = n³``: from ``t = 2`` on, compose atoms grow cubically with the number of objects, and
so do the model's messages (3 per compose atom and layer). Regenerate the table with
``OMP_NUM_THREADS=1 python -m benchmarks.rgnn_t_encoding_cost``.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.base import Encoding, StateInput, split_goal
from up_gnnplan.encodings.rgnn import FIXED_INPUTS, lift_nullary, relation_table
from up_gnnplan.states.atoms import Atoms

OBJ = "OBJ"
COMPOSE = "compose"


def square_pairs(args: np.ndarray, objects: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Return int64 [k, w, w] with ``[i, a, b]`` = pair node id of ``⟨args[i, a], args[i, b]⟩``.

    ``objects[i]`` / ``offsets[i]``: the number of objects and the first pair node id of the
    state of atom ``i``. Entries involving padding (-1) are meaningless; ``⟨w⟩²`` of an atom of
    arity ``m`` is ``[i, :m, :m]`` read row by row.
    """
    w = args.astype(np.int64)
    n = objects.astype(np.int64)[:, None, None]
    return offsets.astype(np.int64)[:, None, None] + w[:, :, None] * n + w[:, None, :]


def cooccurrence(args: np.ndarray, num_objects: int) -> np.ndarray:
    """Return ``R_1`` of one state: boolean [n, n], true where two objects share an atom.

    ``args`` holds object ids padded with -1; the diagonal is always set (``OBJ`` atoms).
    """
    relation = np.eye(num_objects, dtype=bool)
    width = args.shape[1]
    for i in range(width):
        for j in range(width):
            if i == j:
                continue
            both = (args[:, i] >= 0) & (args[:, j] >= 0)
            relation[args[both, i], args[both, j]] = True
    return relation


def compose_closure(relation: np.ndarray, t: int) -> np.ndarray:
    """Return ``R_t`` from ``R_1``: ``t - 1`` compositions ``R ∘ R`` (boolean matrix products)."""
    for _ in range(t - 1):
        as_float = relation.astype(np.float32)
        relation = (as_float @ as_float) > 0
    return relation


def compose_join(src: np.ndarray, dst: np.ndarray, row: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Return the compose atoms of a relation given as edges ``src[i] → dst[i]`` (a sparse self-join).

    Objects are global ids; ``row[o]`` is the pair node id of ``⟨o, first object of its state⟩``
    and ``local[o]`` the object's number in its state, so ``⟨o, o'⟩`` is ``row[o] + local[o']``.
    Returns int64 [k, 3]: ``(⟨o,o'⟩, ⟨o',o''⟩, ⟨o,o''⟩)`` for all edges ``o → o'``, ``o' → o''``.
    Each edge ``(o, o')`` is repeated ``outdeg(o')`` times and paired with the out-edges of
    ``o'``, found through a CSR index of the edges sorted by source.
    """
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    starts = np.searchsorted(src, np.arange(len(row) + 1))
    counts = np.diff(starts)[dst]  # out-degree of each edge's target
    total = int(counts.sum())
    edge_pair = row[src] + local[dst]  # node <o,o'> of each edge
    # The j-th copy of edge e pairs with edge starts[dst[e]] + j.
    second = np.arange(total) + np.repeat(starts[dst] - (np.cumsum(counts) - counts), counts)
    out = np.empty((total, 3), dtype=np.int64)
    out[:, 0] = np.repeat(edge_pair, counts)
    out[:, 1] = edge_pair[second]
    out[:, 2] = np.repeat(row[src], counts) + local[dst[second]]
    return out


class RGNNTEncoding(Encoding):
    """Object pairs as nodes; ``A_t(S)``: squared atoms, ``OBJ`` and (t ≥ 1) compose atoms."""

    name = "rgnn_t"

    def __init__(self, signature, goal_mode: str = "separate", t: int = 1):
        super().__init__(signature, goal_mode)
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
            raise ValueError(f"t must be a non-negative integer, not {t!r}")
        if t < 0:
            raise ValueError(f"t must be a non-negative integer, not {t}")
        self.t = int(t)
        base, self._lookup = relation_table(signature, goal_mode)
        self._base_arities = [a for _, a in base]  # arities in S (nullary lifted to 1)
        self.relations = [(name, a * a) for name, a in base] + [(OBJ, 1)]
        if self.t >= 1:
            self.relations.append((COMPOSE, 3))
        # Arity of every goal-block predicate id, for lifting nullary goal atoms too.
        self._block_arities = np.tile(np.array(signature.arities, dtype=np.int64), 4)

    def input_names(self) -> list[str]:
        return FIXED_INPUTS + [f"rel_{i}" for i in range(len(self.relations))]

    def schema(self) -> dict:
        return {"relations": [[n, a] for n, a in self.relations]}

    def config(self) -> dict:
        return {**super().config(), "t": self.t}

    def encode(self, states: list[StateInput]) -> dict[str, np.ndarray]:
        P = len(self.signature)
        B = len(states)
        sizes = np.array([s.num_objects for s in states], dtype=np.int64)
        pair_offsets = np.concatenate([[0], np.cumsum(sizes * sizes)]).astype(np.int64)
        object_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        preds, args, atom_state = [], [], []
        edges_src, edges_dst = [], []  # R_t over global object ids
        for b, state in enumerate(states):
            width = state.atoms.args.shape[1]
            atoms = Atoms.concat([state.atoms, split_goal(state, self.goal_mode, P)], width)
            atoms = lift_nullary(atoms, self._block_arities, state.num_objects)
            relation = self._lookup[atoms.pred]
            keep = relation >= 0
            preds.append(relation[keep])
            args.append(atoms.args[keep])
            atom_state.append(np.full(int(keep.sum()), b, dtype=np.int64))
            if self.t >= 1:
                r = compose_closure(cooccurrence(atoms.args[keep], state.num_objects), self.t)
                o, o2 = np.nonzero(r)
                edges_src.append(o + object_offsets[b])
                edges_dst.append(o2 + object_offsets[b])
        width = max([a.shape[1] for a in args] + self._base_arities + [1])
        pred = np.concatenate(preds) if preds else np.zeros(0, np.int64)
        arg = np.concatenate([_pad(a, width) for a in args]) if args else np.zeros((0, width), np.int32)
        owner = np.concatenate(atom_state) if atom_state else np.zeros(0, np.int64)

        # A_0: <w>^2 of every atom at once, then one slice per relation.
        order = np.argsort(pred, kind="stable")
        pred, owner = pred[order], owner[order]
        pairs = square_pairs(arg[order], sizes[owner], pair_offsets[owner])
        bounds = np.searchsorted(pred, np.arange(len(self._base_arities) + 1))
        out_relations = [
            pairs[bounds[r] : bounds[r + 1], :arity, :arity].reshape(-1, arity * arity)
            for r, arity in enumerate(self._base_arities)
        ]

        # OBJ(<o,o>) for every object; these are also the readout nodes.
        graph_of_object = np.repeat(np.arange(B, dtype=np.int64), sizes)
        local = np.arange(int(sizes.sum()), dtype=np.int64) - object_offsets[graph_of_object]
        diagonal = pair_offsets[graph_of_object] + local * (sizes[graph_of_object] + 1)
        out_relations.append(diagonal.reshape(-1, 1))

        if self.t >= 1:
            src = np.concatenate(edges_src) if edges_src else np.zeros(0, np.int64)
            dst = np.concatenate(edges_dst) if edges_dst else np.zeros(0, np.int64)
            row = pair_offsets[graph_of_object] + local * sizes[graph_of_object]
            out_relations.append(compose_join(src, dst, row, local))

        out = {
            "node_graph": np.repeat(np.arange(B, dtype=np.int64), sizes * sizes),
            "readout_nodes": diagonal,
            "readout_graph": graph_of_object,
            "graph_index": np.arange(B, dtype=np.int64),
        }
        out.update({f"rel_{i}": np.ascontiguousarray(g, dtype=np.int64) for i, g in enumerate(out_relations)})
        return out


def _pad(args: np.ndarray, width: int) -> np.ndarray:
    """Return ``args`` padded with -1 columns up to ``width``."""
    if args.shape[1] == width:
        return args
    padded = np.full((len(args), width), -1, dtype=args.dtype)
    padded[:, : args.shape[1]] = args
    return padded

"""Object-atom graphs of Müller et al. (2024): objects, state atoms and goal atoms as nodes.

Müller, Sánchez, Hoffmann, Wolf & Gros (2024), "Comparing State-of-the-art Graph Neural
Networks and Transformers for General Policy Learning", section "Graph Representation". The
graph of a state ``s`` with goal ``G`` over objects ``O`` has

- **nodes**: one per object, one per atom of ``s`` and one per atom of ``G`` (negative goal
  atoms included);
- **edges**: from each atom node to the node of each of its arguments, and back (the graph is
  undirected, as in the paper); a nullary atom (``handempty``) has no argument and is linked to
  every object of its state, since it is a property of the whole state.

**Node features, and why they differ from the paper's.** The paper gives each node the
integers ``[i, t, n, a_0..a_m]``: a unique id, the node kind, the object's name or the atom's
predicate, and the names of the atom's arguments. Ids and names change when the objects are
renamed or listed in another order, so a network reading them computes different values for
the same state written twice; it also cannot meet the names of a larger test instance in
training. We keep only what does not depend on names: a one-hot ``[N, F]`` of the node's
kind and predicate, with columns ``object``, then one per predicate ``p`` (state atom
nodes, type predicates ``type:T`` included), then one per goal copy (``p@goal`` and
``p@goal-negative``; in goal mode ``achieved``, ``p@goal-achieved`` / ``p@goal-open``).

**Edge labels, and why there are any.** Without the argument names, the edges alone do not
say which argument is which: ``on(a, b)`` and ``on(b, a)`` give the same graph, so a goal
``on(a, b)`` could not be told from its reverse. Each edge therefore carries a one-hot label
``[E, L]`` of the argument position and direction: ``arg i>`` (atom → its i-th argument),
``<arg i`` (argument → atom), and ``nullary>`` / ``<nullary`` for the links of nullary atoms.
This is the information the paper's ``a_i`` carried, without the names. The models of
:mod:`up_gnnplan.models.muller` read the labels as edge features added to the messages (as in
GINE; for GATv2 also in the attention scores); the paper chose graphs without edge features
so that any layer applies, which is why the labels are kept apart from the node features. An atom with a repeated argument
(``p(a, a)``) has one edge per position.

Outputs, in :meth:`MullerEncoding.input_names` order (N nodes, B states, E edges): the object
nodes of all states first (numbered as in :func:`~up_gnnplan.encodings.base.batch_atoms`),
then the atom nodes; ``node_graph`` int64[N], ``readout_nodes`` int64[N] (every node),
``readout_graph`` int64[N], ``graph_index`` int64[B], ``node_features`` float32[N, F],
``edge_index`` int64[2, E] (row 0 source, row 1 target; both directions of every link),
``edge_features`` float32[E, L].
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.base import FeatureGraphEncoding, StateInput, batch_atoms, goal_blocks, goal_relations

OBJECT = "object"  # the feature column of object nodes


class MullerEncoding(FeatureGraphEncoding):
    """Objects, state atoms and goal atoms as nodes with one-hot kinds; position-labelled atom-argument edges.

    Args:
        signature: the domain's predicate signature.
        goal_mode: ``separate`` (one goal copy per predicate) or ``achieved`` (achieved and
            open goal copies).
    """

    name = "muller"

    def __init__(self, signature, goal_mode: str = "separate"):
        super().__init__(signature, goal_mode)
        P = len(signature)
        # Feature column of each goal-block predicate id (see base.split_goal), -1 for none.
        self._column = np.full(4 * P, -1, dtype=np.int64)
        self.feature_names = [OBJECT] + list(signature.names)
        self._column[:P] = np.arange(1, P + 1)
        blocks = goal_blocks(goal_mode)
        for name, pid, _, kind in goal_relations(signature, goal_mode):
            self._column[blocks[kind] * P + pid] = len(self.feature_names)
            self.feature_names.append(name)
        self._arity = np.tile(np.array(signature.arities, dtype=np.int64), 4)
        self.positions = signature.max_arity
        # Label 2i: atom → argument i, 2i + 1: argument i → atom; position ``positions`` is a nullary atom's link.
        self.label_names = []
        for i in range(self.positions):
            self.label_names += [f"arg{i + 1}>", f"<arg{i + 1}"]
        self.label_names += ["nullary>", "<nullary"]

    def encode(self, states: list[StateInput]) -> dict[str, np.ndarray]:
        batch = batch_atoms(states, self.signature, self.goal_mode)
        column = self._column[batch.pred]
        keep = column >= 0
        pred, args, graph, column = batch.pred[keep], batch.args[keep], batch.graph[keep], column[keep]
        num_nodes = batch.num_nodes + len(pred)
        atom_node = np.arange(batch.num_nodes, num_nodes, dtype=np.int64)
        node_graph = np.concatenate([batch.node_graph, graph])

        features = np.zeros((num_nodes, self.num_features), dtype=np.float32)
        features[: batch.num_nodes, 0] = 1.0
        features[atom_node, column] = 1.0

        # Atom → argument links, one per argument position.
        arity = self._arity[pred]
        atom_ends, object_ends, positions = [], [], []
        for i in range(args.shape[1]):
            has = arity > i
            atom_ends.append(atom_node[has])
            object_ends.append(args[has, i].astype(np.int64))
            positions.append(np.full(int(has.sum()), i, dtype=np.int64))
        # Nullary atom → every object of its state.
        nullary = np.flatnonzero(arity == 0)
        if len(nullary):
            sizes = np.array([s.num_objects for s in states], dtype=np.int64)
            first = np.cumsum(sizes) - sizes
            counts = sizes[graph[nullary]]
            within = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
            atom_ends.append(np.repeat(atom_node[nullary], counts))
            object_ends.append(np.repeat(first[graph[nullary]], counts) + within)
            positions.append(np.full(int(counts.sum()), self.positions, dtype=np.int64))
        atom_side = np.concatenate(atom_ends) if atom_ends else np.zeros(0, np.int64)
        object_side = np.concatenate(object_ends) if object_ends else np.zeros(0, np.int64)
        position = np.concatenate(positions) if positions else np.zeros(0, np.int64)

        # Both directions: atom → object edges first, then object → atom.
        edge_index = np.stack([np.concatenate([atom_side, object_side]), np.concatenate([object_side, atom_side])])
        labels = np.concatenate([2 * position, 2 * position + 1])
        edge_features = np.zeros((len(labels), self.num_labels), dtype=np.float32)
        edge_features[np.arange(len(labels)), labels] = 1.0
        return {
            "node_graph": node_graph,
            "readout_nodes": np.arange(num_nodes, dtype=np.int64),
            "readout_graph": node_graph,
            "graph_index": np.arange(len(states), dtype=np.int64),
            "node_features": features,
            "edge_index": edge_index.astype(np.int64).reshape(2, -1),
            "edge_features": edge_features,
        }

"""R-GNN input: objects exchange messages through the atoms of the state and of the goal.

Ståhlberg, Bonet & Geffner (2024), section 3.4. Nodes are the objects; each atom
``p(o1..om)`` is a hyperedge of relation ``p``; each goal atom is an atom of a separate goal
predicate ``p@goal`` (or, in goal mode ``achieved``, of ``p@goal-achieved`` / ``p@goal-open``
depending on whether it holds in the state), negative goals of ``p@goal-negative``.

Nullary atoms (``handempty``) have no object to send a message to; we turn each true nullary
atom into a unary atom on every object of the state, so the fact reaches every embedding.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.base import FIXED_INPUTS, Encoding, StateInput, goal_blocks, goal_relations, split_goal
from up_gnnplan.states.atoms import Atoms



def relation_table(signature, goal_mode: str):
    """Return (relations [(name, arity)], lookup from goal-block predicate id to relation id).

    Nullary predicates get arity 1 (see the module docstring).
    """
    P = len(signature)
    relations = [(name, max(arity, 1)) for name, arity in signature.predicates]
    lookup = np.full(4 * P, -1, dtype=np.int64)
    lookup[:P] = np.arange(P)
    blocks = goal_blocks(goal_mode)
    for name, pid, arity, kind in goal_relations(signature, goal_mode):
        lookup[blocks[kind] * P + pid] = len(relations)
        relations.append((name, max(arity, 1)))
    return relations, lookup


def lift_nullary(atoms: Atoms, arities: np.ndarray, num_objects: int) -> Atoms:
    """Return ``atoms`` with each nullary atom replaced by a unary one on every object."""
    nullary = arities[atoms.pred] == 0
    if not nullary.any() or num_objects == 0:
        return Atoms(atoms.pred[~nullary], atoms.args[~nullary]) if nullary.any() else atoms
    preds = atoms.pred[nullary]
    lifted_pred = np.repeat(preds, num_objects)
    lifted_args = np.full((len(lifted_pred), atoms.args.shape[1]), -1, dtype=atoms.args.dtype)
    lifted_args[:, 0] = np.tile(np.arange(num_objects, dtype=atoms.args.dtype), len(preds))
    return Atoms(np.concatenate([atoms.pred[~nullary], lifted_pred]), np.concatenate([atoms.args[~nullary], lifted_args]))


def group_relations(pred: np.ndarray, args: np.ndarray, relations) -> list[np.ndarray]:
    """Return, per relation, an int64 [k, arity] array of node ids of its atoms."""
    order = np.argsort(pred, kind="stable")
    pred, args = pred[order], args[order]
    bounds = np.searchsorted(pred, np.arange(len(relations) + 1))
    return [
        np.ascontiguousarray(args[bounds[r] : bounds[r + 1], :arity], dtype=np.int64)
        for r, (_, arity) in enumerate(relations)
    ]


class RGNNEncoding(Encoding):
    """Objects as nodes, atoms (state and goal) as hyperedges of their relation."""

    name = "rgnn"

    def __init__(self, signature, goal_mode: str = "separate"):
        super().__init__(signature, goal_mode)
        self.relations, self._lookup = relation_table(signature, goal_mode)
        # Arity of every goal-block predicate id, for lifting nullary goal atoms too.
        self._block_arities = np.tile(np.array(signature.arities, dtype=np.int64), 4)

    def input_names(self) -> list[str]:
        return FIXED_INPUTS + [f"rel_{i}" for i in range(len(self.relations))]

    def schema(self) -> dict:
        return {"relations": [[n, a] for n, a in self.relations]}

    def encode(self, states: list[StateInput]) -> dict[str, np.ndarray]:
        P = len(self.signature)
        preds, args, sizes = [], [], []
        offset = 0
        for state in states:
            atoms = Atoms.concat([state.atoms, split_goal(state, self.goal_mode, P)], state.atoms.args.shape[1])
            atoms = lift_nullary(atoms, self._block_arities, state.num_objects)
            shifted = np.where(atoms.args >= 0, atoms.args + offset, -1)
            preds.append(self._lookup[atoms.pred])
            args.append(shifted)
            sizes.append(state.num_objects)
            offset += state.num_objects
        pred = np.concatenate(preds) if preds else np.zeros(0, np.int64)
        arg = np.concatenate(args) if args else np.zeros((0, 1), np.int64)
        keep = pred >= 0
        grouped = group_relations(pred[keep], arg[keep], self.relations)
        node_graph = np.repeat(np.arange(len(states), dtype=np.int64), sizes)
        out = {
            "node_graph": node_graph,
            "readout_nodes": np.arange(offset, dtype=np.int64),
            "readout_graph": node_graph,
            "graph_index": np.arange(len(states), dtype=np.int64),
        }
        out.update({f"rel_{i}": g for i, g in enumerate(grouped)})
        return out

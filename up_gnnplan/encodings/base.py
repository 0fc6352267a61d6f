"""What every encoding shares: its input (states with goals) and its output (named arrays).

An encoding turns a batch of states into a dict of numpy arrays whose names and order are
fixed by the encoding's :meth:`Encoding.input_names`; the model's ``forward`` takes exactly
these arrays as tensors, which is what makes ONNX export and onnxruntime inference direct.
Every encoding batches states as a disjoint union and marks, for the readout, which nodes
belong to which state (``readout_nodes`` / ``readout_graph``) and how many states there are
(``graph_index`` = 0..B-1).

Encodings are pure numpy: no torch, so the runtime can use them with onnxruntime alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from up_gnnplan.states.atoms import Atoms
from up_gnnplan.states.signature import TYPE_PREFIX, PredicateSignature

GOAL_MODES = ("separate", "achieved")
# The readout inputs every encoding gives first (see the module docstring).
FIXED_INPUTS = ["node_graph", "readout_nodes", "readout_graph", "graph_index"]


@dataclass(frozen=True)
class StateInput:
    """One state to encode: all its atoms, its task's goal atoms, and its number of objects."""

    atoms: Atoms
    goal: Atoms
    num_objects: int
    negative_goal: Atoms | None = None


def atom_keys(pred: np.ndarray, args: np.ndarray, base: int) -> np.ndarray:
    """Return one int64 key per atom (predicate and arguments), for set operations."""
    keys = pred.astype(np.int64)
    for j in range(args.shape[1]):
        keys = keys * base + (args[:, j].astype(np.int64) + 1)
    return keys


def goal_relations(signature: PredicateSignature, goal_mode: str) -> list[tuple[str, int, int, str]]:
    """Return (relation name, predicate id, arity, kind) of the goal copies of the predicates.

    ``kind`` is ``goal`` (mode ``separate``), ``goal-achieved`` / ``goal-open`` (mode
    ``achieved``: split by whether the goal atom holds in the state), or ``goal-negative``.
    Type predicates never occur in goals and get no copy.
    """
    if goal_mode not in GOAL_MODES:
        raise ValueError(f"unknown goal mode {goal_mode!r}; choose one of {', '.join(GOAL_MODES)}")
    kinds = ["goal"] if goal_mode == "separate" else ["goal-achieved", "goal-open"]
    kinds.append("goal-negative")
    out = []
    for kind in kinds:
        for pid, (name, arity) in enumerate(signature.predicates):
            if not name.startswith(TYPE_PREFIX):
                out.append((f"{name}@{kind}", pid, arity, kind))
    return out


def goal_blocks(goal_mode: str) -> dict[str, int]:
    """Return the goal-copy block of each goal kind (the layout of :func:`split_goal`)."""
    return {"goal": 1, "goal-achieved": 1, "goal-open": 2, "goal-negative": 2 if goal_mode == "separate" else 3}


def split_goal(state: StateInput, goal_mode: str, num_predicates: int) -> Atoms:
    """Return the state's goal atoms with predicate ids shifted to their goal-copy block.

    Block layout (matching :func:`goal_relations` with ``P`` predicates): mode ``separate``:
    ``[P, 2P)`` goal, ``[2P, 3P)`` negative goal; mode ``achieved``: ``[P, 2P)`` achieved,
    ``[2P, 3P)`` open, ``[3P, 4P)`` negative goal. Ids are before removing type predicates;
    encodings map them through their own relation tables.
    """
    goal = state.goal
    P = num_predicates
    parts = []
    if goal_mode == "separate":
        parts.append(Atoms(goal.pred + P, goal.args))
        negative_block = 2 * P
    else:
        base = max(state.num_objects, 1) + 1
        held = np.isin(atom_keys(goal.pred, goal.args, base), atom_keys(state.atoms.pred, state.atoms.args, base))
        parts.append(Atoms(goal.pred[held] + P, goal.args[held]))
        parts.append(Atoms(goal.pred[~held] + 2 * P, goal.args[~held]))
        negative_block = 3 * P
    if state.negative_goal is not None and len(state.negative_goal):
        parts.append(Atoms(state.negative_goal.pred + negative_block, state.negative_goal.args))
    width = goal.args.shape[1]
    return Atoms.concat(parts, width)


@dataclass(frozen=True)
class BatchAtoms:
    """The state and goal atoms of a batch of states as one disjoint union (objects renumbered)."""

    pred: np.ndarray  # int64 [k]: goal-block predicate ids (see split_goal)
    args: np.ndarray  # int64 [k, width]: node ids (object id + the objects of the earlier states), -1 padded
    graph: np.ndarray  # int64 [k]: the atom's state
    node_graph: np.ndarray  # int64 [N]: each object node's state
    num_nodes: int


def batch_atoms(states: list[StateInput], signature: PredicateSignature, goal_mode: str) -> BatchAtoms:
    """Return the atoms (state, then goal copies) of ``states`` with their objects numbered across the batch."""
    width = max(signature.max_arity, 1)
    preds, args, graphs, sizes, offset = [], [], [], [], 0
    for b, state in enumerate(states):
        atoms = Atoms.concat([state.atoms, split_goal(state, goal_mode, len(signature))], width)
        preds.append(atoms.pred.astype(np.int64))
        args.append(np.where(atoms.args >= 0, atoms.args.astype(np.int64) + offset, -1))
        graphs.append(np.full(len(atoms), b, dtype=np.int64))
        sizes.append(state.num_objects)
        offset += state.num_objects
    return BatchAtoms(pred=np.concatenate(preds) if preds else np.zeros(0, np.int64),
                      args=np.concatenate(args) if args else np.zeros((0, width), np.int64),
                      graph=np.concatenate(graphs) if graphs else np.zeros(0, np.int64),
                      node_graph=np.repeat(np.arange(len(states), dtype=np.int64), sizes), num_nodes=offset)


class Encoding(ABC):
    """Turn batches of states into named integer/float arrays for one model family."""

    #: registry key, e.g. ``"rgnn"``
    name: str = ""

    def __init__(self, signature: PredicateSignature, goal_mode: str = "separate"):
        self.signature = signature
        self.goal_mode = goal_mode
        goal_relations(signature, goal_mode)  # validates goal_mode

    @abstractmethod
    def input_names(self) -> list[str]:
        """Return the names of the arrays :meth:`encode` produces, in the model's argument order."""

    @abstractmethod
    def encode(self, states: list[StateInput]) -> dict[str, np.ndarray]:
        """Encode a batch of states as one disjoint union."""

    def config(self) -> dict:
        """Return what is needed to rebuild this encoding (stored in checkpoints and ONNX files)."""
        return {"encoding": self.name, "goal_mode": self.goal_mode, "signature": self.signature.to_json()}

    def schema(self) -> dict:
        """Return the shapes a model needs to know (relations and arities, feature sizes)."""
        return {}


class FeatureGraphEncoding(Encoding):
    """An encoding into one graph with node feature vectors and labelled edges (PLOI, Müller et al.).

    Subclasses set ``feature_names`` and ``label_names``; their inputs are the fixed readout
    arrays plus ``node_features`` [N, F], ``edge_index`` [2, E] and ``edge_features`` [E, L].
    """

    feature_names: list[str]
    label_names: list[str]

    @property
    def num_features(self) -> int:
        return len(self.feature_names)

    @property
    def num_labels(self) -> int:
        return len(self.label_names)

    def input_names(self) -> list[str]:
        return FIXED_INPUTS + ["node_features", "edge_index", "edge_features"]

    def schema(self) -> dict:
        return {
            "node_features": self.num_features,
            "edge_labels": self.num_labels,
            "feature_names": list(self.feature_names),
            "label_names": list(self.label_names),
        }

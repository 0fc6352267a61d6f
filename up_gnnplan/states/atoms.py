"""The atoms of a state as integer arrays: what every encoding starts from.

A state's atoms are ``pred`` (int32, one predicate id per atom) and ``args`` (int32, one row
per atom, object ids padded with -1 up to the signature's largest arity). Static and type
atoms are computed once per task; fluent atoms come from pymimir's atom indices through a
lookup table that grows as new ground atoms appear, so converting a state is a numpy gather
with no Python loop over its atoms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from up_gnnplan.states.signature import TYPE_PREFIX


@dataclass(frozen=True)
class Atoms:
    """Atoms as arrays: ``pred[i]`` holds of objects ``args[i, :arity(pred[i])]``."""

    pred: np.ndarray  # int32 [k]
    args: np.ndarray  # int32 [k, max_arity], -1 padded

    def __len__(self) -> int:
        return len(self.pred)

    def as_strings(self, signature, object_names) -> list[str]:
        """Return ``name(o1,o2)`` strings, sorted: for tests and debugging."""
        out = []
        for p, row in zip(self.pred.tolist(), self.args.tolist()):
            name, arity = signature.predicates[p]
            out.append(f"{name}({','.join(object_names[o] for o in row[:arity])})")
        return sorted(out)

    @staticmethod
    def concat(parts: list["Atoms"], width: int) -> "Atoms":
        preds = [p.pred for p in parts if len(p)]
        if not preds:
            return Atoms(np.zeros(0, np.int32), np.zeros((0, width), np.int32))
        return Atoms(np.concatenate(preds), np.concatenate([p.args for p in parts if len(p)]))


def _rows(rows: list[tuple[int, list[int]]], width: int) -> Atoms:
    pred = np.array([p for p, _ in rows], dtype=np.int32)
    args = np.full((len(rows), width), -1, dtype=np.int32)
    for i, (_, objs) in enumerate(rows):
        args[i, : len(objs)] = objs
    return Atoms(pred, args)


class StateAtoms:
    """Convert pymimir states of one :class:`~up_gnnplan.problems.bridge.Task` to :class:`Atoms`."""

    def __init__(self, task):
        self.task = task
        self.signature = task.signature
        self.width = max(self.signature.max_arity, 1)
        self.static = Atoms.concat([self._static_atoms(), self._type_atoms()], self.width)
        repositories = task.mimir_problem._advanced_problem.get_repositories()
        self._fluent_atoms_from_indices = repositories.get_fluent_ground_atoms_from_indices
        # Lookup table over pymimir's fluent atom indices; -2 marks "not yet seen", -1 "not ours".
        self._fluent_pred = np.full(64, -2, dtype=np.int32)
        self._fluent_args = np.full((64, self.width), -1, dtype=np.int32)
        self.goal, self.negative_goal, self.has_existential_goal = self._goal_atoms()

    def _atom_row(self, mimir_atom):
        pid = self.task.predicate_id(mimir_atom)
        if pid is None:
            return None
        return pid, [self.task.object_id(o) for o in mimir_atom.get_terms()]

    def _static_atoms(self) -> Atoms:
        atoms = self.task.mimir_problem.get_initial_atoms(ignore_fluent=True, ignore_derived=True)
        return _rows([r for r in map(self._atom_row, atoms) if r is not None], self.width)

    def _type_atoms(self) -> Atoms:
        rows = []
        parents = self.task.types.parents
        for oid, kind in enumerate(self.task.object_types):
            while kind is not None:
                pid = self.signature.index.get(TYPE_PREFIX + kind)
                if pid is not None:
                    rows.append((pid, [oid]))
                kind = parents.get(kind)
        return _rows(rows, self.width)

    def _goal_atoms(self):
        positive, negative, existential = self.task.goal_literals()
        return _rows(positive, self.width), _rows(negative, self.width), existential

    def _learn(self, indices: np.ndarray) -> None:
        """Fill the lookup table for fluent atom indices seen for the first time."""
        top = int(indices.max()) + 1
        if top > len(self._fluent_pred):
            size = max(top, 2 * len(self._fluent_pred))
            pred = np.full(size, -2, dtype=np.int32)
            args = np.full((size, self.width), -1, dtype=np.int32)
            pred[: len(self._fluent_pred)] = self._fluent_pred
            args[: len(self._fluent_args)] = self._fluent_args
            self._fluent_pred, self._fluent_args = pred, args
        new = indices[self._fluent_pred[indices] == -2]
        for index, atom in zip(new.tolist(), self._fluent_atoms_from_indices(new.tolist())):
            row = self._atom_row(_wrap_fluent(atom))
            if row is None:
                self._fluent_pred[index] = -1
            else:
                self._fluent_pred[index] = row[0]
                self._fluent_args[index, : len(row[1])] = row[1]

    def fluent(self, state) -> Atoms:
        """Return the fluent atoms of a pymimir state."""
        indices = np.fromiter(state._advanced_state.get_fluent_atoms(), dtype=np.int64)
        if len(indices) == 0:
            return Atoms(np.zeros(0, np.int32), np.zeros((0, self.width), np.int32))
        if indices.max() >= len(self._fluent_pred) or (self._fluent_pred[indices] == -2).any():
            self._learn(indices)
        pred = self._fluent_pred[indices]
        keep = pred >= 0
        return Atoms(pred[keep], self._fluent_args[indices[keep]])

    def hides_fluent_atoms(self) -> bool:
        """Whether some fluent atom seen so far is not among the model's atoms (its predicate is
        not in the signature): states that differ only there look the same here."""
        return bool((self._fluent_pred == -1).any())

    def of(self, state) -> Atoms:
        """Return all atoms of a pymimir state a model sees: static, type and fluent ones."""
        return Atoms.concat([self.static, self.fluent(state)], self.width)

    def strings(self, state) -> list[str]:
        """Return the atoms of ``state`` as sorted ``name(o1,o2)`` strings."""
        return self.of(state).as_strings(self.signature, self.task.object_names)


def _wrap_fluent(advanced_atom):
    from pymimir import GroundAtom

    return GroundAtom(advanced_atom)

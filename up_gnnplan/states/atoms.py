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
        # Lookup tables over pymimir's fluent and derived atom indices (two index spaces): our
        # predicate id and objects per index; -2 marks "not yet seen", -1 "not ours" (pymimir's own
        # derived predicates, as those of a universal precondition).
        self._tables = {kind: _Table(from_indices, self.width) for kind, from_indices in (
            ("fluent", repositories.get_fluent_ground_atoms_from_indices),
            ("derived", repositories.get_derived_ground_atoms_from_indices))}
        syntax = getattr(task, "syntax", None)
        self._derives = bool(syntax is not None and syntax.derived)  # a UP problem derives nothing of ours
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

    def _rows_of(self, kind: str, indices) -> Atoms:
        table = self._tables[kind]
        indices = np.fromiter(indices, dtype=np.int64)
        if len(indices) == 0:
            return Atoms(np.zeros(0, np.int32), np.zeros((0, self.width), np.int32))
        if indices.max() >= len(table.pred) or (table.pred[indices] == -2).any():
            table.learn(indices, self._atom_row)
        pred = table.pred[indices]
        keep = pred >= 0
        return Atoms(pred[keep], table.args[indices[keep]])

    def fluent(self, state) -> Atoms:
        """Return the atoms of a pymimir state that change: fluent ones, and derived ones of the domain's
        derived predicates (``:derived``; a function of the fluent ones, which the model sees too)."""
        fluent = self._rows_of("fluent", state._advanced_state.get_fluent_atoms())
        if not self._derives:
            return fluent
        derived = self._rows_of("derived", state._advanced_state.get_derived_atoms())
        return Atoms.concat([fluent, derived], self.width) if len(derived) else fluent

    def hides_fluent_atoms(self) -> bool:
        """Whether some fluent atom seen so far is not among the model's atoms (its predicate is
        not in the signature): states that differ only there look the same here."""
        return bool((self._tables["fluent"].pred == -1).any())

    def of(self, state) -> Atoms:
        """Return all atoms of a pymimir state a model sees: static, type and fluent ones."""
        return Atoms.concat([self.static, self.fluent(state)], self.width)

    def strings(self, state) -> list[str]:
        """Return the atoms of ``state`` as sorted ``name(o1,o2)`` strings."""
        return self.of(state).as_strings(self.signature, self.task.object_names)


class _Table:
    """pymimir's ground atoms of one kind by index: our predicate id (``pred``) and objects (``args``)."""

    def __init__(self, from_indices, width: int):
        self.from_indices, self.width = from_indices, width
        self.pred = np.full(64, -2, dtype=np.int32)
        self.args = np.full((64, width), -1, dtype=np.int32)

    def learn(self, indices: np.ndarray, atom_row) -> None:
        """Fill the table for the indices seen for the first time (``atom_row``: our row of an atom, or None)."""
        top = int(indices.max()) + 1
        if top > len(self.pred):
            size = max(top, 2 * len(self.pred))
            pred = np.full(size, -2, dtype=np.int32)
            args = np.full((size, self.width), -1, dtype=np.int32)
            pred[: len(self.pred)], args[: len(self.args)] = self.pred, self.args
            self.pred, self.args = pred, args
        new = indices[self.pred[indices] == -2]
        for index, atom in zip(new.tolist(), self.from_indices(new.tolist())):
            row = atom_row(_wrap(atom))
            if row is None:
                self.pred[index] = -1
            else:
                self.pred[index] = row[0]
                self.args[index, : len(row[1])] = row[1]


def _wrap(advanced_atom):
    from pymimir import GroundAtom

    return GroundAtom(advanced_atom)

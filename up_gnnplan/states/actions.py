"""Ground actions as integer arrays: what action heads and action policies score.

The *action signature* of a domain lists its action schemas as ``(name, arity)`` pairs, sorted
by name, with the arity of the UP action (pymimir appends the variables of existential
preconditions as extra parameters; they are left out, since effects cannot mention them and so
two such ground actions have the same successor). Like the predicate signature it is recorded
in datasets and model files, so an action model is never applied to a domain whose actions
differ. A ground action is then ``schema`` (its position in the signature) and ``args`` (object
ids, -1 padded to the largest arity).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ActionSignature:
    """An ordered list of (action name, arity) pairs; the position is the schema id."""

    schemas: tuple[tuple[str, int], ...]
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "index", {name: i for i, (name, _) in enumerate(self.schemas)})

    @classmethod
    def from_up_problem(cls, problem) -> "ActionSignature":
        """Return the action signature of ``problem``'s domain."""
        return cls(tuple(sorted((a.name, len(a.parameters)) for a in problem.actions)))

    @property
    def arities(self) -> list[int]:
        return [arity for _, arity in self.schemas]

    @property
    def width(self) -> int:
        """Columns of an ``args`` array: the largest arity, at least 1."""
        return max([1, *self.arities])

    def __len__(self) -> int:
        return len(self.schemas)

    def to_json(self) -> list[list]:
        return [[name, arity] for name, arity in self.schemas]

    @classmethod
    def from_json(cls, data) -> "ActionSignature":
        return cls(tuple((str(name), int(arity)) for name, arity in data))

    def describe_difference(self, other: "ActionSignature") -> str:
        """Return which action schemas differ between ``self`` and ``other``, for error messages."""
        mine, theirs = set(self.schemas), set(other.schemas)
        parts = []
        if mine - theirs:
            parts.append("only in the first: " + ", ".join(f"{n}/{a}" for n, a in sorted(mine - theirs)))
        if theirs - mine:
            parts.append("only in the second: " + ", ".join(f"{n}/{a}" for n, a in sorted(theirs - mine)))
        return "; ".join(parts) or "same action schemas"

    def __str__(self) -> str:
        return json.dumps(self.to_json())


class ActionRows:
    """Convert pymimir ground actions of one :class:`~up_gnnplan.problems.bridge.Task` to arrays.

    A ground action's row is computed once and looked up by its pymimir index afterwards, as
    :class:`~up_gnnplan.states.atoms.StateAtoms` does for atoms: a policy step converts every
    applicable action, and the same actions come back step after step.
    """

    def __init__(self, task):
        self.task = task
        self.signature = task.action_signature
        self.width = self.signature.width
        self._schema: dict[int, int] = {}  # pymimir lifted action index -> schema id
        self._known = np.zeros(0, dtype=bool)
        self._rows_schema = np.zeros(0, dtype=np.int32)
        self._rows_args = np.zeros((0, self.width), dtype=np.int32)

    def _schema_of(self, lifted) -> int:
        """The schema id of a pymimir action schema (the native object behind a ground action's wrapper)."""
        key = lifted.get_index()
        if key not in self._schema:
            self._schema[key] = self.signature.index[self.task.up_action_name(lifted.get_name())]
        return self._schema[key]

    def _grow(self, top: int) -> None:
        size = max(top, 2 * len(self._known), 64)
        known, schema = np.zeros(size, bool), np.zeros(size, np.int32)
        args = np.full((size, self.width), -1, np.int32)
        n = len(self._known)
        known[:n], schema[:n], args[:n] = self._known, self._rows_schema, self._rows_args
        self._known, self._rows_schema, self._rows_args = known, schema, args

    def __call__(self, ground_actions) -> tuple[np.ndarray, np.ndarray]:
        """Return (schema int32[n], args int32[n, width]) of ``ground_actions``."""
        if not ground_actions:
            return np.zeros(0, np.int32), np.zeros((0, self.width), np.int32)
        natives = getattr(ground_actions, "natives", None)  # states.successors.Applicable: no wrappers to read
        indices = (ground_actions.indices if natives is not None else
                   np.fromiter((a.get_index() for a in ground_actions), dtype=np.int64, count=len(ground_actions)))
        if indices.max() >= len(self._known):
            self._grow(int(indices.max()) + 1)
        new = np.flatnonzero(~self._known[indices])
        if len(new):
            # Read from pymimir's native objects, not its Python wrappers (one made per object and schema), and
            # stored at once: a Hiking state of 100 objects has 34,528 applicable actions, 1.2 s through the
            # wrappers one row at a time, 0.7 s so.
            object_id, schemas, width = self.task.mimir_object_ids, self.signature.schemas, self.width
            schema_ids, rows = [], []
            for position in new.tolist():
                action = natives[position] if natives is not None else ground_actions[position]._advanced_ground_action
                schema = self._schema_of(action.get_action())
                arity = schemas[schema][1]
                objects = action.get_objects()  # by position: iterating pymimir's ObjectList costs 2x, slicing it 3x
                row = [object_id[objects[i].get_index()] for i in range(arity)]
                schema_ids.append(schema)
                rows.append(row + [-1] * (width - len(row)) if len(row) < width else row)
            at = indices[new]
            self._rows_schema[at] = schema_ids
            self._rows_args[at] = np.array(rows, dtype=np.int32).reshape(len(rows), width)
            self._known[at] = True
        return self._rows_schema[indices], self._rows_args[indices]

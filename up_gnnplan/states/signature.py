"""The predicate signature of a domain: which predicates a model sees, with their arities.

Convention (recorded in every dataset and model, and independent of the pymimir release):

- every Boolean predicate of the domain, under its PDDL name, static ones included
  (``succ-x``, ``above``): a model cannot tell static from fluent facts otherwise;
- nullary predicates (``handempty``) with arity 0: they are kept, never dropped;
- one unary predicate ``type:T`` for each declared type ``T`` other than ``object``, true of
  every object of type ``T`` or of a subtype of ``T`` (``:`` cannot occur in PDDL names);
- predicates sorted by name, so the order does not depend on how a parser lists them.

pymimir's own bookkeeping predicates (its type predicates, ``number``, and our compiled goal
predicates) are not part of the signature.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

TYPE_PREFIX = "type:"


@dataclass(frozen=True)
class PredicateSignature:
    """An ordered list of (name, arity) pairs; the position is the predicate id."""

    predicates: tuple[tuple[str, int], ...]
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "index", {name: i for i, (name, _) in enumerate(self.predicates)})

    @classmethod
    def from_up_problem(cls, problem) -> "PredicateSignature":
        """Return the signature of ``problem``'s domain."""
        entries = {(f.name, len(f.signature)) for f in problem.fluents if f.type.is_bool_type()}
        entries |= {(TYPE_PREFIX + t.name, 1) for t in problem.user_types if t.name != "object"}
        return cls(tuple(sorted(entries)))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.predicates]

    @property
    def arities(self) -> list[int]:
        return [arity for _, arity in self.predicates]

    @property
    def max_arity(self) -> int:
        return max(self.arities, default=0)

    def __len__(self) -> int:
        return len(self.predicates)

    def to_json(self) -> list[list]:
        return [[name, arity] for name, arity in self.predicates]

    @classmethod
    def from_json(cls, data) -> "PredicateSignature":
        return cls(tuple((str(name), int(arity)) for name, arity in data))

    def describe_difference(self, other: "PredicateSignature") -> str:
        """Return which predicates differ between ``self`` and ``other``, for error messages."""
        mine, theirs = set(self.predicates), set(other.predicates)
        parts = []
        if mine - theirs:
            parts.append("only in the first: " + ", ".join(f"{n}/{a}" for n, a in sorted(mine - theirs)))
        if theirs - mine:
            parts.append("only in the second: " + ", ".join(f"{n}/{a}" for n, a in sorted(theirs - mine)))
        return "; ".join(parts) or "same predicates"

    def __str__(self) -> str:
        return json.dumps(self.to_json())

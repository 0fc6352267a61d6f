"""The types of a domain: the hierarchy, and the declared parameter types of predicates and actions.

A model whose modules follow the domain's types (the typed domain-graph policy network of
Zhang & Geißer) needs more than the predicate signature: which type each parameter of each
predicate and action schema is declared with, and which type is a subtype of which. Untyped
domains have the one type ``object``. Objects' own types need no record: every state carries
them as its ``type:T`` atoms (see :mod:`up_gnnplan.states.signature`), and an object's type is
the most specific ``T`` it has (``object`` when it has none).
"""

from __future__ import annotations

from dataclasses import dataclass

ROOT = "object"


@dataclass(frozen=True)
class DomainTypes:
    """``parents[t]`` is the parent of type ``t`` (None for ``object``); ``predicates[p]`` and
    ``actions[a]`` are the declared types of the parameters of predicate ``p`` and action schema ``a``."""

    parents: dict
    predicates: dict
    actions: dict

    @classmethod
    def from_up_problem(cls, problem) -> "DomainTypes":
        parents = {ROOT: None}
        for user_type in problem.user_types:
            parents[user_type.name] = user_type.father.name if user_type.father is not None else ROOT
        parents[ROOT] = None

        def types_of(parameters):
            return tuple(p.type.name if p.type.is_user_type() else ROOT for p in parameters)

        predicates = {f.name: types_of(f.signature) for f in problem.fluents if f.type.is_bool_type()}
        actions = {a.name: types_of(a.parameters) for a in problem.actions}
        return cls(parents, predicates, actions)

    def depth(self, name: str) -> int:
        """Return how many ancestors ``name`` has (``object``: 0)."""
        depth = 0
        while self.parents.get(name) is not None:
            name, depth = self.parents[name], depth + 1
        return depth

    def names(self) -> list[str]:
        """Return every type, ``object`` first, then by name."""
        return [ROOT] + sorted(t for t in self.parents if t != ROOT)

    def to_json(self) -> dict:
        return {"parents": dict(sorted(self.parents.items())),
                "predicates": {k: list(v) for k, v in sorted(self.predicates.items())},
                "actions": {k: list(v) for k, v in sorted(self.actions.items())}}

    @classmethod
    def from_json(cls, data) -> "DomainTypes":
        return cls({str(k): (str(v) if v is not None else None) for k, v in data["parents"].items()},
                   {str(k): tuple(map(str, v)) for k, v in data["predicates"].items()},
                   {str(k): tuple(map(str, v)) for k, v in data["actions"].items()})

    def __eq__(self, other) -> bool:
        return isinstance(other, DomainTypes) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(str(self.to_json()))

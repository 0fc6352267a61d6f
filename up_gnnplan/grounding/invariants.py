"""At-most-one invariants of a domain: which goal atoms can never hold together.

A binding can make a goal contradict itself without breaking any static atom: in Gripper,
``(at ?x1 room1) (at ?x2 room2)`` with both variables bound to ``ball7`` asks one ball to be in
two rooms. LAMA then proves the ground problem unsolvable, after a full translation and search,
and the binder's retries vary only its last choice, so the contradiction made early stays. This
module finds such contradictions before any planner runs.

An :class:`Invariant` is a set of parts ``(predicate, key position)``; it says that for every
object ``k``, at most one atom of its parts with ``k`` at the key position is true in any
reachable state (a part with no key position counts every atom of its predicate: at most one
``(at-robby ?r)``). In Gripper ``{(at, 0), (carry, 0)}``: a ball is in at most one room or one
gripper. Two ground goal atoms of one invariant with the same key are then mutually exclusive.

The invariants are found from the action schemas in the manner of Helmert's invariant synthesis
(Helmert 2009, *Concise finite-domain representations for PDDL planning tasks*, section 5),
in a deliberately conservative form: a candidate holds when the initial state has at most one
atom per key and every action schema is *balanced*: each add effect of the candidate is matched
by a delete effect of the candidate with the same key term whose atom the precondition requires,
and no schema adds two atoms of the candidate whose keys could be the same object. A schema that
fails for want of a matching delete refines the candidate with a part taken from its delete
effects (Gripper's ``pick`` turns ``{(carry, 0)}`` into ``{(carry, 0), (at, 0)}``). Anything the
check cannot read (conditional or universal effects, non-Boolean fluents, durative actions) fails
the candidate, so an invariant reported here holds; some true ones are missed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

from up_gnnplan.grounding.goal import conjuncts, static_facts

MAX_PARTS = 4  # parts of one candidate: the groups of the paper's domains have two or three
MAX_CANDIDATES = 2000  # candidates checked per domain, so a large domain stays cheap


@dataclass(frozen=True)
class Invariant:
    """At most one true atom of ``parts`` per key object, or in all (parts with no key position)."""

    parts: frozenset  # (predicate, key position or None, arity); all parts keyed, or none

    def key(self, name: str, args: tuple):
        """Return the key of the atom ``name(args)`` if it belongs to this invariant (``()``: no key), else None."""
        for predicate, position, _ in self.parts:
            if predicate == name:
                return () if position is None else (args[position],)
        return None

    def __str__(self) -> str:
        """``at most one of (at k _), (carry k _)``: ``k`` the key, ``_`` any object."""
        shown = sorted("(" + " ".join([p] + ["k" if i == position else "_" for i in range(arity)]) + ")"
                       for p, position, arity in self.parts)
        return "at most one of " + ", ".join(shown)


@dataclass(frozen=True)
class _Atom:
    """An atom of an action schema: predicate name and terms (("param", name) or ("object", name))."""

    name: str
    terms: tuple


@dataclass
class _Schema:
    name: str
    adds: list
    deletes: list
    requires: set  # positive atoms of the precondition (top-level conjunction)
    distinct: set  # pairs of terms the precondition says differ
    unread: set  # predicates of the effects this check cannot read (conditional, universal, ...); "*": any


class Mutexes:
    """The at-most-one invariants of a UP problem's domain, and the contradictions they show in a goal."""

    def __init__(self, invariants: list[Invariant]):
        self.invariants = invariants

    @classmethod
    def of(cls, problem) -> "Mutexes":
        """Return the invariants of ``problem`` (its actions and initial state) that pass the check."""
        schemas = [_schema(action) for action in problem.actions]
        if any(schema is None for schema in schemas):
            return cls([])  # durative or other actions: nothing is claimed
        # A fluent true by default holds for every object not listed: no at-most-one can be read off the
        # explicit initial values then, so it takes no part.
        defaults = getattr(problem, "fluents_defaults", {})
        boolean = {f.name for f in problem.fluents if f.type.is_bool_type()
                   and not (f in defaults and defaults[f].is_true())}
        changed = {atom.name for schema in schemas for atom in schema.adds + schema.deletes}
        arity = {f.name: f.arity for f in problem.fluents}
        initial = static_facts(problem, boolean)  # the true initial atoms of those fluents
        found, seen, queue = [], set(), []
        for name in sorted(changed & boolean):
            for position in [None, *range(arity[name])]:
                queue.append(frozenset({(name, position, arity[name])}))
        while queue and len(seen) < MAX_CANDIDATES:
            parts = queue.pop(0)
            if parts in seen:
                continue
            seen.add(parts)
            candidate = Invariant(parts)
            verdict, refinements = _balanced(candidate, schemas)
            if verdict:
                if _holds_initially(candidate, initial):
                    found.append(candidate)
                continue
            if len(parts) < MAX_PARTS:
                used = {p for p, _, _ in parts}
                queue.extend(parts | {part} for part in refinements
                             if part[0] in boolean and part[0] not in used and parts | {part} not in seen)
        return cls(_strongest(found))

    def conflicts(self, atoms) -> list[str]:
        """Return why the ground ``atoms`` (``(name, object names)``) cannot all hold at once, or []."""
        reasons = []
        for invariant in self.invariants:
            by_key = defaultdict(set)
            for name, args in atoms:
                key = invariant.key(name, args)
                if key is not None:
                    by_key[key].add((name, args))
            for key, members in by_key.items():
                if len(members) > 1:
                    shown = " and ".join(f"({n}{''.join(' ' + a for a in args)})" for n, args in sorted(members))
                    reasons.append(f"{shown} cannot hold together ({invariant}"
                                   + (f" for {key[0]})" if key else ")"))
        return reasons


def _schema(action) -> _Schema | None:
    """Return the schema of a UP instantaneous action, or None for an action kind it cannot read."""
    if not hasattr(action, "preconditions") or not hasattr(action, "effects"):
        return None
    adds, deletes, unread = [], [], set()
    for effect in action.effects:
        atom = _atom(effect.fluent)
        if atom is None or effect.is_conditional() or getattr(effect, "forall", ()) or not effect.value.is_bool_constant():
            unread.add(effect.fluent.fluent().name if effect.fluent.is_fluent_exp() else "*")
            continue
        (adds if effect.value.is_true() else deletes).append(atom)
    requires, distinct = set(), set()
    for precondition in action.preconditions:
        for part in conjuncts(precondition):
            atom = _atom(part) if part.is_fluent_exp() else None
            if atom is not None:
                requires.add(atom)
            elif part.is_not() and part.arg(0).is_equals():
                a, b = (_term(arg) for arg in part.arg(0).args)
                if a is not None and b is not None:
                    distinct.update({(a, b), (b, a)})
    return _Schema(action.name, adds, deletes, requires, distinct, unread)


def _balanced(invariant: Invariant, schemas: list[_Schema]) -> tuple[bool, set]:
    """Return whether every schema keeps ``invariant``, and, if not, the parts that might mend it."""
    refinements = set()
    predicates = {p for p, _, _ in invariant.parts}
    for schema in schemas:
        if "*" in schema.unread or schema.unread & predicates:
            return False, set()  # an effect on a part that the check cannot read may add anything
        mine = [(atom, invariant.key(atom.name, atom.terms)) for atom in schema.adds]
        mine = [(atom, key) for atom, key in mine if key is not None]
        if not mine:
            continue
        for (a, key_a), (b, key_b) in combinations(mine, 2):
            if a != b and _may_be_equal(key_a, key_b, schema.distinct):
                return False, set()  # adds two atoms that may share a key: refinement cannot mend it
        for atom, key in mine:
            if any(invariant.key(d.name, d.terms) == key and d in schema.requires for d in schema.deletes):
                continue
            # Unbalanced: a delete of this schema with the same key term, required by the
            # precondition, would balance the add if its predicate were a part.
            refinements.update((d.name, None if not key else d.terms.index(key[0]), len(d.terms))
                               for d in schema.deletes if d in schema.requires and (not key or key[0] in d.terms))
            return False, refinements
    return True, set()


def _may_be_equal(key_a: tuple, key_b: tuple, distinct: set) -> bool:
    """Return whether two key terms may denote the same object (no key: always)."""
    if not key_a or not key_b:
        return True
    a, b = key_a[0], key_b[0]
    if a == b:
        return True
    if a[0] == "object" and b[0] == "object":
        return False
    return (a, b) not in distinct


def _holds_initially(invariant: Invariant, initial: set[tuple]) -> bool:
    counts = defaultdict(int)
    for name, args in initial:
        key = invariant.key(name, args)
        if key is not None:
            counts[key] += 1
            if counts[key] > 1:
                return False
    return True


def _strongest(found: list[Invariant]) -> list[Invariant]:
    """Drop invariants whose parts another's contain: the larger one says all they say, and more."""
    return [inv for inv in found if not any(inv.parts < other.parts for other in found)]


def _term(arg):
    if arg.is_parameter_exp():
        return ("param", arg.parameter().name)
    if arg.is_object_exp():
        return ("object", arg.object().name)
    return None


def _atom(node) -> _Atom | None:
    if not node.is_fluent_exp():
        return None
    terms = tuple(_term(arg) for arg in node.args)
    return None if any(t is None for t in terms) else _Atom(node.fluent().name, terms)

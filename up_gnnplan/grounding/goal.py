"""Existentially quantified goals as data: variables, atoms over variables and constants, inequalities.

Funkquist, Ståhlberg & Geffner (2024), section 4.3: a partially quantified goal ``G_X`` is a set
of atoms whose terms are constants or variables of ``X``, read existentially; a state satisfies
it when some substitution of the variables makes every atom true. The paper's goals also carry
``NEQ(x_i, x_j)`` constraints, which PDDL writes ``(not (= ?xi ?xj))``.

:class:`QuantifiedGoal` reads such a goal off a UP problem (a conjunction of ground literals and
``exists`` conjuncts whose bodies are conjunctions of positive atoms and inequalities), binds one
variable at a time (:meth:`QuantifiedGoal.bind`), tells whether a binding breaks a static atom
(a colour) or an inequality, and writes itself back as a UP goal. Anything else under ``exists``
(disjunction, negated atoms, nested quantifiers over other connectives) is refused with the
conjunct named: the learned binding has no meaning for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from unified_planning.model import Object

from up_gnnplan.errors import GnnplanError


class GoalGroundingError(GnnplanError):
    """The goal is outside what goal grounding handles, or a binding is not allowed."""


@dataclass(frozen=True)
class GoalAtom:
    """A positive atom ``fluent(t1..tk)``; each term is a UP ``Variable`` or ``Object``."""

    fluent: object
    terms: tuple

    def variables(self) -> set:
        return {t for t in self.terms if not _is_object(t)}

    def substitute(self, variable, obj) -> "GoalAtom":
        return GoalAtom(self.fluent, tuple(obj if t == variable else t for t in self.terms))

    def __str__(self) -> str:
        return f"({self.fluent.name}{''.join(' ' + _term_name(t) for t in self.terms)})"


def _is_object(term) -> bool:
    return isinstance(term, Object)


def _term_name(term) -> str:
    return term.name if _is_object(term) else f"?{term.name}"


@dataclass(frozen=True)
class QuantifiedGoal:
    """A goal ``ground ∧ ∃ variables: atoms ∧ distinct`` with some variables perhaps already bound."""

    ground: tuple  # UP FNodes without variables (atoms, negated atoms), kept as they are
    variables: tuple  # UP Variables still free, in the order of the PDDL file
    atoms: tuple[GoalAtom, ...]  # the existential body's atoms (terms: variables or objects)
    distinct: tuple[tuple, ...]  # pairs of terms that must denote different objects
    binding: tuple[tuple, ...] = field(default=())  # (variable, object) pairs bound so far, in order

    @classmethod
    def of(cls, problem) -> "QuantifiedGoal":
        """Return the goal of a UP problem; raise :class:`GoalGroundingError` outside the fragment."""
        ground, variables, atoms, distinct = [], [], [], []
        for goal in problem.goals:
            for conjunct in conjuncts(goal):
                if conjunct.is_exists():
                    _read_exists(conjunct, variables, atoms, distinct)
                elif _free_of_variables(conjunct):
                    ground.append(conjunct)
                else:
                    raise GoalGroundingError(f"goal conjunct {conjunct}: free variables outside an 'exists'")
        names = [v.name for v in variables]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise GoalGroundingError(
                f"goal: the variable name(s) {', '.join('?' + n for n in repeated)} are quantified in more than one "
                "'exists'; give each quantified variable its own name")
        return cls(tuple(ground), tuple(variables), tuple(atoms), tuple(distinct))

    @property
    def is_ground(self) -> bool:
        return not self.variables

    @property
    def is_quantified(self) -> bool:
        return bool(self.variables) or bool(self.binding)

    def variable(self, name: str):
        """Return the free variable called ``name`` (with or without its ``?``)."""
        for v in self.variables:
            if v.name == name.lstrip("?"):
                return v
        raise GoalGroundingError(f"the goal has no free variable ?{name.lstrip('?')}; free: "
                                 + (", ".join(f"?{v.name}" for v in self.variables) or "none"))

    def candidates(self, variable, objects: Iterable) -> list:
        """Return the objects whose type allows them to stand for ``variable``."""
        return [o for o in objects if _is_subtype(o.type, variable.type)]

    def bind(self, variable, obj) -> "QuantifiedGoal":
        """Return the goal with ``variable`` replaced by ``obj`` everywhere."""
        if variable not in self.variables:
            raise GoalGroundingError(f"?{variable.name} is not a free variable of the goal")
        if not _is_subtype(obj.type, variable.type):
            raise GoalGroundingError(f"?{variable.name} is of type {variable.type}, object {obj.name} of type {obj.type}")
        return QuantifiedGoal(
            self.ground,
            tuple(v for v in self.variables if v != variable),
            tuple(a.substitute(variable, obj) for a in self.atoms),
            tuple(tuple(obj if t == variable else t for t in pair) for pair in self.distinct),
            self.binding + ((variable, obj),),
        )

    def ground_atoms(self) -> list[GoalAtom]:
        """Return the positive atoms of the goal's ground part (outside the ``exists``)."""
        return [GoalAtom(g.fluent(), tuple(arg.object() for arg in g.args)) for g in self.ground
                if g.is_fluent_exp() and all(arg.is_object_exp() for arg in g.args)]

    def entailed(self, objects: Iterable) -> tuple | None:
        """Return a free variable and an object whose binding adds nothing to the goal, or None.

        Binding ``x`` to ``c`` adds nothing when each atom of ``x`` becomes an atom the goal already
        has (in its body or its ground part) and each inequality of ``x`` is with another object
        than ``c``: then ``G[x=c]`` holds wherever ``G`` does, ``G[x=c']`` entails it for every
        ``c'``, and so V*(s; G[x=c]) is the least of them. Without inequalities, two variables asking the same of an object can share it
        (``(blue ?x) (clear ?x) (blue ?y) (clear ?y)`` with ``?x`` bound to ``b4``: ``?y = b4``).
        """
        held = set(self.ground_atoms())  # the goal's ground atoms ask it too
        for variable in self.variables:
            mine = [a for a in self.atoms if variable in a.variables()]
            rest = {a for a in self.atoms if variable not in a.variables()} | held
            pairs = [pair for pair in self.distinct if variable in pair]
            others = [b if a == variable else a for a, b in pairs]
            if not all(_is_object(t) for t in others):
                continue  # an inequality with another free variable: binding x constrains it
            if mine:
                choices = sorted({t for a in rest for t in a.terms if _is_object(t)}, key=lambda o: o.name)
            else:
                choices = list(objects)  # in no atom: any object will do
            for obj in choices:
                if (_is_subtype(obj.type, variable.type) and obj not in others
                        and all(a.substitute(variable, obj) in rest for a in mine)):
                    return variable, obj
        return None

    def closed(self, objects: Iterable) -> tuple["QuantifiedGoal", list[tuple]]:
        """Return the goal with every binding that adds nothing made (:meth:`entailed`), and those bindings."""
        goal, made, objects = self, [], list(objects)
        while (choice := goal.entailed(objects)) is not None:
            goal = goal.bind(*choice)
            made.append(choice)
        return goal, made

    def violations(self, static_facts: set, static_fluents: set, mutexes=None) -> list[str]:
        """Return why the bound part can never hold: equal constants under an inequality, a
        ground atom of a static predicate (one no action changes, like a colour) that is false,
        or, given ``mutexes`` (:class:`~up_gnnplan.grounding.invariants.Mutexes`), two ground atoms
        of the goal that an invariant of the domain never lets hold together (one ball in two rooms).

        ``static_facts`` holds ``(fluent name, object names)`` of the initial state's static atoms.
        """
        reasons = []
        for a, b in self.distinct:
            if _is_object(a) and _is_object(b) and a == b:
                reasons.append(f"(not (= {a.name} {b.name}))")
        for atom in self.atoms:
            if atom.fluent.name in static_fluents and not atom.variables():
                if (atom.fluent.name, tuple(t.name for t in atom.terms)) not in static_facts:
                    reasons.append(f"{atom} is static and false")
        if mutexes is not None and mutexes.invariants:
            bound = [a for a in self.atoms if not a.variables()] + self.ground_atoms()
            reasons.extend(mutexes.conflicts([(a.fluent.name, tuple(t.name for t in a.terms)) for a in bound]))
        return reasons

    def expression(self, environment):
        """Return the goal as one UP expression (``And`` of the ground part and one ``Exists``)."""
        em = environment.expression_manager
        body = [em.FluentExp(a.fluent, a.terms) for a in self.atoms]
        for a, b in self.distinct:
            if not (_is_object(a) and _is_object(b)):
                body.append(em.Not(em.Equals(a, b)))
            elif a == b:  # two variables bound to one object under an inequality: the goal cannot hold
                body.append(em.FALSE())
        parts = list(self.ground)
        if self.variables:
            parts.append(em.Exists(em.And(body), *self.variables))
        else:
            parts.extend(body)
        return em.And(parts) if len(parts) != 1 else parts[0]

    def with_goal_of(self, problem):
        """Return a copy of ``problem`` whose goal is this one."""
        copy = problem.clone()
        copy.clear_goals()
        copy.add_goal(self.expression(problem.environment))
        return copy

    def describe_binding(self) -> str:
        return ", ".join(f"?{v.name}={o.name}" for v, o in self.binding) or "(nothing bound)"

    def __str__(self) -> str:
        ground = " ".join(str(g) for g in self.ground)
        body = " ".join([str(a) for a in self.atoms]
                        + [f"(not (= {_term_name(a)} {_term_name(b)}))" for a, b in self.distinct])
        if not self.variables:
            return f"(and {ground} {body})".replace("  ", " ")
        names = " ".join(f"?{v.name}" for v in self.variables)
        return f"(and {ground} (exists ({names}) (and {body})))".replace("( ", "(").replace("  ", " ")


def conjuncts(node):
    """Yield the conjuncts of ``node`` (a UP expression), nested ``And`` flattened."""
    if node.is_and():
        for arg in node.args:
            yield from conjuncts(arg)
    else:
        yield node


def _free_of_variables(node) -> bool:
    return not node.environment.free_vars_oracle.get_free_variables(node)


def _read_exists(node, variables: list, atoms: list, distinct: list) -> None:
    """Flatten ``exists`` (nested ones included) into variables, atoms and inequalities."""
    variables.extend(node.variables())
    for part in conjuncts(node.arg(0)):
        if part.is_exists():
            _read_exists(part, variables, atoms, distinct)
        elif part.is_fluent_exp():
            atoms.append(GoalAtom(part.fluent(), tuple(_term(a, part) for a in part.args)))
        elif part.is_not() and part.arg(0).is_equals():
            distinct.append(tuple(_term(a, part) for a in part.arg(0).args))
        else:
            raise GoalGroundingError(
                f"goal: {part} under 'exists' is not supported by goal grounding, which handles conjunctions of "
                "positive atoms and inequalities (not (= ?x ?y)) over the quantified variables")


def _term(arg, where):
    if arg.is_variable_exp():
        return arg.variable()
    if arg.is_object_exp():
        return arg.object()
    raise GoalGroundingError(f"goal: {where}: the argument {arg} is neither a variable nor an object")


def _is_subtype(kind, ancestor) -> bool:
    if ancestor is None or kind == ancestor:
        return True
    while kind is not None:
        if kind == ancestor:
            return True
        kind = getattr(kind, "father", None)
    return ancestor.name == "object" if hasattr(ancestor, "name") else False


def static_fluents(problem) -> set[str]:
    """Return the names of the Boolean fluents no action changes (colours, adjacency, types)."""
    changed = set()
    for action in problem.actions:
        for effect in getattr(action, "effects", []):
            changed.add(effect.fluent.fluent().name)
    return {f.name for f in problem.fluents if f.type.is_bool_type()} - changed


def static_facts(problem, fluents: set[str]) -> set[tuple[str, tuple[str, ...]]]:
    """Return the true initial atoms of the ``fluents`` as ``(name, object names)``."""
    facts = set()
    for atom, value in problem.explicit_initial_values.items():
        if atom.is_fluent_exp() and atom.fluent().name in fluents and value.is_true():
            facts.add((atom.fluent().name, tuple(a.object().name for a in atom.args)))
    return facts

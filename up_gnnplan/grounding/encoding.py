"""The input of a goal-grounding model: a state and a partially quantified goal as one relational structure.

Funkquist, Ståhlberg & Geffner (2024), section 7. The objects are the problem's constants and the
goal's free variables, the variables as extra objects; the atoms are

- the state's atoms (static and type atoms included, as for every model of the package);
- the goal's atoms, as goal atoms (``p@goal``), with variables as arguments;
- ``ground:constant(o)`` for every constant, ``ground:variable(x)`` for every free variable;
- ``ground:binding(o, x)``, the paper's PossibleBinding, which lets constants and variables
  exchange messages even when no goal atom links them;
- ``ground:distinct(t1, t2)`` for the goal's inequalities ``(not (= t1 t2))``, both ways round.

Two departures, both for typed domains: a variable gets the ``type:T`` atoms of its declared type
(the paper's domains are untyped), and ``ground:binding(o, x)`` is only there when ``o``'s type
allows it to stand for ``x`` (the paper links every constant to every variable; an object of the
wrong type can never be bound, so the atom says nothing and costs ``|O|·|X|`` atoms).

The result is a :class:`~up_gnnplan.encodings.base.StateInput` over the *grounding signature*,
the domain's predicate signature plus the four ``ground:`` predicates, so the package's R-GNN,
training, ONNX export and runtime take it unchanged; a model trained on it records that signature,
which is how a grounding model is told apart from a value model of the same domain.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.base import StateInput
from up_gnnplan.states.atoms import Atoms, _rows
from up_gnnplan.states.signature import TYPE_PREFIX, PredicateSignature

CONSTANT, VARIABLE, BINDING, DISTINCT = "ground:constant", "ground:variable", "ground:binding", "ground:distinct"
GROUNDING_PREDICATES = ((CONSTANT, 1), (VARIABLE, 1), (BINDING, 2), (DISTINCT, 2))


def grounding_signature(signature: PredicateSignature) -> PredicateSignature:
    """Return ``signature`` with the four ``ground:`` predicates added (names sorted as always)."""
    return PredicateSignature(tuple(sorted(set(signature.predicates) | set(GROUNDING_PREDICATES))))


def is_grounding_signature(signature: PredicateSignature) -> bool:
    return all(name in signature.index for name, _ in GROUNDING_PREDICATES)


def domain_signature(signature: PredicateSignature) -> PredicateSignature:
    """Return the domain's own signature inside a grounding signature."""
    extra = {name for name, _ in GROUNDING_PREDICATES}
    return PredicateSignature(tuple(p for p in signature.predicates if p[0] not in extra))


class GroundingInputs:
    """Build grounding-model inputs for the states and goals of one task.

    ``task`` is a :class:`~up_gnnplan.problems.bridge.Task`; its objects keep their ids and the
    free variables of a goal follow them (``num_objects + j`` for the goal's ``j``-th variable).
    """

    def __init__(self, task):
        self.task = task
        self.signature = grounding_signature(task.signature)
        self.width = max(self.signature.max_arity, 1)
        # Task predicate id -> grounding-signature predicate id.
        self._remap = np.array([self.signature.index[name] for name in task.signature.names], dtype=np.int32)
        self._object_id = {o: i for i, o in enumerate(task.objects)}
        self.num_objects = len(task.objects)
        constant = self.signature.index[CONSTANT]
        self._constants = _rows([(constant, [o]) for o in range(self.num_objects)], self.width)

    def remap(self, atoms: Atoms) -> Atoms:
        """Return task atoms (task predicate ids) with grounding-signature predicate ids."""
        args = atoms.args
        if args.shape[1] < self.width:
            args = np.pad(args, ((0, 0), (0, self.width - args.shape[1])), constant_values=-1)
        return Atoms(self._remap[atoms.pred], args)

    def goal_atoms(self, goal) -> tuple[Atoms, Atoms, Atoms]:
        """Return (structure atoms, positive goal atoms, negative goal atoms) of ``goal``.

        Structure atoms are the ``ground:`` and variable type atoms, which hold in every state.
        """
        index = self.signature.index
        term_id = dict(self._object_id)
        term_id.update({v: self.num_objects + j for j, v in enumerate(goal.variables)})
        structure = []
        for j, variable in enumerate(goal.variables):
            node = self.num_objects + j
            structure.append((index[VARIABLE], [node]))
            kind = variable.type
            while kind is not None:
                pid = index.get(TYPE_PREFIX + kind.name)
                if pid is not None:
                    structure.append((pid, [node]))
                kind = kind.father
            for obj in goal.candidates(variable, self.task.objects):
                structure.append((index[BINDING], [self._object_id[obj], node]))
        for a, b in goal.distinct:
            structure.append((index[DISTINCT], [term_id[a], term_id[b]]))
            structure.append((index[DISTINCT], [term_id[b], term_id[a]]))
        positive, negative = [], []
        for node in goal.ground:
            target = positive
            if node.is_not():
                target, node = negative, node.arg(0)
            target.append((index[node.fluent().name], [self._object_id[a.object()] for a in node.args]))
        for atom in goal.atoms:
            positive.append((index[atom.fluent.name], [term_id[t] for t in atom.terms]))
        return (Atoms.concat([self._constants, _rows(structure, self.width)], self.width),
                _rows(positive, self.width), _rows(negative, self.width))

    def state_input(self, state_atoms: Atoms, goal, goal_parts=None) -> StateInput:
        """Return the input for the task atoms of a state (static ones included) and ``goal``."""
        structure, positive, negative = goal_parts or self.goal_atoms(goal)
        return StateInput(Atoms.concat([self.remap(state_atoms), structure], self.width), positive,
                          self.num_objects + len(goal.variables), negative)

    def object_names(self, goal) -> list[str]:
        """Return the node names: the task's objects, then ``?x`` for each free variable."""
        return list(self.task.object_names) + [f"?{v.name}" for v in goal.variables]

"""Successors that are the same to a model: one value for each class of symmetric actions.

At Spanner's gate a man carrying 80 spanners before 40 loose nuts has 3,200 applicable
``tighten`` actions, and the greedy policy valued every successor: a 2 s step where the others
take 0.1 s. Yet the spanners are interchangeable, and so are the nuts: swapping two of them maps
the state and the goal onto themselves, so the successors of ``tighten(s1, n1)`` and
``tighten(s7, n3)`` are the same state up to renaming objects. Every model here is invariant
under renaming objects (no object identity is a feature), so they get the same value: valuing
one successor of each class is exact, not an approximation.

Two objects are *interchangeable* in a state when swapping them maps everything a model sees
onto itself: the static and type atoms, the goal atoms and the state's fluent atoms. That is an
equivalence relation (if ``(a b)`` and ``(a c)`` are automorphisms, so is ``(b c) = (a b)(a c)(a
b)``), checked against one representative per class. Two actions whose arguments differ by a
permutation within classes are related by an automorphism of the state and the goal, so their
successors are isomorphic: the key of an action renames the k-th distinct argument of a class to
the class's k-th member. Goals with existential quantifiers are left alone (their quantified part
is not in the atoms checked), and so are the domain's constants (an action schema may name one).

The same renaming maps every plan from one such successor to a plan from the other: it keeps
the static atoms, the goal and the action schemas, so the two successors reach a goal alike.
Searches may therefore keep one successor per class (:func:`~up_gnnplan.search.gbfs.gbfs` and
:func:`~up_gnnplan.search.action_policy.policy_best_first` do, with ``symmetry=True``) and stay
complete: a reachable space exhausted up to symmetry still proves a task unsolvable.

Symmetric states are met along different paths too (Gripper: ``pick b1`` then ``pick b2``, or
the other way round, or any two of the balls). :meth:`SymmetricActions.canonical` renames a
state's objects within their task-wide groups into an order read off the state (each object's
atoms, its neighbours' groups), and GBFS detects duplicates on the renamed atoms, as orbit
search does (Domshlak, Katz & Shleyfman 2015). Equal keys mean the same state up to a
renaming within the groups, which keeps the task's static atoms, goal and schemas: pruning on
them is exact. Objects the order cannot tell apart are renamed in index order, so some
symmetric states keep different keys: a missed duplicate costs time, never completeness.

Objects are first grouped by what is constant over the task (static, type and goal atoms), once;
a state only splits those groups, and a group is compared with at most :data:`MAX_CLASSES`
representatives (objects past that stay apart: a missed symmetry costs time, never a wrong value).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

import numpy as np

from up_gnnplan.states.actions import ActionRows
from up_gnnplan.states.successors import CHUNK_ACTIONS

# A group of objects is compared with at most this many representatives per state.
MAX_CLASSES = 32
# A search drops symmetry for the rest of its run when its first this many states merged none
# (benchmarks/symmetry_overhead.py: on a Floortile problem 3x the training size, where nothing
# merges, keys for every state cost 4% of the states expanded in 15 s, the trial 3%).
TRIAL_STATES = 500


def _atom_sets(pred: np.ndarray, args: np.ndarray, tag: int) -> tuple[set, dict[int, list[tuple]]]:
    """Atoms as tuples ``(tag, pred, o1, o2, ...)`` (padding dropped) and, per object, those it occurs in."""
    atoms, of_object = set(), defaultdict(list)
    for p, row in zip(pred.tolist(), args.tolist()):
        objects = tuple(o for o in row if o >= 0)
        atom = (tag, p, *objects)
        atoms.add(atom)
        for o in set(objects):
            of_object[o].append(atom)
    return atoms, of_object


def _swapped(atom: tuple, a: int, b: int) -> tuple:
    return atom[:2] + tuple(b if o == a else a if o == b else o for o in atom[2:])


def _swap_keeps(atoms: set, of_object: dict, a: int, b: int) -> bool:
    """Whether swapping objects ``a`` and ``b`` maps ``atoms`` onto itself."""
    near_a, near_b = of_object.get(a, ()), of_object.get(b, ())
    if len(near_a) != len(near_b):
        return False
    return all(_swapped(atom, a, b) in atoms for atom in near_a) and \
        all(_swapped(atom, a, b) in atoms for atom in near_b)


def _profile(of_object: dict, o: int) -> tuple:
    """What cannot change under a swap: the (tag, predicate, positions of o) of o's atoms, counted."""
    return tuple(sorted((atom[0], atom[1], tuple(i for i, x in enumerate(atom[2:]) if x == o))
                        for atom in of_object.get(o, ())))


def _split(groups: list[list[int]], atoms: set, of_object: dict) -> list[list[int]]:
    """Split each group into classes of objects interchangeable under ``atoms``."""
    out = []
    for group in groups:
        if len(group) == 1:
            out.append(group)
            continue
        by_profile = defaultdict(list)
        for o in group:
            by_profile[_profile(of_object, o)].append(o)
        for candidates in by_profile.values():
            classes: list[list[int]] = []
            for o in candidates:
                for members in classes:
                    if _swap_keeps(atoms, of_object, members[0], o):
                        members.append(o)
                        break
                else:
                    classes.append([o])
                    if len(classes) > MAX_CLASSES:  # give up on this group: the rest stay apart
                        classes += [[x] for x in candidates[candidates.index(o) + 1:]]
                        break
            out.extend(classes)
    return out


class SymmetricActions:
    """Key the applicable actions of a state so that actions with isomorphic successors share a key.

    ``keys(state, actions)`` returns one hashable key per ground action; built once per task from
    :class:`~up_gnnplan.search.common.Inputs` (what the model sees). ``enabled`` is False for a goal
    with existential quantifiers: every action is then its own class.
    """

    def __init__(self, task, inputs):
        from up_gnnplan.search.common import Inputs
        from up_gnnplan.states.atoms import StateAtoms

        # A search's inputs may be any conversion (the WL-GOOSE peer's): the atoms come from the task then.
        atoms = inputs.atoms if isinstance(inputs, Inputs) else StateAtoms(task)
        self.atoms, self.rows = atoms, ActionRows(task)
        self.enabled = not atoms.has_existential_goal
        static, static_of = _atom_sets(atoms.static.pred, atoms.static.args, 0)
        for tag, part in ((1, atoms.goal), (2, atoms.negative_goal)):
            more, more_of = _atom_sets(part.pred, part.args, tag)
            static |= more
            for o, near in more_of.items():
                static_of[o] = static_of.get(o, []) + near
        # Groups of objects interchangeable in every state as far as the task's constant atoms go;
        # the domain's constants stay apart.
        constants = task.constant_ids
        movable = [o for o in range(task.num_objects) if o not in constants]
        self.groups = [g for g in _split([movable], static, static_of) if len(g) > 1]
        self._colour = list(range(task.num_objects))
        for number, group in enumerate(self.groups):
            for o in group:
                self._colour[o] = -1 - number
        self._last: tuple = (None, {})  # (state index, its classes): a step's chunks share them

    def classes(self, state) -> dict[int, list[int]]:
        """Per object of a non-trivial class in ``state``: the class's members, in order."""
        fluent = self.atoms.fluent(state)
        if self.atoms.hides_fluent_atoms():  # an atom not checked could tell two objects apart
            return {}
        atoms, of_object = _atom_sets(fluent.pred, fluent.args, 3)
        members = {}
        for group in _split(self.groups, atoms, of_object):
            if len(group) > 1:
                for o in group:
                    members[o] = group
        return members

    def keys(self, state, actions) -> list:
        """One key per ground action of ``actions`` (applicable in ``state``)."""
        if not self.enabled or not self.groups:
            return list(range(len(actions)))
        if self._last[0] != state.get_index():
            self._last = (state.get_index(), self.classes(state))
        members = self._last[1]
        if not members:
            return list(range(len(actions)))
        schemas, args = self.rows(actions)
        keys = []
        for schema, row in zip(schemas.tolist(), args.tolist()):
            seen: dict[int, int] = {}  # argument -> the class member it is renamed to
            used: dict[int, int] = defaultdict(int)  # class (its first member) -> members used
            renamed = []
            for o in row:
                if o < 0 or o not in members:
                    renamed.append(o)
                    continue
                if o not in seen:
                    group = members[o]
                    seen[o] = group[used[group[0]]]
                    used[group[0]] += 1
                renamed.append(seen[o])
            keys.append((schema, *renamed))
        return keys

    def canonical(self, state):
        """A key of ``state`` shared only by states that are the same up to renaming objects within
        the task's groups (and by many, not all, of those): the digest of its renamed atoms, or
        the state's index when there is nothing to rename."""
        if not self.enabled or not self.groups:
            return state.get_index()
        fluent = self.atoms.fluent(state)
        if self.atoms.hides_fluent_atoms():  # an atom the key would not see could tell two states apart
            return state.get_index()
        pred, args = fluent.pred.tolist(), fluent.args.tolist()
        rows_of: dict[int, list] = defaultdict(list)  # object of a group -> (predicate, its position, row)
        for p, row in zip(pred, args):
            for i, o in enumerate(row):
                if o >= 0 and self._colour[o] < 0:
                    rows_of[o].append((p, i, row))
        # Groups are renamed in turn; an object's order key reads its neighbours' new names where
        # their group is done, else their group's colour (an object outside the groups: itself).
        colour = list(self._colour)
        rename = np.arange(len(colour) + 1, dtype=np.int64)
        rename[-1] = -1  # padding (-1) stays padding
        for group in self.groups:
            described = {o: sorted((p, i, *(colour[x] for x in row if x >= 0)) for p, i, row in rows_of.get(o, ()))
                         for o in group}
            for new_name, o in zip(group, sorted(group, key=lambda o: (described[o], o))):
                rename[o] = new_name
            for o in group:
                colour[o] = int(rename[o])
        renamed = rename[fluent.args] if len(args) else fluent.args.astype(np.int64)
        rows = np.concatenate([fluent.pred[:, None].astype(np.int64), renamed], axis=1)
        rows = rows[np.lexsort(rows.T[::-1])] if len(rows) else rows
        # 16 bytes per state however many atoms (a search keeps one key per state it met); two
        # different atom sets share a digest with probability 2^-128.
        return hashlib.blake2b(rows.astype(np.int32).tobytes(), digest_size=16).digest()

    def keys_of(self, state, actions, check=None) -> list:
        """:meth:`keys` of any number of ``actions``, in chunks with ``check(what)`` (a solve's
        limits) called between them."""
        keys = []
        for start in range(0, len(actions), CHUNK_ACTIONS):
            if start and check is not None:
                check(f"while grouping the {len(actions):,} applicable actions into symmetry classes")
            keys += self.keys(state, actions[start:start + CHUNK_ACTIONS])
        return keys

    def representatives(self, state, actions, check=None) -> list:
        """The first action of each class among ``actions`` (applicable in ``state``), in their order."""
        if not self.enabled or not self.groups:
            return list(actions)
        first: dict = {}
        for action, key in zip(actions, self.keys_of(state, actions, check)):
            first.setdefault(key, action)
        return list(first.values())


class SearchSymmetry:
    """What a search uses of symmetry: successors pruned to one per class of symmetric actions
    (:meth:`representatives`) and duplicate detection up to renaming (:meth:`key`).

    Both cost time on every state, and on many tasks nothing ever merges (interchangeable objects
    that are never in the same situation). So the first :data:`TRIAL_STATES` states are a trial:
    if none of them merged with another and no successor was pruned, symmetry is dropped for the
    rest of the search. The states met during the trial keep their keys, so duplicate detection
    stays exact across the switch. ``merged`` counts the states and successors found the same as
    another up to renaming (0: the search was an ordinary one).
    """

    def __init__(self, task, inputs, on: bool = True):
        self.symmetric = SymmetricActions(task, inputs) if on else None
        self.active = self.symmetric is not None and self.symmetric.enabled and bool(self.symmetric.groups)
        self.merged = 0
        self._trying = self.active
        self._key_of: dict = {}  # during the trial (and after a switch-off): state index -> its key
        self._first: dict = {}  # during the trial: key -> the first state index met with it

    def key(self, state):
        """The key of ``state`` for duplicate detection."""
        index = state.get_index()
        if index in self._key_of:
            return self._key_of[index]
        if not self.active:
            return index
        key = self.symmetric.canonical(state)
        if self._trying:
            if self._first.setdefault(key, index) != index:
                self.merged += 1
            self._key_of[index] = key
            if len(self._key_of) >= TRIAL_STATES:
                self._end_trial()
        return key

    def representatives(self, state, actions, check=None) -> list:
        """One applicable action of ``state`` per class of symmetric actions among ``actions``."""
        if not self.active:
            return actions
        kept = self.symmetric.representatives(state, actions, check)
        self.merged += len(actions) - len(kept)
        return kept

    def keys_of(self, state, actions, check=None) -> list | None:
        """The symmetry classes of ``actions`` (None when symmetry is off)."""
        return self.symmetric.keys_of(state, actions, check) if self.active else None

    def _end_trial(self) -> None:
        self._trying, self._first = False, {}
        if self.merged:
            self._key_of = {}  # the keys stay canonical: no need to remember them
        else:
            self.active = False  # new states get their index; those met keep their key

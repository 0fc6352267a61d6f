"""What the action policy shows its model of a large state: the state without the objects it is done with.

A policy step's cost grows with the objects of the state (a Blocksworld state of 488 blocks: about 29 ms a
session call, against 10 ms at 146). Late in a walk most objects are *done*: the goal names them, every goal
literal naming them holds, and nothing about them is left to change. :class:`DoneView` scores a state's actions on
the state without those objects, their atoms and their goal literals, which the model sees as a smaller task of the
same domain (R-GNNs size to any number of objects); the walk itself, its visited states and its plan stay in the
whole task, so a plan is as valid as without the view.

An object is done in a state where

- the goal names it, every goal literal naming it holds, and every fluent atom naming it is one the goal asks for
  (a Blocksworld block on its goal block, but not the clear block on top of a tower, which may still be built on;
  the location a truck is at stays);
- it is not *unsettled*: the first object of a goal literal that does not hold is unsettled (it must change:
  ``on(w, r)`` for a block ``w`` not yet there), and so is the first object of a fluent atom whose other objects
  are unsettled, as far as that reaches (a block on ``w`` must move once ``w`` moves, and the one on it too);
- no static atom ties it to an object of its type that is not done (a location on a road to one that is not: the
  map stays whole; a served passenger's origin floor does not keep the passenger).

Actions that name a hidden object are ranked after every other (they are taken only where every other action's
successor was visited); a state where every action names one is scored whole. The view is used only where at least
:data:`MIN_SHARE` of the objects are done.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.actions import ActionInput
from up_gnnplan.encodings.base import StateInput, atom_keys
from up_gnnplan.states.atoms import Atoms

# The view hides objects only where at least this share of them is done: below it the call costs
# about the same, and the model sees the task as it was trained to.
MIN_SHARE = 0.1
# Tasks of fewer objects are scored whole: a step costs little there (about 10 ms at 146 blocks), and the models
# of small tasks see a state without its done objects less as the task it is (the shipped IPC 2000 Blocks model,
# 20 blocks into one tower: it takes the built tower apart again and gives up).
MIN_OBJECTS = 100
# The view is dropped for the rest of the walk where this many steps on it achieved no goal literal (net).
CHECK_STEPS = 50
# Done objects within this many fluent atoms of one that is not are shown all the same.
BORDER = 1
# Below the lowest score of the actions the view scores: where the hidden ones rank.
HIDDEN_BELOW = 100.0


class DoneView:
    """Score the actions of a state of ``task`` on the state without its done objects (see the module docstring)."""

    def __init__(self, task, atoms):
        self.task = task
        self.statics = len(atoms.static)  # atoms: the task's StateAtoms; the static atoms come first in every state's
        self.group = _static_groups(task, atoms.static.args)
        self.goal_keys = None  # the goal's atom keys, positive and negative, and which of them static atoms hold
        self.hidden_steps = 0  # steps scored on a view
        self.hidden_objects = 0  # summed over those steps
        self.mark = None  # (goal literals left, hidden steps) where the view's progress was last checked
        self.dropped = ""  # why the view was dropped for the rest of the walk

    def done(self, state: StateInput) -> tuple[np.ndarray, int]:
        """Return a mask over the objects of ``state`` (which are done) and the goal literals it does not hold; where
        fewer than :data:`MIN_SHARE` of them could be done, the mask is not narrowed further (no view then)."""
        n, atoms, goal = state.num_objects, state.atoms, state.goal
        negative = state.negative_goal if state.negative_goal is not None else Atoms.concat([], atoms.args.shape[1])
        base = n + 1
        fluent = Atoms(atoms.pred[self.statics:], atoms.args[self.statics:])
        keys = atom_keys(fluent.pred, fluent.args, base)
        if self.goal_keys is None:  # the goal and the static atoms are the task's
            goal_keys = atom_keys(goal.pred, goal.args, base)
            negative_keys = atom_keys(negative.pred, negative.args, base)
            static = atom_keys(atoms.pred[:self.statics], atoms.args[:self.statics], base)
            self.goal_keys = goal_keys, negative_keys, np.isin(goal_keys, static), np.isin(negative_keys, static)
        goal_keys, negative_keys, static_holds, static_violated = self.goal_keys
        holds = np.isin(goal_keys, keys) | static_holds
        violated = np.isin(negative_keys, keys) | static_violated
        named = _objects(n, goal.args, negative.args)
        ok = named & ~_objects(n, goal.args[~holds], negative.args[violated])
        wanted = np.isin(keys, goal_keys)
        ok &= ~_objects(n, fluent.args[~wanted])
        if ok.sum() < MIN_SHARE * n:  # too few to hide, whatever follows
            return ok, int((~holds).sum() + violated.sum())
        # unsettled: the first object of a goal literal that does not hold, and the first object of a fluent atom
        # whose other objects are unsettled (what is on a block that must move must move)
        unsettled = _objects(n, goal.args[~holds][:, :1], negative.args[violated][:, :1])
        subjects, others = fluent.args[:, :1], fluent.args[:, 1:]
        while others.shape[1]:
            grown = unsettled | _objects(n, subjects[_names_any(others, unsettled)])
            if grown.sum() == unsettled.sum():
                break
            unsettled = grown
        ok &= ~unsettled
        # static atoms tie a done object to a not-done one of its type (the map stays whole): a group of objects of
        # one type joined by static atoms is done together or not at all
        ok &= np.bincount(self.group, weights=~ok, minlength=n)[self.group] == 0
        for _ in range(BORDER):  # a done object in a fluent atom about one shown (its first object) is shown too
            ok &= ~_objects(n, others[_names_any(subjects, ~ok)])
        return ok, int((~holds).sum() + violated.sum())

    def __call__(self, state: StateInput, actions: ActionInput) -> tuple[StateInput, ActionInput, np.ndarray] | None:
        """Return the state without its done objects, the actions that name none of them (renumbered) and the
        mask of those among ``actions``; None where the view does not apply (too few done, or no action left)."""
        if self.dropped or state.num_objects < MIN_OBJECTS:
            return None
        done, left = self.done(state)
        hidden = int(done.sum())
        if hidden < MIN_SHARE * state.num_objects:
            return None
        if self.mark is None or self.hidden_steps - self.mark[1] >= CHECK_STEPS:
            if self.mark is not None and left >= self.mark[0]:
                self.dropped = (f"dropped after {self.hidden_steps} step(s): {CHECK_STEPS} steps on it achieved no "
                                f"goal literal ({left} left)")
                return None
            self.mark = (left, self.hidden_steps)
        shown = np.flatnonzero(~done)
        number = np.full(state.num_objects + 1, -1, dtype=np.int64)  # old id -> new (index -1: padding stays -1)
        number[shown] = np.arange(len(shown))
        scored = ~_names_any(actions.args, done)
        if not scored.any():
            return None
        self.hidden_steps += 1
        self.hidden_objects += hidden
        view = StateInput(_renumbered(state.atoms, done, number), _renumbered(state.goal, done, number), len(shown),
                          None if state.negative_goal is None else _renumbered(state.negative_goal, done, number))
        return view, ActionInput(actions.schema[scored], _renumber(actions.args[scored], number)), scored

    def note(self) -> str:
        """The view's part of a walk, in words (empty where it never applied)."""
        if not self.hidden_steps:
            return ""
        return (f"{self.hidden_steps} step(s) scored without their done objects "
                f"({self.hidden_objects / self.hidden_steps:.0f} of {self.task.num_objects} on average)"
                + (f", {self.dropped}" if self.dropped else ""))


def scores_with_hidden(scored: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The preferences of all actions: the view's ``scored`` ones where ``mask``, the others below them all."""
    out = np.full(len(mask), (scored.min() if len(scored) else 0.0) - HIDDEN_BELOW, dtype=np.float64)
    out[mask] = scored
    return out


def _static_groups(task, static: np.ndarray) -> np.ndarray:
    """One group number per object of ``task``: objects of one type joined, directly or through others of that type,
    by static atoms (``static``: their arguments) share one."""
    n = task.num_objects
    types = list(task.object_types)
    kinds = {kind: i for i, kind in enumerate(dict.fromkeys(types))}
    kind = np.array([kinds[t] for t in types], dtype=np.int64)
    pairs = [static[:, [i, j]] for i in range(static.shape[1]) for j in range(i + 1, static.shape[1])]
    edges = np.concatenate(pairs) if pairs else np.zeros((0, 2), dtype=np.int64)
    edges = edges[(edges >= 0).all(axis=1)]
    edges = edges[kind[edges[:, 0]] == kind[edges[:, 1]]]
    group = np.arange(n)
    while len(edges):  # the least object number of each group, spread along the edges
        low = np.minimum(group[edges[:, 0]], group[edges[:, 1]])
        spread = group.copy()
        np.minimum.at(spread, edges[:, 0], low)
        np.minimum.at(spread, edges[:, 1], low)
        spread = spread[spread]
        if (spread == group).all():
            break
        group = spread
    return group


def _objects(n: int, *arrays: np.ndarray) -> np.ndarray:
    """A mask over ``n`` objects: those named in any row of ``arrays`` (-1 padded object ids)."""
    mask = np.zeros(n + 1, dtype=bool)
    for args in arrays:
        mask[args[args >= 0]] = True
    return mask[:n]


def _names_any(args: np.ndarray, objects: np.ndarray) -> np.ndarray:
    """A mask over the rows of ``args``: those that name an object of the mask ``objects``."""
    if not len(args):
        return np.zeros(0, dtype=bool)
    padded = np.append(objects, False)  # index -1 (padding) reads False
    return padded[args].any(axis=1)


def _renumbered(atoms: Atoms, done: np.ndarray, number: np.ndarray) -> Atoms:
    """``atoms`` without those that name a done object, their objects renumbered."""
    keep = ~_names_any(atoms.args, done)
    return Atoms(atoms.pred[keep], _renumber(atoms.args[keep], number))


def _renumber(args: np.ndarray, number: np.ndarray) -> np.ndarray:
    """Object ids ``args`` (-1 padded) by ``number`` (old id -> new)."""
    return np.where(args >= 0, number[args], -1).astype(args.dtype)

"""Greedy action elimination: drop the actions a plan does not need (Nakhost & Müller 2010).

A learned policy's plan, and above all a fallback search that went on from the path a policy
walked before it gave up, carries detours: a truck driven back and forth, a package loaded and
unloaded again. Greedy action elimination removes them without any search. For each position
``i`` of the plan, from the first: leave out action ``i`` and, from there on, every later action
that is no longer applicable; if the rest still reaches the goal, that shorter plan replaces the
plan (and position ``i`` is tried again), else the search moves on to ``i + 1``. With
non-negative action costs no plan it returns costs more than the one it was given.

The plan is simulated on sets of fluent atoms (each ground action's preconditions and effects
read once from pymimir), a few microseconds per action where applying pymimir actions to states
costs a quarter of a millisecond: quadratic in the plan's length, a 600-step plan is about a
second. The fragment is STRIPS with negative preconditions, static atoms and conditional effects
(each fires where its condition holds in the state the action is applied to); a plan with derived
atoms (an existential goal compiled into axioms) is returned as it is. The work stops at
``deadline`` (a :func:`time.perf_counter` value) with the shortest plan
found so far, and the result is replayed through pymimir, so a plan is only ever replaced by one
that reaches the goal there too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

CHECK_EVERY = 64  # positions tried between two looks at the clock
# The shortcuts' time: a second plus a twentieth of the time elimination may take. Each plan state's
# applicable actions are generated and applied; where states have very many (medium Childsnack: a
# hundred thousand), the pass is given up as soon as its pace says it cannot finish in that time.
SHORTCUT_SECONDS, SHORTCUT_SHARE = 1.0, 0.05
UNBOUNDED_SECONDS = 30.0  # what the shortcuts reckon elimination has left when it has no deadline


@dataclass
class Elimination:
    """The plan after elimination, its cost, and what happened."""

    actions: list
    cost: float
    removed: int
    note: str


class _Compiled:
    """Preconditions and effects of one ground action as sets of fluent-atom indices; its conditional
    effects (Briefcaseworld's ``move``) as (positive, negative, add, delete) each, those whose static
    condition fails (``static_holds``) left out, since they never fire."""

    __slots__ = ("positive", "negative", "add", "delete", "conditional")

    def __init__(self, action, static_holds):
        self.positive, self.negative = _literals(action.get_precondition().get_literals())
        add, delete, self.conditional = set(), set(), []
        for effect in action.get_conditional_effect():
            condition = effect.get_condition()
            if condition.get_numerics():
                raise _Unsupported("numeric conditions in its effects")
            literals = condition.get_literals()
            if any(literal.is_static() and not static_holds(literal) for literal in literals):
                continue
            adds = frozenset(_fluent(atom) for atom in effect.get_effect().get_add_list())
            deletes = frozenset(_fluent(atom) for atom in effect.get_effect().get_delete_list())
            positive, negative = _literals(literals)
            if positive or negative:
                self.conditional.append((positive, negative, adds, deletes))
            else:
                add |= adds
                delete |= deletes
        self.add, self.delete = frozenset(add), frozenset(delete)

    def applicable(self, state: frozenset) -> bool:
        return self.positive <= state and not (self.negative & state)

    def apply(self, state: frozenset) -> frozenset:
        """The successor of ``state``: every effect whose condition holds in ``state``, deletes before adds."""
        add, delete = self.add, self.delete
        if self.conditional:
            fired = [(a, d) for p, n, a, d in self.conditional if p <= state and not (n & state)]
            add, delete = add.union(*(a for a, _ in fired)), delete.union(*(d for _, d in fired))
        return (state - delete) | add


class _Unsupported(Exception):
    pass


def _fluent(atom) -> int:
    if atom.is_derived():
        raise _Unsupported("derived atoms")
    return atom.get_index()


def _literals(literals) -> tuple[frozenset, frozenset]:
    """(positive, negative) fluent atoms of ``literals``; static ones hold throughout a valid plan."""
    positive, negative = set(), set()
    for literal in literals:
        if literal.is_static():
            continue
        if literal.is_derived():
            raise _Unsupported("derived atoms")
        (positive if literal.get_polarity() else negative).add(literal.get_atom().get_index())
    return frozenset(positive), frozenset(negative)


def eliminate_actions(task, actions: list, deadline: float | None = None, cost: float | None = None) -> Elimination:
    """Return ``actions`` (a plan of ``task``, pymimir ground actions) with the actions it does not need left out.

    ``cost``: the plan's cost when the caller knows it (a search does), else it is replayed for it.
    """
    original = Elimination(list(actions), _replay(task, actions)[1] if cost is None else cost, 0, "")
    try:
        initial_state = task.initial_state()
        compiled = {a.get_index(): _Compiled(a, initial_state.literal_holds) for a in actions}
        goal_condition = task.goal_condition
        if goal_condition.get_numerics():
            raise _Unsupported("numeric goals")
        goal_positive, goal_negative = _literals(goal_condition.get_literals())
    except _Unsupported as why:
        original.note = f"action elimination left out: the plan has {why}"
        return original
    initial = frozenset(atom.get_index() for atom in initial_state.get_atoms(ignore_static=True, ignore_derived=True))
    plan, cut, shortened = _shortcuts(task, list(actions), _shortcut_deadline(deadline))
    try:
        compiled.update({a.get_index(): _Compiled(a, initial_state.literal_holds) for a in plan
                         if a.get_index() not in compiled})
    except _Unsupported:  # a shortcut's action of a kind the sets cannot simulate: the plan as it was
        plan, cut = list(actions), 0
    prefix_state, i, tried, stopped = initial, 0, 0, False
    while i < len(plan):
        tried += 1
        if deadline is not None and tried % CHECK_EVERY == 0 and time.perf_counter() > deadline:
            stopped = True
            break
        state, kept = prefix_state, []
        for action in plan[i + 1:]:
            c = compiled[action.get_index()]
            if c.applicable(state):
                state = c.apply(state)
                kept.append(action)
        if goal_positive <= state and not (goal_negative & state):
            plan[i:] = kept
        else:
            prefix_state = compiled[plan[i].get_index()].apply(prefix_state)
            i += 1
    if len(plan) == len(actions):
        original.note = "action elimination: nothing to leave out" + _stopped(shortened, stopped)
        return original
    reached, cost = _replay(task, plan)
    shortcut = f", {cut} of them by shortcuts" if cut else ""
    if not reached:  # the sets disagree with pymimir: keep the plan that was found
        original.note = "action elimination left out: its shorter plan does not reach the goal in pymimir"
        return original
    return Elimination(plan, cost, len(actions) - len(plan),
                       f"action elimination: {len(actions) - len(plan)} of {len(actions)} actions left out{shortcut}"
                       + _stopped(shortened, stopped))


def _stopped(shortcuts: bool, elimination: bool) -> str:
    """What the time share stopped, for the note: nothing, the shortcuts or the greedy elimination."""
    parts = [name for name, stopped in (("shortcuts", shortcuts), ("elimination", elimination)) if stopped]
    return f" ({' and '.join(parts)} stopped by the time share)" if parts else ""


def _shortcut_deadline(deadline: float | None) -> float:
    """When the shortcuts must be done: :data:`SHORTCUT_SECONDS` plus :data:`SHORTCUT_SHARE` of the time to
    ``deadline``, at most half of it (the rest is greedy elimination's)."""
    now = time.perf_counter()
    left = UNBOUNDED_SECONDS if deadline is None else max(0.0, deadline - now)
    return now + min(left / 2, SHORTCUT_SECONDS + SHORTCUT_SHARE * left)


def _shortcuts(task, plan: list, deadline: float) -> tuple[list, int, bool]:
    """Return (``plan`` with shortcuts taken, the actions they left out, whether ``deadline`` stopped the pass,
    or its pace said it could not finish by then): where an action applicable in the
    plan's i-th state leads straight to a state the plan reaches only later, at j > i + 1, and costs no more
    than the actions from i to j, it replaces them (the furthest such state first). The states after it are
    the plan's own, so the rest still applies and reaches the goal; a stretch that comes back to a state
    the plan passed before is cut the same way.

    Greedy elimination leaves out one action at a time and keeps it where a later one needs it: a satellite
    turned to A and then from A to B, where it could turn to B at once, or a robot's detour round a grid,
    whose moves each need the one before.
    """
    states, spent = [task.initial_state()], [0.0]  # spent[k]: the cost of the plan's first k actions
    for action in plan:
        state, cost = action.apply(states[-1], return_cost=True)
        states.append(state)
        spent.append(spent[-1] + cost)
    last = {state.get_index(): k for k, state in enumerate(states)}  # a state's last position on the plan
    kept, i, tried, began = [], 0, 0, time.perf_counter()
    while i < len(plan):
        best, jump = i + 1, plan[i]
        now = time.perf_counter()
        if now > deadline or (i and now + (now - began) / i * (len(plan) - i) > deadline):  # or cannot finish
            return kept + plan[i:], i - len(kept), True
        applicable = list(states[i].generate_applicable_actions())
        for action in applicable:
            tried += 1
            if tried % 256 == 0:  # past the deadline, or at this pace the pass cannot finish by it
                now = time.perf_counter()
                if now + (now - began) / tried * len(applicable) * (len(plan) - i) > deadline:
                    shorter = kept + [jump] + plan[best:]
                    return shorter, len(plan) - len(shorter), True
            successor, cost = action.apply(states[i], return_cost=True)
            j = last.get(successor.get_index(), -1)
            if j > best and cost <= spent[j] - spent[i] + 1e-9:
                best, jump = j, action
        kept.append(jump)
        i = best
    return kept, len(plan) - len(kept), False


def _replay(task, actions) -> tuple[bool, float]:
    """Whether ``actions`` reach the goal of ``task`` in pymimir (each applicable in turn), and their cost."""
    from up_gnnplan.states.successors import is_goal

    state, cost = task.initial_state(), 0.0
    for action in actions:
        if not action.is_applicable(state):
            return False, cost
        state, step_cost = action.apply(state, return_cost=True)
        cost += step_cost
    return is_goal(task, state), cost

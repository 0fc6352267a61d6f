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
    plan = list(actions)
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
        original.note = "action elimination: nothing to leave out" + (" (stopped by its time share)" if stopped else "")
        return original
    reached, cost = _replay(task, plan)
    if not reached:  # the sets disagree with pymimir: keep the plan that was found
        original.note = "action elimination left out: its shorter plan does not reach the goal in pymimir"
        return original
    return Elimination(plan, cost, len(actions) - len(plan),
                       f"action elimination: {len(actions) - len(plan)} of {len(actions)} actions left out"
                       + (" (stopped by its time share)" if stopped else ""))


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

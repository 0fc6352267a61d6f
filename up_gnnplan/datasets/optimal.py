"""Label states of instances too large to expand, using an optimal planner.

The states along an optimal plan get exact V* for free: every suffix of an optimal plan is
optimal. Their successors off the plan are labelled by one more optimal search each, with a
time limit and, optionally, a limit on the states it may expand; a search that exhausts the space
proves a dead end, one stopped by a limit leaves the state out (no guessed label). Which searches
a time limit stops depends on the machine and its load, so a dataset built again may differ (the
same problems gave 53, 55, 56, 60 and 61 states on one machine); an expansion limit stops the
same searches everywhere: with one, and a time limit that is never reached first, the dataset is
the same on every build. The states each limit left out are counted in :attr:`left_out`. The
planner is pymimir's A* with an admissible heuristic (h^max by default, h^2 as the stronger
option); tasks whose actions do not all cost 1 use a Python A* instead (see
:func:`_astar_with_costs`).
"""

from __future__ import annotations

import heapq
import itertools
import time

import numpy as np

from up_gnnplan.datasets.expansion import LabelledStates, Transitions
from up_gnnplan.datasets.heartbeat import Heartbeat
from up_gnnplan.errors import UnsolvableProblemError
from up_gnnplan.limits import Limits, MemoryLimitReached
from up_gnnplan.native import quiet_stdout
from up_gnnplan.search.symmetry import SymmetricActions
from up_gnnplan.states.atoms import StateAtoms
from up_gnnplan.states.successors import is_goal, successors

HEURISTICS = {"hmax": "MaxHeuristic", "h2": "H2Heuristic", "blind": "BlindHeuristic"}


def _heuristic(task, name: str):
    import pymimir

    if name not in HEURISTICS:
        raise ValueError(f"unknown admissible heuristic {name!r}; choose one of {', '.join(HEURISTICS)}")
    with quiet_stdout():
        return getattr(pymimir, HEURISTICS[name])(task.mimir_problem)


class _ExpansionLimit(Exception):
    """Raised from pymimir's expansion callback to stop a search at its expansion limit."""


def _search(task, state, heuristic, time_limit: float, expansion_limit: int | None = None, beat=None):
    """Return (status, cost, actions) of an optimal search from ``state``; status "expansion-limit"
    when it expanded ``expansion_limit`` states without a plan.

    pymimir's own ``max_num_states`` counts the states of the problem's repository, which every
    search of the problem adds to, so it is not a limit per search: the expansions are counted here.
    ``beat`` (a :class:`~up_gnnplan.datasets.heartbeat.Heartbeat`) is called for every expansion: it
    reports progress and raises :class:`~up_gnnplan.limits.MemoryLimitReached` above the memory limit.
    """
    import pymimir

    if not task.has_unit_costs():
        return _astar_with_costs(task, state, heuristic, time_limit, expansion_limit, beat)
    options = {}
    if expansion_limit or beat is not None:
        expanded = [0]

        def count(_state):
            expanded[0] += 1
            if expansion_limit and expanded[0] > expansion_limit:
                raise _ExpansionLimit
            if beat is not None:
                beat()

        options["on_expand_state"] = count
    try:
        result = pymimir.astar_eager(task.mimir_problem, state, heuristic, max_time_seconds=time_limit, **options)
    except _ExpansionLimit:
        return "expansion-limit", None, []
    if result.status == "solved" and not result.solution:
        return result.status, 0.0, []  # the start is a goal: pymimir reports no cost
    return result.status, result.solution_cost, result.solution or []


def _astar_with_costs(task, state, heuristic, time_limit: float, expansion_limit: int | None = None, beat=None):
    """A* in Python, for tasks whose actions do not all cost 1.

    pymimir 0.13.63 is not used there: its A* reports "exhausted" when the goal state is first
    reached by a costlier path and later by a cheaper one, and its h^max / h^2 count actions
    (each as cost 1), which overestimates when actions cost less than 1. The heuristic is
    therefore scaled by the cheapest action cost, which keeps it admissible.
    """
    start = time.perf_counter()
    scale = task.min_action_cost()
    best = {state.get_index(): 0.0}
    parent: dict[int, tuple[int, object]] = {}
    tie = itertools.count()
    frontier = [(0.0, 0.0, next(tie), state)]
    expanded = 0
    while frontier:
        _, g, _, current = heapq.heappop(frontier)
        index = current.get_index()
        if g > best[index]:
            continue  # reached again more cheaply since this entry was pushed
        if is_goal(task, current):
            plan = []
            while index in parent:
                index, action = parent[index]
                plan.append(action)
            return "solved", g, plan[::-1]
        if time.perf_counter() - start > time_limit:
            return "timeout", None, []
        expanded += 1
        if expansion_limit and expanded > expansion_limit:
            return "expansion-limit", None, []
        if beat is not None:
            beat()
        for action, successor, cost in successors(current):
            g_next = g + cost
            j = successor.get_index()
            if g_next < best.get(j, float("inf")):
                h = heuristic.compute_value(successor) * scale if scale > 0 else 0.0
                if h == float("inf"):
                    continue
                best[j] = g_next
                parent[j] = (index, action)
                heapq.heappush(frontier, (g_next + h, g_next, next(tie), successor))
    return "exhausted", None, []


# Later plan actions tried first at each plan state (a window, so that long plans stay cheap).
REORDER_WINDOW = 16


def reordered_successors(task, path, plan, costs, suffix, deadline=None) -> list:
    """Return (successor, V*, steps) of the plan states' successors that an optimal plan reordered reaches.

    Where a later action ``a_k`` of the optimal plan applies in the plan's state ``s_i`` and the plan
    with ``a_k`` moved first still reaches the goal, that plan has the same cost, so ``a_k`` is optimal
    in ``s_i`` too and its successor's V* is the suffix cost less ``a_k``'s: exact labels for free.
    Domains whose plans interleave independent tasks (Satellite's satellites, Ferry's cars) have many
    optimal actions per state; a plan alone names one of them, and an action head trained on it learns
    the others as wrong where no search labelled them.
    """
    found = []
    for i in range(len(plan) - 1):
        if deadline is not None and time.perf_counter() > deadline:
            break
        state = path[i]
        for k in range(i + 1, min(len(plan), i + 1 + REORDER_WINDOW)):
            first = plan[k]
            if not first.is_applicable(state):
                continue
            current, ok = first.apply(state), True
            for j in list(range(i, k)) + list(range(k + 1, len(plan))):
                if not plan[j].is_applicable(current):
                    ok = False
                    break
                current = plan[j].apply(current)
            if ok and is_goal(task, current):
                found.append((first.apply(state), float(suffix[i] - costs[k]), len(plan) - i - 1))
    return found


def label_optimal(
    task,
    *,
    heuristic: str = "hmax",
    plan_time_limit: float = 300.0,
    successor_time_limit: float = 5.0,
    successor_expansion_limit: int | None = None,
    include_successors: bool = True,
    progress=None,
    phase=None,
    plan: list | None = None,
    deadline: float | None = None,
    limits: Limits | None = None,
    satisficing: bool = False,
) -> LabelledStates:
    """Label the states of an optimal plan of ``task`` and, optionally, their successors.

    ``progress(done, total)`` follows the successors; ``phase(text)`` is told what is under way.
    The result's ``left_out`` counts the successors each limit left unlabelled ("time", "expansion").
    ``plan``: an optimal plan found elsewhere (pymimir ground actions; ``gnnplan learn`` asks Fast
    Downward), used instead of searching one. ``deadline``: a ``time.perf_counter()`` value after
    which the remaining successors are left out (counted under "time").
    ``limits``: their memory limit (default: :func:`~up_gnnplan.limits.default_memory_mb`) stops the
    plan's search with :class:`~up_gnnplan.limits.MemoryLimitReached`, and the successors' searches
    with the rest of them left out (counted under "memory"). ``phase`` hears of the search and of the
    successors every few seconds (:mod:`~up_gnnplan.datasets.heartbeat`).
    ``satisficing``: ``plan`` is not known to be optimal (``gnnplan learn`` asks LAMA-first where A*
    with LM-cut found none in time): its states get its suffix costs, an upper bound on V* (label
    ``satisficing-plan``), as do the successors a reordering of it reaches; no successor is searched
    (an optimal cost-to-go beside an upper bound would call a better plan's first action worse),
    and the other successors' actions are recorded as unknown.
    """
    phase = phase or (lambda text: None)
    if satisficing and plan is None:
        raise ValueError("a satisficing labelling needs the plan")
    on_plan, off_plan = (3, 3) if satisficing else (1, 2)  # the LABELS of the plan's states and of the others
    limits = limits if limits is not None else Limits()
    h = _heuristic(task, heuristic)
    if plan is None:
        phase(f"searching an optimal plan (A* with {heuristic}, at most {plan_time_limit:g} s)")
        beat = Heartbeat(limits, phase, lambda expanded, seconds: f"searching an optimal plan: {expanded:,} states "
                                                                  f"expanded (at most {plan_time_limit:g} s)")
        status, cost, plan = _search(task, task.initial_state(), h, plan_time_limit, beat=beat)
        if status == "unsolvable" or status == "exhausted":
            raise UnsolvableProblemError(f"{task.source.describe()}: proven unsolvable by A* ({heuristic})")
        if status != "solved":
            raise UnsolvableProblemError(
                f"{task.source.describe()}: no optimal plan within {plan_time_limit:g} s (A* status: {status}); "
                "raise --plan-time-limit or use smaller instances"
            )
    atoms = StateAtoms(task)
    path = [task.initial_state()]
    costs = []
    for action in plan:
        nxt, c = action.apply(path[-1], return_cost=True)
        path.append(nxt)
        costs.append(c)
    suffix = np.concatenate([np.cumsum(costs[::-1])[::-1], [0.0]])
    cost = float(suffix[0])
    seen = {s.get_index() for s in path}
    rows = [(s, suffix[i], len(plan) - i, False, i == len(plan), on_plan) for i, s in enumerate(path)]
    for succ, value, steps in reordered_successors(task, path, plan, costs, suffix, deadline):
        if succ.get_index() not in seen:  # exact V* (or the plan's bound), without a search
            seen.add(succ.get_index())
            rows.append((succ, value, steps, False, steps == 0, off_plan))
    left_out = {"time": 0, "expansion": 0}  # and "memory", when the memory limit stopped the labelling
    per_state = [None] * len(rows)  # the plan states' applicable actions, recorded once their successors are labelled
    recorded = include_successors or satisficing
    # The plan states' successors and the symmetry class of each (isomorphic successors: the same V*).
    steps_out = [successors(s) for s in path[:-1]] if recorded else []
    symmetric = SymmetricActions(task, None) if recorded else None
    classes = [symmetric.keys(s, [a for a, _, _ in out]) for s, out in zip(path[:-1], steps_out)]
    if include_successors and not satisficing:
        pending = _one_per_class(steps_out, classes, seen)
        bound = f"{successor_time_limit:g} s" + (f" and {successor_expansion_limit:,} expansions" if successor_expansion_limit else "")
        phase(f"plan of cost {cost:g} found; labelling the {len(pending):,} successors of its states "
              f"(at most {bound} each)")
        done = 0
        beat = Heartbeat(limits, phase, lambda expanded, seconds: (
            f"labelling successors: {done:,} of {len(pending):,} done, {sum(left_out.values()):,} left out; "
            f"{expanded:,} states expanded"))
        for done, succ in enumerate(pending, start=1):
            if succ.get_index() in seen:
                continue
            seen.add(succ.get_index())
            if is_goal(task, succ):
                rows.append((succ, 0.0, 0, False, True, 2))
                continue
            left = successor_time_limit if deadline is None else min(successor_time_limit, deadline - time.perf_counter())
            if left <= 0:
                left_out["time"] += 1
                continue
            try:
                beat.check()  # a line every few seconds, however short each search
                s_status, s_cost, s_plan = _search(task, succ, h, left, successor_expansion_limit, beat)
            except MemoryLimitReached as error:
                left_out["memory"] = 1 + len({s.get_index() for s in pending[done:]} - seen)
                phase(f"{error}: the last {left_out['memory']:,} successors are left out")
                break
            if s_status == "solved":
                rows.append((succ, s_cost, len(s_plan), False, False, 2))
            elif s_status in ("unsolvable", "exhausted"):
                rows.append((succ, float("inf"), -1, True, False, 2))
            else:
                left_out["expansion" if s_status == "expansion-limit" else "time"] += 1
            if progress is not None:
                progress(done, len(pending))
    if recorded:
        row_of = {r[0].get_index(): i for i, r in enumerate(rows)}
        for i, (out, keys) in enumerate(zip(steps_out, classes)):
            per_state[i] = _with_class_labels(out, keys, row_of)
        per_state[len(path) - 1] = []  # the goal state: its actions are never needed
        per_state += [None] * (len(rows) - len(per_state))
    transitions = Transitions.collect(task, per_state, task.action_signature.width)
    labelled = LabelledStates(
        states=[atoms.fluent(r[0]) for r in rows],
        value=np.array([r[1] for r in rows], np.float64),
        steps=np.array([r[2] for r in rows], np.int32),
        dead_end=np.array([r[3] for r in rows], bool),
        is_goal=np.array([r[4] for r in rows], bool),
        label=np.array([r[5] for r in rows], np.uint8),
        initial_value=float(cost),
        transitions=transitions,
    )
    labelled.left_out = left_out
    return labelled


def _one_per_class(steps_out: list, classes: list, labelled: set) -> list:
    """The successors to search: of each plan state, one per symmetry class with no labelled member (a class's
    successors are the same state up to renaming objects, so they share V*: one search labels them all)."""
    pending = []
    for out, keys in zip(steps_out, classes):
        done = {key for (_, succ, _), key in zip(out, keys) if succ.get_index() in labelled}
        for (_, succ, _), key in zip(out, keys):
            if key not in done:
                done.add(key)
                pending.append(succ)
    return pending


def _with_class_labels(out: list, keys: list, row_of: dict) -> list:
    """``(action, cost, row)`` of a plan state's actions: the row of the action's successor, else of a labelled
    successor of its symmetry class (the same V*), else -1 (unknown)."""
    class_row = {}
    for (_, succ, _), key in zip(out, keys):
        row = row_of.get(succ.get_index())
        if row is not None:
            class_row.setdefault(key, row)
    return [(action, cost, row_of.get(succ.get_index(), class_row.get(key, -1)))
            for (action, succ, cost), key in zip(out, keys)]

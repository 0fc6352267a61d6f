"""Greedy best-first search on a learned value function, with duplicate detection.

:func:`gbfs` orders one open list by the learned value. :func:`dual_gbfs` keeps a second open
list ordered by the FF heuristic (pymimir's, domain-independent) and expands from the two in
turn, as LAMA alternates its heuristics: where the learned value leads into a plateau or a
wrong region, the other list keeps making progress on what the model does not know. FF is
evaluated deferred, as in LAMA (Richter & Helmert 2009): once per expanded state, its value
ordering that state's children in the FF list (ties broken by their learned values), instead
of once per generated state, which costs the branching factor (measured on IPC 2023 Transport:
over 90% of the search's time went into 20-30 FF values per expansion). A state FF proves a
dead end is not expanded.

Complete on finite state spaces: it either finds a plan or proves, by exhausting the reachable
states, that none exists. The fresh successors of an expansion are valued in chunks
(:mod:`up_gnnplan.runtime.chunks`); the solve's time and memory limits are checked before each
expansion and each chunk, so a growing frontier ends in ``MEMOUT`` instead of exhausting the
machine.
"""

from __future__ import annotations

import heapq
import itertools

from up_gnnplan.limits import GENERATING, LimitReached, Limits
from up_gnnplan.runtime.chunks import ChunkedEvaluator
from up_gnnplan.search.common import Inputs, SearchResult, Status, limits_of, stopped
from up_gnnplan.search.ff import FFHeuristic
from up_gnnplan.states.successors import Successors, is_goal


def _plan(parents, state_index):
    actions, cost = [], 0.0
    while parents[state_index] is not None:
        state_index, action, step_cost = parents[state_index]
        actions.append(action)
        cost += step_cost
    return actions[::-1], cost


def gbfs(task, value_fn, *, time_limit: float | None = None, max_expansions: int | None = None,
         limits: Limits | None = None, inputs: Inputs | None = None) -> SearchResult:
    """Search from the initial state of ``task``, always expanding the state of lowest value.

    ``limits`` (time and memory) take precedence over ``time_limit``.
    """
    return _best_first(task, value_fn, False, time_limit, max_expansions, limits, inputs)


def dual_gbfs(task, value_fn, *, time_limit: float | None = None, max_expansions: int | None = None,
              limits: Limits | None = None, inputs: Inputs | None = None) -> SearchResult:
    """Search from the initial state of ``task``, expanding in turn the state of lowest learned
    value and the state of lowest FF value (see the module docstring)."""
    return _best_first(task, value_fn, True, time_limit, max_expansions, limits, inputs)


def _best_first(task, value_fn, alternate_ff: bool, time_limit, max_expansions, limits, inputs) -> SearchResult:
    limits = limits_of(limits, time_limit)
    expanded = evaluated = 0
    parents, closed = {}, set()
    try:
        inputs = inputs or Inputs(task)
        evaluate = ChunkedEvaluator(value_fn, limits)
        generate = limits.uninterruptible(GENERATING)
        ff, note = FFHeuristic.for_search(task, limits, generate) if alternate_ff else (None, "")
        root = task.initial_state()
        parents[root.get_index()] = None
        tie = itertools.count()
        queues = [[(0.0, next(tie), root)]] + ([[(0.0, 0.0, next(tie), root)]] if ff else [])
        turn = 0
        while any(queues):
            limits.check(f"after {expanded} expansions ({len(parents):,} states generated)")
            if max_expansions is not None and expanded >= max_expansions:
                return SearchResult(Status.GAVE_UP, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                                    f"expansion limit of {max_expansions} reached")
            queue = queues[turn % len(queues)] or next(q for q in queues if q)
            turn += 1
            state = heapq.heappop(queue)[-1]
            if state.get_index() in closed:  # expanded already, from the other list
                continue
            closed.add(state.get_index())
            if is_goal(task, state):
                actions, cost = _plan(parents, state.get_index())
                return SearchResult(Status.SOLVED, actions, cost, expanded, evaluated, limits.deadline.elapsed(), note)
            h = ff(state) if ff is not None else 0.0  # deferred: one FF value per expansion, for its children
            if h is None:  # FF proves the state a dead end
                continue
            expanded += 1
            children = generate(lambda: Successors(state), f"expansion {expanded}")
            what = f"the {len(children):,} successors of expansion {expanded}"
            for chunk in children:
                limits.check(f"while generating {what}")
                fresh = []
                for action, child, cost in chunk:
                    if child.get_index() not in parents:
                        parents[child.get_index()] = (state.get_index(), action, cost)
                        fresh.append(child)
                if fresh:
                    values = evaluate(fresh, inputs, what)
                    evaluated += len(fresh)
                    for value, child in zip(values.tolist(), fresh):
                        heapq.heappush(queues[0], (value, next(tie), child))
                        if ff is not None:  # the parent's FF value, the learned value breaking ties
                            heapq.heappush(queues[1], (h, value, next(tie), child))
    except LimitReached as error:
        return stopped(error, [], 0.0, expanded, evaluated, limits)
    return SearchResult(Status.UNSOLVABLE, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                        f"all {len(parents)} reachable states explored without reaching a goal" + (f"; {note}" if note else ""))

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
states, that none exists. With ``symmetry`` (the default), an expansion keeps one successor of
each class of symmetric actions (:mod:`.symmetry`): the others are the same state up to renaming
interchangeable objects, so they would get the same value and reach a goal alike; and duplicates
are detected on the states' canonical keys, so a state met again up to renaming, along another
path, is not valued again. Completeness holds up to that renaming. Where nothing merges in the
first states, symmetry is dropped for the rest of the search (:class:`.symmetry.SearchSymmetry`).

The fresh successors of an expansion are valued in chunks (:mod:`up_gnnplan.runtime.chunks`);
the solve's time and memory limits are checked before each expansion and each chunk, so a growing frontier ends in ``MEMOUT`` instead of exhausting the
machine.
"""

from __future__ import annotations

import heapq
import itertools

from up_gnnplan.limits import GENERATING, LimitReached, Limits
from up_gnnplan.runtime.chunks import ChunkedEvaluator
from up_gnnplan.search.common import (Inputs, Progress, SearchResult, Status, enter_path, exhausted, limits_of,
                                      seed_path, seeded_note, stopped)
from up_gnnplan.search.ff import FFHeuristic
from up_gnnplan.search.symmetry import SearchSymmetry
from up_gnnplan.states.successors import Successors, is_goal


def _plan(parents, state_key):
    actions, cost = [], 0.0
    while parents[state_key] is not None:
        state_key, action, step_cost = parents[state_key]
        actions.append(action)
        cost += step_cost
    return actions[::-1], cost


def gbfs(task, value_fn, *, time_limit: float | None = None, max_expansions: int | None = None,
         limits: Limits | None = None, inputs: Inputs | None = None, symmetry: bool = True,
         seed: SearchResult | None = None) -> SearchResult:
    """Search from the initial state of ``task``, always expanding the state of lowest value.

    ``limits`` (time and memory) take precedence over ``time_limit``; ``symmetry``: one successor
    per class of symmetric actions (see the module docstring); ``seed``: the result of a policy
    that gave up, whose path's states enter the open list at the values the value policy found
    (an action policy's path, of a model with both heads, is valued in one batch)
    (:func:`~up_gnnplan.search.common.seed_path`).
    """
    return _best_first(task, value_fn, False, time_limit, max_expansions, limits, inputs, symmetry, seed)


def dual_gbfs(task, value_fn, *, time_limit: float | None = None, max_expansions: int | None = None,
              limits: Limits | None = None, inputs: Inputs | None = None, symmetry: bool = True,
              seed: SearchResult | None = None, stall: int | None = None) -> SearchResult:
    """Search from the initial state of ``task``, expanding in turn the state of lowest learned
    value and the state of lowest FF value (see the module docstring); a ``seed``'s path enters
    both lists (the FF list at each state's own FF value). ``stall``: give up after that many
    expansions without a lower FF value (:class:`~up_gnnplan.search.common.Progress`)."""
    return _best_first(task, value_fn, True, time_limit, max_expansions, limits, inputs, symmetry, seed, stall)


def _best_first(task, value_fn, alternate_ff: bool, time_limit, max_expansions, limits, inputs,
                symmetry: bool, seed: SearchResult | None = None, stall: int | None = None) -> SearchResult:
    limits = limits_of(limits, time_limit)
    expanded = evaluated = 0
    parents, closed = {}, set()
    try:
        inputs = inputs or Inputs(task)
        symmetric = SearchSymmetry(task, inputs, symmetry)
        key = symmetric.key
        evaluate = ChunkedEvaluator(value_fn, limits)
        generate = limits.uninterruptible(GENERATING)
        ff, note = FFHeuristic.for_search(task, limits, generate) if alternate_ff else (None, "")
        root = task.initial_state()
        root_key = key(root)
        parents[root_key] = None
        tie = itertools.count()
        queues = [[(0.0, next(tie), root_key, root)]] + ([[(0.0, 0.0, next(tie), root_key, root)]] if ff else [])
        path = seed_path(task, seed)
        if path and seed.step_kind != "value":  # an action policy's path (a model with both heads): value it
            values = evaluate([child for *_, child, _ in path], inputs, f"the {len(path)} states of the policy's path")
            path = [(*step[:4], value) for step, value in zip(path, values.tolist())]

        def push(child_key, child, value, h):
            heapq.heappush(queues[0], (value, next(tie), child_key, child))
            if ff is not None:
                heapq.heappush(queues[1], (h, value, next(tie), child_key, child))

        known_ff = enter_path(path, key, ff, parents, push)  # FF values, used again when the states are expanded
        note = seeded_note(known_ff, note)
        progress = Progress(stall if ff is not None else None)
        turn = 0
        while any(queues):
            limits.check(f"after {expanded} expansions ({len(parents):,} states generated)")
            if max_expansions is not None and expanded >= max_expansions:
                return SearchResult(Status.GAVE_UP, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                                    f"expansion limit of {max_expansions} reached")
            if progress.stalled:
                return SearchResult(Status.GAVE_UP, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                                    progress.note)
            queue = queues[turn % len(queues)] or next(q for q in queues if q)
            turn += 1
            *_, state_key, state = heapq.heappop(queue)
            if state_key in closed:  # expanded already, from the other list
                continue
            closed.add(state_key)
            if is_goal(task, state):
                actions, cost = _plan(parents, state_key)
                return SearchResult(Status.SOLVED, actions, cost, expanded, evaluated, limits.deadline.elapsed(), note)
            h = known_ff.pop(state_key) if state_key in known_ff else (
                ff(state) if ff is not None else 0.0)  # deferred: one FF value per expansion, for its children
            if h is None:  # FF proves the state a dead end
                continue
            expanded += 1
            progress.expanded(h)
            children = generate(lambda: Successors(state), f"expansion {expanded}")
            what = f"the {len(children):,} successors of expansion {expanded}"
            if symmetric.active:
                children = Successors(state, actions=symmetric.representatives(state, children.actions, limits.check))
            for chunk in children:
                limits.check(f"while generating {what}")
                fresh = []
                for action, child, cost in chunk:
                    child_key = key(child)
                    if child_key not in parents:
                        parents[child_key] = (state_key, action, cost)
                        fresh.append((child_key, child))
                if fresh:
                    values = evaluate([child for _, child in fresh], inputs, what)
                    evaluated += len(fresh)
                    for value, (child_key, child) in zip(values.tolist(), fresh):
                        heapq.heappush(queues[0], (value, next(tie), child_key, child))
                        if ff is not None:  # the parent's FF value, the learned value breaking ties
                            heapq.heappush(queues[1], (h, value, next(tie), child_key, child))
    except LimitReached as error:
        return stopped(error, [], 0.0, expanded, evaluated, limits)
    return SearchResult(Status.UNSOLVABLE, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                        exhausted(len(parents), symmetric, note))

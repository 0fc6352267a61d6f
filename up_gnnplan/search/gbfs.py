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

With ``deferred``, the learned value is deferred too (LAMA's lazy search): a state is valued when it
is expanded, and its children enter the lists at its value, ordered among themselves by the action
head's preferences where the model has one (as LAMA's preferred operators order them): one forward
pass per expansion, for the state and its actions together, instead of one per fresh successor
(``benchmarks/fallback_expansions.py``: 13 ms against 139 ms an expansion on 60 Blocksworld
blocks, 20 successors).

Eagerly, the fresh successors of an expansion are valued in chunks (:mod:`up_gnnplan.runtime.chunks`);
the solve's time and memory limits are checked before each expansion and each chunk, so a growing frontier ends in ``MEMOUT`` instead of exhausting the
machine.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from up_gnnplan.encodings.actions import ActionInput
from up_gnnplan.limits import GENERATING, LimitReached, Limits
from up_gnnplan.runtime.chunks import ChunkedEvaluator
from up_gnnplan.search.action_policy import SCORE_CHUNK, _log_softmax, _score
from up_gnnplan.search.common import (Inputs, Progress, SearchResult, Status, enter_path, exhausted, limits_of,
                                      seed_path, seeded_note, stopped, value_path)
from up_gnnplan.search.ff import FFHeuristic
from up_gnnplan.search.symmetry import SearchSymmetry
from up_gnnplan.states.actions import ActionRows
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
         seed: SearchResult | None = None, deferred: bool = False) -> SearchResult:
    """Search from the initial state of ``task``, always expanding the state of lowest value.

    ``limits`` (time and memory) take precedence over ``time_limit``; ``symmetry``: one successor
    per class of symmetric actions (see the module docstring); ``seed``: the result of a policy
    that gave up, whose path's states enter the open list at the values the value policy found
    (an action policy's path, of a model with both heads, is valued in one batch)
    (:func:`~up_gnnplan.search.common.seed_path`); ``deferred``: each state valued when it is
    expanded (see the module docstring).
    """
    return _best_first(task, value_fn, False, time_limit, max_expansions, limits, inputs, symmetry, seed,
                       deferred=deferred)


def dual_gbfs(task, value_fn, *, time_limit: float | None = None, max_expansions: int | None = None,
              limits: Limits | None = None, inputs: Inputs | None = None, symmetry: bool = True,
              seed: SearchResult | None = None, stall: int | None = None, deferred: bool = False) -> SearchResult:
    """Search from the initial state of ``task``, expanding in turn the state of lowest learned
    value and the state of lowest FF value (see the module docstring); a ``seed``'s path enters
    both lists (the FF list at each state's own FF value). ``stall``: give up after that many
    expansions without a lower FF value (:class:`~up_gnnplan.search.common.Progress`);
    ``deferred``: each state valued when it is expanded."""
    return _best_first(task, value_fn, True, time_limit, max_expansions, limits, inputs, symmetry, seed, stall,
                       deferred)


def _best_first(task, value_fn, alternate_ff: bool, time_limit, max_expansions, limits, inputs,
                symmetry: bool, seed: SearchResult | None = None, stall: int | None = None,
                deferred: bool = False) -> SearchResult:
    limits = limits_of(limits, time_limit)
    expanded = evaluated = 0
    parents, closed = {}, set()
    note = ""
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
        # Entries: (key, tie-breaker, counter, state key, state); the FF list's key is the parent's FF value,
        # the learned one's the state's own value (deferred: its parent's, the action's preference breaking ties).
        queues = [[(0.0, 0.0, next(tie), root_key, root)]] + ([[(0.0, 0.0, next(tie), root_key, root)]] if ff else [])
        deferred_values = {}  # deferred: the learned values known before expansion (a seed's path)
        scored = deferred and getattr(value_fn, "has_actions", False)
        rows = ActionRows(task) if scored else None
        path, guessed = seed_path(task, seed), set()
        if path and seed.step_kind != "value":  # an action policy's path (a model with both heads): value it
            path, guessed = value_path(path, evaluate, inputs, limits.deadline.remaining())

        def push(child_key, child, value, h):
            if deferred and id(child) not in guessed:  # (a guessed value: valued when expanded)
                deferred_values[child_key] = value
            heapq.heappush(queues[0], (value, 0.0, next(tie), child_key, child))
            if ff is not None and h is not None:  # not valued by FF: the learned list only, until expanded
                heapq.heappush(queues[1], (h, value, next(tie), child_key, child))

        known_ff, entered = enter_path(path, key, ff, parents, push, limits.deadline.remaining())  # FF's, for expansion
        note = seeded_note(entered, note, len(known_ff) if ff is not None else None,
                           len(path) - len(guessed) if guessed else None)
        progress = Progress(stall if ff is not None else None, limits.deadline)
        turn = 0
        while any(queues):
            limits.check(f"after {expanded} expansions ({len(parents):,} states generated)")
            if max_expansions is not None and expanded >= max_expansions:
                return SearchResult(Status.GAVE_UP, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                                    f"expansion limit of {max_expansions} reached")
            if progress.stalled:
                return SearchResult(Status.GAVE_UP, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                                    "; ".join(filter(None, [progress.note, note])))
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
            if deferred:
                value, preference = _value_here(value_fn, inputs, rows, evaluate, state, children.actions,
                                                deferred_values.pop(state_key, None), f"expansion {expanded}", limits)
                evaluated += 1
                _push_deferred(children, state_key, value, preference, h, parents, key, queues, tie, limits, what)
                continue
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
                        heapq.heappush(queues[0], (value, 0.0, next(tie), child_key, child))
                        if ff is not None:  # the parent's FF value, the learned value breaking ties
                            heapq.heappush(queues[1], (h, value, next(tie), child_key, child))
    except LimitReached as error:
        return stopped(error, [], 0.0, expanded, evaluated, limits, note)
    return SearchResult(Status.UNSOLVABLE, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                        exhausted(len(parents), symmetric, note))


def _value_here(value_fn, inputs, rows, evaluate, state, actions, known, where: str, limits: Limits):
    """Deferred: return the learned value of ``state`` (``known`` if given) and the negated
    log-probabilities of ``actions`` under the action head (zeros for a model without one: the
    children keep the order they were made in). Both come from one session call, or, for more
    actions than one call scores, in parts with the limits checked between them."""
    if rows is None or not len(actions) or len(actions) > SCORE_CHUNK:
        value = known if known is not None else float(evaluate([state], inputs, f"the state of {where}")[0])
        if rows is None or not len(actions):
            return value, np.zeros(len(actions))
        return value, -_log_softmax(_score(value_fn.scorer, inputs, rows, state, actions, limits, where))
    schema, args = rows(actions)
    value, scores = value_fn.value_and_scores(inputs([state])[0], ActionInput(schema, args))
    return (known if known is not None else value), -_log_softmax(scores)


def _push_deferred(children, state_key, value, preference, h, parents, key, queues, tie, limits, what: str) -> None:
    """Deferred: put the fresh ``children`` into the lists at their parent's values (``value``, FF's ``h``),
    each action's ``preference`` breaking ties among them."""
    index = 0
    for chunk in children:
        limits.check(f"while generating {what}")
        for action, child, cost in chunk:
            child_key = key(child)
            if child_key not in parents:
                parents[child_key] = (state_key, action, cost)
                heapq.heappush(queues[0], (value, preference[index], next(tie), child_key, child))
                if len(queues) > 1:
                    heapq.heappush(queues[1], (h, preference[index], next(tie), child_key, child))
            index += 1

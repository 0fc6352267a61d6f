"""Searches guided by action scores: the action policy, and best-first search on its log-probabilities.

An *action scorer* is any callable ``scorer(state_input, action_input) -> preferences`` (one
float per action, higher is better) for one state's applicable actions: the torch model during
training, :class:`~up_gnnplan.runtime.value_function.OnnxModel` at run time. One call embeds the
state once and scores every applicable action (Zhang & Geißer), where the value policy values
one successor graph per action.

- :func:`action_policy_rollout` follows the best-scored action whose successor has not been
  visited (cycles are handled as in the value policy: never return to a visited state); it
  stops at a goal or at the step limit. Where every successor of its state has been visited, it
  goes back along its path to the latest state with an unvisited successor (``backtrack``, the
  default: a depth-first search ordered by the model; Goldminer's greedy walks end in such a
  corner after 3-174 steps), or gives up (``backtrack=False``). Once more than a quarter of its
  steps were steps back it gives up all the same: it is searching, which the fallback's
  best-first search does better (Sokoban's walks in dead ends). With ``hide_done``, a large
  state's actions are scored on the state without the objects it is done with
  (:mod:`.done_view`): the later steps of a long walk get cheaper.
- :func:`policy_best_first` expands states in order of the summed negative log-probabilities
  ``-log softmax(preferences)`` of the actions leading to them: complete on finite spaces, it
  is the fallback for models without a value head. With ``symmetry`` (the default) it keeps one
  successor per class of symmetric actions (:mod:`.symmetry`: the others are the same state up
  to renaming objects), at the class's summed probability: the policy's probability of moving
  to that state, which k interchangeable actions otherwise split k ways.
"""

from __future__ import annotations

import heapq
import itertools
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from up_gnnplan.encodings.actions import ActionInput
from up_gnnplan.limits import GENERATING, LimitReached, Limits
from up_gnnplan.search.common import (Inputs, Progress, SearchResult, Status, enter_path, exhausted, limits_of,
                                      seed_path, seeded_note, stopped)
from up_gnnplan.search.course import Course, limit_note, step_limit
from up_gnnplan.search.done_view import DoneView, scores_with_hidden
from up_gnnplan.search.ff import FFHeuristic
from up_gnnplan.search.symmetry import SearchSymmetry
from up_gnnplan.states.actions import ActionRows
from up_gnnplan.states.successors import CHUNK_ACTIONS, applicable_actions, is_goal


# Actions scored per scorer call: a Childsnack state of 189 objects has 130,575 applicable actions;
# scoring them in parts of this size lets the limits be checked in between (each part re-embeds
# the state, a few ms against the part's scoring).
SCORE_CHUNK = 16384
# States whose scored actions the action policy keeps for a step back (their actions and rankings: a
# Childsnack state has 100,000 actions, so not the whole path's).
RANKED_STATES = 16
# A walk that has taken back more than this share of its steps (and at least BACK_FLOOR) gives up: it is
# searching, not following its policy, and the fallback's best-first search does that better. Goldminer's
# walks that reached the goal took back 1-14% of their steps; Sokoban's, in its dead ends, 18-45%.
BACK_SHARE, BACK_FLOOR = 0.25, 8


def _score(scorer, inputs, rows, state, actions, limits: Limits, step: str, view: DoneView | None = None) -> np.ndarray:
    """Return the preferences of ``actions`` in ``state``, scored in parts with the limits checked between; with
    ``view``, on the state without its done objects where that applies (:mod:`.done_view`)."""
    state_input = inputs([state])[0]
    if view is not None and len(actions) <= SCORE_CHUNK:
        whole = ActionInput(*rows(actions))
        shown = view(state_input, whole)
        if shown is None:
            return np.asarray(scorer(state_input, whole), dtype=np.float64)
        smaller, part, mask = shown
        return scores_with_hidden(np.asarray(scorer(smaller, part), dtype=np.float64), mask)
    scores = np.empty(len(actions), dtype=np.float64)
    for start in range(0, len(actions), SCORE_CHUNK):
        if start:
            limits.check(f"while scoring the {len(actions):,} applicable actions of {step} ({start:,} scored)")
        schema, args = rows(actions[start:start + SCORE_CHUNK])
        scores[start:start + SCORE_CHUNK] = np.asarray(scorer(state_input, ActionInput(schema, args)), dtype=np.float64)
    return scores


def action_policy_rollout(task, scorer, *, max_steps: int = 1000, time_limit: float | None = None,
                          limits: Limits | None = None, inputs: Inputs | None = None,
                          course: Course | None = None, backtrack: bool = True, hide_done: bool = False) -> SearchResult:
    """Follow the best-scored action with an unvisited successor from the initial state of ``task``;
    ``course`` may extend ``limits`` (a share of a solve's time) while the walk is on course. With
    ``backtrack``, a state whose successors have all been visited is left for the state before it
    on the path (the plan is the path, without the steps taken back); every step, back or forward,
    counts against ``max_steps``."""
    limits = limits_of(limits, time_limit)
    path = _Trail()
    evaluated, step, back = 0, 0, 0
    try:
        inputs, rows = inputs or Inputs(task), ActionRows(task)
        view = DoneView(task, inputs.atoms) if hide_done else None
        generate = limits.uninterruptible(GENERATING)
        state = task.initial_state()
        visited = {state.get_index()}
        ranked = _Ranked()
        for step in itertools.count():
            if is_goal(task, state):
                return SearchResult(Status.SOLVED, path.actions, path.cost, step, evaluated, limits.deadline.elapsed(),
                                    _back_note(back, view=view), path.surprises, "surprise")
            max_steps = step_limit(course, step, state, max_steps)  # passed where the walk is on course
            if step >= max_steps:
                break
            limits.check(f"before action-policy step {step + 1}")
            known = ranked.get(state)
            if known is None:
                actions = generate(lambda: applicable_actions(state), f"step {step + 1}")
                limits.check(f"after generating the {len(actions):,} applicable actions of step {step + 1}")
                preferences = (_score(scorer, inputs, rows, state, actions, limits, f"step {step + 1}", view)
                               if actions else np.empty(0))
                evaluated += len(actions)
                limits.check(f"after scoring the {len(actions):,} applicable actions of step {step + 1}")
                known = ranked.put(state, actions, preferences)
            chosen = undoing = None  # undoing: the best step that undoes a goal literal the course keeps
            for j in known.order:
                successor, step_cost = known.actions[j].apply(state, return_cost=True)
                if successor.get_index() not in visited:
                    if course is not None and course.undoes(successor):
                        undoing = undoing or (known.actions[j], successor, step_cost, known.surprise[j])
                        continue
                    chosen = (known.actions[j], successor, step_cost, known.surprise[j])
                    break
            chosen = chosen or undoing
            if chosen is None:
                why = None
                if not (backtrack and path.states):
                    why = (f"every state reachable from the initial state visited ({len(visited):,}) after {step} "
                           f"steps{_back_note(back, ', ', view)}" if backtrack else
                           f"no unvisited successor after {step} steps")
                elif back + 1 >= BACK_FLOOR and back + 1 > BACK_SHARE * step:
                    why = (f"{back + 1} of its {step} steps were steps back (over {BACK_SHARE:.0%}): it searches "
                           "rather than follows the policy")
                if why is not None:
                    return SearchResult(Status.GAVE_UP, path.actions, path.cost, step, evaluated,
                                        limits.deadline.elapsed(), why, path.surprises, "surprise")
                back += 1
                state = path.pop()  # back to the state before it, which is scored again or remembered
                continue
            action, successor, step_cost, surprise = chosen
            visited.add(successor.get_index())
            path.push(state, action, step_cost, float(surprise))
            state = successor
    except LimitReached as error:
        return stopped(error, path.actions, path.cost, step, evaluated, limits)
    return SearchResult(Status.GAVE_UP, path.actions, path.cost, max_steps, evaluated, limits.deadline.elapsed(),
                        limit_note(course, max_steps) + _back_note(back, "; ", view), path.surprises, "surprise")


def _back_note(back: int, lead: str = "", view: DoneView | None = None) -> str:
    """The steps taken back, and the steps scored without their done objects, in words (after ``lead``)."""
    notes = [f"{back} step(s) taken back" if back else "", view.note() if view is not None else ""]
    return lead + "; ".join(filter(None, notes)) if any(notes) else ""


class _Trail:
    """The walk's path: the states it left, the actions taken from them, their costs and surprises."""

    def __init__(self):
        self.states, self.actions, self.costs, self.surprises = [], [], [], []
        self.cost = 0.0

    def push(self, state, action, cost: float, surprise: float) -> None:
        self.states.append(state)
        self.actions.append(action)
        self.costs.append(cost)
        self.surprises.append(surprise)
        self.cost += cost

    def pop(self):
        """Take the last step back; return the state it left."""
        self.actions.pop()
        self.surprises.pop()
        self.cost -= self.costs.pop()
        return self.states.pop()


@dataclass
class _Scored:
    actions: list
    order: list  # the actions' indices, best-scored first
    surprise: np.ndarray  # -log pi of each action


class _Ranked:
    """The scored actions of the last :data:`RANKED_STATES` states walked, so that a step back to one
    of them needs no second scorer call (a state is scored again only when its ranking was dropped)."""

    def __init__(self):
        self._scored: OrderedDict = OrderedDict()

    def get(self, state) -> _Scored | None:
        return self._scored.get(state.get_index())

    def put(self, state, actions, preferences) -> _Scored:
        scored = _Scored(actions, np.argsort(-preferences, kind="stable").tolist(),
                         -_log_softmax(preferences) if len(preferences) else preferences)
        self._scored[state.get_index()] = scored
        while len(self._scored) > RANKED_STATES:
            self._scored.popitem(last=False)
        return scored


def _log_softmax(x: np.ndarray) -> np.ndarray:
    top = x.max()
    return x - top - np.log(np.exp(x - top).sum())


def policy_best_first(task, scorer, *, time_limit: float | None = None, limits: Limits | None = None,
                      inputs: Inputs | None = None, symmetry: bool = True,
                      seed: SearchResult | None = None) -> SearchResult:
    """Best-first search on the summed ``-log pi(a|s)`` of the path (see the module docstring);
    ``seed``: the result of an action policy that gave up, whose path's states enter the open
    list at their summed ``-log pi`` (:func:`~up_gnnplan.search.common.seed_path`)."""
    return _policy_best_first(task, scorer, False, time_limit, limits, inputs, symmetry, seed)


def dual_policy_best_first(task, scorer, *, time_limit: float | None = None, limits: Limits | None = None,
                           inputs: Inputs | None = None, symmetry: bool = True,
                           seed: SearchResult | None = None, stall: int | None = None) -> SearchResult:
    """:func:`policy_best_first` alternating with a second open list ordered by the FF heuristic
    (as :func:`~up_gnnplan.search.gbfs.dual_gbfs` does for value functions); a ``seed``'s path
    enters both lists (the FF list at each state's own FF value). ``stall``: give up after that
    many expansions without a lower FF value (:class:`~up_gnnplan.search.common.Progress`)."""
    return _policy_best_first(task, scorer, True, time_limit, limits, inputs, symmetry, seed, stall)


def _by_class(keys: list, actions, log_pi: np.ndarray) -> tuple[list, np.ndarray]:
    """The first action of each symmetry class (``keys``: one per action) and the class's ``-log``
    of its summed probability."""
    members: dict = {}  # key -> indices of its actions
    for j, key in enumerate(keys):
        members.setdefault(key, []).append(j)
    firsts = [indices[0] for indices in members.values()]
    surprise = np.array([-np.logaddexp.reduce(log_pi[indices]) for indices in members.values()])
    return [actions[j] for j in firsts], surprise


def _policy_best_first(task, scorer, alternate_ff: bool, time_limit, limits, inputs, symmetry,
                       seed: SearchResult | None = None, stall: int | None = None) -> SearchResult:
    limits = limits_of(limits, time_limit)
    expanded = evaluated = 0
    parents, surprise_of, closed = {}, {}, set()  # surprise_of: a state's summed -log pi, for its children
    note = ""
    try:
        inputs, rows = inputs or Inputs(task), ActionRows(task)
        symmetric = SearchSymmetry(task, inputs, symmetry)
        generate = limits.uninterruptible(GENERATING)
        ff, note = FFHeuristic.for_search(task, limits, generate) if alternate_ff else (None, "")
        root = task.initial_state()
        # Duplicates by state, not up to renaming as in GBFS: one scorer call values all of a
        # state's successors, so a canonical key per successor would cost more than the search
        # (benchmarks/symmetry_overhead.py: 0.44-0.55x the states expanded on a Logistics problem).
        parents[root.get_index()], surprise_of[root.get_index()] = None, 0.0
        tie = itertools.count()
        queues = [[(0.0, next(tie), root)]] + ([[(0.0, 0.0, next(tie), root)]] if ff else [])
        if seed is not None and seed.actions and seed.step_kind != "surprise":
            raise ValueError("policy-best-first is seeded with an action policy's path (-log pi per step), "
                             f"not with step values of kind {seed.step_kind!r}")
        # The path's states at their summed -log pi from the initial state.
        path = [(*step[:4], total) for step, total in
                zip(seed_path(task, seed), itertools.accumulate(seed.step_values if seed is not None else []))]

        def push(child_key, child, priority, h):
            surprise_of[child_key] = priority
            heapq.heappush(queues[0], (priority, next(tie), child))
            if ff is not None and h is not None:  # not valued by FF: the policy's list only, until expanded
                heapq.heappush(queues[1], (h, priority, next(tie), child))

        known_ff, entered = enter_path(path, lambda state: state.get_index(), ff, parents, push,
                                       limits.deadline.remaining())
        note = seeded_note(entered, note, len(known_ff) if ff is not None else None)
        progress = Progress(stall if ff is not None else None, limits.deadline)
        turn = 0
        while any(queues):
            limits.check(f"after {expanded} expansions ({len(parents):,} states generated)")
            if progress.stalled:
                return SearchResult(Status.GAVE_UP, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                                    "; ".join(filter(None, [progress.note, note])))
            queue = queues[turn % len(queues)] or next(q for q in queues if q)
            turn += 1
            state = heapq.heappop(queue)[-1]
            if state.get_index() in closed:  # expanded already, from the other list
                continue
            closed.add(state.get_index())
            if is_goal(task, state):
                actions, cost = [], 0.0
                index = state.get_index()
                while parents[index] is not None:
                    index, action, step_cost = parents[index]
                    actions.append(action)
                    cost += step_cost
                return SearchResult(Status.SOLVED, actions[::-1], cost, expanded, evaluated, limits.deadline.elapsed(),
                                    note)
            h = known_ff.pop(state.get_index()) if state.get_index() in known_ff else (
                ff(state) if ff is not None else 0.0)  # deferred, as in dual_gbfs
            if h is None:  # FF proves the state a dead end
                continue
            expanded += 1
            progress.expanded(h)
            actions = generate(lambda: applicable_actions(state), f"expansion {expanded}")
            if not actions:
                continue
            where = f"expansion {expanded}"
            limits.check(f"after generating the {len(actions):,} applicable actions of {where}")
            log_pi = _log_softmax(_score(scorer, inputs, rows, state, actions, limits, where))
            evaluated += len(actions)
            keys = symmetric.keys_of(state, actions, limits.check)
            if keys is not None:
                kept, surprise = _by_class(keys, actions, log_pi)
                symmetric.merged += len(actions) - len(kept)
                actions = kept
            else:
                surprise = -log_pi
            priority = surprise_of[state.get_index()]
            for j, (action, extra) in enumerate(zip(actions, surprise.tolist())):
                if j % CHUNK_ACTIONS == 0:
                    limits.check(f"while making the {len(actions):,} successors of {where} ({j:,} made)")
                child, step_cost = action.apply(state, return_cost=True)
                if child.get_index() not in parents:
                    parents[child.get_index()] = (state.get_index(), action, step_cost)
                    surprise_of[child.get_index()] = priority + extra
                    heapq.heappush(queues[0], (priority + extra, next(tie), child))
                    if ff is not None:  # the parent's FF value, the policy's preference breaking ties
                        heapq.heappush(queues[1], (h, priority + extra, next(tie), child))
    except LimitReached as error:
        return stopped(error, [], 0.0, expanded, evaluated, limits, note)
    return SearchResult(Status.UNSOLVABLE, [], 0.0, expanded, evaluated, limits.deadline.elapsed(),
                        exhausted(len(parents), symmetric, note))

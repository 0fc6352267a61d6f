"""The greedy policy of a learned value function (Ståhlberg, Bonet & Geffner 2024, §9).

From state s, move to the unvisited successor s' with the lowest ``c(a) + V(s')`` (just
``V(s')`` for unit costs, as in the paper); stop at a goal, after ``max_steps`` steps, or when
every successor has been visited. The successors of a state are made in chunks of actions
(:class:`~up_gnnplan.states.successors.Successors`) and valued in chunks sized from their
encoded input (:mod:`up_gnnplan.runtime.chunks`); the solve's limits are checked before every
chunk, so one step of a large task can neither outlast the time limit by more than a chunk nor
take more memory than the limit allows.
"""

from __future__ import annotations

import itertools

import numpy as np

from up_gnnplan.limits import GENERATING, LimitReached, Limits
from up_gnnplan.runtime.chunks import ChunkedEvaluator
from up_gnnplan.search.common import Inputs, SearchResult, Status, limits_of, stopped
from up_gnnplan.search.course import Course, limit_note, step_limit
from up_gnnplan.search.symmetry import SymmetricActions
from up_gnnplan.states.successors import Successors, is_goal


# Added to the value of a successor that undoes a goal literal the course keeps (:meth:`Course.undoes`).
UNDOING = 1e9


def policy_rollout(task, value_fn, *, max_steps: int = 1000, time_limit: float | None = None,
                   limits: Limits | None = None, inputs: Inputs | None = None, symmetry: bool = True,
                   course: Course | None = None) -> SearchResult:
    """Follow the greedy policy of ``value_fn`` from the initial state of ``task``.

    ``limits`` (time and memory) take precedence over ``time_limit``; ``inputs`` may be shared
    with another search of the same task. With ``symmetry``, one successor of each class of
    symmetric actions is valued and its value given to the others (:mod:`.symmetry`: exact for
    models that do not see object identities, which none here does). ``course`` may extend
    ``limits`` (a share of a solve's time) while the walk is on course (:mod:`.course`).
    """
    limits = limits_of(limits, time_limit)
    actions, path_values, cost, evaluated, step = [], [], 0.0, 0, 0
    try:
        inputs = inputs or Inputs(task)
        symmetric = SymmetricActions(task, inputs) if symmetry else None
        evaluate = ChunkedEvaluator(value_fn, limits)
        generate = limits.uninterruptible(GENERATING)
        state = task.initial_state()
        visited = {state.get_index()}
        for step in itertools.count():
            if is_goal(task, state):
                return SearchResult(Status.SOLVED, actions, cost, step, evaluated, limits.deadline.elapsed(),
                                    step_values=path_values, step_kind="value")
            max_steps = step_limit(course, step, state, max_steps)  # passed where the walk is on course
            if step >= max_steps:
                break
            limits.check(f"before policy step {step + 1}")
            children = generate(lambda: Successors(state), f"policy step {step + 1}")
            what = f"the {len(children):,} successors of policy step {step + 1}"
            best, best_rank, best_value = None, np.inf, np.inf
            known: dict = {}  # symmetry class of an action -> the value of its successors
            for chunk in children:
                limits.check(f"while generating {what}")
                options = [(a, s, c) for a, s, c in chunk if s.get_index() not in visited]
                if not options:
                    continue
                if symmetric is None:
                    values = evaluate([s for _, s, _ in options], inputs, what)
                    evaluated += len(options)
                else:
                    keys = symmetric.keys(state, [a for a, _, _ in options])
                    new: dict = {}  # a class not yet valued -> its first option here
                    for i, key in enumerate(keys):
                        if key not in known and key not in new:
                            new[key] = i
                    if new:
                        found = evaluate([options[i][1] for i in new.values()], inputs, what)
                        known.update(zip(new, found.tolist()))
                        evaluated += len(new)
                    values = np.array([known[k] for k in keys])
                values = values + np.array([c for _, _, c in options])
                ranks = values  # what the choice is by: with a course that keeps goal literals, undoing one is last
                if course is not None and course.keeping:
                    ranks = values + np.array([UNDOING if course.undoes(s) else 0.0 for _, s, _ in options])
                i = int(np.argmin(ranks))
                if ranks[i] < best_rank or best is None:  # the first of equal values, as one argmin over all
                    best, best_rank, best_value = options[i], ranks[i], values[i]
            if best is None:
                return SearchResult(Status.GAVE_UP, actions, cost, step, evaluated, limits.deadline.elapsed(),
                                    f"no unvisited successor after {step} steps", path_values, "value")
            action, state, step_cost = best
            visited.add(state.get_index())
            actions.append(action)
            path_values.append(float(best_value) - step_cost)
            cost += step_cost
    except LimitReached as error:
        return stopped(error, actions, cost, step, evaluated, limits)
    return SearchResult(Status.GAVE_UP, actions, cost, max_steps, evaluated, limits.deadline.elapsed(),
                        limit_note(course, max_steps), path_values, "value")

"""Bind an existential goal one variable at a time with a learned V(s; G).

Funkquist, Ståhlberg & Geffner (2024), section 10: the successors of a partially bound goal ``G``
are the goals ``G[x=c]`` that bind one more variable ``x`` to a constant ``c``; the policy takes
the one with the least ``V(s; G[x=c])`` until the goal is ground. All candidates of a step (every
free variable with every object of its type) go to the model as one batch (in chunks when the
limits ask for it), so a step costs one model call, not one per candidate.

:meth:`GoalBinder.bindings` yields ground goals greedy-first: the greedy one, then, when the caller
asks for another (its grounded problem proved unsolvable), the next-best candidate at the deepest
step, as a depth-first search over binding steps with children in order of V.

The *static filter* (on by default) drops candidates that can never hold: a bound atom of a static
predicate (one no action changes, such as a colour) that is false in the initial state, or two
terms made equal under an inequality ``(not (= ?x ?y))``. Without it the model alone decides, as in
the paper, which reports both settings.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from up_gnnplan.grounding.encoding import GroundingInputs, grounding_signature
from up_gnnplan.grounding.goal import GoalGroundingError, QuantifiedGoal, static_facts, static_fluents
from up_gnnplan.runtime.chunks import ChunkedEvaluator
from up_gnnplan.states.atoms import StateAtoms


@dataclass(frozen=True)
class Step:
    """One binding decision: ``variable := obj`` with the model's value and how many were weighed."""

    variable: str
    obj: str
    value: float
    candidates: int


@dataclass
class Grounding:
    """A ground goal found by the binder, with the decisions that led to it."""

    goal: QuantifiedGoal
    steps: list[Step] = field(default_factory=list)

    @property
    def binding(self) -> dict[str, str]:
        return {v.name: o.name for v, o in self.goal.binding}


class GoalBinder:
    """Ground the existential goal of ``problem`` (a UP problem) from its initial state.

    Args:
        problem: the UP problem; its goal must pass :meth:`QuantifiedGoal.of`.
        value_fn: an ONNX grounding model (:class:`~up_gnnplan.runtime.OnnxValueFunction`) trained
            on the problem's domain with the grounding signature.
        static_filter: drop candidates that break a static atom or an inequality.
        limits: the solve's :class:`~up_gnnplan.limits.Limits` (time and memory of model calls).
    """

    def __init__(self, problem, value_fn, static_filter: bool = True, limits=None, task=None):
        from up_gnnplan.problems.bridge import Task
        from up_gnnplan.problems.loading import source_of

        self.goal = QuantifiedGoal.of(problem)
        self.task = task or Task(problem, source_of(problem))
        self.inputs = GroundingInputs(self.task)
        value_fn.check_signature(grounding_signature(self.task.signature), "the problem (with the goal-grounding "
                                 "predicates)")
        self.value_fn = value_fn
        self.evaluate = ChunkedEvaluator(value_fn, limits)
        self.static_filter = static_filter
        self.fluents = static_fluents(problem)
        self.facts = static_facts(problem, self.fluents)
        self.state = StateAtoms(self.task).of(self.task.initial_state())
        self.evaluated = 0
        self.model_calls = 0
        self.seconds = 0.0

    def children(self, goal: QuantifiedGoal) -> list[tuple[float, QuantifiedGoal, Step]]:
        """Return every goal one binding further, with its value, best (least) first."""
        options = []
        for variable in goal.variables:
            for obj in goal.candidates(variable, self.task.objects):
                child = goal.bind(variable, obj)
                if self.static_filter and child.violations(self.facts, self.fluents):
                    continue
                options.append((variable, obj, child))
        if not options:
            return []
        start = time.perf_counter()
        values = self.evaluate(options, lambda chunk: [self.inputs.state_input(self.state, c) for _, _, c in chunk],
                               what=f"{len(options)} candidate bindings")
        self.seconds += time.perf_counter() - start
        self.evaluated += len(options)
        self.model_calls += 1
        order = np.argsort(values, kind="stable")
        return [(float(values[i]), options[i][2], Step(options[i][0].name, options[i][1].name, float(values[i]),
                                                        len(options))) for i in order]

    def bindings(self) -> Iterator[Grounding]:
        """Yield ground goals, greedy first, then by backtracking to the next-best choices."""
        if not self.goal.variables:
            yield Grounding(self.goal)
            return
        # A stack of (remaining ranked children, steps so far): depth-first, best child first.
        stack = [(iter(self.children(self.goal)), [])]
        seen = set()  # bindings reached already (in another order): not searched twice
        while stack:
            ranked, steps = stack[-1]
            choice = next(ranked, None)
            if choice is None:
                stack.pop()
                continue
            _, child, step = choice
            key = frozenset((v.name, o.name) for v, o in child.binding)
            if key in seen:
                continue
            seen.add(key)
            if child.is_ground:
                yield Grounding(child, steps + [step])
            else:
                stack.append((iter(self.children(child)), steps + [step]))

    def greedy(self) -> Grounding:
        """Return the greedy grounding; raise :class:`GoalGroundingError` when no candidate is left."""
        for grounding in self.bindings():
            return grounding
        raise GoalGroundingError("no binding of the goal's variables passes the static filter (a static atom or an "
                                 "inequality of the goal fails for every object); the goal cannot hold")

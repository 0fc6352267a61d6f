"""Bind an existential goal one variable at a time with a learned V(s; G).

Funkquist, Ståhlberg & Geffner (2024), section 10: the successors of a partially bound goal ``G``
are the goals ``G[x=c]`` that bind one more variable ``x`` to a constant ``c``; the policy takes
the one with the least ``V(s; G[x=c])`` until the goal is ground. All candidates of a step (every
free variable with every object of its type) go to the model as one batch (in chunks when the
limits ask for it), so a step costs one model call, not one per candidate.

:meth:`GoalBinder.bindings` yields ground goals greedy-first: the greedy one, then, when the caller
asks for another (its grounded problem proved unsolvable), the next-best candidate at the deepest
step, as a depth-first search over binding steps with children in order of V.

With ``beam`` k > 1 (an option beyond the paper), the first ground goals come from a beam search
instead: the k best partial bindings by V are kept at each step (their candidates valued in one
call), and the k ground goals it ends with are ordered by the FF heuristic of the ground problem
from the initial state (pymimir's, the delete relaxation: a binding already nearly true in the
initial state costs little there), ties by V; a binding whose relaxed problem has no plan is
proven unreachable and dropped. The depth-first order above follows for further bindings. The
model proposes, FF arbitrates among its proposals, at k times the candidates per step and k small
heuristic builds. Where model calls are slow (large grids) that can take the time the planner
needs: after the first step, whose call is timed, the beam goes on only if k times that per
remaining step is expected to take at most :data:`BEAM_SHARE` of the time left, else the binding
is the greedy one. Building an FF heuristic cannot be interrupted, so FF is left out (the beam's
ground goals then follow the model's order) on a task whose initial state has more applicable
actions than the dual searches allow FF for, and once less time is left than four times the
slowest build so far. :attr:`GoalBinder.beam_note` says when either happened.

With ``entailment`` (beyond the paper, on by default; off: the paper's binding, the model asked
at every step), a binding that adds nothing to the goal is made without asking the model
(:meth:`QuantifiedGoal.entailed`): once ``?x`` is bound to ``b4`` in ``(blue ?x) (clear ?x)
(blue ?y) (clear ?y)`` without an inequality, ``?y = b4`` asks nothing more of any state, so no
other object can do better. Such bindings are made on the goal as written and on each candidate
after the model has valued it (the goal as the paper values it; the bindings made then change the
goal's atoms, not its meaning); the steps record them with no candidates weighed.

The *static filter* (on by default) drops candidates that can never hold: a bound atom of a static
predicate (one no action changes, such as a colour) that is false in the initial state, two
terms made equal under an inequality ``(not (= ?x ?y))``, or two ground goal atoms that an
at-most-one invariant of the domain (:mod:`up_gnnplan.grounding.invariants`) never lets hold
together: without inequalities, a Gripper goal ``(at ?x1 room1) (at ?x2 room2)`` with both
variables bound to one ball. Without the filter the model alone decides, as in the paper, which
reports both settings; a ground goal that cannot hold is then still caught before a planner runs
(:func:`~up_gnnplan.grounding.solve.solve_by_grounding`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from up_gnnplan.grounding.encoding import GroundingInputs, grounding_signature
from up_gnnplan.grounding.goal import GoalGroundingError, QuantifiedGoal, static_facts, static_fluents
from up_gnnplan.grounding.invariants import Mutexes
from up_gnnplan.runtime.chunks import ChunkedEvaluator
from up_gnnplan.states.atoms import StateAtoms

BEAM_SHARE = 0.25  # of the time left, at most, for the beam's expected model calls after its first step


@dataclass(frozen=True)
class Step:
    """One binding decision: ``variable := obj`` with the model's value and how many were weighed."""

    variable: str
    obj: str
    value: float
    candidates: int  # 0: a binding that adds nothing to the goal (``entailment``), not weighed by the model


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
        beam: the beam width of the first bindings (1: the greedy binding of the paper).
        entailment: make the bindings that add nothing to the goal without the model (off: the paper's).
    """

    def __init__(self, problem, value_fn, static_filter: bool = True, limits=None, task=None, beam: int = 1,
                 entailment: bool = True):
        from up_gnnplan.problems.bridge import Task
        from up_gnnplan.problems.loading import source_of

        self.problem, self.limits, self.beam = problem, limits, beam
        self.goal = QuantifiedGoal.of(problem)
        self.task = task or Task(problem, source_of(problem))
        self.entailment = entailment
        self._root_steps = []  # bindings of the goal as written that add nothing (``entailment``)
        if entailment:
            self.goal, made = self.goal.closed(self.task.objects)
            self._root_steps = [Step(v.name, o.name, float("nan"), 0) for v, o in made]
        self.inputs = GroundingInputs(self.task)
        value_fn.check_signature(grounding_signature(self.task.signature), "the problem (with the goal-grounding "
                                 "predicates)")
        self.value_fn = value_fn
        self.evaluate = ChunkedEvaluator(value_fn, limits)
        self.static_filter = static_filter
        self.fluents = static_fluents(problem)
        self.facts = static_facts(problem, self.fluents)
        self.mutexes = Mutexes.of(problem)
        self.state = StateAtoms(self.task).of(self.task.initial_state())
        self.evaluated = 0
        self.model_calls = 0
        self.seconds = 0.0
        self.relaxed: dict = {}  # binding key -> FF value of the ground problem (None: relaxed-unsolvable)
        self._ff_out = False  # FF could not be built within the limits: the beam ranks by V alone
        self.beam_note = ""  # why the beam was narrowed to the greedy binding, or FF left out, if it was
        self.beam_narrowed = False
        self._root_children = None  # the first step's candidates: shared by the beam and the depth-first order
        self._initial_actions: int | None = None  # applicable in the initial state (counted once, for FF's guard)
        self._slowest_ff = 0.0  # seconds of the slowest FF build of the beam so far

    def children(self, goal: QuantifiedGoal) -> list[tuple[float, QuantifiedGoal, list[Step]]]:
        """Return every goal one binding further (and the bindings that then add nothing, with
        ``entailment``), with its value and steps, best (least) first."""
        return self._children_of([goal])[0]

    def _children_of(self, goals: list[QuantifiedGoal]) -> list[list[tuple[float, QuantifiedGoal, list[Step]]]]:
        """:meth:`children` of each of ``goals``, all valued in one model call."""
        options, owner = [], []
        for index, goal in enumerate(goals):
            for variable in goal.variables:
                for obj in goal.candidates(variable, self.task.objects):
                    child = goal.bind(variable, obj)
                    if self.static_filter and child.violations(self.facts, self.fluents, self.mutexes):
                        continue
                    options.append((variable, obj, child))
                    owner.append(index)
        if not options:
            return [[] for _ in goals]
        start = time.perf_counter()
        values = self.evaluate(options, lambda chunk: [self.inputs.state_input(self.state, c) for _, _, c in chunk],
                               what=f"{len(options)} candidate bindings")
        self.seconds += time.perf_counter() - start
        self.evaluated += len(options)
        self.model_calls += 1
        owner = np.asarray(owner)
        ranked = []
        for index in range(len(goals)):
            mine = np.flatnonzero(owner == index)
            count = len(mine)
            ranked.append([self._entailed(float(values[i]), options[i][2], Step(options[i][0].name, options[i][1].name,
                                                                                 float(values[i]), count))
                           for i in mine[np.argsort(values[mine], kind="stable")]])
        return ranked

    def _entailed(self, value: float, child: QuantifiedGoal, step: Step) -> tuple[float, QuantifiedGoal, list[Step]]:
        """The child as valued, or with ``entailment`` with the bindings that then add nothing made too."""
        if not self.entailment:
            return value, child, [step]
        closed, made = child.closed(self.task.objects)
        return value, closed, [step] + [Step(v.name, o.name, value, 0) for v, o in made]

    def bindings(self) -> Iterator[Grounding]:
        """Yield ground goals, best first (greedy, or the beam's by FF), then by backtracking."""
        if not self.goal.variables:
            yield Grounding(self.goal, list(self._root_steps))
            return
        seen = set()  # bindings yielded or reached already (in another order): not searched twice
        if self.beam > 1:
            for grounding in self._beam():
                seen.add(binding_key(grounding.goal))
                yield grounding
            seen.update(key for key, cost in self.relaxed.items() if cost is None)  # proven unreachable
        # A stack of (remaining ranked children, steps so far): depth-first, best child first.
        stack = [(iter(self._root()), list(self._root_steps))]
        while stack:
            ranked, steps = stack[-1]
            choice = next(ranked, None)
            if choice is None:
                stack.pop()
                continue
            _, child, made = choice
            key = binding_key(child)
            if key in seen:
                continue
            seen.add(key)
            if child.is_ground:
                yield Grounding(child, steps + made)
            else:
                stack.append((iter(self.children(child)), steps + made))

    def _root(self) -> list:
        """The first step's ranked candidates (one model call, made once)."""
        if self._root_children is None:
            self._root_children = self.children(self.goal)
        return self._root_children

    def _beam(self) -> list[Grounding]:
        """The beam's ground goals, by the FF value of their ground problem, then by V; none (the
        greedy order follows) when the time left does not afford the beam's model calls."""
        start = time.perf_counter()
        self._root()
        first = time.perf_counter() - start
        remaining = self.limits.deadline.remaining() if self.limits is not None else None
        expected = first * self.beam * (len(self.goal.variables) - 1)  # one call per step, k times the candidates
        if remaining is not None and expected > BEAM_SHARE * remaining:
            self.beam_narrowed = True
            self.beam_note = (f"beam {self.beam} narrowed to the greedy binding: its model calls would take about "
                              f"{expected:.1f} s of the {remaining:.1f} s left (one call: {first:.2f} s)")
            return []
        level = [(0.0, self.goal, list(self._root_steps))]
        while level and not level[0][1].is_ground:
            pool, keys = [], set()
            every = [self._root()] if level[0][1] is self.goal else self._children_of([goal for _, goal, _ in level])
            for (_, goal, steps), ranked in zip(level, every):
                for value, child, made in ranked[: self.beam]:
                    key = binding_key(child)
                    if key not in keys:
                        keys.add(key)
                        pool.append((value, child, steps + made))
            pool.sort(key=lambda item: item[0])
            level = pool[: self.beam]
        ranked, unvalued = [], []
        for value, goal, steps in level:
            if not self._ff_affordable():  # the rest after the FF-ranked ones, in the model's order
                unvalued.append(Grounding(goal, steps))
                continue
            try:
                relaxed = self.relaxed_cost(goal)
            except _LeftOut:
                unvalued.append(Grounding(goal, steps))
                continue
            if relaxed is not None:
                ranked.append((relaxed, value, Grounding(goal, steps)))
        ranked.sort(key=lambda item: item[:2])
        return [grounding for _, _, grounding in ranked] + unvalued

    def _ff_affordable(self) -> bool:
        """Whether one more FF heuristic can be built: building one cannot be interrupted, so not
        on a task whose initial state has more applicable actions than the dual searches allow
        FF for, nor with less time left than four times the slowest build so far."""
        from up_gnnplan.search.ff import MAX_INITIAL_ACTIONS

        if self._ff_out:
            return False
        if self._initial_actions is None:
            self._initial_actions = len(self.task.initial_state().generate_applicable_actions())
        if self._initial_actions > MAX_INITIAL_ACTIONS:
            self.beam_note = (f"FF left out of the beam: the initial state has {self._initial_actions:,} applicable "
                              f"actions (above {MAX_INITIAL_ACTIONS:,}); its bindings in the model's order")
            return False
        remaining = self.limits.deadline.remaining() if self.limits is not None else None
        if remaining is not None and remaining < 4 * self._slowest_ff:
            self.beam_note = (f"FF stopped after {len(self.relaxed)} of the beam's ground goals: {remaining:.1f} s left, "
                              f"one build took up to {self._slowest_ff:.2f} s; the others in the model's order")
            return False
        return True

    def relaxed_cost(self, goal: QuantifiedGoal) -> float | None:
        """The FF value of the initial state for the ground ``goal`` (None: no relaxed plan, unreachable)."""
        from up_gnnplan.problems.bridge import Task
        from up_gnnplan.search.ff import FFHeuristic, build_within

        key = binding_key(goal)
        if key not in self.relaxed:
            start = time.perf_counter()
            check = self.limits.check if self.limits is not None else None
            task = Task(goal.with_goal_of(self.problem), self.task.source, check=check)
            if self.limits is not None and not self.relaxed:  # the first build says whether any fits
                heuristic, note = build_within(task, self.limits)
                if heuristic is None:
                    self._ff_out = True
                    self.beam_note = f"{note}; the beam's bindings in the model's order"
                    raise _LeftOut
            else:
                heuristic = FFHeuristic(task, self.limits)
            self.relaxed[key] = heuristic(task.initial_state())
            self._slowest_ff = max(self._slowest_ff, time.perf_counter() - start)
            self.seconds += time.perf_counter() - start
        return self.relaxed[key]

    def greedy(self) -> Grounding:
        """Return the first grounding (the greedy one, or the beam's best); raise :class:`GoalGroundingError` when no candidate is left."""
        for grounding in self.bindings():
            return grounding
        raise GoalGroundingError("no binding of the goal's variables passes the static filter (a static atom or an "
                                 "inequality of the goal fails for every object); the goal cannot hold")


class _LeftOut(Exception):
    """FF of a ground goal was left out: building it would break a limit."""


def binding_key(goal: QuantifiedGoal) -> frozenset:
    """The binding of ``goal`` as a set of (variable, object) names: the same whatever the order."""
    return frozenset((v.name, o.name) for v, o in goal.binding)

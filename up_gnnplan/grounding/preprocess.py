"""Ground an existential goal, then plan for the ground goal: the UP-level preprocessor and the solve.

:func:`ground_problem` is the preprocessor: a UP problem with an existential goal in, the same
problem with the goal bound by a learned model out, with the binding and its decisions. A problem
whose goal has no quantified variable passes through unchanged.

:func:`solve_by_grounding` is what ``OneshotPlanner(name="gnnplan", params={"mode": "ground"})``
runs: ground, hand the ground problem to LAMA-first (Fast Downward through ``up-fast-downward``)
or to gnnplan's own policy, within the one time limit; when the planner proves the ground problem
unsolvable, try the next-best binding (:meth:`GoalBinder.bindings`). Fast Downward compiles an
existential goal into axioms, which hides it from LAMA's landmarks; a ground goal does not.

The plan is checked without UP's validator on the quantified goal (minutes for a short plan on
large problems): it is replayed on UP's simulator against the ground problem, and the binding is
checked as a witness of the quantified goal in the final state (every atom of the goal's body,
with the binding substituted, holds; every inequality holds; every variable has an object of its
type).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

from up_gnnplan.grounding.bind import GoalBinder, Step
from up_gnnplan.grounding.goal import GoalGroundingError, QuantifiedGoal


@dataclass
class GroundedProblem:
    """A problem whose existential goal was bound: the new problem and how it was bound."""

    problem: object
    binding: dict[str, str] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0
    evaluated: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.binding)


def grounding_model(task, model: str | None, threads: int = 1, device: str = "auto"):
    """Return the grounding model for ``task``'s domain: ``model`` (a name or file) or the shipped one."""
    from up_gnnplan.grounding.encoding import grounding_signature
    from up_gnnplan.models_zoo import find_model, resolve
    from up_gnnplan.runtime import ModelError, load_value_function

    signature = grounding_signature(task.signature)
    path = resolve(model) if model else find_model(signature, "value")
    if path is None:
        raise ModelError(
            f"no shipped goal-grounding model for this domain (predicates {', '.join(f'{n}/{a}' for n, a in task.signature.predicates)}); "
            "train one with `gnnplan dataset --grounding`, `gnnplan train` and `gnnplan export`, then pass it as "
            "--grounding-model PATH (command line) or params={'grounding_model': PATH} (UP)")
    value_fn = load_value_function(path, threads=threads, device=device)
    value_fn.check_signature(signature, f"{task.source.describe()} (with the goal-grounding predicates)")
    return value_fn


def ground_problem(problem, model: str | None = None, static_filter: bool = True, limits=None,
                   binder: GoalBinder | None = None, beam: int = 1, entailment: bool = True) -> GroundedProblem:
    """Return ``problem`` with its existential goal bound by the grounding model: greedily, or with
    ``beam`` > 1 the beam's binding with the least FF value (:class:`GoalBinder`); ``entailment``: the
    bindings that add nothing to the goal made without the model."""
    goal = QuantifiedGoal.of(problem)
    if not goal.variables:
        return GroundedProblem(problem)
    start = time.perf_counter()
    binder = binder or make_binder(problem, model, static_filter, limits, beam=beam, entailment=entailment)
    grounding = binder.greedy()
    return GroundedProblem(grounding.goal.with_goal_of(problem), grounding.binding, grounding.steps,
                           time.perf_counter() - start, binder.evaluated)


def make_binder(problem, model, static_filter: bool, limits=None, threads: int = 1, device: str = "auto",
                beam: int = 1, entailment: bool = True) -> GoalBinder:
    from up_gnnplan.problems.bridge import Task
    from up_gnnplan.problems.loading import source_of

    check = limits.check if limits is not None else None
    task = Task(problem, source_of(problem), check=check)
    return GoalBinder(problem, grounding_model(task, model, threads, device), static_filter, limits, task=task, beam=beam,
                      entailment=entailment)


def check_witness(problem, goal: QuantifiedGoal, grounded: QuantifiedGoal, plan) -> str | None:
    """Return None when ``plan`` reaches a state where ``grounded``'s binding witnesses ``goal``, else why not.

    ``goal`` is the problem's quantified goal, ``grounded`` the same goal with every variable bound.
    The plan is replayed on UP's simulator over the *ground* problem, which is fast.
    """
    from unified_planning.engines.sequential_simulator import UPSequentialSimulator

    bound = dict(grounded.binding)
    missing = [f"?{v.name}" for v in goal.variables if v not in bound]
    if missing:
        return f"the binding leaves {', '.join(missing)} unbound"
    witness = goal
    for variable in goal.variables:
        witness = witness.bind(variable, bound[variable])  # refuses an object of the wrong type
    broken = [f"(not (= {a.name} {b.name}))" for a, b in witness.distinct if a == b]
    if broken:
        return f"the binding breaks {', '.join(broken)}"
    ground_problem_ = grounded.with_goal_of(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulator = UPSequentialSimulator(ground_problem_, error_on_failed_checks=False)
    state = simulator.get_initial_state()
    for step, action in enumerate(plan.actions, start=1):
        unsatisfied, _ = simulator.get_unsatisfied_conditions(state, action)
        if unsatisfied:
            return f"step {step}, {action}, is not applicable: {', '.join(map(str, unsatisfied))} do not hold"
        state = simulator.apply_unsafe(state, action)
    em = problem.environment.expression_manager
    false = [str(a) for a in witness.atoms if not state.get_value(em.FluentExp(a.fluent, a.terms)).is_true()]
    unsatisfied = simulator.get_unsatisfied_goals(state)
    if false or unsatisfied:
        return "the final state does not satisfy " + ", ".join(false + [str(u) for u in unsatisfied])
    return None


__all__ = ["GoalGroundingError", "GroundedProblem", "check_witness", "ground_problem", "grounding_model",
           "make_binder"]

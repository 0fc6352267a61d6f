"""Shared test data of the foundation tests: fixture paths, named problems and an independent V*.

Everything here is offline and small: the bundled examples (``up_gnnplan.data``) and the
tiny PDDL files under ``tests/fixtures``.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from pathlib import Path

from up_gnnplan.data import example

FIXTURES = Path(__file__).parent / "fixtures"


def atoms(signature, *facts: tuple):
    """Return Atoms from ``("name", o1, o2, ...)`` tuples, for hand-made states."""
    import numpy as np

    from up_gnnplan.states.atoms import Atoms

    width = max(signature.max_arity, 1)
    pred = np.array([signature.index[f[0]] for f in facts], dtype=np.int32)
    args = np.full((len(facts), width), -1, dtype=np.int32)
    for i, f in enumerate(facts):
        args[i, : len(f) - 1] = f[1:]
    return Atoms(pred, args)


def fixture(*parts: str) -> Path:
    """Return the path of a file under ``tests/fixtures``."""
    path = FIXTURES.joinpath(*parts)
    assert path.is_file(), f"missing test fixture {path}"
    return path


# A typed Blocksworld of our own, so that the fixture problems (which type their objects
# "- block") do not depend on how the bundled example domain is written.
TYPED_BLOCKS = fixture("blocksworld", "domain.pddl")

# (domain, problem) pairs by short name; used by several test files.
PROBLEMS = {
    "bw-p02": (example("blocksworld"), example("blocksworld", "p02.pddl")),
    "bw-p03": (example("blocksworld"), example("blocksworld", "p03.pddl")),
    "bw-p04": (example("blocksworld"), example("blocksworld", "p04.pddl")),
    "gripper-p01": (example("gripper"), example("gripper", "p01.pddl")),
    "bw-typed-p02": (TYPED_BLOCKS, fixture("blocksworld", "two-blocks.pddl")),
    "bw-typed-p03": (TYPED_BLOCKS, fixture("blocksworld", "sussman-typed.pddl")),
    "bw-exists-goal": (TYPED_BLOCKS, fixture("blocksworld", "exists-goal.pddl")),
    "bw-renamed": (TYPED_BLOCKS, fixture("blocksworld", "renamed-objects.pddl")),
    "gripper-mixed": (example("gripper"), fixture("gripper", "mixed-order.pddl")),
    "exists-pre": (fixture("exists-pre", "domain.pddl"), fixture("exists-pre", "p01.pddl")),
    "costs": (fixture("costs", "domain.pddl"), fixture("costs", "p01.pddl")),
    "costs-zero": (fixture("costs", "zero-domain.pddl"), fixture("costs", "zero-p01.pddl")),
    "roads": (fixture("roads", "domain.pddl"), fixture("roads", "p01.pddl")),
    "oneway-deadends": (fixture("oneway", "domain.pddl"), fixture("oneway", "deadends.pddl")),
    "oneway-unsolvable": (fixture("oneway", "domain.pddl"), fixture("oneway", "unsolvable.pddl")),
    "typed": (fixture("typed", "domain.pddl"), fixture("typed", "p01.pddl")),
    "briefcase-p03": (fixture("briefcase", "domain.pddl"), fixture("briefcase", "p03.pddl")),
    "briefcase-p04": (fixture("briefcase", "domain.pddl"), fixture("briefcase", "p04.pddl")),
}


# -- an independent V*, computed with UP's own simulator ----------------------------------------


def up_fluent_groundings(problem):
    """Return ``[(string, fluent expression)]`` for every grounding of every non-static Boolean fluent.

    Strings are ``name(o1,o2)`` as in :meth:`up_gnnplan.states.atoms.Atoms.as_strings`; static
    fluents are left out, like the fluent atoms that :func:`expand` records.
    """
    static = problem.get_static_fluents()
    out = []
    for fluent in problem.fluents:
        if not fluent.type.is_bool_type() or fluent in static:
            continue
        domains = [list(problem.objects(parameter.type)) for parameter in fluent.signature]
        for args in itertools.product(*domains):
            out.append((f"{fluent.name}({','.join(o.name for o in args)})", fluent(*args)))
    return out


def _up_cost(problem, action, params) -> float:
    """Return the cost of a ground UP action under the problem's action-cost metric (1 without)."""
    from unified_planning.model.metrics import MinimizeActionCosts

    for metric in problem.quality_metrics:
        if isinstance(metric, MinimizeActionCosts):
            cost = metric.get_action_cost(action)
            em = problem.environment.expression_manager
            cost = cost.substitute({p: em.ObjectExp(o.object()) for p, o in zip(action.parameters, params)})
            if not cost.is_constant():
                cost = problem.initial_value(cost)  # static cost fluents: their initial value
            return float(cost.constant_value())
    return 1.0


def _define_all_numeric(problem):
    """Give unused numeric fluents a value, as UP's simulator refuses undefined ones.

    The ``roads`` fixture defines ``road-length`` only for linked cities, and ``drive`` needs a
    link, so the filled-in values are never read.
    """
    if "UNDEFINED_INITIAL_NUMERIC" not in {str(f) for f in problem.kind.features}:
        return problem
    problem = problem.clone()
    defined = problem.explicit_initial_values
    for fluent in problem.fluents:
        if fluent.type.is_bool_type():
            continue
        domains = [list(problem.objects(parameter.type)) for parameter in fluent.signature]
        for args in itertools.product(*domains):
            if fluent(*args) not in defined:
                problem.set_initial_value(fluent(*args), 1000)
    return problem


def up_state_values(problem) -> tuple[dict[frozenset, float], set[frozenset], frozenset]:
    """Return (V*, goal states, initial state) of every reachable state, by UP alone.

    States are keyed by their true non-static Boolean ground fluents (``on(a,b)`` strings).

    Breadth-first forward over UP's ``SequentialSimulator`` states, then Dijkstra backwards
    from the goal states with the action costs of the problem's metric. Dead ends get inf.
    """
    from unified_planning.shortcuts import SequentialSimulator

    problem = _define_all_numeric(problem)
    groundings = up_fluent_groundings(problem)

    def key(state):
        return frozenset(name for name, expr in groundings if state.get_value(expr).bool_constant_value())

    predecessors: dict[frozenset, list[tuple[frozenset, float]]] = {}
    goals = set()
    with SequentialSimulator(problem=problem) as simulator:
        initial = simulator.get_initial_state()
        seen = {key(initial)}
        queue = deque([initial])
        predecessors[key(initial)] = []
        while queue:
            state = queue.popleft()
            k = key(state)
            if simulator.is_goal(state):
                goals.add(k)
            for action, params in simulator.get_applicable_actions(state):
                successor = simulator.apply(state, action, params)
                sk = key(successor)
                predecessors.setdefault(sk, []).append((k, _up_cost(problem, action, params)))
                if sk not in seen:
                    seen.add(sk)
                    queue.append(successor)
    value = {k: float("inf") for k in seen}
    tie = itertools.count()
    frontier = [(0.0, next(tie), g) for g in goals]
    for g in goals:
        value[g] = 0.0
    while frontier:
        v, _, k = heapq.heappop(frontier)
        if v > value[k]:
            continue
        for predecessor, cost in predecessors.get(k, []):
            if v + cost < value[predecessor]:
                value[predecessor] = v + cost
                heapq.heappush(frontier, (v + cost, next(tie), predecessor))
    return value, goals, key(initial)


def expansion_by_key(task, labelled) -> dict[frozenset, int]:
    """Return the index of each state of ``labelled`` (from :func:`expand`) by its fluent atoms."""
    out = {}
    for i, atoms in enumerate(labelled.states):
        k = frozenset(atoms.as_strings(task.signature, task.object_names))
        assert not any(s.startswith("type:") for s in k)
        assert k not in out, f"state {sorted(k)} listed twice"
        out[k] = i
    return out


def untrained_model(problem, path, training_record: dict | None = None, architecture: str = "rgnn"):
    """Export an untrained (random-weight) model for the UP ``problem``'s domain to ``path`` (needs torch):
    GBFS on it stays complete. ``training_record``: what its metadata records of its training."""
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.problems import Task
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.checkpoint import build

    config = TrainConfig(architecture=architecture, hidden=8, layers=2)
    encoding, model = build(config, Task(problem).signature)
    return export_onnx(model, encoding, path, domain=problem.name, train_config=config.to_dict(),
                       training_record=training_record or {})


def assert_labelled_by_blind_a_star(domain, problem, work) -> None:
    """Fast Downward's translation of ``problem`` has axioms: the labeller's optimal planner is blind A*,
    its plan as long as V* of the initial state (unit costs), and ``label_one`` labels along it when the
    state space is not expanded (a limit of 2 states). ``work``: a folder for the labels."""
    from up_gnnplan.datasets.expansion import expand
    from up_gnnplan.learn.labels import fast_downward_plan, label_one, optimal_fallback
    from up_gnnplan.problems import load_task

    task = load_task(domain, problem)
    assert optimal_fallback(task) == "seq-opt-blind"
    status, plan = fast_downward_plan(task, 30.0)
    assert status == "solved" and len(plan) == expand(task).initial_value
    summary = label_one(str(domain), str(problem), 30.0, 2, str(Path(work) / "p.npz"))
    assert summary["status"] == "optimal-plan" and summary["plan_length"] == len(plan), summary

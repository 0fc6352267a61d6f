"""Problems shared by the search tests (bundled examples and tiny fixtures), loaded once."""

from __future__ import annotations

from pathlib import Path

from unified_planning.engines import ValidationResultStatus
from unified_planning.shortcuts import PlanValidator

from up_gnnplan.data import example
from up_gnnplan.problems import load_task
from up_gnnplan.search.course import Course, goal_literals

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

PROBLEMS = {
    "bw-p04": (example("blocksworld"), example("blocksworld", "p04.pddl")),
    "gripper-p02": (example("gripper"), example("gripper", "p02.pddl")),
    # The only road leads from g to s, and we start in s: no plan (an existing fixture).
    "oneway-unsolvable": (FIXTURES / "oneway" / "domain.pddl", FIXTURES / "oneway" / "unsolvable.pddl"),
    # s -> m -> g solves it; s -> trap -> pit is a one-way street into dead ends.
    "oneway-deadends": (FIXTURES / "oneway" / "domain.pddl", FIXTURES / "oneway" / "deadends.pddl"),
}
SOLVABLE = ["bw-p04", "gripper-p02"]

_TASKS: dict[str, object] = {}


def task_of(name: str):
    if name not in _TASKS:
        _TASKS[name] = load_task(*PROBLEMS[name])
    return _TASKS[name]


def assert_valid_up_plan(task, result):
    plan = task.to_up_plan(result.actions)
    assert len(plan.actions) == len(result.actions)
    with PlanValidator(problem_kind=task.up_problem.kind) as validator:
        outcome = validator.validate(task.up_problem, plan)
    assert outcome.status == ValidationResultStatus.VALID, outcome




class KeepingAtOnce(Course):
    """A course that keeps the goal literals from the walk's first step, as after a circle (:meth:`Course.undoes`)."""

    def circling(self, step, state):
        self.keeping = True
        self.kept = [literal for literal in self.literals if state.literal_holds(literal)]
        return False


def undoing_steps(task, actions) -> int:
    """How many steps of ``actions`` (from the initial state) undo a goal literal that held before them."""
    literals, state, undoing = goal_literals(task), task.initial_state(), 0
    for action in actions:
        after = action.apply(state)
        undoing += any(state.literal_holds(literal) and not after.literal_holds(literal) for literal in literals)
        state = after
    return undoing

"""Plans found by pymimir map back to UP plans that UP's own validator accepts."""

from __future__ import annotations

from collections import deque

import pymimir
import pytest
from pddl_cases import PROBLEMS, TYPED_BLOCKS, fixture
from unified_planning.engines import ValidationResultStatus
from unified_planning.shortcuts import Object, PlanValidator, SequentialSimulator

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.problems import Task
from up_gnnplan.problems.loading import load_pddl
from up_gnnplan.states import StateAtoms, is_goal, successors


def pymimir_plan(task):
    result = pymimir.astar_eager(task.mimir_problem, task.initial_state(), pymimir.BlindHeuristic(task.mimir_problem))
    assert result.status == "solved"
    return result.solution


def assert_valid(task, plan):
    with PlanValidator(problem_kind=task.up_problem.kind) as validator:
        result = validator.validate(task.up_problem, plan)
    assert result.status == ValidationResultStatus.VALID, result


def problem_with_object_1st():
    """Blocksworld p02 plus a block named ``1st``, which the PDDL writer renames (``o_1st``)."""
    problem = load_pddl(TYPED_BLOCKS, fixture("blocksworld", "two-blocks.pddl")).clone()
    first = Object("1st", problem.user_type("block"))
    problem.add_object(first)
    problem.set_initial_value(problem.fluent("ontable")(first), True)
    problem.set_initial_value(problem.fluent("clear")(first), True)
    problem.clear_goals()
    problem.add_goal(problem.fluent("on")(first, problem.object("a")))
    problem.add_goal(problem.fluent("on")(problem.object("a"), problem.object("b")))
    return problem


@pytest.mark.parametrize(
    "name", ["bw-p03", "bw-p04", "gripper-p01", "bw-renamed", "gripper-mixed", "exists-pre", "bw-exists-goal"]
)
def test_plan_maps_back_and_validates(name, task_of):
    task = task_of(name)
    actions = pymimir_plan(task)
    plan = task.to_up_plan(actions)
    assert len(plan.actions) == len(actions) == expand(task).initial_value  # unit costs: optimal
    assert_valid(task, plan)
    # Each UP action maps back to the very pymimir action it came from.
    state = task.initial_state()
    for action, up_action in zip(actions, plan.actions):
        assert task.find_ground_action(state, up_action).get_index() == action.get_index()
        state = action.apply(state)
    assert is_goal(task, state)


@pytest.mark.parametrize("read", ["up", "files"])
def test_writer_renames_keyword_objects(read):
    files = PROBLEMS["bw-renamed"]
    task = Task(load_pddl(*files)) if read == "up" else Task.from_files(*files)
    if read == "files":  # pymimir reads the names as written
        assert {"domain", "either"} <= {o.get_name() for o in task.mimir_problem.get_objects()}
        plan = task.to_up_plan(pymimir_plan(task))
        assert {p.object().name for a in plan.actions for p in a.actual_parameters} == {"top", "domain", "either"}
        return
    mimir_names = {o.get_name() for o in task.mimir_problem.get_objects() + task.mimir_domain.get_constants()}
    assert {"domain_", "either_"} <= mimir_names  # really renamed on the pymimir side
    assert task.object_names == ["top", "domain", "either"]  # UP's names in our maps
    plan = task.to_up_plan(pymimir_plan(task))
    assert {p.object().name for a in plan.actions for p in a.actual_parameters} == {"top", "domain", "either"}


def test_object_named_1st_built_in_up():
    task = Task(problem_with_object_1st())
    assert "o_1st" in {o.get_name() for o in task.mimir_problem.get_objects()}
    assert task.object_names == ["a", "b", "1st"]
    plan = task.to_up_plan(pymimir_plan(task))
    assert any(p.object().name == "1st" for a in plan.actions for p in a.actual_parameters)
    assert_valid(task, plan)
    atoms = StateAtoms(task).strings(task.initial_state())
    assert "ontable(1st)" in atoms and "clear(1st)" in atoms


def test_existential_precondition_extra_parameters_are_dropped(task_of):
    task = task_of("exists-pre")
    actions = pymimir_plan(task)
    marks = [a for a in actions if a.get_action().get_name() == "mark"]
    assert marks and all(len(a.get_objects()) == 2 for a in marks)  # pymimir's extra ?y
    for up_action in task.to_up_plan(marks).actions:
        assert up_action.action.name == "mark" and len(up_action.actual_parameters) == 1


def test_existential_goal_plan_replays_in_up_simulator(task_of):
    task = task_of("bw-exists-goal")
    plan = task.to_up_plan(pymimir_plan(task))
    assert [str(a) for a in plan.actions] == ["unstack(c, a)", "stack(c, b)"]
    with SequentialSimulator(problem=task.up_problem) as simulator:
        state = simulator.get_initial_state()
        assert not simulator.is_goal(state)
        for action in plan.actions:
            state = simulator.apply(state, action)
            assert state is not None
        assert simulator.is_goal(state)


def _goal_holds(strings) -> bool:
    """The goal of exists-goal.pddl, evaluated by hand: some block is on b."""
    return any(f"on({x},b)" in strings for x in ("a", "b", "c"))


def test_existential_goal_is_goal_exactly_at_goal_states(task_of):
    task = task_of("bw-exists-goal")
    atoms = StateAtoms(task)
    assert atoms.has_existential_goal and len(atoms.goal) == 0
    # Every reachable pymimir state: is_goal agrees with the goal evaluated by hand.
    start = task.initial_state()
    seen, queue, goals = {start.get_index()}, deque([start]), 0
    while queue:
        state = queue.popleft()
        expected = _goal_holds(atoms.strings(state))
        assert is_goal(task, state) == expected, atoms.strings(state)
        goals += expected
        for _, successor, _ in successors(state):
            if successor.get_index() not in seen:
                seen.add(successor.get_index())
                queue.append(successor)
    # expand(): same states, V* = 0 exactly at the goal states, and 2 from the initial state.
    labelled = expand(task)
    assert len(labelled) == len(seen) == 22 and goals == int(labelled.is_goal.sum()) > 0
    for i, state_atoms in enumerate(labelled.states):
        strings = state_atoms.as_strings(task.signature, task.object_names)
        assert bool(labelled.is_goal[i]) == _goal_holds(strings) == (labelled.value[i] == 0), strings
    assert labelled.initial_value == 2.0

"""The labeller's optimal plans: Fast Downward's A* with LM-cut run on the task's own PDDL, under
the default memory limit, its plan mapped to pymimir's ground actions (no UP problem built)."""

from __future__ import annotations

import importlib.util

import pytest

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.generators import generate
from up_gnnplan.learn.labels import fast_downward_plan
from up_gnnplan.problems import load_task
from up_gnnplan.states.successors import is_goal

needs_fd = pytest.mark.skipif(importlib.util.find_spec("up_fast_downward") is None,
                              reason="the labeller's plans come from Fast Downward: needs up-fast-downward")


@needs_fd
@pytest.mark.parametrize("balls", [3, 5])
def test_the_plan_is_optimal_and_read_without_ups_reader(tmp_path, balls):
    problem = generate("gripper", tmp_path, count=1, seed=balls, balls=balls)[0]
    task = load_task(tmp_path / "domain.pddl", problem)
    status, plan = fast_downward_plan(task, 30.0)
    assert status == "solved"
    assert len(plan) == expand(task).initial_value  # unit costs: V* of the initial state
    state = task.initial_state()
    for action in plan:
        state = action.apply(state)
    assert is_goal(task, state)
    assert task.from_files_only  # the plan was mapped on pymimir: UP's reader never ran


@needs_fd
def test_a_share_too_short_is_a_timeout_not_a_failure(tmp_path):
    problem = generate("gripper", tmp_path, count=1, seed=0, balls=40)[0]
    status, plan = fast_downward_plan(load_task(tmp_path / "domain.pddl", problem), 1.0)
    assert (status, plan) == ("timeout", None)

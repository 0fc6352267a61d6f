"""V* from ``expand`` checked against an independent computation with UP's own simulator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from up_gnnplan.datasets.expansion import expand

# The bundled instances the brief names, plus fixtures with existential preconditions and
# goals, renamed objects, action costs (constant, zero and static-fluent), dead ends and
# conditional effects under a forall (Briefcaseworld): UP's simulator and pymimir must agree on
# every one.
INDEPENDENT = [
    "bw-p03",
    "bw-p04",
    "gripper-p01",
    "bw-exists-goal",
    "exists-pre",
    "bw-renamed",
    "gripper-mixed",
    "costs",
    "costs-zero",
    "roads",
    "oneway-deadends",
    "briefcase-p03",
    "briefcase-p04",
]


@pytest.mark.parametrize("name", INDEPENDENT)
def test_expand_matches_up_simulator(name, task_of, up_values, keyed):
    task = task_of(name)
    labelled = expand(task)
    values, goals, initial = up_values(task.up_problem)
    ours = keyed(task, labelled)
    assert len(labelled) == len(values), "different number of reachable states"
    assert set(ours) == set(values), "different reachable states"
    for key, v in values.items():
        i = ours[key]
        where = sorted(key)
        if math.isinf(v):
            assert labelled.dead_end[i], where
            assert labelled.value[i] == math.inf, where
            assert labelled.steps[i] == -1, where
        else:
            assert not labelled.dead_end[i], where
            assert labelled.value[i] == pytest.approx(v), where
        assert bool(labelled.is_goal[i]) == (key in goals), where
    assert labelled.initial_value == values[initial]


@pytest.mark.parametrize("name", ["bw-p03", "gripper-p01", "costs", "roads", "oneway-deadends"])
def test_labels_are_consistent(name, task_of):
    """Goal states have V* = 0 and 0 steps; every other live state has at least one step."""
    labelled = expand(task_of(name))
    assert (labelled.value[labelled.is_goal] == 0).all()
    assert (labelled.steps[labelled.is_goal] == 0).all()
    live = ~labelled.dead_end & ~labelled.is_goal
    assert (labelled.steps[live] >= 1).all()
    assert (labelled.label == 0).all()  # 0: full state-space expansion


def test_sussman_anomaly_initial_value(task_of):
    """Hand-derived: unstack c a, put-down c, pick-up b, stack b c, pick-up a, stack a b."""
    labelled = expand(task_of("bw-p03"))
    assert labelled.initial_value == 6.0
    # 3 blocks: 13 towers with the hand empty, plus 3 x 3 with one block held.
    assert len(labelled) == 22


def test_two_block_swap_initial_value(task_of):
    """p02, b on a, goal a on b: unstack b a, put-down b, pick-up a, stack a b."""
    assert expand(task_of("bw-p02")).initial_value == 4.0


def test_unit_costs_steps_equal_values(task_of):
    labelled = expand(task_of("bw-p04"))
    live = ~labelled.dead_end
    assert np.array_equal(labelled.steps[live], labelled.value[live].astype(np.int32))

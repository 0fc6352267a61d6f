"""Action costs are respected, dead ends are flagged, unsolvable problems are refused or kept."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pddl_cases import PROBLEMS

from up_gnnplan.datasets.build import BuildOptions, build_dataset
from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.store import Dataset
from up_gnnplan.errors import UnsolvableProblemError
from up_gnnplan.states import StateAtoms, successors


def _initial_index(task, labelled):
    initial = StateAtoms(task).fluent(task.initial_state()).as_strings(task.signature, task.object_names)
    (index,) = [i for i, s in enumerate(labelled.states) if s.as_strings(task.signature, task.object_names) == initial]
    return index


def _by_strings(task, labelled):
    return {tuple(s.as_strings(task.signature, task.object_names)): i for i, s in enumerate(labelled.states)}


def test_action_costs_are_what_the_domain_says(task_of):
    task = task_of("costs")
    costs = {str(task.to_up_action(a)): c for a, _, c in successors(task.initial_state())}
    assert costs == {"walk(s, m1)": 2.0, "jump(s, g)": 7.0}


@pytest.mark.parametrize(
    "name, value, steps",
    [
        # walk s m1, walk m1 m2, walk m2 g: 3 x 2 = 6, cheaper than the one-step jump (7).
        ("costs", 6.0, 3),
        # drive s x (2), x y (3), y g (1) = 6, cheaper than the direct road (10).
        ("roads", 6.0, 3),
        # three free walks: cost 0 but 3 actions; the jump would cost 5.
        ("costs-zero", 0.0, 3),
    ],
)
def test_cheapest_plan_is_not_the_shortest(name, value, steps, task_of):
    task = task_of(name)
    labelled = expand(task)
    i = _initial_index(task, labelled)
    assert labelled.initial_value == value
    assert labelled.value[i] == value
    # steps: the number of actions on a cheapest path (store.py), not the fewest actions (1).
    assert labelled.steps[i] == steps
    assert labelled.steps[i] != labelled.value[i]
    assert not labelled.is_goal[i]


def test_costs_along_the_cheapest_path(task_of):
    task = task_of("roads")
    labelled = expand(task)
    index = _by_strings(task, labelled)
    expected = {"at(s)": (6.0, 3), "at(x)": (4.0, 2), "at(y)": (1.0, 1), "at(g)": (0.0, 0)}
    for atom, (value, steps) in expected.items():
        i = index[(atom,)]
        assert (labelled.value[i], labelled.steps[i]) == (value, steps), atom


def test_dead_ends_are_flagged_with_infinite_value(task_of):
    task = task_of("oneway-deadends")
    labelled = expand(task)
    index = _by_strings(task, labelled)
    assert set(index) == {("at(s)",), ("at(m)",), ("at(g)",), ("at(trap)",), ("at(pit)",)}
    for atom in ("at(trap)", "at(pit)"):
        i = index[(atom,)]
        assert labelled.dead_end[i], atom
        assert math.isinf(labelled.value[i]) and labelled.value[i] > 0, atom
        assert labelled.steps[i] == -1, atom
        assert not labelled.is_goal[i]
    for atom, value in (("at(s)", 2.0), ("at(m)", 1.0), ("at(g)", 0.0)):
        i = index[(atom,)]
        assert not labelled.dead_end[i], atom
        assert labelled.value[i] == value, atom
    assert labelled.initial_value == 2.0


def test_build_dataset_keeps_dead_ends_of_a_solvable_problem(tmp_path):
    domain, problem = PROBLEMS["oneway-deadends"]
    data = build_dataset(domain, [problem])
    assert data.problems[0].stats["dead_ends"] == 2
    assert data.dead_end.sum() == 2
    assert np.isinf(data.value[data.dead_end]).all()


def test_unsolvable_problem_is_refused_naming_the_file():
    domain, problem = PROBLEMS["oneway-unsolvable"]
    with pytest.raises(UnsolvableProblemError) as error:
        build_dataset(domain, [problem])
    assert str(problem) in str(error.value)
    assert "--allow-unsolvable" in str(error.value)


def test_unsolvable_problem_is_kept_when_allowed(tmp_path):
    domain, problem = PROBLEMS["oneway-unsolvable"]
    data = build_dataset(domain, [problem], BuildOptions(allow_unsolvable=True))
    assert len(data) == 1
    assert data.dead_end.all() and np.isinf(data.value).all()
    assert math.isinf(data.problems[0].stats["initial_value"])
    again = Dataset.load(data.save(tmp_path / "unsolvable.npz"))
    assert again.dead_end.all() and np.isinf(again.value).all()
    assert math.isinf(again.problems[0].stats["initial_value"])

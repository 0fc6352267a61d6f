"""Labels from reordered optimal plans: a later plan action that can go first is optimal too, and its
successor's V* is exact. Checked against the full state space's V* of small generated problems."""

from __future__ import annotations

import pytest

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.generators import generate
from up_gnnplan.datasets.optimal import label_optimal, reordered_successors
from up_gnnplan.problems import load_task


@pytest.mark.parametrize("domain, params", [("gripper", {"balls": 4}),
                                            ("satellite", {"satellites": 2, "instruments": 2, "modes": 2,
                                                           "directions": 3})])
def test_reordered_plan_successors_have_their_exact_value(tmp_path, domain, params):
    (problem,) = generate(domain, tmp_path, count=1, seed=1, **params)
    task = load_task(tmp_path / "domain.pddl", problem)
    exact = expand(task, 200_000)
    value_of = {_key(task, s): v for s, v in zip(exact.states, exact.value)}
    labelled = label_optimal(task, include_successors=False)
    plan_values = labelled.value[labelled.label == 1]
    assert plan_values[0] == exact.initial_value
    assert (labelled.label == 2).any(), "no reordered successor on a problem with independent goals"
    for state, value, label in zip(labelled.states, labelled.value, labelled.label):
        if label == 2:
            assert value == value_of[_key(task, state)]


def _key(task, atoms) -> frozenset:
    return frozenset(atoms.as_strings(task.signature, task.object_names))


def test_no_reordering_past_the_deadline(tmp_path):
    (problem,) = generate("gripper", tmp_path, count=1, seed=1, balls=4)
    task = load_task(tmp_path / "domain.pddl", problem)
    assert reordered_successors(task, [task.initial_state()] * 3, [None, None], [1.0, 1.0], [2.0, 1.0, 0.0],
                                deadline=0.0) == []

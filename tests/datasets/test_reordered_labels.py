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


def test_a_successor_symmetric_to_a_labelled_one_shares_its_label(tmp_path):
    """A plan state's successors that are the same state up to renaming interchangeable objects (Gripper's
    balls and grippers) share V*: one of each class is searched, and the others' actions point at its row.
    With searches that cannot finish (one expansion each), the plan's own successor still labels its whole
    class; every action's label is its real successor's exact V*."""
    import numpy as np

    (problem,) = generate("gripper", tmp_path, count=1, seed=1, balls=4)
    task = load_task(tmp_path / "domain.pddl", problem)
    exact = expand(task, 200_000)
    value_of = {_key(task, s): v for s, v in zip(exact.states, exact.value)}
    labelled = label_optimal(task, successor_expansion_limit=1)
    moves = labelled.transitions
    first = slice(moves.ptr[0], moves.ptr[1])  # the initial state: pick any of 4 balls with either gripper, or move
    known = moves.next[first] >= 0
    assert known.sum() >= 8, "the 8 picks are one class: the plan's pick labels them all"
    initial = task.initial_state()
    for action in initial.generate_applicable_actions():
        successor = action.apply(initial)
        row = next(moves.next[k] for k in range(moves.ptr[0], moves.ptr[1])
                   if _same_action(task, moves, k, action))
        if row >= 0:
            assert labelled.value[row] == value_of[_key(task, _atoms(task, successor))]
    # Searches are for classes with no labelled member only: fewer than the successors.
    unlimited = label_optimal(task)
    assert unlimited.left_out == {"time": 0, "expansion": 0}
    recorded = np.flatnonzero(unlimited.transitions.recorded)
    actions = sum(int(unlimited.transitions.ptr[i + 1] - unlimited.transitions.ptr[i]) for i in recorded)
    assert len(unlimited) < len(recorded) + actions
    assert (unlimited.transitions.next[:unlimited.transitions.ptr[-1]] >= 0).all()


def _same_action(task, moves, k, action) -> bool:
    from up_gnnplan.states.actions import ActionRows

    schema, args = ActionRows(task)([action])
    return int(schema[0]) == int(moves.schema[k]) and list(args[0]) == list(moves.args[k][:len(args[0])])


def _atoms(task, state):
    from up_gnnplan.states.atoms import StateAtoms

    return StateAtoms(task).fluent(state)

"""Canonical state atoms: nullary, static and type atoms, golden values, object order."""

from __future__ import annotations

import numpy as np
import pytest

from pddl_cases import PROBLEMS

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.states import PredicateSignature, StateAtoms, successors

# -- golden values: these must not change with the pymimir release -------------------------
# The bundled Blocksworld is untyped (the IPC-2000 4-operator signature); the typed copy under
# tests/fixtures adds one type:block atom per block.

BUNDLED_P03_SIGNATURE = [["clear", 1], ["handempty", 0], ["holding", 1], ["on", 2], ["ontable", 1]]
BUNDLED_P03_INITIAL = ["clear(b)", "clear(c)", "handempty()", "on(c,a)", "ontable(a)", "ontable(b)"]
BUNDLED_P03_SUCCESSORS = {
    "pick-up(b)": ["clear(c)", "holding(b)", "on(c,a)", "ontable(a)"],
    "unstack(c, a)": ["clear(a)", "clear(b)", "holding(c)", "ontable(a)", "ontable(b)"],
}

TYPED_P03_SIGNATURE = [["clear", 1], ["handempty", 0], ["holding", 1], ["on", 2], ["ontable", 1], ["type:block", 1]]
P03_INITIAL = [
    "clear(b)",
    "clear(c)",
    "handempty()",
    "on(c,a)",
    "ontable(a)",
    "ontable(b)",
    "type:block(a)",
    "type:block(b)",
    "type:block(c)",
]
TYPED_P03_SUCCESSORS = {
    "pick-up(b)": [
        "clear(c)",
        "holding(b)",
        "on(c,a)",
        "ontable(a)",
        "type:block(a)",
        "type:block(b)",
        "type:block(c)",
    ],
    "unstack(c, a)": [
        "clear(a)",
        "clear(b)",
        "holding(c)",
        "ontable(a)",
        "ontable(b)",
        "type:block(a)",
        "type:block(b)",
        "type:block(c)",
    ],
}


@pytest.mark.parametrize(
    "name, signature, initial, successors_",
    [
        ("bw-p03", BUNDLED_P03_SIGNATURE, BUNDLED_P03_INITIAL, BUNDLED_P03_SUCCESSORS),
        ("bw-typed-p03", TYPED_P03_SIGNATURE, P03_INITIAL, TYPED_P03_SUCCESSORS),
    ],
)
def test_golden_blocksworld_p03(name, signature, initial, successors_, task_of):
    task = task_of(name)
    atoms = StateAtoms(task)
    assert task.signature.to_json() == signature
    assert task.object_names == ["a", "b", "c"]
    assert atoms.strings(task.initial_state()) == initial
    found = {str(task.to_up_action(a)): atoms.strings(s) for a, s, _ in successors(task.initial_state())}
    assert found == successors_


def test_golden_arrays_blocksworld_p03(task_of):
    """The integer form of the initial state: predicate ids by name order, UP object ids."""
    task = task_of("bw-typed-p03")
    of = StateAtoms(task).of(task.initial_state())
    rows = sorted(zip(of.pred.tolist(), map(tuple, of.args.tolist())))
    assert of.pred.dtype == np.int32 and of.args.dtype == np.int32 and of.args.shape[1] == 2
    assert rows == [
        (0, (1, -1)),  # clear(b)
        (0, (2, -1)),  # clear(c)
        (1, (-1, -1)),  # handempty()
        (3, (2, 0)),  # on(c,a)
        (4, (0, -1)),  # ontable(a)
        (4, (1, -1)),  # ontable(b)
        (5, (0, -1)),  # type:block(a)
        (5, (1, -1)),
        (5, (2, -1)),
    ]


def test_signature_json_round_trip(task_of):
    signature = task_of("gripper-p01").signature
    assert PredicateSignature.from_json(signature.to_json()) == signature
    assert signature.names == sorted(signature.names)


# -- nullary, static and type atoms ---------------------------------------------------------


def test_nullary_atoms_are_kept(task_of):
    task = task_of("bw-p03")
    assert ("handempty", 0) in task.signature.predicates
    atoms = StateAtoms(task)
    assert "handempty()" in atoms.strings(task.initial_state())
    # ... and in the fluent atoms that datasets store, in every state with an empty hand.
    labelled = expand(task)
    with_hand_empty = [s for s in labelled.states if "handempty()" in s.as_strings(task.signature, task.object_names)]
    holding = [s for s in labelled.states if any(x.startswith("holding(") for x in s.as_strings(task.signature, task.object_names))]
    assert len(with_hand_empty) == 13 and len(holding) == 9


def test_static_and_type_atoms(task_of):
    """signature.py: static predicates kept, one type:T per declared type, subtypes included."""
    task = task_of("typed")
    assert task.signature.to_json() == [
        ["at", 2],
        ["link", 2],
        ["type:place", 1],
        ["type:truck", 1],
        ["type:vehicle", 1],
    ]
    atoms = StateAtoms(task)
    assert atoms.static.as_strings(task.signature, task.object_names) == [
        "link(p1,p2)",
        "link(p2,p1)",
        "type:place(p1)",
        "type:place(p2)",
        "type:truck(t1)",
        "type:vehicle(t1)",  # a truck is a vehicle
    ]
    assert atoms.fluent(task.initial_state()).as_strings(task.signature, task.object_names) == ["at(t1,p1)"]
    assert atoms.strings(task.initial_state()) == sorted(
        ["at(t1,p1)", "link(p1,p2)", "link(p2,p1)", "type:place(p1)", "type:place(p2)", "type:truck(t1)", "type:vehicle(t1)"]
    )
    assert not any(name == "type:object" for name in task.signature.names)


def test_static_atoms_of_action_cost_domains(task_of):
    task = task_of("costs")
    atoms = StateAtoms(task)
    static = atoms.static.as_strings(task.signature, task.object_names)
    assert "jump-ok(s,g)" in static and "road(s,m1)" in static
    assert atoms.fluent(task.initial_state()).as_strings(task.signature, task.object_names) == ["at(s)"]
    # Numeric fluents (total-cost) are not predicates.
    assert task.signature.names == ["at", "jump-ok", "road", "type:place"]


def test_goal_atoms(task_of):
    task = task_of("bw-p03")
    atoms = StateAtoms(task)
    assert atoms.goal.as_strings(task.signature, task.object_names) == ["on(a,b)", "on(b,c)"]
    assert len(atoms.negative_goal) == 0 and not atoms.has_existential_goal


# -- object ids: UP's order ----------------------------------------------------------------


@pytest.mark.parametrize("read", ["up", "files"])
def test_object_ids_follow_up_order_not_pymimirs(read):
    from up_gnnplan.problems import Task, load_pddl

    files = PROBLEMS["gripper-mixed"]
    task = Task(load_pddl(*files)) if read == "up" else Task.from_files(*files)
    up_order = [o.name for o in task.up_problem.all_objects]
    mimir_order = [o.get_name() for o in sorted(task.mimir_problem.get_objects(), key=lambda o: o.get_index())]
    assert up_order == ["ball2", "left", "rooma", "ball1", "roomb", "right"]  # as declared
    # UP's PDDL writer groups objects by type; pymimir reading the file keeps the file's order
    assert (mimir_order != up_order) == (read == "up")
    assert task.object_names == up_order
    for obj in task.mimir_problem.get_objects():
        assert task.object_names[task.object_id(obj)] == obj.get_name()
    of = StateAtoms(task).of(task.initial_state())
    at = task.signature.index["at"]
    rows = {tuple(r) for p, r in zip(of.pred.tolist(), of.args.tolist()) if p == at}
    assert rows == {(0, 2), (3, 2)}  # at(ball2,rooma), at(ball1,rooma) in UP ids


def test_object_ids_with_constants(task_of):
    """The existential goal makes b a domain constant in pymimir; ids stay UP's."""
    task = task_of("bw-exists-goal")
    assert [c.get_name() for c in task.mimir_domain.get_constants()] == ["b"]
    assert task.object_names == ["a", "b", "c"]
    assert StateAtoms(task).strings(task.initial_state()) == P03_INITIAL  # same start as p03

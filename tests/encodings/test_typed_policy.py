"""Check the instance graphs of the typed domain-graph policy network on hand-made and bundled states."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from up_gnnplan.data import example
from up_gnnplan.encodings import ENCODINGS, make_encoding
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.typed_policy import TypedPolicyEncoding
from up_gnnplan.problems import load_task
from up_gnnplan.states import StateAtoms
from up_gnnplan.states.atoms import Atoms
from up_gnnplan.states.signature import PredicateSignature
from up_gnnplan.states.types import DomainTypes
from pddl_cases import atoms  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"



def state_of(task, state=None) -> StateInput:
    converter = StateAtoms(task)
    return StateInput(converter.of(state or task.initial_state()), converter.goal, task.num_objects, converter.negative_goal)


def encoding_of(task, **params) -> TypedPolicyEncoding:
    return TypedPolicyEncoding(task.signature, types=task.types.to_json(), **params)


def vertices(batch, encoding, j) -> dict[tuple, list[str]]:
    """Return {node tuple: names of the features set} of the vertices of class ``j``."""
    names = encoding.feature_names[j]
    return {tuple(row): [names[k] for k in np.flatnonzero(x)]
            for row, x in zip(batch[f"class_{j}"].tolist(), batch[f"features_{j}"])}


# --- a hand-made domain: a hierarchy (truck < vehicle), an untyped object, a nullary predicate ----

SIGNATURE = PredicateSignature((("at", 2), ("loaded", 1), ("ready", 0), ("road", 2),
                                ("type:location", 1), ("type:truck", 1), ("type:vehicle", 1)))
TYPES = DomainTypes({"object": None, "vehicle": "object", "truck": "vehicle", "location": "object"},
                    {"at": ("vehicle", "location"), "loaded": ("truck",), "ready": (), "road": ("location", "location")},
                    {"drive": ("truck", "location", "location")}).to_json()
TRUCK, VEHICLE, A, B, THING = range(5)


def hand_states():
    s = SIGNATURE
    state = atoms(s, ("at", TRUCK, A), ("at", VEHICLE, B), ("road", A, B), ("road", B, A), ("loaded", TRUCK), ("ready",),
                  ("type:vehicle", TRUCK), ("type:truck", TRUCK), ("type:vehicle", VEHICLE),
                  ("type:location", A), ("type:location", B))
    first = StateInput(state, atoms(s, ("at", TRUCK, B)), 5, atoms(s, ("loaded", TRUCK)))
    # Second state: three objects, no nullary atom, its goal at(0, 1) already holds.
    second = StateInput(atoms(s, ("at", 0, 1), ("type:truck", 0), ("type:location", 1)), atoms(s, ("at", 0, 1)), 3)
    return first, second


def test_registry_names_and_schema():
    encoding = TypedPolicyEncoding(SIGNATURE, types=TYPES)
    assert ENCODINGS["typed_policy"] is TypedPolicyEncoding
    assert isinstance(make_encoding("typed_policy", SIGNATURE, types=TYPES), TypedPolicyEncoding)
    assert encoding.input_names() == ["node_graph", "readout_nodes", "readout_graph", "graph_index", "object_type",
                                      "nullary", "class_0", "features_0", "class_1", "features_1", "class_2", "features_2"]
    schema = encoding.schema()
    assert schema["types"] == ["object", "location", "truck", "vehicle"]
    assert [c["types"] for c in schema["classes"]] == [["truck"], ["location", "location"], ["vehicle", "location"]]
    assert [c["features"] for c in schema["classes"]] == [["loaded", "loaded@goal", "loaded@goal-negative"],
                                                         ["road", "road@goal", "road@goal-negative"],
                                                         ["at", "at@goal", "at@goal-negative"]]
    assert schema["nullary_features"] == ["ready", "ready@goal", "ready@goal-negative"]
    # The domain graph's edges: (type, position, class), types reached through the relation vertices.
    assert schema["object_labels"] == [
        ["truck", 1, ["truck"]], ["location", 1, ["location", "location"]], ["location", 2, ["location", "location"]],
        ["vehicle", 1, ["vehicle", "location"]], ["location", 2, ["vehicle", "location"]],
        ["object", 1, ["object", "master"]], ["location", 1, ["location", "master"]],
        ["truck", 1, ["truck", "master"]], ["vehicle", 1, ["vehicle", "master"]]]
    assert schema["master_labels"] == [["master", 2, ["object", "master"]], ["master", 2, ["location", "master"]],
                                       ["master", 2, ["truck", "master"]], ["master", 2, ["vehicle", "master"]],
                                       ["master", 1, ["master"]]]


def test_types_are_required():
    with pytest.raises(ValueError, match="typed_policy encoding needs the domain's types"):
        TypedPolicyEncoding(SIGNATURE)
    with pytest.raises(ValueError, match="needs the domain's types"):
        make_encoding("typed_policy", SIGNATURE)
    missing = {**TYPES, "predicates": {k: v for k, v in TYPES["predicates"].items() if k != "road"}}
    with pytest.raises(ValueError, match="predicate road has no declared parameter types"):
        TypedPolicyEncoding(SIGNATURE, types=missing)


def test_hand_made_vertices_features_and_numbering():
    encoding = TypedPolicyEncoding(SIGNATURE, types=TYPES)
    batch = encoding.encode(list(hand_states()))
    location, truck, vehicle = 1, 2, 3
    np.testing.assert_array_equal(batch["node_graph"], [0, 0, 0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(batch["readout_nodes"], np.arange(8))
    np.testing.assert_array_equal(batch["readout_graph"], batch["node_graph"])
    np.testing.assert_array_equal(batch["graph_index"], [0, 1])
    # The deepest type atom wins (truck over vehicle); no type atom: object.
    np.testing.assert_array_equal(batch["object_type"], [truck, vehicle, location, location, 0, truck, location, 0])
    np.testing.assert_array_equal(batch["nullary"], [[1, 0, 0], [0, 0, 0]])
    # Second state's objects are nodes 5 + id: the numbering action rows address.
    assert vertices(batch, encoding, 0) == {(TRUCK,): ["loaded", "loaded@goal-negative"]}
    assert vertices(batch, encoding, 1) == {(A, B): ["road"], (B, A): ["road"]}
    assert vertices(batch, encoding, 2) == {(TRUCK, A): ["at"], (TRUCK, B): ["at@goal"], (VEHICLE, B): ["at"],
                                            (5, 6): ["at", "at@goal"]}
    for name in encoding.input_names():
        assert batch[name].dtype == (np.float32 if name == "nullary" or name.startswith("features_") else np.int64), name


def test_goal_mode_achieved_splits_goal_copies():
    encoding = TypedPolicyEncoding(SIGNATURE, goal_mode="achieved", types=TYPES)
    assert encoding.feature_names[2] == ["at", "at@goal-achieved", "at@goal-open", "at@goal-negative"]
    batch = encoding.encode(list(hand_states()))
    assert vertices(batch, encoding, 2)[(TRUCK, B)] == ["at@goal-open"]
    assert vertices(batch, encoding, 2)[(5, 6)] == ["at", "at@goal-achieved"]


def test_empty_batches_and_states_give_empty_arrays():
    encoding = TypedPolicyEncoding(SIGNATURE, types=TYPES)
    empty = Atoms(np.zeros(0, np.int32), np.zeros((0, 2), np.int32))
    for states in ([], [StateInput(empty, empty, 2)]):
        batch = encoding.encode(states)
        assert set(batch) == set(encoding.input_names())
        assert batch["graph_index"].shape == (len(states),) and batch["nullary"].shape == (len(states), 3)
        for j, c in enumerate(encoding.classes):
            assert batch[f"class_{j}"].shape == (0, len(c)) and batch[f"features_{j}"].shape == (0, 3)


def test_config_rebuilds_the_encoding():
    encoding = TypedPolicyEncoding(SIGNATURE, goal_mode="achieved", types=TYPES)
    config = dict(encoding.config())
    assert config["types"] == TYPES and config["encoding"] == "typed_policy"
    name, signature = config.pop("encoding"), PredicateSignature.from_json(config.pop("signature"))
    again = make_encoding(name, signature, **config)
    first, second = encoding.encode(list(hand_states())), again.encode(list(hand_states()))
    assert again.schema() == encoding.schema()
    for key in encoding.input_names():
        np.testing.assert_array_equal(first[key], second[key])


# --- bundled and fixture domains ------------------------------------------------------------------

def test_gripper_initial_state():
    task = load_task(example("gripper"), example("gripper", "p01.pddl"))
    encoding = encoding_of(task)
    assert [list(c) for c in encoding.classes] == [["gripper"], ["room"], ["ball", "gripper"], ["ball", "room"]]
    assert not encoding.has_nullary and "nullary" not in encoding.input_names()
    batch = encoding.encode([state_of(task), state_of(task)])
    names = task.object_names  # rooma roomb ball1 ball2 left right
    kinds = encoding.schema()["types"]
    assert [kinds[t] for t in batch["object_type"][:6]] == ["room", "room", "ball", "ball", "gripper", "gripper"]
    n = task.num_objects
    ids = {name: i for i, name in enumerate(names)}
    rooma, roomb, ball1, ball2, left, right = (ids[k] for k in ("rooma", "roomb", "ball1", "ball2", "left", "right"))
    assert vertices(batch, encoding, 0) == {(left,): ["free"], (right,): ["free"],
                                            (n + left,): ["free"], (n + right,): ["free"]}
    assert vertices(batch, encoding, 1) == {(rooma,): ["at-robby"], (n + rooma,): ["at-robby"]}
    assert batch["class_2"].shape == (0, 2)  # nothing carried
    at = {(ball1, rooma): ["at"], (ball2, rooma): ["at"], (ball1, roomb): ["at@goal"], (ball2, roomb): ["at@goal"]}
    assert vertices(batch, encoding, 3) == {**at, **{(n + b, n + r): f for (b, r), f in at.items()}}


def test_hierarchy_from_pddl():
    task = load_task(FIXTURES / "typed" / "domain.pddl", FIXTURES / "typed" / "p01.pddl")
    encoding = encoding_of(task)
    batch = encoding.encode([state_of(task)])
    kinds = encoding.schema()["types"]
    assert dict(zip(task.object_names, (kinds[t] for t in batch["object_type"]))) == {"t1": "truck", "p1": "place",
                                                                                      "p2": "place"}
    assert [list(c) for c in encoding.classes] == [["place", "place"], ["vehicle", "place"]]
    assert batch["class_1"].tolist() == [[0, 1], [0, 2]]  # at(t1, p1) holds, at(t1, p2) is the goal


def test_untyped_blocksworld():
    task = load_task(example("blocksworld"), example("blocksworld", "p03.pddl"))
    encoding = encoding_of(task)
    assert encoding.schema()["types"] == ["object"]
    assert [list(c) for c in encoding.classes] == [["object"], ["object", "object"]]
    assert encoding.nullary_features == ["handempty", "handempty@goal", "handempty@goal-negative"]
    batch = encoding.encode([state_of(task)])
    assert (batch["object_type"] == 0).all() and batch["nullary"].tolist() == [[1, 0, 0]]
    # Every object is in a unary vertex (clear or ontable at least), every on-atom (state or goal) is a vertex.
    assert sorted(batch["class_0"].reshape(-1).tolist()) == list(range(task.num_objects))
    state = state_of(task)
    on = task.signature.index["on"]
    tuples = {tuple(r[:2]) for a in (state.atoms, state.goal) for r in a.args[a.pred == on].tolist()}
    assert {tuple(r) for r in batch["class_1"].tolist()} == tuples


def test_encoding_is_deterministic_and_pure_numpy():
    task = load_task(example("gripper"), example("gripper", "p02.pddl"))
    encoding = encoding_of(task)
    first, second = encoding.encode([state_of(task)]), encoding.encode([state_of(task)])
    for name in encoding.input_names():
        assert isinstance(first[name], np.ndarray)
        np.testing.assert_array_equal(first[name], second[name])


def test_encoding_imports_no_torch():
    code = "import sys, up_gnnplan.encodings.typed_policy; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)

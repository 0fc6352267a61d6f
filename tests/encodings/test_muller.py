"""Check the object-atom graphs of Müller et al.: nodes, one-hot kinds, labelled atom-argument
edges, nullary links, and that the argument-position labels tell ``on(a, b)`` from ``on(b, a)``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from up_gnnplan.encodings import ENCODINGS, make_encoding
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.muller import MullerEncoding
from up_gnnplan.models import ARCHITECTURES
from up_gnnplan.states.signature import PredicateSignature
from pddl_cases import atoms  # noqa: E402

torch.set_num_threads(1)

HAND = PredicateSignature((("at", 2), ("free", 0), ("on", 2), ("red", 1), ("type:ball", 1)))
MULLER = sorted(k for k, a in ARCHITECTURES.items() if a.encoding == "muller")


def hand_states():
    s = HAND
    first = StateInput(atoms(s, ("on", 0, 1), ("free",), ("red", 1)), atoms(s, ("on", 1, 2)), 3, atoms(s, ("at", 2, 0)))
    second = StateInput(atoms(s, ("on", 0, 1)), atoms(s, ("on", 0, 1)), 2)
    return [first, second]


def edges_of(encoding, batch) -> set[tuple[int, int, str]]:
    """Return {(source, target, label name)} of an encoded batch (one label per edge)."""
    names = encoding.schema()["label_names"]
    rows = batch["edge_features"]
    assert (rows.sum(1) == 1).all(), "every edge has exactly one label"
    return {(u, v, names[int(np.argmax(row))]) for (u, v), row in zip(batch["edge_index"].T.tolist(), rows)}


def test_registry_and_schema():
    assert ENCODINGS["muller"] is MullerEncoding
    assert {"gcn", "gatv2", "gin"} <= set(MULLER)
    encoding = make_encoding("muller", HAND)
    assert encoding.input_names() == [
        "node_graph", "readout_nodes", "readout_graph", "graph_index", "node_features", "edge_index", "edge_features"
    ]
    schema = encoding.schema()
    assert schema["feature_names"] == [
        "object", "at", "free", "on", "red", "type:ball",
        "at@goal", "free@goal", "on@goal", "red@goal",
        "at@goal-negative", "free@goal-negative", "on@goal-negative", "red@goal-negative",
    ]
    assert schema["label_names"] == ["arg1>", "<arg1", "arg2>", "<arg2", "nullary>", "<nullary"]
    assert (schema["node_features"], schema["edge_labels"]) == (14, 6)
    assert encoding.config()["encoding"] == "muller"


def test_hand_made_states_literal():
    encoding = MullerEncoding(HAND)
    batch = encoding.encode(hand_states())
    # Objects 0-2 (state 0) and 3-4 (state 1), then the atom nodes state by state: state atoms, goal, negative goal.
    assert batch["node_graph"].tolist() == [0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1]
    assert batch["readout_nodes"].tolist() == list(range(12))
    assert batch["readout_graph"].tolist() == batch["node_graph"].tolist()
    assert batch["graph_index"].tolist() == [0, 1]
    for key in ("node_graph", "readout_nodes", "readout_graph", "graph_index", "edge_index"):
        assert batch[key].dtype == np.int64
    assert batch["node_features"].dtype == np.float32 and batch["edge_features"].dtype == np.float32
    names = encoding.schema()["feature_names"]
    assert (batch["node_features"].sum(1) == 1).all(), "one-hot"
    kinds = [names[i] for i in batch["node_features"].argmax(1)]
    assert kinds == ["object"] * 5 + ["on", "free", "red", "on@goal", "at@goal-negative", "on", "on@goal"]

    links = {
        (5, 0, "arg1"), (5, 1, "arg2"),  # on(0, 1)
        (6, 0, "nullary"), (6, 1, "nullary"), (6, 2, "nullary"),  # free(): every object of state 0, none of state 1
        (7, 1, "arg1"),  # red(1)
        (8, 1, "arg1"), (8, 2, "arg2"),  # goal on(1, 2)
        (9, 2, "arg1"), (9, 0, "arg2"),  # negative goal at(2, 0)
        (10, 3, "arg1"), (10, 4, "arg2"), (11, 3, "arg1"), (11, 4, "arg2"),  # state 1: on(0, 1), also a goal
    }
    expected = {(a, o, f"{label}>") for a, o, label in links} | {(o, a, f"<{label}") for a, o, label in links}
    assert edges_of(encoding, batch) == expected
    assert batch["edge_index"].shape == (2, 28)


def test_batch_is_the_disjoint_union_of_single_states():
    encoding = MullerEncoding(HAND)
    states = hand_states()
    together = encoding.encode(states)
    alone = [encoding.encode([s]) for s in states]
    objects = [s.num_objects for s in states]
    atom_nodes = [len(a["node_graph"]) - n for a, n in zip(alone, objects)]

    def renumber(node, b):  # a single state's node id → its id in the batch
        if node < objects[b]:
            return node + sum(objects[:b])
        return sum(objects) + sum(atom_nodes[:b]) + node - objects[b]

    expected = set()
    for b, single in enumerate(alone):
        expected |= {(renumber(u, b), renumber(v, b), label) for u, v, label in edges_of(encoding, single)}
    assert edges_of(encoding, together) == expected


def test_goal_mode_achieved_and_empty_inputs():
    encoding = MullerEncoding(HAND, goal_mode="achieved")
    batch = encoding.encode([hand_states()[1]])
    names = encoding.schema()["feature_names"]
    assert [names[i] for i in batch["node_features"].argmax(1)] == ["object", "object", "on", "on@goal-achieved"]
    encoding = MullerEncoding(HAND)
    empty = encoding.encode([])
    assert empty["node_features"].shape == (0, 14) and empty["edge_index"].shape == (2, 0)
    assert empty["edge_features"].shape == (0, 6)
    lone = encoding.encode([StateInput(atoms(HAND), atoms(HAND), 2)])
    assert lone["node_features"].tolist() == [[1] + [0] * 13] * 2 and lone["edge_index"].shape == (2, 0)


def test_only_nullary_predicates():
    signature = PredicateSignature((("done", 0),))
    encoding = MullerEncoding(signature)
    assert encoding.schema()["label_names"] == ["nullary>", "<nullary"]
    batch = encoding.encode([StateInput(atoms(signature, ("done",)), atoms(signature, ("done",)), 2)])
    assert edges_of(encoding, batch) == {(2, 0, "nullary>"), (2, 1, "nullary>"), (3, 0, "nullary>"), (3, 1, "nullary>"),
                                         (0, 2, "<nullary"), (1, 2, "<nullary"), (0, 3, "<nullary"), (1, 3, "<nullary")}


@pytest.mark.parametrize("key", MULLER)
def test_argument_positions_tell_an_atom_from_its_reverse(key):
    """``on(a, b)`` and ``on(b, a)`` under the goal ``on(a, b)``: without the argument positions
    the two graphs are isomorphic (swap a and b), so any GNN gives them the same value; with the
    position labels they differ."""
    signature = PredicateSignature((("on", 2),))
    goal = atoms(signature, ("on", 0, 1))
    states = [StateInput(atoms(signature, ("on", 0, 1)), goal, 2), StateInput(atoms(signature, ("on", 1, 0)), goal, 2)]
    architecture = ARCHITECTURES[key]
    encoding = make_encoding(architecture.encoding, signature)
    torch.manual_seed(0)
    options = {"hidden": 8, "layers": 3, "dropout": 0.0, "heads": 2}
    model = architecture.build(encoding, **{k: v for k, v in options.items() if k in architecture.options}).eval()
    batch = encoding.encode(states)
    inputs = [torch.from_numpy(batch[name]) for name in encoding.input_names()]
    with torch.no_grad():
        labelled = model(*inputs)
        inputs[-1] = torch.zeros_like(inputs[-1])  # every edge the same label: the positions are gone
        unlabelled = model(*inputs)
    assert abs(float(labelled[0] - labelled[1])) > 1e-4
    torch.testing.assert_close(unlabelled[0], unlabelled[1], rtol=1e-5, atol=1e-5)

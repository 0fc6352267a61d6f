"""Check the PLOI encoding and model, and that they separate Chen's counterexample where R-GNN cannot."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from up_gnnplan.data import example
from up_gnnplan.encodings import ENCODINGS, make_encoding
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.ploi import PloiEncoding
from up_gnnplan.encodings.rgnn import RGNNEncoding
from up_gnnplan.models.ploi import PloiGNN
from up_gnnplan.models.rgnn import RelationalGNN
from up_gnnplan.problems import load_task
from up_gnnplan.states import StateAtoms, successors
from up_gnnplan.states.atoms import Atoms
from up_gnnplan.states.signature import PredicateSignature
from pddl_cases import atoms  # noqa: E402

torch.set_num_threads(1)



def tensors(encoding, states):
    batch = encoding.encode(states)
    return [torch.as_tensor(batch[name]) for name in encoding.input_names()]


def model_for(encoding, hidden, layers, **kw):
    if isinstance(encoding, PloiEncoding):
        schema = encoding.schema()
        return PloiGNN(schema["node_features"], schema["edge_labels"], hidden=hidden, layers=layers, **kw)
    return RelationalGNN(encoding.relations, hidden=hidden, layers=layers, **kw)


def edges_of(batch):
    """Return {(source, target): tuple of label ids} of an encoded batch."""
    out = {}
    for (u, v), row in zip(batch["edge_index"].T.tolist(), batch["edge_features"]):
        out[(u, v)] = tuple(np.flatnonzero(row).tolist())
    return out


# --- (a) literal expectations on a hand-made state -------------------------------------------

HAND = PredicateSignature((("at", 2), ("free", 0), ("on", 2), ("red", 1), ("type:ball", 1)))


def hand_states():
    s = HAND
    state = atoms(s, ("on", 0, 1), ("at", 0, 1), ("on", 2, 2), ("free",), ("red", 1), ("type:ball", 0), ("type:ball", 2))
    goal = atoms(s, ("on", 1, 2), ("red", 2))
    negative = atoms(s, ("at", 2, 0))
    first = StateInput(state, goal, 3, negative)
    # Second state: no ``free``, two objects, goal atom on(0,1) already holds.
    second = StateInput(atoms(s, ("on", 0, 1), ("type:ball", 1)), atoms(s, ("on", 0, 1)), 2)
    return first, second


def test_schema_names_and_registry():
    encoding = PloiEncoding(HAND)
    assert ENCODINGS["ploi"] is PloiEncoding
    assert isinstance(make_encoding("ploi", HAND), PloiEncoding)
    assert encoding.input_names() == [
        "node_graph", "readout_nodes", "readout_graph", "graph_index", "node_features", "edge_index", "edge_features"
    ]
    schema = encoding.schema()
    assert schema["feature_names"] == [
        "red", "type:ball", "red@goal", "red@goal-negative", "free", "free@goal", "free@goal-negative"
    ]
    assert schema["label_names"] == [
        "at", "on", "at@goal", "on@goal", "at@goal-negative", "on@goal-negative",
        "at^-1", "on^-1", "at@goal^-1", "on@goal^-1", "at@goal-negative^-1", "on@goal-negative^-1",
    ]
    assert schema["node_features"] == 7 and schema["edge_labels"] == 12
    assert encoding.config()["encoding"] == "ploi"


def test_hand_made_state_literal():
    batch = PloiEncoding(HAND).encode(list(hand_states()))
    assert batch["node_graph"].tolist() == [0, 0, 0, 1, 1]
    assert batch["readout_nodes"].tolist() == [0, 1, 2, 3, 4]
    assert batch["readout_graph"].tolist() == [0, 0, 0, 1, 1]
    assert batch["graph_index"].tolist() == [0, 1]
    for key in ("node_graph", "readout_nodes", "readout_graph", "graph_index", "edge_index"):
        assert batch[key].dtype == np.int64
    assert batch["node_features"].dtype == np.float32 and batch["edge_features"].dtype == np.float32
    # columns: red, type:ball, red@goal, red@goal-negative, free, free@goal, free@goal-negative
    assert batch["node_features"].tolist() == [
        [0, 1, 0, 0, 1, 0, 0],  # ball, free() on every node of state 0
        [1, 0, 0, 0, 1, 0, 0],  # red
        [0, 1, 1, 0, 1, 0, 0],  # ball, red goal
        [0, 0, 0, 0, 0, 0, 0],  # state 1: free() does not hold
        [0, 1, 0, 0, 0, 0, 0],
    ]
    # labels: 0 at, 1 on, 2 at@goal, 3 on@goal, 4 at@goal-negative, 5 on@goal-negative, +6 inverse
    assert edges_of(batch) == {
        (0, 1): (0, 1),  # at(0,1) and on(0,1) merged into one edge
        (1, 0): (6, 7),  # their inverses
        (0, 2): (10,),  # inverse of the negative goal at(2,0)
        (2, 0): (4,),
        (1, 2): (3,),  # goal on(1,2)
        (2, 1): (9,),
        (2, 2): (1, 7),  # self-loop on(2,2): on and on^-1
        (3, 4): (1, 3),  # state 1 (offset 3): on(0,1) holds and is a goal
        (4, 3): (7, 9),
    }
    src, dst = batch["edge_index"]
    assert (np.diff(src * 5 + dst) > 0).all(), "edges sorted by (source, target), no duplicates"


def test_goal_mode_achieved():
    encoding = PloiEncoding(HAND, goal_mode="achieved")
    names = encoding.schema()["label_names"]
    batch = encoding.encode([hand_states()[1]])
    edges = {k: [names[i] for i in v] for k, v in edges_of(batch).items()}
    assert edges == {(0, 1): ["on", "on@goal-achieved"], (1, 0): ["on^-1", "on@goal-achieved^-1"]}
    assert "red@goal-open" in encoding.schema()["feature_names"]


def test_empty_batch_and_state_without_atoms():
    encoding = PloiEncoding(HAND)
    empty = encoding.encode([])
    assert empty["node_features"].shape == (0, 7) and empty["edge_index"].shape == (2, 0)
    assert empty["edge_features"].shape == (0, 12) and empty["graph_index"].shape == (0,)
    lone = encoding.encode([StateInput(atoms(HAND), atoms(HAND), 2)])
    assert lone["node_features"].shape == (2, 7) and lone["edge_index"].shape == (2, 0)
    values = PloiGNN(7, 12, hidden=8, layers=2)(*tensors(encoding, [StateInput(atoms(HAND), atoms(HAND), 2)]))
    assert values.shape == (1,) and torch.isfinite(values).all()


# --- (b), (c) batching and permutation invariance on Blocksworld ------------------------------


@pytest.fixture(scope="module")
def blocksworld():
    tasks = [load_task(example("blocksworld"), example("blocksworld", p)) for p in ("p03.pddl", "p04.pddl")]
    states = []
    for task in tasks:
        converter = StateAtoms(task)
        init = task.initial_state()
        for state in [init] + [succ for _, succ, _ in successors(init)]:
            states.append(StateInput(converter.of(state), converter.goal, task.num_objects, converter.negative_goal))
    return tasks[0].signature, states


def test_blocksworld_shapes(blocksworld):
    signature, states = blocksworld
    encoding = PloiEncoding(signature)
    schema = encoding.schema()
    # clear, holding, ontable, 3 unary goal + 3 negative-goal copies, handempty (+2 copies);
    # the bundled Blocksworld is untyped (the IPC-2000 signature), so no type:block column
    assert schema["node_features"] == 12 and schema["edge_labels"] == 6
    batch = encoding.encode([states[0]])  # p03: on(c,a); goal on(a,b), on(b,c)
    assert batch["node_features"].shape == (3, 12)
    assert batch["edge_index"].shape == (2, 6) and batch["edge_features"].shape == (6, 6)
    handempty = schema["feature_names"].index("handempty")
    assert (batch["node_features"][:, handempty] == 1).all()
    assert batch["edge_features"].sum() == 6  # 3 atoms, each with a forward and an inverse label
    values = PloiGNN(12, 6, hidden=8, layers=3)(*tensors(encoding, [states[0]]))
    assert values.shape == (1,) and torch.isfinite(values).all()


def test_batch_equals_one_by_one(blocksworld):
    signature, states = blocksworld
    encoding = PloiEncoding(signature)
    torch.manual_seed(0)
    model = model_for(encoding, hidden=8, layers=3)
    with torch.no_grad():
        together = model(*tensors(encoding, states))
        alone = torch.cat([model(*tensors(encoding, [s])) for s in states])
    assert together.shape == (len(states),)
    torch.testing.assert_close(together, alone, rtol=1e-5, atol=1e-5)


def rename(state: StateInput, perm: np.ndarray) -> StateInput:
    def mapped(a: Atoms | None):
        if a is None:
            return None
        return Atoms(a.pred.copy(), np.where(a.args >= 0, perm[np.maximum(a.args, 0)], -1).astype(np.int32))

    return StateInput(mapped(state.atoms), mapped(state.goal), state.num_objects, mapped(state.negative_goal))


def test_permutation_invariance(blocksworld):
    signature, states = blocksworld
    encoding = PloiEncoding(signature)
    torch.manual_seed(1)
    schema = encoding.schema()
    model = PloiGNN(schema["node_features"], schema["edge_labels"], hidden=8, layers=3)
    rng = np.random.default_rng(0)
    for state in (states[0], states[-1]):
        perm = rng.permutation(state.num_objects)
        renamed = rename(state, perm)
        a, b = encoding.encode([state]), encoding.encode([renamed])
        # Same graph up to renaming: features move with their node, edges with their endpoints.
        np.testing.assert_array_equal(b["node_features"][perm], a["node_features"])
        moved = {(int(perm[u]), int(perm[v])): lab for (u, v), lab in edges_of(a).items()}
        assert moved == edges_of(b)
        with torch.no_grad():
            torch.testing.assert_close(model(*tensors(encoding, [state])), model(*tensors(encoding, [renamed])),
                                       rtol=1e-5, atol=1e-5)


# --- (d) Chen's counterexample: PLOI separates, R-GNN cannot -----------------------------------

CHEN = PredicateSignature((("q", 2),))


def chen_instances():
    goal = atoms(CHEN, ("q", 0, 1), ("q", 1, 0))
    first = StateInput(atoms(CHEN, ("q", 0, 0), ("q", 1, 1)), goal, 2)  # V* = 2
    second = StateInput(atoms(CHEN, ("q", 0, 1), ("q", 1, 0)), goal, 2)  # V* = 0: goal holds
    return [first, second]


def relative_differences(encoding, seeds=20):
    inputs = tensors(encoding, chen_instances())
    out = []
    for seed in range(seeds):
        torch.manual_seed(seed)
        with torch.no_grad():
            o1, o2 = model_for(encoding, hidden=16, layers=3)(*inputs).tolist()
        out.append(abs(o1 - o2) / max(abs(o1), abs(o2), 1e-12))
    return np.array(out)


def train(encoding, steps=300, seed=0):
    torch.manual_seed(seed)
    model = model_for(encoding, hidden=16, layers=2)
    inputs = tensors(encoding, chen_instances())
    target = torch.tensor([2.0, 0.0])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(*inputs) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        return (model(*inputs) - target).abs()


def test_chen_counterexample_graphs_differ_only_by_merged_edges():
    batch = PloiEncoding(CHEN).encode(chen_instances())
    # labels: 0 q, 1 q@goal, 2 q@goal-negative, 3 q^-1, 4 q@goal^-1, 5 q@goal-negative^-1
    assert edges_of(batch) == {
        (0, 0): (0, 3), (1, 1): (0, 3), (0, 1): (1, 4), (1, 0): (1, 4),
        (2, 3): (0, 1, 3, 4), (3, 2): (0, 1, 3, 4),
    }


def test_chen_counterexample_random_weights():
    ploi = relative_differences(PloiEncoding(CHEN))
    rgnn = relative_differences(RGNNEncoding(CHEN))
    assert (ploi > 0.01).sum() >= 15, ploi
    assert (rgnn < 1e-4).all(), rgnn


def test_chen_counterexample_training():
    ploi = train(PloiEncoding(CHEN))
    assert (ploi < 0.1).all(), ploi
    rgnn = train(RGNNEncoding(CHEN))
    assert rgnn.max() >= 0.9, rgnn  # it cannot tell the states apart: best is 1 for both


# --- (e) higher arity ------------------------------------------------------------------------

TERNARY = PredicateSignature((("between", 3), ("p", 1)))


def test_higher_arity_refused_by_default():
    with pytest.raises(ValueError, match="between/3") as info:
        PloiEncoding(TERNARY)
    assert "decompose_higher_arity" in str(info.value)


def test_higher_arity_decomposed():
    encoding = PloiEncoding(TERNARY, decompose_higher_arity=True)
    names = encoding.schema()["label_names"]
    assert names[:3] == ["between#1#2", "between#1#3", "between#2#3"]
    assert names[3:6] == ["between#1#2@goal", "between#1#3@goal", "between#2#3@goal"]
    assert "between#1#3^-1" in names and len(names) == 18
    assert encoding.config()["decompose_higher_arity"] is True
    state = StateInput(atoms(TERNARY, ("between", 0, 1, 2), ("p", 1)), atoms(TERNARY, ("between", 2, 1, 0)), 3)
    batch = encoding.encode([state])
    edges = {k: sorted(names[i] for i in v) for k, v in edges_of(batch).items()}
    assert edges == {
        (0, 1): ["between#1#2", "between#2#3@goal^-1"],
        (1, 0): ["between#1#2^-1", "between#2#3@goal"],
        (0, 2): ["between#1#3", "between#1#3@goal^-1"],
        (2, 0): ["between#1#3@goal", "between#1#3^-1"],
        (1, 2): ["between#1#2@goal^-1", "between#2#3"],
        (2, 1): ["between#1#2@goal", "between#2#3^-1"],
    }
    assert batch["node_features"][:, encoding.schema()["feature_names"].index("p")].tolist() == [0, 1, 0]


# --- ONNX: tensors-only forward exports and runs in onnxruntime with the same values ----------


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy exporter; dynamo needs onnxscript
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_onnx_round_trip(tmp_path):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    encoding = PloiEncoding(HAND)
    states = list(hand_states())
    torch.manual_seed(0)
    model = model_for(encoding, hidden=8, layers=2).eval()
    names = encoding.input_names()
    axes = {"node_graph": {0: "N"}, "readout_nodes": {0: "R"}, "readout_graph": {0: "R"}, "graph_index": {0: "B"},
            "node_features": {0: "N"}, "edge_index": {1: "E"}, "edge_features": {0: "E"}}
    path = tmp_path / "ploi.onnx"
    torch.onnx.export(model, tuple(tensors(encoding, states)), str(path), input_names=names,
                      output_names=["value"], dynamic_axes=axes, dynamo=False, opset_version=18)
    session = ort.InferenceSession(str(path))
    assert [i.name for i in session.get_inputs()] == names
    for batch in (states, states[:1], states[1:]):
        arrays = encoding.encode(batch)
        (values,) = session.run(None, {name: arrays[name] for name in names})
        with torch.no_grad():
            expected = model(*tensors(encoding, batch)).numpy()
        np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-5)

"""Check the R-GNN[t] encoding: A_0, OBJ, R_t and Δ_t, readout, batching, the model on it, and
Chen's counterexample that the plain R-GNN cannot tell apart."""

from __future__ import annotations

import functools
import numpy as np
import pytest
import torch

from up_gnnplan.data import example
from up_gnnplan.encodings import ENCODINGS, make_encoding
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.rgnn import RGNNEncoding
from up_gnnplan.encodings.rgnn_t import RGNNTEncoding
from up_gnnplan.models.rgnn import RelationalGNN
from up_gnnplan.problems import load_task
from up_gnnplan.states import Atoms, PredicateSignature, StateAtoms, successors

torch.set_num_threads(1)

# clear/1, handempty/0, on/2, p/3, type:block/1 (sorted by name, as in the signature convention)
SIG = PredicateSignature((("clear", 1), ("handempty", 0), ("on", 2), ("p", 3), ("type:block", 1)))
CLEAR, HANDEMPTY, ON, P3, BLOCK = range(5)


def atoms(rows, width=3) -> Atoms:
    """Return Atoms from ``[(pred, [objects]), ...]``."""
    pred = np.array([p for p, _ in rows], dtype=np.int32)
    args = np.full((len(rows), width), -1, dtype=np.int32)
    for i, (_, objs) in enumerate(rows):
        args[i, : len(objs)] = objs
    return Atoms(pred, args)


def rows(array) -> list[tuple]:
    return sorted(map(tuple, np.asarray(array).tolist()))


def relation(out, enc, name) -> np.ndarray:
    return out[f"rel_{[n for n, _ in enc.relations].index(name)}"]


def random_state(rng, n, signature=SIG, count=6) -> StateInput:
    """Return a random state over ``n`` objects (any predicates of ``signature``) and goal."""
    arities = signature.arities
    width = max(signature.max_arity, 1)

    def sample(k, allowed):
        allowed = [p for p in allowed if n > 0 or arities[p] == 0]  # no objects: nullary atoms only
        if not allowed:
            return atoms([], width)
        out = []
        for _ in range(k):
            p = int(rng.choice(allowed))
            out.append((p, rng.integers(0, n, size=arities[p]).tolist()))
        return atoms(out, width)

    goal_preds = [i for i, (name, _) in enumerate(signature.predicates) if not name.startswith("type:")]
    return StateInput(sample(count, range(len(arities))), sample(2, goal_preds), n)


def brute_r1(state: StateInput) -> set[tuple[int, int]]:
    """R_1 by loops: objects sharing a state or goal atom, plus every <o,o> (OBJ atoms)."""
    r = {(o, o) for o in range(state.num_objects)}
    for part in (state.atoms, state.goal):
        for row in part.args.tolist():
            objs = [o for o in row if o >= 0]
            r |= {(a, b) for a in objs for b in objs}
    return r


def brute_compose(r, n) -> set[tuple[int, int]]:
    return {(o, o2) for o in range(n) for o1 in range(n) for o2 in range(n) if (o, o1) in r and (o1, o2) in r}


def brute_delta(r, n) -> list[tuple[int, int, int]]:
    """Δ by a triple loop over o, o', o'': (<o,o'>, <o',o''>, <o,o''>) as pair node ids."""
    return sorted(
        (o * n + o1, o1 * n + o2, o * n + o2)
        for o in range(n)
        for o1 in range(n)
        for o2 in range(n)
        if (o, o1) in r and (o1, o2) in r
    )


def tensors(enc, out):
    return [torch.as_tensor(out[name]) for name in enc.input_names()]


@functools.lru_cache(maxsize=None)
def _blocksworld(problem):
    task = load_task(example("blocksworld"), example("blocksworld", problem))
    return task, StateAtoms(task)


def blocksworld_states(problem="p03.pddl", limit=6):
    """Return StateInputs of the bundled Blocksworld problem: the initial state and successors."""
    task, converter = _blocksworld(problem)
    state = task.initial_state()
    found = [state]
    for _, successor, _ in successors(state):
        found.append(successor)
        for _, second, _ in successors(successor):
            found.append(second)
    inputs = [StateInput(converter.of(s), converter.goal, task.num_objects, converter.negative_goal)
              for s in found[:limit]]
    return task, inputs


# --- construction -------------------------------------------------------------------------


def test_registered_config_schema_and_bad_t():
    assert ENCODINGS["rgnn_t"] is RGNNTEncoding
    enc = make_encoding("rgnn_t", SIG, t=2)
    assert enc.config()["t"] == 2 and enc.config()["encoding"] == "rgnn_t"
    assert enc.schema() == {"relations": [[n, a] for n, a in enc.relations]}
    assert enc.relations == [
        ("clear", 1), ("handempty", 1), ("on", 4), ("p", 9), ("type:block", 1),
        ("clear@goal", 1), ("handempty@goal", 1), ("on@goal", 4), ("p@goal", 9),
        ("clear@goal-negative", 1), ("handempty@goal-negative", 1), ("on@goal-negative", 4),
        ("p@goal-negative", 9), ("OBJ", 1), ("compose", 3),
    ]
    assert [n for n, _ in RGNNTEncoding(SIG, t=0).relations][-1] == "OBJ"  # no compose in A_0
    assert RGNNTEncoding(SIG).t == 1
    for bad in (-1, -3):
        with pytest.raises(ValueError):
            RGNNTEncoding(SIG, t=bad)
    with pytest.raises(ValueError):
        RGNNTEncoding(SIG, t=1.5)


# --- (a) A_0 on a hand-made state ---------------------------------------------------------


def test_a0_hand_made_state():
    # 3 objects; pair <o,o'> is node 3*o + o'.
    state = StateInput(
        atoms([(ON, [0, 1]), (CLEAR, [0]), (HANDEMPTY, []), (P3, [2, 0, 1]), (BLOCK, [2])]),
        atoms([(ON, [1, 2]), (HANDEMPTY, [])]),
        3,
        negative_goal=atoms([(CLEAR, [2])]),
    )
    enc = RGNNTEncoding(SIG, t=0)
    out = enc.encode([state])
    expected = {
        "clear": [(0,)],
        "handempty": [(0,), (4,), (8,)],  # nullary: lifted to every object, then <o,o>
        "on": [(0, 1, 3, 4)],  # on(0,1): <0,0> <0,1> <1,0> <1,1>
        "p": [(8, 6, 7, 2, 0, 1, 5, 3, 4)],  # p(2,0,1): <2,2> <2,0> <2,1> <0,2> <0,0> <0,1> <1,2> <1,0> <1,1>
        "type:block": [(8,)],
        "clear@goal": [],
        "handempty@goal": [(0,), (4,), (8,)],
        "on@goal": [(4, 5, 7, 8)],  # on(1,2): <1,1> <1,2> <2,1> <2,2>
        "p@goal": [],
        "clear@goal-negative": [(8,)],
        "handempty@goal-negative": [],
        "on@goal-negative": [],
        "p@goal-negative": [],
        "OBJ": [(0,), (4,), (8,)],
    }
    assert [n for n, _ in enc.relations] == list(expected)
    for (name, arity), i in zip(enc.relations, range(len(enc.relations))):
        got = out[f"rel_{i}"]
        assert got.dtype == np.int64 and got.shape == (len(expected[name]), arity), name
        assert rows(got) == expected[name], name
    assert out["node_graph"].tolist() == [0] * 9
    assert out["graph_index"].tolist() == [0]
    assert enc.input_names() == ["node_graph", "readout_nodes", "readout_graph", "graph_index"] + [
        f"rel_{i}" for i in range(len(enc.relations))
    ]
    # Δ_1 of this state: R_1 = every pair (objects 0,1,2 share p(2,0,1)), so all 27 triples.
    delta = relation(RGNNTEncoding(SIG, t=1).encode([state]), RGNNTEncoding(SIG, t=1), "compose")
    assert rows(delta) == brute_delta({(a, b) for a in range(3) for b in range(3)}, 3)
    assert len(delta) == 27


def test_a0_goal_mode_achieved():
    state = StateInput(atoms([(ON, [0, 1])]), atoms([(ON, [0, 1]), (ON, [1, 0])]), 2)
    enc = RGNNTEncoding(SIG, goal_mode="achieved", t=0)
    out = enc.encode([state])
    assert rows(relation(out, enc, "on@goal-achieved")) == [(0, 1, 2, 3)]
    assert rows(relation(out, enc, "on@goal-open")) == [(3, 2, 1, 0)]


# --- (b), (c) Δ_t against brute force -------------------------------------------------------


def test_delta_1_and_2_match_brute_force_on_random_states():
    rng = np.random.default_rng(0)
    enc1, enc2, enc3 = (RGNNTEncoding(SIG, t=t) for t in (1, 2, 3))
    for trial in range(40):
        n = int(rng.integers(1, 7))
        state = random_state(rng, n, count=int(rng.integers(0, 5)))
        r1 = brute_r1(state)
        r2 = brute_compose(r1, n)
        r3 = brute_compose(r2, n)
        assert r2 >= r1 and r3 >= r2
        d1 = relation(enc1.encode([state]), enc1, "compose")
        d2 = relation(enc2.encode([state]), enc2, "compose")
        d3 = relation(enc3.encode([state]), enc3, "compose")
        assert rows(d1) == brute_delta(r1, n), trial
        assert rows(d2) == brute_delta(r2, n), trial
        assert rows(d3) == brute_delta(r3, n), trial
        assert set(rows(d2)) >= set(rows(d1))
        # R_t itself, read back from the encoding: the first arguments <o,o'> of the compose
        # atoms (every pair of R_t is one, composed with the reflexive <o',o'>).
        assert {divmod(int(v), n) for v in d1[:, 0]} == r1
        assert {divmod(int(v), n) for v in d2[:, 0]} == r2
        # the non-compose relations do not depend on t
        out0, out2 = RGNNTEncoding(SIG, t=0).encode([state]), enc2.encode([state])
        for i in range(len(enc1.relations) - 1):
            assert np.array_equal(out0[f"rel_{i}"], out2[f"rel_{i}"])


def test_delta_matches_brute_force_on_blocksworld():
    task, states = blocksworld_states()
    encs = [RGNNTEncoding(task.signature, t=t) for t in (1, 2)]
    for state in states:
        n = state.num_objects
        r1 = brute_r1(state)
        r2 = brute_compose(r1, n)
        assert r2 >= r1
        assert rows(relation(encs[0].encode([state]), encs[0], "compose")) == brute_delta(r1, n)
        assert rows(relation(encs[1].encode([state]), encs[1], "compose")) == brute_delta(r2, n)


# --- (d) readout ----------------------------------------------------------------------------


def test_readout_nodes_are_the_single_object_pairs():
    task, bw = blocksworld_states(limit=3)
    rng = np.random.default_rng(1)
    states = bw + [random_state(rng, n, signature=task.signature) for n in (1, 0, 4)]
    enc = RGNNTEncoding(task.signature, t=1)
    out = enc.encode(states)
    offset, nodes, graphs = 0, [], []
    for b, state in enumerate(states):
        n = state.num_objects
        nodes += [offset + o * n + o for o in range(n)]
        graphs += [b] * n
        offset += n * n
    assert out["readout_nodes"].tolist() == nodes
    assert out["readout_graph"].tolist() == graphs
    assert rows(relation(out, enc, "OBJ")) == [(v,) for v in nodes]
    assert len(out["node_graph"]) == offset
    assert out["node_graph"].tolist() == sum(([b] * s.num_objects ** 2 for b, s in enumerate(states)), [])


# --- (e) batches ----------------------------------------------------------------------------


@pytest.mark.parametrize("t", [0, 1, 2])
def test_batch_equals_single_states_with_offsets(t):
    task, states = blocksworld_states(limit=4)
    rng = np.random.default_rng(2)
    states = states + [random_state(rng, n, signature=task.signature) for n in (0, 1, 5)]
    enc = RGNNTEncoding(task.signature, t=t)
    batch = enc.encode(states)
    singles = [enc.encode([s]) for s in states]
    offsets = np.cumsum([0] + [s.num_objects ** 2 for s in states])
    for i in range(len(enc.relations)):
        expected = np.concatenate([single[f"rel_{i}"] + offsets[b] for b, single in enumerate(singles)])
        assert np.array_equal(batch[f"rel_{i}"], expected.reshape(-1, enc.relations[i][1])), enc.relations[i]
    def joined(name, shift):
        return np.concatenate([single[name] + shift[b] for b, single in enumerate(singles)])

    assert np.array_equal(batch["readout_nodes"], joined("readout_nodes", offsets))
    assert np.array_equal(batch["readout_graph"], joined("readout_graph", range(len(states))))
    assert np.array_equal(batch["node_graph"], joined("node_graph", range(len(states))))
    assert batch["graph_index"].tolist() == list(range(len(states)))
    empty = enc.encode([])
    assert all(len(empty[name]) == 0 for name in enc.input_names())


# --- (f) the model on R-GNN[t] inputs -------------------------------------------------------


def permuted(state: StateInput, perm: np.ndarray) -> StateInput:
    def renumber(a):
        if a is None:
            return None
        return Atoms(a.pred, np.where(a.args >= 0, perm[np.maximum(a.args, 0)], -1).astype(np.int32))

    return StateInput(renumber(state.atoms), renumber(state.goal), state.num_objects, renumber(state.negative_goal))


@pytest.mark.parametrize("t", [0, 1, 2])
def test_model_batch_and_permutation_invariance(t):
    task, states = blocksworld_states(limit=4)
    rng = np.random.default_rng(3)
    states = states + [random_state(rng, 4, signature=task.signature)]
    enc = RGNNTEncoding(task.signature, t=t)
    torch.manual_seed(t)
    model = RelationalGNN(enc.relations, hidden=8, layers=3)
    with torch.no_grad():
        together = model(*tensors(enc, enc.encode(states)))
        alone = torch.cat([model(*tensors(enc, enc.encode([s]))) for s in states])
        shuffled = torch.cat([
            model(*tensors(enc, enc.encode([permuted(s, rng.permutation(s.num_objects))]))) for s in states
        ])
    assert together.shape == (len(states),)
    torch.testing.assert_close(together, alone, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(shuffled, alone, rtol=1e-4, atol=1e-4)


# --- (g) Chen's counterexample --------------------------------------------------------------

CHEN = PredicateSignature((("q", 2),))


def chen_instances():
    def q(pairs):
        return Atoms(np.zeros(len(pairs), np.int32), np.array(pairs, np.int32))

    goal = q([[0, 1], [1, 0]])  # objects a = 0, b = 1
    return StateInput(q([[0, 0], [1, 1]]), goal, 2), StateInput(q([[0, 1], [1, 0]]), goal, 2)


def relative_differences(enc, hidden, layers, seeds=range(20)):
    inputs = tensors(enc, enc.encode(list(chen_instances())))
    out = []
    for seed in seeds:
        torch.manual_seed(seed)
        model = RelationalGNN(enc.relations, hidden=hidden, layers=layers)
        with torch.no_grad():
            v1, v2 = model(*inputs).tolist()
        out.append(abs(v1 - v2) / max(abs(v1), abs(v2), 1e-12))
    return np.array(out)


def test_plain_rgnn_cannot_tell_chen_instances_apart():
    diffs = relative_differences(RGNNEncoding(CHEN), hidden=32, layers=3)
    assert (diffs < 1e-4).all(), diffs


@pytest.mark.parametrize("t", [0, 1])
def test_rgnn_t_tells_chen_instances_apart(t):
    diffs = relative_differences(RGNNTEncoding(CHEN, t=t), hidden=32, layers=3)
    assert (diffs > 0.01).sum() >= 15, diffs
    assert (diffs > 1e-4).all(), diffs


@pytest.mark.parametrize("t", [0, 1])
def test_rgnn_t_learns_chen_values(t):
    enc = RGNNTEncoding(CHEN, t=t)
    inputs = tensors(enc, enc.encode(list(chen_instances())))
    target = torch.tensor([2.0, 0.0])  # V*(I1) = 2, V*(I2) = 0
    torch.manual_seed(0)
    model = RelationalGNN(enc.relations, hidden=16, layers=3)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(600):
        optimizer.zero_grad()
        error = model(*inputs) - target
        if error.abs().max() < 0.05:
            break
        error.abs().mean().backward()
        optimizer.step()
    with torch.no_grad():
        values = model(*inputs)
    assert (values - target).abs().max() < 0.1, values

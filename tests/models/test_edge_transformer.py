"""The Edge Transformer (``--arch edge_transformer``): its pair features, its size limit, and what
it sees that an R-GNN cannot.

The registry-wide checks (batches, renamed objects on real states, ONNX export and parity, a
trained model solving with the engine) are in ``test_models.py``; these add padding of states
of different sizes, the refusals, and a pair of states only a model beyond C2 tells apart.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from up_gnnplan.encodings import make_encoding
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.edge_transformer import MAX_OBJECTS, TooManyObjectsError
from up_gnnplan.errors import GnnplanError
from up_gnnplan.limits import MemoryLimitReached
from up_gnnplan.models import ARCHITECTURES
from up_gnnplan.states import Atoms, PredicateSignature

torch.set_num_threads(1)

# edge(a, b) binary, flag nullary, mark(a) unary.
SIGNATURE = PredicateSignature((("edge", 2), ("flag", 0), ("mark", 1)))
EDGE, FLAG, MARK = 0, 1, 2


def atoms(*facts) -> Atoms:
    """Return atoms from ``(predicate, arg, ...)`` tuples."""
    pred = np.array([f[0] for f in facts], dtype=np.int32)
    args = np.full((len(facts), 2), -1, dtype=np.int32)
    for row, fact in enumerate(facts):
        args[row, : len(fact) - 1] = fact[1:]
    return Atoms(pred, args)


def state(num_objects: int, facts, goal=()) -> StateInput:
    return StateInput(atoms(*facts), atoms(*goal), num_objects)


def model(key: str = "edge_transformer", seed: int = 0, **params):
    encoding = make_encoding(ARCHITECTURES[key].encoding, SIGNATURE)
    torch.manual_seed(seed)
    options = {"hidden": 16, "layers": 2, **params}
    if key == "edge_transformer":
        options.setdefault("heads", 4)
    return encoding, ARCHITECTURES[key].build(encoding, **options).eval()


def values(encoding, net, states) -> np.ndarray:
    feed = encoding.encode(states)
    with torch.no_grad():
        return net(*(torch.from_numpy(feed[name]) for name in encoding.input_names())).numpy()


def features(encoding, feed, b: int, n: int) -> dict[tuple[int, int], set[str]]:
    """Return the feature names of each pair ``(o, o')`` of state ``b`` of an encoded batch."""
    out: dict[tuple[int, int], set[str]] = {}
    for slot, column in feed["pair_atoms"].tolist():
        state_of, rest = divmod(slot, n * n)
        if state_of == b:
            out.setdefault(divmod(rest, n), set()).add(encoding.feature_names[column])
    return out


RANDOM = np.random.default_rng(7)


def random_state(num_objects: int) -> StateInput:
    """Return a state with random edges, marks and goal atoms (and ``flag`` half the time)."""
    pairs = RANDOM.integers(0, num_objects, size=(2 * num_objects, 2))
    facts = [(EDGE, int(a), int(b)) for a, b in pairs] + [(MARK, int(o)) for o in RANDOM.integers(0, num_objects, 2)]
    if RANDOM.random() < 0.5:
        facts.append((FLAG,))
    goal = [(EDGE, int(a), int(b)) for a, b in pairs[:2]] + [(FLAG,)]
    return state(num_objects, facts, goal)


# --- the encoding --------------------------------------------------------------------------------


def test_atoms_become_features_of_pairs():
    """Binary p(a, b) → ⟨a, b⟩, unary p(a) → ⟨a, a⟩, nullary → every pair; goal atoms are
    separate goal features; a state in a padded batch keeps its own pairs."""
    encoding = make_encoding("edge_transformer", SIGNATURE)
    small = state(2, [(EDGE, 0, 1), (MARK, 1), (FLAG,)], goal=[(EDGE, 1, 0), (MARK, 0)])
    large = state(3, [(EDGE, 2, 0)])
    feed = encoding.encode([small, large])
    n = 3  # padded to the larger state
    assert feed["node_graph"].tolist() == [0, 0, 0, 1, 1, 1]
    assert feed["slot_mask"].tolist() == [1, 1, 0, 1, 1, 1]
    assert feed["readout_nodes"].tolist() == [0, 4, 9, 13, 17] and feed["readout_graph"].tolist() == [0, 0, 1, 1, 1]
    first = features(encoding, feed, 0, n)
    assert first == {(0, 0): {"flag", "mark@goal"}, (0, 1): {"edge", "flag"}, (1, 0): {"flag", "edge@goal"},
                     (1, 1): {"mark", "flag"}}
    assert features(encoding, feed, 1, n) == {(2, 0): {"edge"}}


def test_repeated_atoms_count_once():
    encoding = make_encoding("edge_transformer", SIGNATURE)
    feed = encoding.encode([state(2, [(EDGE, 0, 1), (EDGE, 0, 1), (MARK, 0)], goal=[(MARK, 0)])])
    assert len(feed["pair_atoms"]) == len({tuple(row) for row in feed["pair_atoms"].tolist()}) == 3


def test_predicates_of_arity_three_are_refused():
    ternary = PredicateSignature((("adjacent", 3), ("at", 2)))
    with pytest.raises(ValueError, match=r"adjacent/3.*rgnn_t"):
        make_encoding("edge_transformer", ternary)


def test_states_beyond_the_object_limit_are_refused_before_anything_is_allocated():
    encoding = make_encoding("edge_transformer", SIGNATURE)
    encoding.encode([state(MAX_OBJECTS, [(EDGE, 0, MAX_OBJECTS - 1)])])
    too_large = state(MAX_OBJECTS + 1, [(EDGE, 0, MAX_OBJECTS)])
    with pytest.raises(TooManyObjectsError) as caught:
        encoding.encode([state(3, []), too_large])
    message = str(caught.value)
    assert f"a state of {MAX_OBJECTS + 1} objects is more than the {MAX_OBJECTS} the Edge Transformer takes" in message
    # A solve treats it as its memory limit (MEMOUT with this message); the CLI as any GnnplanError.
    assert isinstance(caught.value, MemoryLimitReached) and isinstance(caught.value, GnnplanError)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy TorchScript exporter
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_engine_ends_a_solve_beyond_the_limit_with_memout_and_says_why(tmp_path):
    """An exported model met with a problem of MAX_OBJECTS + 1 blocks: the solve stops at its
    first evaluation, before any cubic tensor exists, with UP's MEMOUT and the limit named."""
    pytest.importorskip("onnxruntime")
    from unified_planning.engines import PlanGenerationResultStatus
    from unified_planning.environment import get_environment
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import OneshotPlanner

    import up_gnnplan  # noqa: F401  (registers the engine)
    from up_gnnplan.data import example
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.problems import load_task

    signature = load_task(example("blocksworld"), example("blocksworld", "p03.pddl")).signature
    encoding = make_encoding("edge_transformer", signature)
    torch.manual_seed(0)
    net = ARCHITECTURES["edge_transformer"].build(encoding, hidden=8, layers=1, heads=2, share_weights=True)
    path = export_onnx(net, encoding, tmp_path / "et.onnx", domain="blocksworld",
                       train_config={"architecture": "edge_transformer"}, training_record={})
    blocks = [f"b{i}" for i in range(MAX_OBJECTS + 1)]
    problem_file = tmp_path / "large.pddl"
    problem_file.write_text(f"(define (problem large) (:domain blocksworld) (:objects {' '.join(blocks)}) (:init (handempty) "
                            + " ".join(f"(ontable {b}) (clear {b})" for b in blocks) + ") (:goal (on b0 b1)))")
    problem = PDDLReader().parse_problem(str(example("blocksworld")), str(problem_file))
    get_environment().credits_stream = None
    with OneshotPlanner(name="gnnplan", params={"model": str(path), "mode": "policy"}) as planner:
        result = planner.solve(problem, timeout=60)
    assert result.status == PlanGenerationResultStatus.MEMOUT
    assert any(f"a state of {MAX_OBJECTS + 1} objects" in m.message for m in result.log_messages), result.log_messages


# --- the model -----------------------------------------------------------------------------------


def renamed(a: Atoms, perm: np.ndarray) -> Atoms:
    """Return ``a`` with object ``o`` renamed ``perm[o]``."""
    return Atoms(a.pred.copy(), np.where(a.args >= 0, perm[np.maximum(a.args, 0)], -1).astype(np.int32))


def test_renaming_objects_gives_the_same_value():
    encoding, net = model(seed=1)
    for num_objects in (1, 4, 7):
        original = random_state(num_objects)
        perm = RANDOM.permutation(num_objects)
        other = StateInput(renamed(original.atoms, perm), renamed(original.goal, perm), num_objects)
        np.testing.assert_allclose(values(encoding, net, [other]), values(encoding, net, [original]), rtol=1e-5, atol=1e-5)


def test_a_batch_of_states_of_different_sizes_equals_one_by_one():
    """Smaller states are padded to the largest; padding never enters a real state's values."""
    encoding, net = model(seed=2, share_weights=False)
    batch = [random_state(n) for n in (5, 1, 8, 3, 8)]
    together = values(encoding, net, batch)
    alone = np.concatenate([values(encoding, net, [s]) for s in batch])
    assert together.shape == (5,) and np.isfinite(together).all()
    np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-5)


def cycle(num_objects: int, lengths) -> StateInput:
    """Return a state whose ``edge`` atoms are disjoint undirected cycles of the given lengths."""
    facts, start = [], 0
    for length in lengths:
        for i in range(length):
            a, b = start + i, start + (i + 1) % length
            facts += [(EDGE, a, b), (EDGE, b, a)]
        start += length
    assert start == num_objects
    return state(num_objects, facts)


def test_tells_apart_states_that_an_rgnn_cannot():
    """One 6-cycle against two triangles: every object has two neighbours in both, so colour
    refinement (the C2 bound of R-GNNs) gives every object the same colour and the R-GNN the same
    value. Triangles need three variables: in the triangles the two ends of an edge share a
    neighbour, in the 6-cycle never, and triangular attention sees exactly that."""
    hexagon, triangles = cycle(6, [6]), cycle(6, [3, 3])
    encoding, rgnn = model("rgnn", seed=3)
    same = values(encoding, rgnn, [hexagon, triangles])
    assert abs(same[0] - same[1]) < 1e-5
    encoding, transformer = model(seed=3)
    told = values(encoding, transformer, [hexagon, triangles])
    assert abs(told[0] - told[1]) > 1e-3, told


def test_heads_must_divide_the_embedding_size():
    with pytest.raises(ValueError, match="multiple of the number of heads"):
        model(hidden=10, heads=4)

"""Check every architecture of ``up_gnnplan.models.ARCHITECTURES`` on real planning states.

Parametrised over the registry, so a new architecture is tested as soon as it is registered:
batched values equal one-by-one values, values do not depend on how objects are numbered,
R-GNN's fused training path equals its per-relation (export) path, and the ONNX export runs
in onnxruntime with torch's values, also on batches whose relations are empty where the
export example's were not, and the other way round; and every architecture goes the whole
product path: a few training steps, export, parity, and a solve by the engine with the file.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from up_gnnplan.data import example
from up_gnnplan.encodings import make_encoding
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.models import ARCHITECTURES
from up_gnnplan.models.rgnn import AGGREGATIONS, RelationalGNN
from up_gnnplan.problems import load_task
from up_gnnplan.states import Atoms, PredicateSignature, StateAtoms, successors
from up_gnnplan.states.types import DomainTypes

torch.set_num_threads(1)

ARCH_KEYS = sorted(ARCHITECTURES)
DOMAINS = {"blocksworld": "p03.pddl", "gripper": "p01.pddl"}


def states_of(domain: str, problem: str):
    """Return (signature, states): the initial state, its successors and theirs (deduplicated)."""
    task = load_task(example(domain), example(domain, problem))
    _TYPES[task.signature] = task.types
    converter = StateAtoms(task)
    init = task.initial_state()
    seen, frontier, out = {init.get_index()}, [init], [init]
    for _ in range(2):
        nxt = []
        for state in frontier:
            for _, child, _ in successors(state):
                if child.get_index() not in seen:
                    seen.add(child.get_index())
                    nxt.append(child)
        out += nxt
        frontier = nxt
    inputs = [StateInput(converter.of(s), converter.goal, task.num_objects, converter.negative_goal) for s in out]
    return task.signature, inputs


_CACHE: dict[str, tuple] = {}
_TYPES: dict = {}  # the domain's types (DomainTypes) of each signature loaded, for architectures that need them


def types_for(signature) -> dict:
    """Return the types of ``signature``'s domain as JSON; untyped (every parameter ``object``) for hand-made ones."""
    if signature in _TYPES:
        return _TYPES[signature].to_json()
    kinds = [n[len("type:"):] for n in signature.names if n.startswith("type:")]
    return DomainTypes({"object": None, **{k: "object" for k in kinds}},
                       {n: ("object",) * a for n, a in signature.predicates if not n.startswith("type:")}, {}).to_json()


@pytest.fixture(params=sorted(DOMAINS), scope="module")
def domain_states(request):
    if request.param not in _CACHE:
        _CACHE[request.param] = states_of(request.param, DOMAINS[request.param])
    return _CACHE[request.param]


def build(key: str, signature, seed: int = 0, hidden: int = 8, layers: int = 3, **params):
    """Return (encoding, model) of architecture ``key`` with seeded random weights.

    Only the options the architecture takes reach its builder (``Architecture.options``), so
    ``aggregation`` means nothing to a GCN; attention gets two heads.
    """
    architecture = ARCHITECTURES[key]
    encoding = make_encoding(architecture.encoding, signature,
                             **({"types": types_for(signature)} if architecture.needs_types else {}))
    torch.manual_seed(seed)
    defaults = {"hidden": hidden, "layers": layers, "aggregation": "smoothmax", "beta": 8.0, "share_weights": True,
                "dropout": 0.0, "heads": 2}
    chosen = {**defaults, **params}
    model = architecture.build(encoding, **{k: v for k, v in chosen.items() if k in architecture.options})
    return encoding, model.eval()


def takes(key: str, option: str) -> bool:
    return option in ARCHITECTURES[key].options


def tensors(encoding, states):
    batch = encoding.encode(states)
    return [torch.from_numpy(batch[name]) for name in encoding.input_names()]


def values(model, encoding, states) -> torch.Tensor:
    with torch.no_grad():
        return model(*tensors(encoding, states))


def renumbered(state: StateInput, perm: np.ndarray) -> StateInput:
    """Return ``state`` with object ``o`` renamed ``perm[o]`` in its atoms and goals."""

    def mapped(atoms):
        if atoms is None:
            return None
        args = np.where(atoms.args >= 0, perm[np.maximum(atoms.args, 0)], -1).astype(atoms.args.dtype)
        return Atoms(atoms.pred.copy(), args)

    return StateInput(mapped(state.atoms), mapped(state.goal), state.num_objects, mapped(state.negative_goal))


def sparse(state: StateInput, signature) -> StateInput:
    """Return ``state`` without atoms of arity ≥ 2 and without goal: a state with empty relations.

    Every binary relation (state and goal copies) is empty, so the R-GNN inputs of those
    relations have no rows and PLOI graphs have no edges.
    """
    arities = np.array(signature.arities)
    keep = arities[state.atoms.pred] <= 1
    width = state.atoms.args.shape[1]
    empty = Atoms(np.zeros(0, np.int32), np.zeros((0, width), np.int32))
    return StateInput(Atoms(state.atoms.pred[keep], state.atoms.args[keep]), empty, state.num_objects)


def bare(state: StateInput) -> StateInput:
    """Return ``state``'s objects without any atom or goal: graphs of object nodes without edges."""
    empty = Atoms(np.zeros(0, np.int32), np.zeros((0, state.atoms.args.shape[1]), np.int32))
    return StateInput(empty, empty, state.num_objects)


# --- batching and permutations ------------------------------------------------------------------


@pytest.mark.parametrize("key", ARCH_KEYS)
def test_batch_equals_one_by_one(key, domain_states):
    signature, states = domain_states
    encoding, model = build(key, signature)
    together = values(model, encoding, states)
    alone = torch.cat([values(model, encoding, [s]) for s in states])
    assert together.shape == (len(states),) and torch.isfinite(together).all()
    torch.testing.assert_close(together, alone, rtol=1e-5, atol=1e-5)
    # The states differ, so a model that ignored its input would not pass for free.
    assert len(np.unique(np.round(together.numpy(), 5))) > 1


@pytest.mark.parametrize("key", ARCH_KEYS)
def test_permutation_invariance(key, domain_states):
    signature, states = domain_states
    encoding, model = build(key, signature, seed=1)
    rng = np.random.default_rng(0)
    chosen = states[:: max(1, len(states) // 6)]
    renamed = []
    for state in chosen:
        perm = rng.permutation(state.num_objects)
        while len(perm) > 1 and (perm == np.arange(len(perm))).all():
            perm = rng.permutation(state.num_objects)
        renamed.append(renumbered(state, perm))
        assert renamed[-1].num_objects == state.num_objects
    torch.testing.assert_close(values(model, encoding, renamed), values(model, encoding, chosen), rtol=1e-4, atol=1e-4)


# --- R-GNN: training path == per-relation path --------------------------------------------------

_TINY = PredicateSignature((("p", 1), ("q", 2)))
RELATIONAL = [k for k in ARCH_KEYS if isinstance(build(k, _TINY, layers=1)[1], RelationalGNN)]


@pytest.mark.parametrize("share_weights", [True, False], ids=["shared", "per-layer"])
@pytest.mark.parametrize("aggregation", AGGREGATIONS)
@pytest.mark.parametrize("key", RELATIONAL)
def test_training_path_equals_per_relation(key, aggregation, share_weights, domain_states):
    """The training path (packed layout; for smooth max the written-out backward of
    ``PackedLayers``) gives the per-relation path's values and gradients."""
    signature, states = domain_states
    encoding, model = build(key, signature, seed=2, aggregation=aggregation, share_weights=share_weights)
    assert model.per_relation is False
    batch = tensors(encoding, states)
    # Gradients flow through the training path: compare the values with grad on.
    fused = model(*batch)
    model.per_relation = True
    try:
        per_relation = model(*batch)
    finally:
        model.per_relation = False
    assert fused.shape == (len(states),)
    torch.testing.assert_close(fused, per_relation, rtol=1e-5, atol=1e-5)
    # And the gradients agree too.
    grads = []
    for flag in (False, True):
        model.per_relation = flag
        model.zero_grad()
        model(*batch).sum().backward()
        grads.append([p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()])
    model.per_relation = False
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("share_weights", [True, False], ids=["shared", "per-layer"])
def test_written_out_backward_equals_autograd(share_weights):
    """``PackedLayers`` (one autograd node, the chain rule written out) gives the values and
    gradients of ``embed_packed`` run by autograd, on batches with empty relations and without atoms."""
    if "blocksworld" not in _CACHE:
        _CACHE["blocksworld"] = states_of("blocksworld", DOMAINS["blocksworld"])
    signature, states = _CACHE["blocksworld"]
    encoding, model = build("rgnn", signature, seed=4, layers=4, share_weights=share_weights)
    empty_batch = [sparse(states[0], signature), sparse(states[-1], signature)]
    bare_batch = [bare(states[1]), bare(states[-2])]
    for batch in (states, states[:1], states[:2] + empty_batch, bare_batch):
        inputs = tensors(encoding, batch)
        runs = []
        for written_out in (True, False):
            model.written_out = written_out
            assert model._written_out() is written_out
            model.zero_grad()
            out = model(*inputs)
            (out * torch.arange(1.0, len(batch) + 1)).sum().backward()
            runs.append((out.detach(), [p.grad.clone() if p.grad is not None else torch.zeros_like(p)
                                        for p in model.parameters()]))
        model.written_out = True
        torch.testing.assert_close(runs[0][0], runs[1][0], rtol=1e-5, atol=1e-5)
        for a, b in zip(runs[0][1], runs[1][1]):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_exponential_mish_equals_torch():
    """Mish and its derivative in the exponential form (training) equal torch's, far into both tails."""
    from up_gnnplan.models.layers.mlp import mish

    x = torch.cat([torch.linspace(-90.0, 90.0, 721), torch.tensor([-1e4, -30.0, 19.99, 20.0, 20.01, 1e4])])
    x.requires_grad_()
    ours, = torch.autograd.grad(mish(x).sum(), x)
    theirs, = torch.autograd.grad(torch.nn.functional.mish(x).sum(), x)
    torch.testing.assert_close(mish(x), torch.nn.functional.mish(x))
    torch.testing.assert_close(ours, theirs)


def test_relational_architectures_found():
    assert "rgnn" in RELATIONAL


# --- ONNX export round trip ---------------------------------------------------------------------


def dynamic_axes(names):
    axes = {name: {0: f"{name}_0"} for name in names}
    if "edge_index" in axes:
        axes["edge_index"][1] = "edge_index_1"
    axes["value"] = {0: "value_0"}
    return axes


def first_dims(encoding, states) -> dict[str, int]:
    batch = encoding.encode(states)
    return {name: (batch[name].shape[1] if name == "edge_index" else batch[name].shape[0]) for name in encoding.input_names()}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy TorchScript exporter
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("key", ARCH_KEYS)
def test_onnx_round_trip(key, tmp_path):
    """Export on one batch; onnxruntime then matches torch on batches of other sizes, on single
    states, and on batches whose relations are empty where the export example's were not (and
    the other way round). Blocksworld only, to keep the suite fast: exports take seconds."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    if "blocksworld" not in _CACHE:
        _CACHE["blocksworld"] = states_of("blocksworld", DOMAINS["blocksworld"])
    signature, states = _CACHE["blocksworld"]
    options = ort.SessionOptions()
    options.log_severity_level = 3  # ORT warns about shapes of the Identity nodes its optimiser adds
    encoding, model = build(key, signature, seed=3, layers=2)
    names = encoding.input_names()
    empty_batch = [sparse(states[0], signature), sparse(states[-1], signature)]
    bare_batch = [bare(states[0]), bare(states[-1])]
    # Export once on real states (relations such as ``on`` non-empty), once on states without
    # binary atoms (those relations, or the PLOI edges, empty) and once on states without atoms
    # (no edges in object-atom graphs, whose unary atoms have edges too).
    exports = {"real": states[1:4], "sparse": empty_batch, "bare": bare_batch}
    checks = [states, states[:1], states[-1:], states[2:7], empty_batch, empty_batch[:1], states[:2] + empty_batch,
              bare_batch, states[:2] + bare_batch]
    became_empty = became_non_empty = False
    for label, example_batch in exports.items():
        path = tmp_path / f"{key}-{label}.onnx"
        torch.onnx.export(model, tuple(tensors(encoding, example_batch)), str(path), input_names=names,
                          output_names=["value"], dynamic_axes=dynamic_axes(names), opset_version=18, dynamo=False)
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        assert [i.name for i in session.get_inputs()] == names
        exported = first_dims(encoding, example_batch)
        for batch in checks:
            arrays = encoding.encode(batch)
            (got,) = session.run(None, {name: arrays[name] for name in names})
            expected = values(model, encoding, batch).numpy()
            assert got.shape == (len(batch),), (label, len(batch))
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=f"export on {label} states")
            dims = first_dims(encoding, batch)
            became_empty |= any(exported[n] > 0 and dims[n] == 0 for n in names)
            became_non_empty |= any(exported[n] == 0 and dims[n] > 0 for n in names)
    assert became_empty and became_non_empty


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("key,aggregation", [(k, a) for k in ARCH_KEYS for a in AGGREGATIONS if takes(k, "aggregation")]
                         + [(k, None) for k in ARCH_KEYS if not takes(k, "aggregation")])
def test_exported_file_matches_torch_through_the_runtime(key, aggregation, tmp_path):
    """The product path: ``export_onnx`` (packed per-arity inputs for R-GNNs, Mish in its
    exponential form, aggregation by gathering) read back by ``OnnxValueFunction``, against
    torch's training path, on single states, batches and states with empty relations."""
    pytest.importorskip("onnxruntime")
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.runtime import OnnxValueFunction

    if "blocksworld" not in _CACHE:
        _CACHE["blocksworld"] = states_of("blocksworld", DOMAINS["blocksworld"])
    signature, states = _CACHE["blocksworld"]
    encoding, model = build(key, signature, seed=5, layers=3, aggregation=aggregation)
    path = export_onnx(model, encoding, tmp_path / f"{key}.onnx", domain="blocksworld",
                       train_config={"architecture": key}, training_record={})
    runtime = OnnxValueFunction(path)
    assert runtime.packed == isinstance(model, RelationalGNN)
    empty_batch = [sparse(states[0], signature), sparse(states[-1], signature)]
    bare_batch = [bare(states[1]), bare(states[-2])]
    for batch in (states, states[:1], states[-1:], states[2:9], empty_batch, states[:2] + empty_batch, bare_batch):
        np.testing.assert_allclose(runtime(batch), values(model, encoding, batch).numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("table", [False, True], ids=["scatter", "table"])
@pytest.mark.parametrize("aggregation", AGGREGATIONS)
def test_packed_layout_equals_training_path(aggregation, table, domain_states):
    """``embed_packed`` (padded per-arity stacks, dummy node) gives the training path's values,
    with either aggregator (the table one is what gets exported)."""
    from up_gnnplan.encodings.packing import pack, packed_input_names
    from up_gnnplan.models.rgnn import PackedRGNN

    signature, states = domain_states
    encoding, model = build("rgnn", signature, seed=2, aggregation=aggregation)
    model.table_aggregation = table
    batch = pack(encoding.encode(states), encoding.relations)
    names = packed_input_names(encoding)
    with torch.no_grad():
        packed = PackedRGNN(model)(*(torch.from_numpy(batch[n]) for n in names))
    torch.testing.assert_close(packed, values(model, encoding, states), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("aggregation", AGGREGATIONS)
@pytest.mark.parametrize("case", ["mixed", "no-messages", "no-nodes", "one-hub", "hubs", "skewed"])
def test_table_aggregator_equals_scatter(aggregation, case):
    """The gathering aggregator (exported) equals the scattering one (training) on nodes with
    many, one or no messages, with targets past the last node left out (the packed layout's
    dummy node, its messages large), and on empty inputs; "hubs": two nodes with hundreds of messages among 60 with
    a few, so that a node's messages fill several rows of the first level and the hubs' rows past the second level's
    width are reduced on their own; "skewed": 200 nodes of a power law's counts, hubs of many sizes."""
    from up_gnnplan.models.rgnn import Aggregator, TableAggregator

    generator = torch.Generator().manual_seed(7)
    nodes, d = {"mixed": 9, "no-messages": 4, "no-nodes": 0, "one-hub": 5, "hubs": 60, "skewed": 200}[case], 6
    if case == "skewed":
        weights = 1.0 / torch.arange(1, nodes + 2, dtype=torch.float32) ** 1.2  # node k gets about 1 / k^1.2 of them
        targets = torch.multinomial(weights, 3000, replacement=True, generator=generator)
    elif case == "hubs":
        targets = torch.cat([torch.full((400,), 3), torch.full((250,), 41), torch.randint(0, 61, (300,), generator=generator)])
        targets = targets[torch.randperm(len(targets), generator=generator)]
    elif case == "mixed":  # nodes 0-8; 9 is the dummy; nodes 3 and 7 get nothing
        targets = torch.tensor([0, 1, 1, 2, 2, 2, 9, 4, 5, 9, 6, 8, 8, 8, 8, 0, 9])
    elif case == "one-hub":  # one node gets almost all messages: the table is as wide as that
        targets = torch.tensor([2] * 11 + [0, 5, 5])
    else:
        targets = torch.tensor([nodes] * 3)  # only the dummy
    messages = torch.randn((len(targets), d), generator=generator) * 3
    messages[targets == nodes] = 1e4  # the dummy's messages, however large, leave no trace (no inf, no NaN)
    expected = Aggregator(targets, nodes + 1, d, aggregation, 8.0)(messages)[:nodes]
    got = TableAggregator(targets, nodes, d, aggregation, 8.0)([messages[:5], messages[5:]])
    assert got.shape == (nodes, d)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    empty = TableAggregator(targets[:0], nodes, d, aggregation, 8.0)(messages[:0])
    torch.testing.assert_close(empty, torch.zeros((nodes, d)))


def test_row_width_splits_a_dominant_relation():
    from up_gnnplan.encodings.packing import ROW_COST, row_width

    assert row_width([]) == 1 and row_width([5]) == 5 and row_width([6, 6, 5]) == 6
    width = row_width([1000, 20, 20, 3])
    assert width == 20  # 50 + 1 + 1 + 1 rows of 20, not 4 rows of 1000
    assert ROW_COST > 0


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_split_rows_give_the_same_values(tmp_path):
    """A relation much larger than the others is spread over several rows (its slot repeated in
    ``active``); torch's packed path and onnxruntime give the training path's values either way."""
    from up_gnnplan.encodings.packing import pack, packed_input_names
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.models.rgnn import PackedRGNN
    from up_gnnplan.runtime import OnnxValueFunction

    signature, states = states_of("blocksworld", DOMAINS["blocksworld"])
    encoding, model = build("rgnn", signature, seed=6, layers=3)
    skewed = states * 6  # many ``on`` atoms against one ``handempty`` row per state
    feed = encoding.encode(skewed)
    split, whole = pack(feed, encoding.relations), pack(feed, encoding.relations, split=False)
    assert len(split["active_2"]) > len(whole["active_2"]) or len(split["active_1"]) > len(whole["active_1"])
    assert split["arity_1"].size + split["arity_2"].size < whole["arity_1"].size + whole["arity_2"].size
    names = packed_input_names(encoding)
    expected = values(model, encoding, skewed)
    with torch.no_grad():
        for packed in (split, whole):
            got = PackedRGNN(model)(*(torch.from_numpy(packed[n]) for n in names))
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    path = export_onnx(model, encoding, tmp_path / "m.onnx", domain="blocksworld",
                       train_config={"architecture": "rgnn"}, training_record={})
    np.testing.assert_allclose(OnnxValueFunction(path)(skewed), expected.numpy(), rtol=1e-4, atol=1e-4)


# --- the whole path: train, export, parity, solve -----------------------------------------------

_TRAINING: dict[str, object] = {}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("key", ARCH_KEYS)
def test_trained_model_exports_and_solves_with_the_engine(key, tmp_path):
    """Every architecture through the product path: a few training steps on a bundled example,
    ``export_onnx``, onnxruntime against torch on states of other sizes and a batch of 64
    (``check_parity``), then the engine solves another problem with the file (GBFS, which the
    engine validates before it returns a plan)."""
    pytest.importorskip("onnxruntime")
    from unified_planning.engines import PlanGenerationResultStatus
    from unified_planning.environment import get_environment
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import OneshotPlanner

    import up_gnnplan  # noqa: F401  (registers the engine)
    from up_gnnplan.datasets.build import BuildOptions, build_dataset
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.exporters.parity import check_parity
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.loop import train

    if "data" not in _TRAINING:
        _TRAINING["data"] = build_dataset(example("blocksworld"), [example("blocksworld", p) for p in ("p02.pddl", "p03.pddl")],
                                          BuildOptions(method="expand"))
    data = _TRAINING["data"]
    config = TrainConfig(architecture=key, hidden=8, layers=2, heads=2, batch_size=8, max_epochs=3, max_seconds=20.0,
                         patience=1000)
    model, encoding, record = train(data, config)
    assert record["steps"] >= 3 and record["train_states"] > 0
    path = export_onnx(model, encoding, tmp_path / f"{key}.onnx", domain=data.domain, train_config=config.to_dict(),
                       training_record=record)
    assert check_parity(model, encoding, path) < 1e-4
    problem = PDDLReader().parse_problem(str(example("blocksworld")), str(example("blocksworld", "p04.pddl")))
    get_environment().credits_stream = None
    with OneshotPlanner(name="gnnplan", params={"model": str(path), "mode": "gbfs"}) as planner:
        result = planner.solve(problem, timeout=60)
    assert result.status == PlanGenerationResultStatus.SOLVED_SATISFICING, [m.message for m in result.log_messages]
    assert len(result.plan.actions) >= 6  # V*(p04) = 6

"""Check the typed domain-graph policy network: heads, batching, renaming objects, ONNX, training.

Real states of the bundled Gripper (typed) and Blocksworld (untyped, a nullary predicate)
examples with their applicable actions; training runs on both Gripper examples, whose every
transition is recorded, so the optimal actions are known exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from up_gnnplan.data import example
from up_gnnplan.datasets.build import build_dataset
from up_gnnplan.encodings.actions import ActionInput, encode_actions
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.typed_policy import TypedPolicyEncoding
from up_gnnplan.models import HEADS
from up_gnnplan.problems import load_task
from up_gnnplan.search import Status, action_policy_rollout
from up_gnnplan.states import Atoms, StateAtoms, successors
from up_gnnplan.states.actions import ActionRows

torch = pytest.importorskip("torch")

from up_gnnplan.exporters import export_onnx  # noqa: E402
from up_gnnplan.exporters.parity import check_parity  # noqa: E402
from up_gnnplan.models.rgnn import AGGREGATIONS  # noqa: E402
from up_gnnplan.models.typed_policy import TypedPolicyNetwork, build_typed_policy  # noqa: E402
from up_gnnplan.runtime import OnnxValueFunction  # noqa: E402
from up_gnnplan.training import TrainConfig  # noqa: E402
from up_gnnplan.training.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from up_gnnplan.training.adapters import TorchActionScorer, TorchValueFunction  # noqa: E402
from up_gnnplan.training.loop import train  # noqa: E402
from up_gnnplan.training.objectives import outputs  # noqa: E402

torch.set_num_threads(1)

GRIPPER = example("gripper")
GRIPPER_PROBLEMS = [example("gripper", "p01.pddl"), example("gripper", "p02.pddl")]
DOMAINS = {"gripper": "p01.pddl", "blocksworld": "p03.pddl"}
_CACHE: dict[str, tuple] = {}


def states_of(domain: str):
    """Return (task, states, actions): the initial state, its successors and theirs, with their applicable actions."""
    if domain not in _CACHE:
        task = load_task(example(domain), example(domain, DOMAINS[domain]))
        converter, rows = StateAtoms(task), ActionRows(task)
        init = task.initial_state()
        seen, frontier, found = {init.get_index()}, [init], [init]
        for _ in range(2):
            frontier = [c for s in frontier for _, c, _ in successors(s) if c.get_index() not in seen
                        and not seen.add(c.get_index())]
            found += frontier
        states = [StateInput(converter.of(s), converter.goal, task.num_objects, converter.negative_goal) for s in found]
        actions = [ActionInput(*rows(s.generate_applicable_actions())) for s in found]
        _CACHE[domain] = (task, states, actions)
    return _CACHE[domain]


@pytest.fixture(params=sorted(DOMAINS))
def domain(request):
    return states_of(request.param)


def build(task, head: str = "logits+value", seed: int = 0, **params):
    """Return (encoding, model) with seeded random weights."""
    encoding = TypedPolicyEncoding(task.signature, types=task.types.to_json())
    torch.manual_seed(seed)
    model = build_typed_policy(encoding, head, task.action_signature, **{"hidden": 8, "layers": 3, **params})
    return encoding, model.eval()


def run(model, encoding, states, actions):
    """Return (values or None, scores) of a batch, the scores in the order the actions were given."""
    feed, order = encode_actions(model.actions, actions, [s.num_objects for s in states])
    batch = encoding.encode(states)
    tensors = [torch.from_numpy(batch[n]) for n in encoding.input_names()]
    tensors += [torch.from_numpy(feed[f"action_{k}"]) for k in range(len(model.actions))]
    with torch.no_grad():
        out = outputs(model, model(*tensors))
    return (out["value"].numpy() if "value" in out else None), out["scores"].numpy()[order]


def renamed(state: StateInput, actions: ActionInput, perm: np.ndarray):
    """Return ``state`` and ``actions`` with object ``o`` renamed ``perm[o]``."""

    def mapped(args):
        return np.where(args >= 0, perm[np.maximum(args, 0)], -1).astype(args.dtype)

    def atoms(a):
        return None if a is None else Atoms(a.pred.copy(), mapped(a.args))

    return (StateInput(atoms(state.atoms), atoms(state.goal), state.num_objects, atoms(state.negative_goal)),
            ActionInput(actions.schema.copy(), mapped(actions.args)))


# --- heads and shapes ------------------------------------------------------------------------------

@pytest.mark.parametrize("head", HEADS)
def test_heads_name_their_outputs(head):
    task, states, actions = states_of("gripper")
    encoding, model = build(task, head)
    assert isinstance(model, TypedPolicyNetwork)
    batch = encoding.encode(states[:3])
    tensors = [torch.from_numpy(batch[n]) for n in encoding.input_names()]
    if head == "value":
        assert model.outputs == ("value",) and model.kind is None and model.value
        assert not hasattr(model, "actions")  # what the training and checkpoint code test
        with torch.no_grad():
            assert model(*tensors).shape == (3,)
        return
    kind = head.split("+")[0]
    assert model.kind == kind and model.actions == task.action_signature and model.value == head.endswith("+value")
    assert model.outputs == (("value", "scores") if model.value else ("scores",))
    feed, _ = encode_actions(model.actions, actions[:3], [s.num_objects for s in states[:3]])
    with torch.no_grad():
        result = model(*tensors, *(torch.from_numpy(feed[f"action_{k}"]) for k in range(len(model.actions))))
    assert isinstance(result, tuple) and len(result) == len(model.outputs)
    assert outputs(model, result)["scores"].shape == (sum(len(a) for a in actions[:3]),)


def test_action_heads_need_the_action_schemas():
    task, _, _ = states_of("gripper")
    encoding = TypedPolicyEncoding(task.signature, types=task.types.to_json())
    with pytest.raises(ValueError, match="needs the domain's action schemas"):
        build_typed_policy(encoding, "logits", None)
    with pytest.raises(ValueError, match="unknown aggregation"):
        build_typed_policy(encoding, "value", None, aggregation="median")


@pytest.mark.parametrize("aggregation", AGGREGATIONS)
def test_rounds_and_aggregations(aggregation):
    task, states, actions = states_of("blocksworld")
    _, shared = build(task, layers=4, aggregation=aggregation)
    encoding, separate = build(task, layers=4, aggregation=aggregation, share_weights=False)
    assert len(shared.rounds) == 1 and len(separate.rounds) == 4
    for model in (shared, separate):
        values, scores = run(model, encoding, states, actions)
        assert np.isfinite(values).all() and np.isfinite(scores).all()


# --- batching and renaming -------------------------------------------------------------------------

def test_batch_equals_one_by_one(domain):
    task, states, actions = domain
    encoding, model = build(task)
    values, scores = run(model, encoding, states, actions)
    alone = [run(model, encoding, [s], [a]) for s, a in zip(states, actions)]
    np.testing.assert_allclose(values, np.concatenate([v for v, _ in alone]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores, np.concatenate([s for _, s in alone]), rtol=1e-5, atol=1e-5)
    # The states and actions differ, so a model that ignored its input would not pass for free.
    assert len(np.unique(np.round(values, 5))) > 1 and len(np.unique(np.round(scores, 5))) > len(states)


def test_renaming_objects_changes_nothing_but_the_rows(domain):
    task, states, actions = domain
    encoding, model = build(task, seed=1)
    rng = np.random.default_rng(0)
    pairs = []
    for state, acts in zip(states, actions):
        perm = rng.permutation(state.num_objects)
        while (perm == np.arange(len(perm))).all():
            perm = rng.permutation(state.num_objects)
        pairs.append(renamed(state, acts, perm))
    values, scores = run(model, encoding, states, actions)
    other_values, other_scores = run(model, encoding, [s for s, _ in pairs], [a for _, a in pairs])
    np.testing.assert_allclose(other_values, values, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(other_scores, scores, rtol=1e-4, atol=1e-4)


# --- ONNX --------------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy TorchScript exporter
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("domain_name, head", [("gripper", "logits+value"), ("blocksworld", "q")])
def test_export_matches_torch_on_other_sizes(domain_name, head, tmp_path):
    task, states, actions = states_of(domain_name)
    encoding, model = build(task, head, seed=2, layers=2)
    path = export_onnx(model, encoding, tmp_path / "m.onnx", domain=domain_name,
                       train_config={"architecture": "typed_policy", "head": head}, training_record={})
    runtime = OnnxValueFunction(path)
    assert runtime.outputs == list(model.outputs) and runtime.action_kind == model.kind
    assert check_parity(model, encoding, path) < 1e-4  # random states of 2-8 objects, batches of 1-64
    torch_scorer = TorchActionScorer(model, encoding)
    for state, acts in zip(states[::3], actions[::3]):
        np.testing.assert_allclose(runtime.scorer(state, acts), torch_scorer(state, acts), rtol=1e-4, atol=1e-4)


# --- training --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gripper_data():
    return build_dataset(GRIPPER, GRIPPER_PROBLEMS)


@pytest.fixture(scope="module")
def trained(gripper_data):
    """A small logits model fit on both Gripper examples (a few seconds)."""
    config = TrainConfig(architecture="typed_policy", head="logits", hidden=16, layers=4, lr=3e-3, max_seconds=20,
                         max_epochs=40, epoch_states=256, validation_fraction=0.0, patience=5)
    model, encoding, record = train(gripper_data, config)
    return model, encoding, record, config


def test_logits_head_learns_the_optimal_actions(trained):
    _, _, record, _ = trained
    assert record["train"]["best_action_optimal"] >= 0.9, record["train"]


def test_action_policy_solves_the_examples(trained):
    model, encoding, _, _ = trained
    for problem in GRIPPER_PROBLEMS:
        result = action_policy_rollout(load_task(GRIPPER, problem), TorchActionScorer(model, encoding), max_steps=50)
        assert result.status is Status.SOLVED, problem.name


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_trained_model_exports_and_reloads(trained, gripper_data, tmp_path):
    model, encoding, record, config = trained
    path = export_onnx(model, encoding, tmp_path / "gripper.onnx", domain="gripper", train_config=config.to_dict(),
                       training_record=record)
    assert check_parity(model, encoding, path) < 1e-4
    checkpoint = save_checkpoint(tmp_path / "gripper.pt", model, encoding, config, record, "gripper")
    loaded, loaded_encoding, _, _ = load_checkpoint(checkpoint)
    assert loaded_encoding.config() == encoding.config()
    _, states, actions = states_of("gripper")
    np.testing.assert_array_equal(run(loaded, loaded_encoding, states, actions)[1], run(model, encoding, states, actions)[1])


@pytest.mark.slow  # trains to a threshold (8 s): with --runslow, to keep the default run within its ten minutes
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_value_head_trains_and_exports(gripper_data, tmp_path):
    # The master vertex sums its objects: the value counts (balls to move), which a smooth maximum learns slower.
    config = TrainConfig(architecture="typed_policy", head="value", hidden=16, layers=4, aggregation="sum", lr=3e-3,
                         max_seconds=15, max_epochs=20, epoch_states=256, validation_fraction=0.0, patience=20)
    model, encoding, record = train(gripper_data, config)
    losses = [row[2] for row in record["curve"]]
    finite = gripper_data.value[np.isfinite(gripper_data.value)]
    constant = float(np.abs(finite - np.median(finite)).mean())  # the best constant's MAE: 1.78
    assert losses[-1] < losses[0] and record["train"]["mae"] < 0.6 * constant, record["train"]
    path = export_onnx(model, encoding, tmp_path / "value.onnx", domain="gripper", train_config=config.to_dict(),
                       training_record=record)
    runtime = OnnxValueFunction(path)
    assert runtime.outputs == ["value"] and not runtime.has_actions
    assert check_parity(model, encoding, path) < 1e-4
    _, states, _ = states_of("gripper")
    np.testing.assert_allclose(runtime(states), TorchValueFunction(model, encoding)(states), rtol=1e-4, atol=1e-4)

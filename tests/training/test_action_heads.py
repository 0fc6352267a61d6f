"""Action heads: the transitions datasets record, training towards optimal actions, export and solving.

Everything runs on the bundled Gripper (typed) and Blocksworld examples: small state spaces
whose every transition is recorded, so the optimal actions of each state are known exactly.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from unified_planning.engines import PlanGenerationResultStatus as PlanStatus

from up_gnnplan.cli import main
from up_gnnplan.data import example
from up_gnnplan.datasets.build import BuildOptions, build_dataset
from up_gnnplan.datasets.store import Dataset
from up_gnnplan.errors import DatasetError
from up_gnnplan.plugins.engine import GnnplanEngine
from up_gnnplan.problems import load_task
from up_gnnplan.problems.loading import load_pddl
from up_gnnplan.search import Status, action_policy_rollout
from up_gnnplan.states.successors import successors

torch = pytest.importorskip("torch")

from up_gnnplan.exporters import export_onnx  # noqa: E402
from up_gnnplan.exporters.parity import check_parity  # noqa: E402
from up_gnnplan.runtime import OnnxValueFunction  # noqa: E402
from up_gnnplan.training import TrainConfig  # noqa: E402
from up_gnnplan.training.adapters import TorchActionScorer  # noqa: E402
from up_gnnplan.training.loop import train  # noqa: E402

GRIPPER = example("gripper")
GRIPPER_PROBLEMS = [example("gripper", "p01.pddl"), example("gripper", "p02.pddl")]


@pytest.fixture(scope="module")
def gripper_data():
    return build_dataset(GRIPPER, GRIPPER_PROBLEMS)


def optimal_mask(data, i):
    schema, args, cost, nxt = data.actions(i)
    return np.isclose(cost + data.value[nxt], data.value[i])


# -- what datasets record -----------------------------------------------------------------------

def test_expanded_states_record_every_applicable_action(gripper_data):
    data = gripper_data
    assert data.action_signature.schemas == (("drop", 3), ("move", 2), ("pick", 3))
    assert data.has_actions.all()
    task = load_task(GRIPPER, GRIPPER_PROBLEMS[0])
    assert data.actions(0)[0].shape[0] == len(successors(task.initial_state()))  # state 0 is p01's initial state
    for i in range(len(data)):
        schema, args, cost, nxt = data.actions(i)
        assert (nxt >= 0).all() and (data.state_problem[nxt] == data.state_problem[i]).all()
        if not data.is_goal[i]:
            assert optimal_mask(data, i).any()  # V* is reached through some action: labels and transitions agree
            assert (cost + data.value[nxt] >= data.value[i] - 1e-9).all()


def test_optimal_plan_labelling_records_the_plan_states_actions(tmp_path):
    data = build_dataset(GRIPPER, GRIPPER_PROBLEMS[1:], BuildOptions(method="optimal"))
    plan_states = np.flatnonzero(data.label == 1)
    assert data.has_actions[plan_states].all() and not data.has_actions[data.label == 2].any()
    for i in plan_states:
        if not data.is_goal[i]:
            assert optimal_mask(data, i).any()


def test_actions_survive_saving_and_merging(gripper_data, tmp_path):
    first = build_dataset(GRIPPER, GRIPPER_PROBLEMS[:1])
    second = build_dataset(GRIPPER, GRIPPER_PROBLEMS[1:])
    first.extend(second)  # the second problem's successor rows move by the first's states
    loaded = Dataset.load(first.save(tmp_path / "both.npz"))
    for name in ("has_actions", "action_ptr", "action_schema", "action_args", "action_cost", "action_next", "value"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(gripper_data, name))


def test_version_1_datasets_load_but_are_refused_for_action_heads(gripper_data, tmp_path):
    path = gripper_data.save(tmp_path / "v2.npz")
    with np.load(path) as archive:
        arrays = {k: archive[k] for k in archive.files if not k.startswith("action_") and k != "has_actions"}
    meta = json.loads(str(arrays.pop("meta")))
    meta.update(version=1, package_version="0.0.9")
    del meta["actions"]
    np.savez_compressed(tmp_path / "v1.npz", meta=np.array(json.dumps(meta)), **arrays)
    old = Dataset.load(tmp_path / "v1.npz")
    assert old.version == 1 and old.action_signature is None and len(old) == len(gripper_data)
    with pytest.raises(DatasetError, match=r"does not record .*format version 1.*rebuild it with `gnnplan dataset"):
        train(old, TrainConfig(head="logits", max_seconds=5))
    result = CliRunner().invoke(main, ["train", str(tmp_path / "v1.npz"), "-o", str(tmp_path / "m.pt"), "--head", "logits"])
    assert result.exit_code == 2 and "error: " in result.output and "rebuild it" in result.output


def test_action_head_needs_an_object_node_architecture(gripper_data):
    with pytest.raises(ValueError, match="architecture ploi has no action head"):
        train(gripper_data, TrainConfig(head="logits", architecture="ploi", max_seconds=5))


# -- training, export, solving --------------------------------------------------------------------

@pytest.fixture(scope="module")
def trained(gripper_data):
    """A small logits+value model fit on both Gripper examples (seconds)."""
    config = TrainConfig(head="logits+value", hidden=16, layers=6, lr=3e-3, max_seconds=40, max_epochs=40,
                         epoch_states=256, validation_fraction=0.0, patience=120)
    model, encoding, record = train(gripper_data, config)
    return model, encoding, record, config


def test_logits_head_learns_the_optimal_actions(trained):
    _, _, record, _ = trained
    assert record["train"]["best_action_optimal"] >= 0.9, record["train"]
    assert record["error_name"] == "action error"


@pytest.mark.parametrize("head", ["logits", "q"])
def test_a_short_training_lowers_the_loss(gripper_data, head):
    config = TrainConfig(head=head, hidden=8, layers=3, max_seconds=8, max_epochs=8, epoch_states=128)
    _, _, record = train(gripper_data, config)
    losses = [row[2] for row in record["curve"]]
    assert losses[-1] < losses[0]


def test_action_policy_of_the_trained_model_solves_the_examples(trained):
    model, encoding, _, _ = trained
    for problem in GRIPPER_PROBLEMS:
        task = load_task(GRIPPER, problem)
        result = action_policy_rollout(task, TorchActionScorer(model, encoding), max_steps=50)
        assert result.status is Status.SOLVED


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory):
    model, encoding, record, config = trained
    path = tmp_path_factory.mktemp("heads") / "gripper-actions.onnx"
    export_onnx(model, encoding, path, domain="gripper", train_config=config.to_dict(), training_record=record)
    return path


def test_export_has_both_heads_and_matches_torch_on_other_sizes(trained, exported):
    model, encoding, _, _ = trained
    runtime = OnnxValueFunction(exported)
    assert runtime.outputs == ["value", "scores"] and runtime.action_kind == "logits"
    assert runtime.has_value and runtime.has_actions
    assert check_parity(model, encoding, exported) < 1e-4  # random states of 2-8 objects, batches of 1-64


def test_parity_is_relative_above_one_and_catches_a_changed_weight(trained, exported):
    import copy

    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.exporters.parity import _error

    # float32 rounding of a score in the thousands is not a mismatch; the same difference near 0 is
    assert _error(np.array([1886.4175]), np.array([1886.4172])) < 1e-6
    assert _error(np.array([0.0005]), np.array([0.0002])) == pytest.approx(3e-4)
    # beside a score of 1.6e17 (random states), float32 cancellation in one of 6e4 is not a mismatch either
    assert _error(np.array([-57705.6, 1.6e17]), np.array([-57694.8, 1.6e17])) < 1e-9
    assert _error(np.array([-57705.6, 3.0]), np.array([-57694.8, 3.0])) == pytest.approx(1.87e-4, rel=1e-2)
    model, encoding, _, _ = trained
    changed = copy.deepcopy(model)
    with torch.no_grad():
        next(changed.parameters()).add_(0.05)
    with pytest.raises(GnnplanError, match="onnxruntime differs from torch"):
        check_parity(changed, encoding, exported)


def test_engine_uses_the_action_policy_first(exported):
    problem = load_pddl(GRIPPER, GRIPPER_PROBLEMS[1])
    result = GnnplanEngine(model=str(exported)).solve(problem, timeout=60)
    assert result.status == PlanStatus.SOLVED_SATISFICING, [m.message for m in result.log_messages]
    assert any(m.message.startswith("action-policy: solved") for m in result.log_messages)
    for mode in ("action-policy", "policy-best-first", "gbfs"):  # the complete ones, and the well-trained head
        assert GnnplanEngine(model=str(exported), mode=mode).solve(problem, timeout=60).status == \
            PlanStatus.SOLVED_SATISFICING, mode
    # The value head, trained beside the action head, may still lead its greedy policy astray.
    assert GnnplanEngine(model=str(exported), mode="policy").solve(problem, timeout=60).status in (
        PlanStatus.SOLVED_SATISFICING, PlanStatus.UNSOLVABLE_INCOMPLETELY)


def test_a_mode_the_model_has_no_head_for_is_refused(gripper_data, tmp_path):
    config = TrainConfig(head="logits", hidden=4, layers=1, max_seconds=2, max_epochs=1)
    model, encoding, record = train(gripper_data, config)
    path = export_onnx(model, encoding, tmp_path / "actions-only.onnx", domain="gripper", train_config=config.to_dict(),
                       training_record=record)
    problem = load_pddl(GRIPPER, GRIPPER_PROBLEMS[0])
    result = GnnplanEngine(model=str(path), mode="gbfs").solve(problem, timeout=30)
    assert result.status == PlanStatus.UNSUPPORTED_PROBLEM
    assert "mode 'gbfs' needs a model with a value head" in result.log_messages[-1].message
    assert OnnxValueFunction(path).outputs == ["scores"]


def test_cli_trains_exports_and_solves_with_an_action_head(gripper_data, tmp_path):
    dataset = gripper_data.save(tmp_path / "gripper.npz")
    runner = CliRunner()
    result = runner.invoke(main, ["train", str(dataset), "-o", str(tmp_path / "m.pt"), "--head", "q+value", "--hidden", "8",
                                  "--layers", "2", "--timeout", "3", "--max-epochs", "2"])
    assert result.exit_code == 0, result.output
    assert "rgnn (q+value)" in result.output and "best action optimal in" in result.output
    result = runner.invoke(main, ["export", str(tmp_path / "m.pt"), "-o", str(tmp_path / "m.onnx")])
    assert result.exit_code == 0, result.output
    again = runner.invoke(main, ["export", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "again.onnx")])
    assert again.exit_code == 0 and "vs m.onnx: largest difference (relative above 1) 0.00e+00" in again.output, again.output
    result = runner.invoke(main, ["solve", "--example", "gripper/p01.pddl", "--model", str(tmp_path / "m.onnx"),
                                  "--mode", "policy-best-first"])
    assert result.exit_code == 0, result.output


def test_unknown_successors_left_out_of_the_cross_entropy(gripper_data):
    """With ``unknown_successors="left-out"`` an action without a labelled successor is neither a target nor
    a competitor: the loss is the one without those actions' scores (lower), and unchanged where every
    successor is known."""
    import copy

    from up_gnnplan.training.loop import make_objective

    config = TrainConfig(head="logits", hidden=8, layers=2, max_seconds=10, max_epochs=1, epoch_states=32)
    model, encoding, _ = train(gripper_data, config)
    objective = make_objective(config, gripper_data)
    masked = make_objective(TrainConfig(head="logits", unknown_successors="left-out"), gripper_data)
    batch = objective.select(gripper_data, np.arange(len(gripper_data)))[:16]
    with torch.no_grad():
        assert masked.loss(model, encoding, gripper_data, batch) == pytest.approx(
            float(objective.loss(model, encoding, gripper_data, batch)), rel=1e-6)
        partial = copy.deepcopy(gripper_data)
        unknown = 0
        for i in batch.tolist():  # one non-optimal action per state loses its successor's label
            lo = partial.action_ptr[i]
            for k in range(lo, partial.action_ptr[i + 1]):
                if not optimal_mask(gripper_data, i)[k - lo]:
                    partial.action_next[k] = -1
                    unknown += 1
                    break
        assert unknown
        assert float(masked.loss(model, encoding, partial, batch)) < float(objective.loss(model, encoding, partial, batch))


@pytest.fixture(scope="module")
def tiny_logits(gripper_data):
    """(model, encoding, objective counting unlabelled actions non-optimal, objective leaving them out)."""
    from up_gnnplan.training.loop import make_objective

    config = TrainConfig(head="logits", hidden=8, layers=2, max_seconds=10, max_epochs=1, epoch_states=32)
    model, encoding, _ = train(gripper_data, config)
    return (model, encoding, make_objective(config, gripper_data),
            make_objective(TrainConfig(head="logits", unknown_successors="left-out"), gripper_data))


def _one_labelled_action(data, states):
    """A copy of ``data`` where each of ``states`` keeps the label of one optimal action's successor alone."""
    import copy

    partial = copy.deepcopy(data)
    for i in states.tolist():
        lo, hi = partial.action_ptr[i], partial.action_ptr[i + 1]
        keep = lo + int(np.flatnonzero(optimal_mask(data, i))[0])
        partial.action_next[lo:hi] = np.where(np.arange(lo, hi) == keep, partial.action_next[lo:hi], -1)
    return partial


def test_a_satisficing_plan_state_keeps_its_unlabelled_actions_as_not_optimal(gripper_data, tiny_logits):
    """A state labelled by a satisficing plan knows only the plan's actions: left out, its other actions would
    leave a softmax over optimal actions alone (a loss of 0, nothing learnt); they stay competitors, as with
    ``unknown_successors="non-optimal"``."""
    from up_gnnplan.datasets.store import LABELS

    model, encoding, counted, masked = tiny_logits
    batch = counted.select(gripper_data, np.arange(len(gripper_data)))[:16]
    partial = _one_labelled_action(gripper_data, batch)  # as a satisficing labelling records them
    with torch.no_grad():
        assert float(masked.loss(model, encoding, partial, batch)) < 1e-6  # an optimal-plan state's: nothing left
        partial.label[batch] = LABELS.index("satisficing-plan")
        imitated = float(masked.loss(model, encoding, partial, batch))
        assert imitated > 0.1 and imitated == pytest.approx(float(counted.loss(model, encoding, partial, batch)), rel=1e-6)


def test_the_action_error_with_unknown_successors_left_out_ranks_the_known_actions_alone(gripper_data, tiny_logits):
    """With ``unknown_successors="left-out"`` a state's best action is its best-scored one among those with a
    labelled successor (as the loss sees them): a state whose unknown action the model scores highest is not
    an error for it, and is one where unknown actions count as non-optimal."""
    model, encoding, counted, masked = tiny_logits
    states = counted.select(gripper_data, np.arange(len(gripper_data)))[:24]
    partial = _one_labelled_action(gripper_data, states)
    assert masked.best_is_optimal(model, encoding, partial, states).all()
    assert not counted.best_is_optimal(model, encoding, partial, states).all()


def test_a_state_without_an_optimal_recorded_action_is_not_trained_towards_one(gripper_data):
    """Where the labeller left out every optimal successor of a state, the state is not in the cross-entropy
    (its target would be empty: a loss of 1e30)."""
    import copy

    from up_gnnplan.training.loop import make_objective

    objective = make_objective(TrainConfig(head="logits"), gripper_data)
    chosen = objective.select(gripper_data, np.arange(len(gripper_data)))
    state = int(chosen[0])
    partial = copy.deepcopy(gripper_data)
    lo = partial.action_ptr[state]
    for k in np.flatnonzero(optimal_mask(gripper_data, state)):
        partial.action_next[lo + k] = -1
    left = objective.select(partial, np.arange(len(partial)))
    assert state not in left.tolist() and len(left) == len(chosen) - 1


def test_a_step_whose_gradient_is_not_finite_is_not_taken(gripper_data):
    """A NaN label (here an action's cost, a Q target, under the squared error) makes the loss and the gradient of every batch holding it
    NaN: those steps are skipped (one taken would make every weight NaN), the model stays finite and the record
    says how many were skipped."""
    import copy

    broken = copy.deepcopy(gripper_data)
    for i in range(0, len(broken), 25):  # the first action of every 25th state
        broken.action_cost[broken.action_ptr[i]] = np.nan
    config = TrainConfig(head="q", loss="mse", hidden=8, layers=2, max_seconds=20, max_epochs=2, epoch_states=64,
                         batch_size=4, validation_fraction=0.0)
    model, _, record = train(broken, config)
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert record["steps"] > 0 and "not taken" in record["non_finite_note"]
    # Where most of an epoch's steps are not finite, training goes on from the best weights at half the rate.
    for i in range(0, len(broken), 3):
        broken.action_cost[broken.action_ptr[i]] = np.nan
    config.batch_size = 32
    model, _, record = train(broken, config)
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert "half the learning rate" in record["non_finite_note"]


ZERO_COST_DOMAIN = """(define (domain lamp)
  (:requirements :strips :negative-preconditions :action-costs)
  (:predicates (on) (there))
  (:functions (total-cost) - number)
  (:action switch-on :parameters () :precondition (not (on)) :effect (and (on) (increase (total-cost) 0)))
  (:action switch-off :parameters () :precondition (on) :effect (and (not (on)) (increase (total-cost) 0)))
  (:action go :parameters () :precondition (not (there)) :effect (and (there) (increase (total-cost) 1))))
"""
ZERO_COST_PROBLEM = """(define (problem lamp-1) (:domain lamp)
  (:init (= (total-cost) 0)) (:goal (there)) (:metric minimize (total-cost)))
"""


def test_of_the_cheapest_actions_those_with_the_fewest_steps_left_are_the_target(tmp_path):
    """A zero-cost action that achieves nothing (Elevators' board and leave) is as cheap as any plan: of the
    cheapest actions, only those with the fewest steps left are optimal, else a policy learns to toggle."""
    from up_gnnplan.training.loop import make_objective

    (tmp_path / "domain.pddl").write_text(ZERO_COST_DOMAIN)
    (tmp_path / "p1.pddl").write_text(ZERO_COST_PROBLEM)
    data = build_dataset(tmp_path / "domain.pddl", [tmp_path / "p1.pddl"])
    objective = make_objective(TrainConfig(head="logits"), data)
    for i in objective.select(data, np.arange(len(data))).tolist():
        schema, _, cost, nxt = data.actions(i)
        optimal = objective._targets(data, i)[3]
        assert optimal.sum() == 1 and cost[optimal][0] == 1.0  # go, not a switch
        tight = np.isclose(cost + data.value[nxt], data.value[i])
        assert tight.sum() == 2  # switching is as cheap: the steps decide


# -- the judge in onnxruntime ---------------------------------------------------------------------

def _graph(config, data, path):
    """Export an untrained model of ``config`` to ``path`` (as ``gnnplan learn`` does before training)."""
    from up_gnnplan.training.checkpoint import build

    encoding, model = build(config, data.signature, data.action_signature, data.types)
    export_onnx(model, encoding, path, domain="gripper", train_config=config.to_dict(), training_record={})
    return path


def test_the_judge_in_onnxruntime_walks_as_the_torch_model_does(trained, gripper_data, tmp_path):
    from up_gnnplan.training.judge_runtime import RuntimeJudge
    from up_gnnplan.training.judging import policy_validation

    model, encoding, _, config = trained
    judge = RuntimeJudge(_graph(config, gripper_data, tmp_path / "graph.onnx"))
    runtime = judge.runtime(model, encoding)
    assert runtime is not None and judge.note == "" and judge.checked
    tasks = [load_task(GRIPPER, p) for p in GRIPPER_PROBLEMS]
    for value in (False, True):  # the action policy, then the value policy
        torch_walk = policy_validation(model, encoding, tasks, 50, value=value)
        assert policy_validation(model, encoding, tasks, 50, value=value, runtime=runtime) == torch_walk
        assert torch_walk[0] == 2 or value
    # Each runtime holds the model's weights as they are then: changed, the next one follows them.
    import copy

    from up_gnnplan.exporters.parity import random_states
    from up_gnnplan.training.adapters import TorchValueFunction

    other = copy.deepcopy(model)
    with torch.no_grad():
        for weight in other.parameters():
            weight.mul_(1.5)
    states = random_states(encoding.signature, 4, np.random.default_rng(0))
    changed = judge.runtime(other, encoding)
    np.testing.assert_allclose(changed(states), TorchValueFunction(other, encoding)(states), rtol=1e-4, atol=1e-4)
    assert not np.allclose(changed(states), runtime(states), rtol=1e-4, atol=1e-4)


def test_a_graph_that_does_not_fit_leaves_the_judge_in_torch(trained, gripper_data, tmp_path):
    from dataclasses import replace

    from up_gnnplan.training.judge_runtime import RuntimeJudge

    model, encoding, _, config = trained
    judge = RuntimeJudge(_graph(replace(config, hidden=8), gripper_data, tmp_path / "graph.onnx"))
    assert judge.runtime(model, encoding) is None
    assert judge.note.startswith("the judge runs in torch:"), judge.note
    assert judge.runtime(model, encoding) is None  # for the rest of the run


def test_a_training_run_given_the_graph_judges_in_onnxruntime(gripper_data, tmp_path):
    config = TrainConfig(head="logits", hidden=8, layers=2, max_seconds=20, max_epochs=2, epoch_states=64,
                         policy_steps=30)
    tasks = [load_task(GRIPPER, p) for p in GRIPPER_PROBLEMS]
    _, _, record = train(gripper_data, config, validation_tasks=tasks,
                         judge_graph=_graph(config, gripper_data, tmp_path / "graph.onnx"))
    assert record["judge_runtime"] == "onnxruntime" and len(record["curve"]) == 2
    _, _, without = train(gripper_data, config, validation_tasks=tasks)
    assert "judge_runtime" not in without
    assert [row[4:] for row in record["curve"]] == [row[4:] for row in without["curve"]]  # the same walks

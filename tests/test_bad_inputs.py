"""The bad-input suite: one row per way a user can get the input wrong, each answered by a clear error.

Every row runs a real command, engine or loader on a bad input and returns what the user is
told; the row names the words that message must contain (the file, the line, the parameter,
the feature). A row passes only if the message came from us: one ``error:`` line from the
command line (no traceback), a UP status with our log message, or one of our exception types
(``GnnplanError``, or UP's ``UPUsageError`` for engine params), never a raw exception from a
dependency. ``pytest tests/test_bad_inputs.py -q`` counts the clear errors.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from pddl_cases import TYPED_BLOCKS, fixture
from unified_planning.engines import PlanGenerationResultStatus as Status
from unified_planning.exceptions import UPUsageError

import up_gnnplan  # noqa: F401  (registers the engine)
from up_gnnplan.cli import main
from up_gnnplan.data import example
from up_gnnplan.errors import GnnplanError
from up_gnnplan.models_zoo import zoo_dir
from up_gnnplan.plugins.engine import GnnplanEngine
from up_gnnplan.problems import load_task
from up_gnnplan.problems.loading import PddlQuirkWarning, load_pddl

BLOCKS = example("blocksworld")
P04 = example("blocksworld", "p04.pddl")
SHIPPED_BLOCKS = zoo_dir() / "blocks.onnx"


# -- how a message reaches the user -----------------------------------------------------------

def cli(*args) -> str:
    """Run ``gnnplan ARGS`` and return its error output; it must fail with one clean error line."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (2, 3, 4), result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith(("error:", "Error:"))]
    assert len(errors) == 1, result.output
    return result.output


def ours(call) -> str:
    """Run ``call()`` and return the message of the GnnplanError it must raise (no foreign cause shown)."""
    with pytest.raises(GnnplanError) as caught:
        call()
    error = caught.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    return str(error)


def usage(call) -> str:
    """Run ``call()`` and return the message of the UPUsageError it must raise (engine params)."""
    with pytest.raises(UPUsageError) as caught:
        call()
    return str(caught.value)


def planner_status(problem, expected: Status, **params) -> str:
    """Solve with ``OneshotPlanner(name="gnnplan")`` and return its log; the status must be ``expected``."""
    from unified_planning.shortcuts import OneshotPlanner

    with OneshotPlanner(name="gnnplan", params=params) as planner:
        result = planner.solve(problem, timeout=60)
    messages = " ".join(m.message for m in result.log_messages)
    assert result.status == expected, messages
    return messages


# -- the inputs ---------------------------------------------------------------------------------

def write(path, text):
    path.write_text(text)
    return path


def edited_model(tmp_path, key, value):
    """Return a copy of the shipped Blocks model whose metadata entry ``key`` is set to ``value`` (raw text)."""
    onnx = pytest.importorskip("onnx")
    proto = onnx.load(str(SHIPPED_BLOCKS))
    entry = next(p for p in proto.metadata_props if p.key == f"up_gnnplan.{key}")
    entry.value = value
    path = tmp_path / f"edited-{key}.onnx"
    onnx.save(proto, str(path))
    return path


def checkpoint_without(tmp_path, key):
    torch = pytest.importorskip("torch")
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.checkpoint import build, save_checkpoint

    config = TrainConfig(hidden=4, layers=1)
    encoding, model = build(config, load_task(BLOCKS, P04).signature)
    path = save_checkpoint(tmp_path / "full.pt", model, encoding, config, {}, "blocksworld")
    data = torch.load(path, weights_only=True)
    del data[key]
    torch.save(data, tmp_path / "cut.pt")
    return tmp_path / "cut.pt"


DERIVED = """(define (domain lights)
  (:requirements :strips :derived-predicates)
  (:predicates (on ?x) (off ?x) (all-on))
  (:derived (all-on) (and (on a) (on b)))
  (:action switch :parameters (?x) :precondition (off ?x) :effect (and (on ?x) (not (off ?x)))))
"""
LIGHTS = "(define (problem p) (:domain lights) (:objects a b) (:init (off a) (off b)) (:goal (all-on)))\n"


def load_derived(tmp_path):
    return load_pddl(write(tmp_path / "domain.pddl", DERIVED), write(tmp_path / "p.pddl", LIGHTS))


# Dataset, checkpoint and training-state files are not trusted: what is wrong with one is said, and
# numpy's and torch's advice to load it unsafely (pickles allowed) is never passed on.
FOREIGN_ADVICE = ("allow_pickle", "weights_only", "Unpickler", "add_safe_globals")
_BUILT: dict = {}


def plain(message: str) -> str:
    """Return ``message``, which must not pass on numpy's or torch's advice to unpickle."""
    assert not [advice for advice in FOREIGN_ADVICE if advice in message], message
    return message


def small_dataset(tmp_path) -> Path:
    """Write a real Blocksworld dataset (p02 and p03: 2 problems, 27 states) to ``valid.npz``; built once."""
    if "dataset" not in _BUILT:
        from up_gnnplan.datasets.build import build_dataset

        _BUILT["dataset"] = build_dataset(BLOCKS, [example("blocksworld", p) for p in ("p02.pddl", "p03.pddl")])
    return _BUILT["dataset"].save(tmp_path / "valid.npz")


def bad_dataset(tmp_path, change) -> Path:
    """Write ``bad.npz``: the small dataset with the arrays that ``change(arrays)`` returns replaced (None: removed)."""
    with np.load(small_dataset(tmp_path)) as data:
        arrays = {key: data[key] for key in data.files}
    for key, value in change(arrays).items():
        if value is None:
            del arrays[key]
        else:
            arrays[key] = value
    np.savez_compressed(tmp_path / "bad.npz", **arrays)
    return tmp_path / "bad.npz"


def edited(array, index, value):
    array = array.copy()
    array[index] = value
    return array


def newer(arrays):
    meta = json.loads(str(arrays["meta"]))
    meta["version"] = 99
    return np.array(json.dumps(meta))


def truncated(path, size=100) -> Path:
    """Return ``cut.EXT`` beside ``path``: its first ``size`` bytes."""
    cut = path.with_name("cut" + path.suffix)
    cut.write_bytes(path.read_bytes()[:size])
    return cut


def train(tmp_path, data, *options) -> str:
    return cli("train", data, "-o", tmp_path / "x.pt", "--max-epochs", "1", "--hidden", "4", "--layers", "1", *options)


def small_checkpoint(tmp_path) -> Path:
    pytest.importorskip("torch")
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.checkpoint import build, save_checkpoint

    config = TrainConfig(hidden=4, layers=1)
    encoding, model = build(config, load_task(BLOCKS, P04).signature)
    return save_checkpoint(tmp_path / "full.pt", model, encoding, config, {}, "blocksworld")


class Custom:
    """A class of this module alone: a checkpoint that pickles one must be refused, never unpickled."""


def custom_checkpoint(tmp_path) -> Path:
    torch = pytest.importorskip("torch")
    torch.save({"format": "up-gnnplan-checkpoint", "config": Custom()}, tmp_path / "custom.pt")
    return tmp_path / "custom.pt"


def state_file(tmp_path, metadata=None) -> Path:
    """Write a safetensors file of two tensors (not a training state unless ``metadata`` makes it look one)."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    save_file({"model/w": torch.zeros(16), "best/w": torch.ones(16)}, str(tmp_path / "run.safetensors"), metadata=metadata)
    return tmp_path / "run.safetensors"


def load_dataset(path):
    from up_gnnplan.datasets import Dataset

    return Dataset.load(path)


def load_checkpoint(path):
    from up_gnnplan.training.checkpoint import load_checkpoint

    return load_checkpoint(path)


# Each: (name, change(arrays) -> replaced arrays, what the message says after the file name). Every one
# is a row through `gnnplan train` and one through Dataset.load.
BAD_DATASETS = [
    ("problem-out-of-range", lambda a: {"state_problem": edited(a["state_problem"], -1, 7)},
     ["array 'state_problem' refers to problem 7, but the file holds 2 problems"]),
    ("predicate-out-of-range", lambda a: {"fluent_pred": edited(a["fluent_pred"], 0, 99)},
     ["array 'fluent_pred' refers to predicate 99, but the domain's signature has 5 predicates"]),
    ("object-out-of-range", lambda a: {"goal_args": edited(a["goal_args"], (0, 1), 9)},
     ["array 'goal_args' refers to object 9 (row 0, argument 2), but problem 0 ('p02') has 2 objects"]),
    ("negative-object", lambda a: {"action_args": edited(a["action_args"], (0, 0), -1)},
     ["array 'action_args' refers to object -1 (row 0, argument 1), but problem 0 ('p02') has 2 objects"]),
    ("successor-out-of-range", lambda a: {"action_next": edited(a["action_next"], 0, 1000)},
     ["array 'action_next' refers to state 1000, but the file holds 27 states"]),
    ("offsets-past-the-end", lambda a: {"fluent_ptr": edited(a["fluent_ptr"], -1, a["fluent_ptr"][-1] + 5)},
     ["array 'fluent_ptr' ends at", "but 'fluent_pred' holds"]),
    ("array-missing", lambda a: {"fluent_ptr": None}, ["the file lacks array 'fluent_ptr'"]),
    ("lengths-differ", lambda a: {"value": a["value"][:-1]},
     ["array 'value' holds 26 entries, but 'state_problem' holds 27 (one per state)"]),
    ("float-indices", lambda a: {"state_problem": a["state_problem"].astype(np.float32)},
     ["array 'state_problem' holds float32, not integers"]),
    ("nan-value", lambda a: {"value": edited(a["value"], 3, np.nan)}, ["array 'value' holds NaN (state 3)"]),
    ("pickled-array", lambda a: {"fluent_pred": np.array([{}], dtype=object)},
     ["array 'fluent_pred' holds a pickled (object) array, which up-gnnplan never loads"]),
    ("newer-version", lambda a: {"meta": newer(a)}, ["version 99", "written by a newer up-gnnplan"]),
]


# Each row: (id, how to get the message, fragments it must contain). ``t`` is pytest's tmp_path, which
# a fragment names as ``{tmp}``.
CASES = [
    # PDDL files
    ("missing-problem-file", lambda t: cli("solve", BLOCKS, t / "nope.pddl"), ["nope.pddl", "no such file"]),
    ("missing-domain-file", lambda t: cli("solve", t / "domain.pddl", P04), ["domain.pddl", "no such file"]),
    ("directory-as-problem", lambda t: cli("dataset", BLOCKS, t, "-o", t / "o.npz"), ["{tmp}", "is a directory"]),
    ("unclosed-parenthesis", lambda t: cli("solve", TYPED_BLOCKS, fixture("blocksworld", "unclosed-paren.pddl")),
     ["unclosed-paren.pddl", "line", "never closed"]),
    ("extra-parenthesis", lambda t: cli("solve", TYPED_BLOCKS, fixture("blocksworld", "extra-paren.pddl")),
     ["extra-paren.pddl, line 6", "closes nothing"]),
    ("unknown-predicate", lambda t: cli("solve", TYPED_BLOCKS, fixture("blocksworld", "unknown-predicate.pddl")),
     ["unknown-predicate.pddl, line 6", "on-top-of"]),
    ("unknown-object", lambda t: cli("solve", TYPED_BLOCKS, fixture("blocksworld", "unknown-object.pddl")),
     ["unknown-object.pddl, line 5"]),
    ("unknown-type", lambda t: cli("solve", TYPED_BLOCKS, write(t / "p.pddl", fixture("blocksworld", "two-blocks.pddl")
                                                                 .read_text().replace("a b - block", "a b - brick"))),
     ["p.pddl", "brick"]),
    ("empty-goal", lambda t: cli("solve", TYPED_BLOCKS, fixture("blocksworld", "empty-goal.pddl")),
     ["empty-goal.pddl", "goal is empty"]),
    ("derived-predicates", lambda t: ours(lambda: load_derived(t)), ["domain.pddl, line 4", ":derived"]),
    ("numeric-fluents-oneshotplanner", lambda t: planner_status(
        load_pddl(fixture("unsupported", "numeric-domain.pddl"), fixture("unsupported", "numeric-p01.pddl")),
        Status.UNSUPPORTED_PROBLEM), ["numeric-domain.pddl", "numeric"]),
    ("numeric-fluents-cli", lambda t: cli("solve", fixture("unsupported", "numeric-domain.pddl"),
                                          fixture("unsupported", "numeric-p01.pddl")),
     ["numeric-domain.pddl, line", "numeric"]),
    ("numeric-fluents", lambda t: ours(lambda: load_task(fixture("unsupported", "numeric-domain.pddl"),
                                                         fixture("unsupported", "numeric-p01.pddl"))),
     ["numeric-domain.pddl", "numeric"]),
    ("durative-actions", lambda t: ours(lambda: load_task(fixture("unsupported", "durative-domain.pddl"),
                                                          fixture("unsupported", "durative-p01.pddl"))),
     ["durative-domain.pddl", "durative actions"]),
    ("negative-action-cost", lambda t: ours(lambda: load_task(
        write(t / "d.pddl", fixture("costs", "domain.pddl").read_text().replace("(increase (total-cost) 7)",
                                                                               "(increase (total-cost) -7)")),
        fixture("costs", "p01.pddl"))), ["negative action costs", "jump"]),
    # models
    ("model-file-missing", lambda t: cli("solve", BLOCKS, P04, "--model", t / "none.onnx"), ["none.onnx", "no such model file"]),
    ("model-file-corrupt", lambda t: cli("solve", BLOCKS, P04, "--model", write(t / "bad.onnx", "not onnx")),
     ["bad.onnx", "not a readable ONNX model"]),
    ("model-metadata-not-json", lambda t: cli("solve", BLOCKS, P04, "--model", edited_model(t, "encoding", "{oops")),
     ["edited-encoding.onnx", "up_gnnplan.encoding", "not valid JSON"]),
    ("model-metadata-no-encoding", lambda t: cli("solve", BLOCKS, P04, "--model", edited_model(t, "encoding", "{}")),
     ["edited-encoding.onnx", "does not describe an encoding"]),
    ("model-newer-format", lambda t: cli("solve", BLOCKS, P04, "--model", edited_model(t, "version", "999")),
     ["edited-version.onnx", "newer"]),
    ("model-of-another-domain", lambda t: cli("solve", example("gripper"), example("gripper", "p01.pddl"),
                                              "--model", "blocks"), ["blocks.onnx", "predicates differ", "only in"]),
    ("no-shipped-model", lambda t: cli("solve", *[fixture("roads", f) for f in ("domain.pddl", "p01.pddl")]),
     ["no shipped model", "--model MODEL.onnx", "gnnplan learn"]),
    ("no-shipped-model-types", lambda t: cli("solve", TYPED_BLOCKS, fixture("blocksworld", "two-blocks.pddl")),
     ["no shipped model", "type:block/1", "only in the problem: type:block/1", "--model MODEL.onnx"]),
    ("checkpoint-without-config", lambda t: cli("export", checkpoint_without(t, "config"), "-o", t / "m.onnx"),
     ["cut.pt", "lacks config"]),
    ("checkpoint-garbage", lambda t: cli("export", write(t / "x.pt", "garbage"), "-o", t / "m.onnx"),
     ["x.pt", "not a loadable checkpoint"]),
    *[(f"dataset-{name}", lambda t, change=change: plain(train(t, bad_dataset(t, change))), ["bad.npz: ", *fragments])
      for name, change, fragments in BAD_DATASETS],
    *[(f"dataset-{name}-load", lambda t, change=change: plain(ours(lambda: load_dataset(bad_dataset(t, change)))),
       ["bad.npz: ", *fragments]) for name, change, fragments in BAD_DATASETS],
    ("dataset-truncated", lambda t: plain(train(t, truncated(small_dataset(t)))),
     ["cut.npz: not a dataset file (.npz) of up-gnnplan", "truncated"]),
    ("dataset-not-a-zip", lambda t: plain(ours(lambda: load_dataset(write(t / "d.npz", "state,value\n")))),
     ["d.npz: not a dataset file (.npz) of up-gnnplan", "not a zip archive"]),
    ("checkpoint-custom-class", lambda t: plain(cli("export", custom_checkpoint(t), "-o", t / "m.onnx")),
     ["custom.pt: not a loadable checkpoint", "Custom, which is neither a tensor nor a plain value", "refuses to unpickle"]),
    ("checkpoint-custom-class-load", lambda t: plain(ours(lambda: load_checkpoint(custom_checkpoint(t)))),
     ["custom.pt: not a loadable checkpoint", "Custom", "refuses to unpickle"]),
    ("checkpoint-truncated", lambda t: plain(cli("export", truncated(small_checkpoint(t)), "-o", t / "m.onnx")),
     ["cut.pt: not a loadable checkpoint", "truncated"]),
    ("checkpoint-empty", lambda t: plain(ours(lambda: load_checkpoint(write(t / "e.pt", "")))),
     ["e.pt: not a loadable checkpoint", "empty"]),
    ("state-garbage", lambda t: plain(train(t, small_dataset(t), "--state", write(t / "run.safetensors", "garbage"))),
     ["run.safetensors: not a readable training state", "not a safetensors file"]),
    ("state-truncated", lambda t: plain(train(t, small_dataset(t), "--state", truncated(state_file(t)))),
     ["cut.safetensors: not a readable training state", "cut short"]),
    ("state-without-its-entries", lambda t: plain(train(t, small_dataset(t), "--state", state_file(
        t, {"format": "up-gnnplan-training-state", "version": "1"}))),
     ["run.safetensors: damaged training state", "lacks header entry 'config'", "tensor 'torch_rng'"]),
    # engine params
    ("param-model-not-text", lambda t: usage(lambda: GnnplanEngine(model=5)), ["'model'", "ONNX file", "5"]),
    ("param-max-steps-text", lambda t: usage(lambda: GnnplanEngine(max_steps="abc")), ["'max_steps'", "integer", "abc"]),
    ("param-max-steps-zero", lambda t: usage(lambda: GnnplanEngine(max_steps=0)), ["'max_steps'", ">= 1"]),
    ("param-mode-unknown", lambda t: usage(lambda: GnnplanEngine(mode="astar")), ["'mode'", "auto, policy, gbfs"]),
    ("param-fallback-unknown", lambda t: usage(lambda: GnnplanEngine(fallback="astar")),
     ["'fallback'", "model, model+ff", "astar"]),
    ("param-memory-negative", lambda t: usage(lambda: GnnplanEngine(memory_mb=-5)), ["'memory_mb'", "MB"]),
    ("param-device-unknown", lambda t: usage(lambda: GnnplanEngine(device="tpu")), ["'device'", "auto, cpu, cuda"]),
    ("param-unknown-name", lambda t: usage(lambda: GnnplanEngine(steps=3)), ["unknown param", "'steps'", "max_steps"]),
    ("param-via-oneshotplanner", lambda t: usage(lambda: up_gnnplan_planner({"max_steps": "abc"})), ["'max_steps'"]),
    ("engine-timeout-negative", lambda t: usage(lambda: GnnplanEngine().solve(load_pddl(BLOCKS, P04), timeout=-1)),
     ["timeout", "-1"]),
    ("engine-timeout-nan", lambda t: usage(lambda: GnnplanEngine().solve(load_pddl(BLOCKS, P04), timeout=math.nan)),
     ["timeout", "nan"]),
    # command-line options
    ("solve-timeout-zero", lambda t: cli("solve", BLOCKS, P04, "--timeout", "0"), ["--timeout", "above 0"]),
    ("solve-timeout-negative", lambda t: cli("solve", BLOCKS, P04, "--timeout", "-1"), ["--timeout", "above 0"]),
    ("solve-timeout-nan", lambda t: cli("solve", BLOCKS, P04, "--timeout", "nan"), ["--timeout", "above 0"]),
    ("compare-timeout-nan", lambda t: cli("compare", BLOCKS, P04, "--engine", "gnnplan", "--timeout", "nan", "-o", t),
     ["--timeout", "above 0"]),
    ("compare-timeout-zero", lambda t: cli("compare", BLOCKS, P04, "--engine", "gnnplan", "--timeout", "0", "-o", t),
     ["--timeout", "above 0"]),
    # a problem for another domain: (:domain blocks) against (define (domain blocksworld)
    ("domain-name-mismatch-solve", lambda t: cli("solve", BLOCKS, write(t / "p.pddl", P04.read_text().replace(
        "(:domain blocksworld)", "(:domain blocks)"))), ["p.pddl, line 3", "for domain 'blocks'", "defines 'blocksworld'"]),
    ("domain-name-mismatch-dataset", lambda t: cli("dataset", BLOCKS, P04, write(t / "p.pddl", P04.read_text().replace(
        "(:domain blocksworld)", "(:domain blocks)")), "-o", t / "o.npz"), ["p.pddl, line 3", "for domain 'blocks'"]),
    ("domain-name-mismatch-load-task", lambda t: ours(lambda: load_task(BLOCKS, write(t / "p.pddl", P04.read_text().replace(
        "(:domain blocksworld)", "(:domain blocks)")))), ["p.pddl, line 3", "'blocks'", "domain.pddl defines 'blocksworld'"]),
    # compare: engine configurations are checked before any task runs
    ("compare-model-missing", lambda t: cli("compare", BLOCKS, P04, "--engine", "gnnplan", "--model", t / "none.onnx",
                                            "-o", t), ["gnnplan", "none.onnx", "no such model file"]),
    ("compare-model-missing-for-a-domain", lambda t: cli("compare", BLOCKS, P04, "--engine", "gnnplan", "--model",
                                                         f"blocksworld={t / 'none.onnx'}", "-o", t),
     ["none.onnx", "no such model file"]),
    ("compare-model-of-unknown-domain", lambda t: cli("compare", BLOCKS, P04, "--engine", "gnnplan", "--model",
                                                      "blockswrld=blocks", "-o", t), ["blockswrld", "blocksworld"]),
    ("compare-engine-unknown", lambda t: cli("compare", BLOCKS, P04, "--engine", "no-such-planner", "-o", t),
     ["unknown engine 'no-such-planner'", "--register"]),
    ("compare-engine-param-invalid", lambda t: cli("compare", BLOCKS, P04, "--engine", "gnnplan", "--engine-param",
                                                   "gnnplan:max_steps=abc", "-o", t), ["gnnplan", "'max_steps'", "abc"]),
    ("compare-every-task-fails", lambda t: cli("compare", example("gripper"), example("gripper", "p01.pddl"), "--engine",
                                               "gnnplan", "--model", "blocks", "--timeout", "20", "--no-plots", "-o", t),
     ["every task (1) ended in unsupported_problem", "blocks.onnx", "predicates differ"]),
    ("plan-file-missing-folder", lambda t: cli("solve", BLOCKS, P04, "--plan-file", t / "no" / "plan.txt"),
     ["--plan-file", "does not exist"]),
    ("example-unknown", lambda t: cli("solve", "--example", "sokoban"), ["no bundled example 'sokoban'", "blocksworld"]),
    ("example-problem-unknown", lambda t: cli("solve", "--example", "blocksworld/p99.pddl"), ["p99.pddl", "p04.pddl"]),
    ("dataset-of-two-domains", lambda t: cli("dataset", BLOCKS, example("gripper", "p01.pddl"), "-o", t / "o.npz"),
     ["p01.pddl"]),
    # budgets and sizes (the options are refused before anything is read: any existing file stands for a dataset)
    ("train-timeout-negative", lambda t: cli("train", BLOCKS, "-o", t / "m.pt", "--timeout", "-1"),
     ["--timeout", "-1", "above 0"]),
    ("train-timeout-zero", lambda t: cli("train", BLOCKS, "-o", t / "m.pt", "--timeout", "0"),
     ["--timeout", "above 0"]),
    ("train-timeout-nan", lambda t: cli("train", BLOCKS, "-o", t / "m.pt", "--timeout", "nan"),
     ["--timeout", "nan", "above 0"]),
    ("train-lr-zero", lambda t: cli("train", BLOCKS, "-o", t / "m.pt", "--lr", "0"), ["--lr", "x>0"]),
    ("train-batch-size-zero", lambda t: cli("train", BLOCKS, "-o", t / "m.pt", "--batch-size", "0"),
     ["--batch-size", "x>=1"]),
    ("dataset-plan-time-limit-negative", lambda t: cli("dataset", "--example", "blocksworld", "-o", t / "o.npz",
                                                       "--plan-time-limit", "-1"), ["--plan-time-limit", "-1", "above 0"]),
    ("dataset-plan-time-limit-zero", lambda t: cli("dataset", "--example", "blocksworld", "-o", t / "o.npz",
                                                   "--plan-time-limit", "0"), ["--plan-time-limit", "above 0"]),
    ("dataset-plan-time-limit-nan", lambda t: cli("dataset", "--example", "blocksworld", "-o", t / "o.npz",
                                                  "--plan-time-limit", "nan"), ["--plan-time-limit", "above 0"]),
    ("dataset-successor-time-limit-zero", lambda t: cli("dataset", "--example", "blocksworld", "-o", t / "o.npz",
                                                        "--successor-time-limit", "0"),
     ["--successor-time-limit", "above 0"]),
    ("dataset-max-states-zero", lambda t: cli("dataset", "--example", "blocksworld", "-o", t / "o.npz",
                                              "--max-states", "0"), ["--max-states", "x>=1"]),
    ("generate-unknown-domain", lambda t: cli("generate", "no-such-domain", "-o", t), ["no-such-domain", "known"]),
    ("generate-bad-size", lambda t: cli("generate", "childsnack", "-o", t, "-p", "children=x"), ["children=x", "number"]),
]


def up_gnnplan_planner(params):
    from unified_planning.shortcuts import OneshotPlanner

    return OneshotPlanner(name="gnnplan", params=params)


@pytest.mark.parametrize("make, fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_gets_a_clear_error(make, fragments, tmp_path):
    message = make(tmp_path)
    for fragment in fragments:
        fragment = fragment.replace("{tmp}", str(tmp_path))
        assert fragment in message, f"{fragment!r} not in: {message}"


def test_cuda_device_is_refused_with_the_reason_when_unavailable():
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this machine offers CUDA")
    message = usage(lambda: GnnplanEngine(device="cuda"))
    assert "'device'" in message and "cuda" in message and "up-gnnplan[gpu]" in message
    output = cli("solve", BLOCKS, P04, "--device", "cuda")
    assert "device 'cuda' is not available" in output


def test_existential_goal_is_named_in_the_log(tmp_path):
    """Until goal grounding exists, a solve says that the model cannot see an existential goal."""
    from up_gnnplan.problems import Task

    problem = load_pddl(TYPED_BLOCKS, fixture("blocksworld", "exists-goal.pddl"))
    pytest.importorskip("torch")
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.checkpoint import build

    config = TrainConfig(hidden=4, layers=1)
    encoding, model = build(config, Task(problem).signature)
    path = export_onnx(model, encoding, tmp_path / "m.onnx", domain="blocksworld", train_config=config.to_dict(),
                       training_record={})
    result = GnnplanEngine(model=str(path), mode="gbfs").solve(problem, timeout=60)
    warnings_given = [m.message for m in result.log_messages if m.level.name == "WARNING"]
    assert any("existentially quantified" in w and "cannot see" in w for w in warnings_given)


def test_no_false_typing_warning_for_a_typed_function(tmp_path):
    domain = write(tmp_path / "domain.pddl", """(define (domain lights)
  (:requirements :strips :action-costs)
  (:predicates (on ?x) (off ?x))
  (:functions (total-cost) - number)
  (:action switch :parameters (?x) :precondition (off ?x)
    :effect (and (on ?x) (not (off ?x)) (increase (total-cost) 1))))
""")
    problem = write(tmp_path / "p.pddl", "(define (problem p) (:domain lights) (:objects a b) "
                    "(:init (off a) (off b) (= (total-cost) 0)) (:goal (and (on a) (on b))) (:metric minimize (total-cost)))")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PddlQuirkWarning)
        assert load_task(domain, problem).num_objects == 2


def test_plan_is_kept_when_the_plan_file_cannot_be_written():
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full, where every write fails")
    # The folder exists, so the check before solving passes; the write after the plan was found fails.
    result = CliRunner().invoke(main, ["solve", str(BLOCKS), str(P04), "--plan-file", "/dev/full"])
    assert "(unstack" in result.output or "(pick-up" in result.output, result.output
    assert "cannot be written" in result.output and "printed above" in result.output


def test_the_suite_covers_every_kind_of_input():
    kinds = {c[0].split("-")[0] for c in CASES}
    assert {"missing", "model", "checkpoint", "param", "engine", "solve", "compare", "plan", "example"} <= kinds
    assert len(CASES) >= 40

"""The dataset file format: round trip, provenance, refusals; optimal labels equal expanded ones."""

from __future__ import annotations

import hashlib
import json
import numpy as np
import pytest
from pddl_cases import PROBLEMS

from up_gnnplan.data import example
from up_gnnplan.datasets.build import BuildOptions, build_dataset
from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.optimal import label_optimal
from up_gnnplan.datasets.store import FORMAT, VERSION, Dataset
from up_gnnplan.errors import DatasetError, DatasetMismatchError

ARRAYS = ("state_problem", "value", "steps", "dead_end", "is_goal", "label", "fluent_ptr", "fluent_pred", "fluent_args")


@pytest.fixture(scope="module")
def blocks():
    domain = example("blocksworld")
    return build_dataset(domain, [example("blocksworld", "p02.pddl"), example("blocksworld", "p03.pddl")])


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_round_trip(blocks, tmp_path):
    path = blocks.save(tmp_path / "blocks")  # .npz is appended
    assert path.name == "blocks.npz"
    again = Dataset.load(path, expect=blocks.signature)
    assert again.domain == "blocksworld" and again.signature == blocks.signature
    assert again.package_version == blocks.package_version != ""
    for key in ARRAYS:
        mine, theirs = getattr(blocks, key), getattr(again, key)
        assert mine.dtype == theirs.dtype, key
        assert np.array_equal(mine, theirs), key
    assert len(again) == len(blocks) == 5 + 22  # p02 and p03 fully expanded
    for i in range(len(blocks)):
        assert again.state_strings(i) == blocks.state_strings(i)
    for mine, theirs in zip(blocks.problems, again.problems):
        assert mine.meta() == theirs.meta()
        for key in ("static", "goal", "negative_goal"):
            a, b = getattr(mine, key), getattr(theirs, key)
            assert np.array_equal(a.pred, b.pred) and np.array_equal(a.args, b.args), key


def test_provenance(blocks, tmp_path):
    again = Dataset.load(blocks.save(tmp_path / "blocks.npz"))
    record = again.problems[1]
    assert record.name == "p03"
    assert record.domain_file == str(example("blocksworld"))
    assert record.problem_file == str(example("blocksworld", "p03.pddl"))
    assert record.domain_sha256 == sha256(example("blocksworld"))
    assert record.problem_sha256 == sha256(example("blocksworld", "p03.pddl"))
    assert record.object_names == ["a", "b", "c"]
    assert record.method == "expanded"
    assert record.stats == {"states": 22, "dead_ends": 0, "initial_value": 6.0, "objects": 3}
    # A state's atoms in the file are its problem's static atoms plus its fluent atoms.
    for i in np.flatnonzero(again.state_problem == 1).tolist():
        fluent = again.fluent_atoms(i).as_strings(again.signature, record.object_names)
        static = record.static.as_strings(again.signature, record.object_names)
        assert again.state_strings(i) == sorted(fluent + static) == blocks.state_strings(i)


def test_expect_another_domain_names_both_differences(blocks, tmp_path):
    path = blocks.save(tmp_path / "blocks.npz")
    gripper = build_dataset(example("gripper"), [example("gripper", "p01.pddl")])
    with pytest.raises(DatasetMismatchError) as caught:
        Dataset.load(path, expect=gripper.signature)
    message = str(caught.value)
    assert str(path) in message and "blocksworld" in message
    assert "only in the first: clear/1" in message and "on/2" in message  # blocksworld's
    assert "only in the second: at/2" in message and "carry/2" in message  # gripper's


def test_merging_another_domain_is_refused(blocks):
    gripper = build_dataset(example("gripper"), [example("gripper", "p01.pddl")])
    with pytest.raises(DatasetMismatchError):
        Dataset(blocks.domain, blocks.signature).extend(gripper)


def test_build_refuses_problems_of_another_domain(tmp_path):
    # A gripper problem against the blocksworld domain does not even parse: our error.
    from up_gnnplan.errors import GnnplanError

    with pytest.raises(GnnplanError):
        build_dataset(example("blocksworld"), [example("gripper", "p01.pddl")])


def _rewrite(path, target, **changes):
    """Copy dataset ``path`` to ``target`` with some arrays replaced or (None) removed."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    for key, value in changes.items():
        if value is None:
            del arrays[key]
        else:
            arrays[key] = value
    np.savez_compressed(target, **arrays)
    return target


def _meta(path) -> dict:
    with np.load(path) as data:
        return json.loads(str(data["meta"]))


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda raw: b"",  # empty file
        lambda raw: b"not a zip file at all" * 10,
        lambda raw: raw[: len(raw) // 2],  # truncated
        lambda raw: raw[:200] + bytes(b ^ 0xFF for b in raw[200:400]) + raw[400:],  # bit flips
    ],
    ids=["empty", "garbage", "truncated", "flipped"],
)
def test_corrupt_file(corrupt, blocks, tmp_path):
    path = blocks.save(tmp_path / "blocks.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(corrupt(path.read_bytes()))
    with pytest.raises(DatasetError) as caught:
        Dataset.load(bad)
    assert str(bad) in str(caught.value)


def test_missing_array_or_metadata_entry(blocks, tmp_path):
    path = blocks.save(tmp_path / "blocks.npz")
    for target, changes in (
        ("no-value.npz", {"value": None}),
        ("no-meta.npz", {"meta": None}),
        ("bad-json.npz", {"meta": np.array("{not json")}),
        ("list-meta.npz", {"meta": np.array("[1, 2]")}),
    ):
        with pytest.raises(DatasetError, match=target):
            Dataset.load(_rewrite(path, tmp_path / target, **changes))
    meta = _meta(path)
    del meta["problems"][0]["object_names"]
    with pytest.raises(DatasetError, match="corrupt"):
        Dataset.load(_rewrite(path, tmp_path / "entry.npz", meta=np.array(json.dumps(meta))))


def test_wrong_format_version(blocks, tmp_path):
    path = blocks.save(tmp_path / "blocks.npz")
    meta = _meta(path)
    assert (meta["format"], meta["version"]) == (FORMAT, VERSION)
    meta["version"] = VERSION + 1
    target = _rewrite(path, tmp_path / "future.npz", meta=np.array(json.dumps(meta)))
    with pytest.raises(DatasetError, match=f"version {VERSION + 1} is not supported"):
        Dataset.load(target)
    meta["version"], meta["format"] = VERSION, "something-else"
    target = _rewrite(path, tmp_path / "other.npz", meta=np.array(json.dumps(meta)))
    with pytest.raises(DatasetError, match="not an up-gnnplan dataset"):
        Dataset.load(target)


def test_missing_dataset_file(tmp_path):
    with pytest.raises(DatasetError, match="no such dataset file"):
        Dataset.load(tmp_path / "nothing.npz")


# -- labelling along optimal plans -----------------------------------------------------------


@pytest.mark.parametrize("name", ["bw-p04", "gripper-p01", "costs", "costs-zero", "roads", "oneway-deadends"])
@pytest.mark.parametrize("heuristic", ["hmax", "blind"])
def test_optimal_labels_equal_full_expansion(name, heuristic, task_of):
    task = task_of(name)
    full = expand(task)
    key = lambda atoms: tuple(atoms.as_strings(task.signature, task.object_names))  # noqa: E731
    index = {key(s): i for i, s in enumerate(full.states)}
    optimal = label_optimal(task, heuristic=heuristic)
    assert optimal.initial_value == full.initial_value
    assert set(optimal.label.tolist()) <= {1, 2} and (optimal.label == 1).sum() >= 1
    assert len({key(s) for s in optimal.states}) == len(optimal)  # no state twice
    for i, atoms in enumerate(optimal.states):
        j = index[key(atoms)]
        got = (optimal.value[i], optimal.steps[i], optimal.dead_end[i], optimal.is_goal[i])
        assert got == (full.value[j], full.steps[j], full.dead_end[j], full.is_goal[j]), key(atoms)


@pytest.mark.parametrize("name", ["bw-p04", "gripper-p01"])
def test_an_expansion_limit_leaves_out_the_same_successors_every_time(name, task_of):
    task = task_of(name)
    unlimited = label_optimal(task)
    assert unlimited.left_out == {"time": 0, "expansion": 0}
    first, second = (label_optimal(task, successor_expansion_limit=1) for _ in range(2))
    assert first.left_out["expansion"] > 0 and first.left_out["time"] == 0
    assert len(first) == len(second) == len(unlimited) - first.left_out["expansion"]
    keys = [sorted(map(tuple, (s.as_strings(task.signature, task.object_names) for s in run.states)))
            for run in (first, second)]
    assert keys[0] == keys[1] and np.array_equal(first.value, second.value)
    full = {tuple(s.as_strings(task.signature, task.object_names)): v for s, v in zip(unlimited.states, unlimited.value)}
    assert all(full[tuple(s.as_strings(task.signature, task.object_names))] == v
               for s, v in zip(first.states, first.value))  # what is labelled is labelled exactly


def test_the_python_astar_of_tasks_with_costs_stops_at_its_expansion_limit(task_of):
    from up_gnnplan.datasets.optimal import _astar_with_costs, _heuristic

    task = task_of("bw-p04")
    heuristic = _heuristic(task, "hmax")
    assert _astar_with_costs(task, task.initial_state(), heuristic, 60.0, expansion_limit=1)[0] == "expansion-limit"
    status, cost, plan = _astar_with_costs(task, task.initial_state(), heuristic, 60.0, expansion_limit=10_000)
    assert status == "solved" and cost == label_optimal(task).initial_value == len(plan)


def test_build_with_method_optimal(tmp_path):
    domain, problem = PROBLEMS["bw-p03"]
    data = build_dataset(domain, [problem], BuildOptions(method="optimal"))
    assert data.problems[0].method == "optimal-plan"
    assert data.problems[0].stats["initial_value"] == 6.0
    assert not np.isinf(data.value).any()
    again = Dataset.load(data.save(tmp_path / "optimal.npz"))
    assert np.array_equal(again.label, data.label)

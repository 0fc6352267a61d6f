"""The shipped models: every index entry names a loadable ONNX file of its own domain, with the
training record the project promises (command, data, seed, minutes, validation error)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from up_gnnplan.cli import main
from up_gnnplan.models_zoo import ACTION_HEADS, VALUE_HEADS, entries, find_model, heads_of, zoo_dir
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.states import PredicateSignature

SHIPPED = entries()


def test_there_are_shipped_models():
    assert SHIPPED, "the package must ship pretrained models"


@pytest.mark.parametrize("entry", SHIPPED, ids=[e["name"] for e in SHIPPED])
def test_entry_matches_its_file(entry):
    path = zoo_dir() / entry["file"]
    assert path.is_file()
    runtime = OnnxValueFunction(path)
    signature = PredicateSignature.from_json(entry["signature"])
    assert runtime.signature == signature
    assert runtime.architecture == entry["architecture"]
    need = "actions" if heads_of(entry) in ACTION_HEADS else "value"
    assert find_model(signature, need) == path  # found by the predicates of its domain and its head alone
    record = entry["training"]
    assert record["command"].startswith(("gnnplan train ", "gnnplan learn "))  # one command of the package
    # A value head's validation is its error in steps; an action head's, the share of states whose
    # best-scored action is optimal (it has no error in steps).
    validated = "validation_mae" if need == "value" else "validation"
    for key in ("problems", "seed", "minutes", validated, "torch"):
        assert record.get(key) not in (None, "", [], {}), key


def test_a_domain_ships_at_most_one_model_per_kind_of_head():
    kinds = [(tuple(map(tuple, e["signature"])), heads_of(e) in ACTION_HEADS) for e in SHIPPED]
    assert len(kinds) == len(set(kinds))


def test_mode_auto_takes_the_action_model_and_the_value_modes_the_value_model():
    """A domain with both kinds ships them both: policy and gbfs still run on it (they need V)."""
    both = {}
    for entry in SHIPPED:
        both.setdefault(tuple(map(tuple, entry["signature"])), []).append(entry)
    pairs = [entries_ for entries_ in both.values() if len(entries_) == 2]
    assert pairs, "the domains with an action model keep their value model"
    for pair in pairs:
        signature = PredicateSignature.from_json(pair[0]["signature"])
        action = next(e for e in pair if heads_of(e) in ACTION_HEADS)
        value = next(e for e in pair if heads_of(e) not in ACTION_HEADS)
        assert find_model(signature).name == action["file"]
        assert find_model(signature, "actions").name == action["file"]
        assert find_model(signature, "value").name == value["file"]
        # The graphs' outputs, read without an onnxruntime session each (36 sessions took 10 s of the default run):
        # what OnnxValueFunction's has_value and has_actions are read from (checked on one pair below).
        assert "value" in _outputs(zoo_dir() / value["file"])
        assert "scores" in _outputs(zoo_dir() / action["file"])
    first = pairs[0]
    value = next(e for e in first if heads_of(e) not in ACTION_HEADS)
    action = next(e for e in first if heads_of(e) in ACTION_HEADS)
    assert OnnxValueFunction(zoo_dir() / value["file"]).has_value
    assert OnnxValueFunction(zoo_dir() / action["file"]).has_actions


def _outputs(path) -> list[str]:
    try:
        import onnx
    except ImportError:  # the runtime's install without the export extra: a session reads them
        return OnnxValueFunction(path).outputs
    return [output.name for output in onnx.load(str(path), load_external_data=False).graph.output]


def test_every_shipped_file_has_an_entry_and_every_action_model_its_value_model():
    """No ONNX file ships without its record, and no domain loses its value head to an action model
    (``keep_value_model`` once dropped the renamed entry and left rovers-value.onnx unlisted): an
    action model either has a value head itself (``gnnplan learn``'s) or a value model beside it."""
    assert {p.name for p in zoo_dir().glob("*.onnx")} == {e["file"] for e in SHIPPED}
    for entry in SHIPPED:
        if heads_of(entry) in ACTION_HEADS and heads_of(entry) not in VALUE_HEADS:
            assert any(heads_of(other) not in ACTION_HEADS and other["signature"] == entry["signature"]
                       for other in SHIPPED), f"{entry['name']} has no value model beside it"


def test_a_model_of_both_heads_serves_every_mode():
    both = [e for e in SHIPPED if heads_of(e) == "both"]
    for entry in both:
        signature = PredicateSignature.from_json(entry["signature"])
        assert find_model(signature) == find_model(signature, "actions") == zoo_dir() / entry["file"]
        value_only = [e for e in SHIPPED if e["signature"] == entry["signature"] and heads_of(e) == "value"]
        assert find_model(signature, "value") == zoo_dir() / (value_only[0] if value_only else entry)["file"]
        runtime = OnnxValueFunction(zoo_dir() / entry["file"])
        assert runtime.has_value and runtime.has_actions


def test_models_command_lists_every_entry():
    result = CliRunner().invoke(main, ["models", "--markdown"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| ") and not line.startswith("| model")]
    assert sorted(r.split(" | ")[0][2:] for r in rows) == sorted(e["name"] for e in SHIPPED)
    assert max(len(r) for r in rows) < 4000  # long lists of validation problems are summarised
    header = next(line for line in result.output.splitlines() if line.startswith("| model"))
    assert {r.count(" | ") for r in rows} == {header.count(" | ")}  # every row fills every column, no more


def test_models_command_is_a_compact_table_with_the_coverage_now():
    """A row per model: its domain, what it computes, and gnnplan's coverage per test set, from the
    standing comparison where the entry has one (written by benchmarks/standing.py report); no
    paths of the repository's benchmark folders, which an installed package does not have."""
    import re

    with_standing = [e for e in SHIPPED if e.get("standing")]
    assert with_standing, "no shipped model carries the standing comparison's figures"
    result = CliRunner().invoke(main, ["models"])
    assert result.exit_code == 0, result.output
    assert "benchmarks/" not in result.output
    rows = {line.split()[0]: line for line in result.output.splitlines()[1:] if line.strip()}
    assert set(rows) == {e["name"] for e in SHIPPED}
    for entry in SHIPPED:
        assert entry["domain"] in rows[entry["name"]]
    for entry in with_standing:
        name, _, figure = re.findall(r"([\w.-]+) \((\d+) tasks\): (\d+/\d+)", entry["standing"])[0]
        assert f"{name} {figure}" in rows[entry["name"]], rows[entry["name"]]
    details = CliRunner().invoke(main, ["models", "--details"])
    assert details.exit_code == 0 and "trained" in details.output and "validation" in details.output


def test_problem_lists_are_summarised():
    from up_gnnplan.exporters.shipping import problem_list as _problem_list

    names = [f"p{i}#{k}" for i in range(8) for k in range(3)] + ["q"]
    assert _problem_list(names) == ("p0 (3 goal variants), p1 (3 goal variants), p2 (3 goal variants), "
                                    "p3 (3 goal variants), p4 (3 goal variants), p5 (3 goal variants), "
                                    "... (9 problems in all)")
    assert _problem_list(["a.pddl", "b.pddl"]) == "a.pddl, b.pddl" and _problem_list([]) == ""


def test_every_bundled_example_is_solved_by_a_shipped_model():
    """``gnnplan solve --example NAME`` offers every bundled domain; each must find its model and solve."""
    from up_gnnplan.data import example_names

    names = example_names()
    assert {"blocksworld", "gripper"} <= set(names)
    for name in names:
        result = CliRunner().invoke(main, ["solve", "--example", name, "--timeout", "60"])
        assert result.exit_code == 0, f"{name}: {result.output}"
        assert "plan validated" in result.output


def test_the_index_is_strict_json():
    """No NaN or Infinity (Python writes them, other JSON readers refuse them)."""
    import json
    from pathlib import Path

    import up_gnnplan.models_zoo as zoo

    def refuse(constant):
        raise ValueError(f"index.json holds {constant}")

    json.loads((Path(zoo.__file__).parent / "index.json").read_text(), parse_constant=refuse)


def test_index_edits_and_keep_as_write_one_sorted_index(tmp_path, monkeypatch):
    import json

    import up_gnnplan.models_zoo as zoo
    from up_gnnplan.exporters import shipping

    monkeypatch.setattr(zoo, "zoo_dir", lambda: tmp_path)
    (tmp_path / "b.onnx").write_bytes(b"b")
    shipping.write_index([{"name": "b", "file": "b.onnx", "head": "logits", "standing": "29/30"},
                     {"name": "a", "file": "a.onnx", "head": "value"}])
    with shipping.editing_index() as models:
        next(m for m in models if m["name"] == "a")["coverage"] = "3/3"
    assert [m["name"] for m in zoo.entries()] == ["a", "b"] and zoo.entries()[0]["coverage"] == "3/3"
    with pytest.raises(RuntimeError), shipping.editing_index() as models:
        models.clear()
        raise RuntimeError("a failed edit")
    assert len(zoo.entries()) == 2  # an edit that fails writes nothing
    shipping.keep_as("b", "b-old")  # renamed with its file; the standing figures belong to the model that replaces it
    kept = json.loads((tmp_path / "index.json").read_text())["models"]
    assert [m["name"] for m in kept] == ["a", "b-old"] and (tmp_path / "b-old.onnx").read_bytes() == b"b"
    assert "standing" not in kept[1] and kept[1]["file"] == "b-old.onnx"


def test_the_runtime_lookup_holds_no_index_tools():
    """models_zoo is the runtime lookup only: the index-editing tools live in exporters.shipping."""
    import up_gnnplan.models_zoo as zoo
    from up_gnnplan.exporters import shipping

    for name in ("editing_index", "write_index", "keep_as", "keep_value_model", "ship"):
        assert not hasattr(zoo, name) and callable(getattr(shipping, name))

"""``compare`` refuses a configuration that cannot run, and names an engine that failed every task alike."""

from __future__ import annotations

import pytest

from up_gnnplan.compare import _install_hint, check_engines, engine_faults, file_problems, make_tasks, parse_engine
from up_gnnplan.data import example
from up_gnnplan.errors import GnnplanError


def test_a_known_engine_that_is_not_installed_says_what_to_install():
    assert "pip install 'up-gnnplan[fast-downward]'" in _install_hint("fast-downward", registered={})
    assert "pip install up-pyperplan" in _install_hint("pyperplan", registered={})
    assert "--register" in _install_hint("wl-goose", registered={})


def test_engine_configurations_are_checked_once_before_the_run(tmp_path):
    problems = file_problems(example("blocksworld"), [example("blocksworld", "p04.pddl")])
    specs = [parse_engine("gnnplan")]
    check_engines(make_tasks(specs, problems, 10.0, model="blocksworld"))  # a shipped model: fine
    with pytest.raises(GnnplanError, match="no such model file"):
        check_engines(make_tasks(specs, problems, 10.0, model={"blocksworld": str(tmp_path / "none.onnx")}))


def record(engine, status, error=None):
    return {"engine": engine, "status": status, "error": error, "notes": None}


def test_an_engine_is_faulty_only_when_every_task_ended_in_the_same_error():
    records = [record("a", "unsupported_problem", "m.onnx: no such model file\nmore"), record("a", "unsupported_problem"),
               record("b", "error", "x"), record("b", "solved_satisficing"),
               record("c", "timeout"), record("c", "timeout"),
               record("d", "error"), record("d", "internal_error", "y")]
    assert engine_faults(records, ["a", "b", "c", "d"]) == [
        "engine a: every task (2) ended in unsupported_problem: m.onnx: no such model file"]

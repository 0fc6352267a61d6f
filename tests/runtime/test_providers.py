"""Which ONNX runtime is installed, which device a session runs on, and what the user is told."""

from __future__ import annotations

import sys

import pytest
from unified_planning.engines import PlanGenerationResultStatus as Status

from up_gnnplan.data import example
from up_gnnplan.models_zoo import zoo_dir
from up_gnnplan.plugins.engine import GnnplanEngine
from up_gnnplan.problems.loading import load_pddl
from up_gnnplan.runtime import OnnxValueFunction, providers
from up_gnnplan.runtime.providers import CPU, RuntimeSetupError, conflict_message, device_note, providers_for


@pytest.fixture
def no_onnxruntime(monkeypatch):
    """Make ``import onnxruntime`` fail, as on an install without the cpu or gpu extra."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)


def test_missing_runtime_names_both_extras(no_onnxruntime):
    with pytest.raises(RuntimeSetupError) as caught:
        providers.import_onnxruntime()
    message = str(caught.value)
    assert "no ONNX runtime is installed" in message
    assert "up-gnnplan[cpu]" in message and "up-gnnplan[gpu]" in message


def test_missing_runtime_is_an_internal_error_of_the_solve_not_an_unsupported_problem(no_onnxruntime):
    problem = load_pddl(example("blocksworld"), example("blocksworld", "p04.pddl"))
    result = GnnplanEngine().solve(problem, timeout=30)
    assert result.status == Status.INTERNAL_ERROR
    assert "up-gnnplan[cpu]" in result.log_messages[-1].message


def test_cpu_device_gets_the_cpu_provider():
    assert providers_for("cpu") == [CPU]
    value_fn = OnnxValueFunction(zoo_dir() / "blocks.onnx", device="cpu")
    assert value_fn.provider == CPU


def test_unknown_device_is_refused():
    with pytest.raises(RuntimeSetupError, match="unknown device 'tpu'"):
        providers_for("tpu")


def test_both_wheels_installed_is_named_with_the_fix(monkeypatch):
    monkeypatch.setattr(providers, "installed_runtimes", lambda: ["onnxruntime", "onnxruntime-gpu"])
    message = conflict_message()
    assert "both onnxruntime and onnxruntime-gpu are installed" in message and "pip uninstall" in message
    assert device_note("auto", CPU) == message  # the solve log warns, also with device auto
    assert device_note("cpu", CPU) is None  # asking for the CPU is not affected


def test_solve_log_names_the_provider():
    problem = load_pddl(example("blocksworld"), example("blocksworld", "p04.pddl"))
    result = GnnplanEngine().solve(problem, timeout=30)
    assert result.metrics["provider"] in ("CPUExecutionProvider", "CUDAExecutionProvider")
    assert any(f"on {result.metrics['provider']}" in m.message for m in result.log_messages)

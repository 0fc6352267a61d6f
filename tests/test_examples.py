"""Every script in ``examples/`` runs to the end (in its own process, with a time limit).

They run with short training budgets (the first two train a tiny model only when no model
ships; the training example with 10 s on a small grid); the training example at its defaults
is opt-in (``--runslow``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

pytest.importorskip("torch")
pytest.importorskip("onnx")


def run_example(name: str, *args: str, timeout: float, cwd: Path) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_every_example_has_a_test_and_a_docstring_saying_how_to_run_it():
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert {"compare_planners.py", "solve_with_up.py", "train_new_domain.py"} <= set(scripts)
    for script in scripts:
        text = (EXAMPLES / script).read_text()
        assert text.startswith('"""') and f"python examples/{script}" in text, script


def test_solve_with_up(tmp_path):
    out = run_example("solve_with_up.py", "--seconds", "5", timeout=240, cwd=tmp_path)
    assert "p04.pddl: SOLVED_SATISFICING" in out and "(plan validated by the engine)" in out


def test_compare_planners(tmp_path):
    out = run_example("compare_planners.py", "--seconds", "5", "-o", str(tmp_path / "cmp"), timeout=300, cwd=tmp_path)
    assert "| **total** | 5 | 5 | 5 |" in out and "gnnplan: 0 invalid plans" in out
    assert (tmp_path / "cmp" / "summary.md").is_file()
    assert len((tmp_path / "cmp" / "results.jsonl").read_text().splitlines()) == 10


def test_train_new_domain_quickly(tmp_path):
    # The whole pipeline with a 10 s training budget on a small grid: the engine's default mode
    # (the policy, then GBFS, complete on a finite space) solves it even with a weak model.
    out = run_example("train_new_domain.py", "--seconds", "10", "--width", "6", "--height", "4",
                      timeout=300, cwd=tmp_path)
    assert "SOLVED_SATISFICING" in out and "plan validated" in out


@pytest.mark.slow
def test_train_new_domain(tmp_path):
    out = run_example("train_new_domain.py", timeout=600, cwd=tmp_path)
    assert "SOLVED_SATISFICING" in out and "plan validated" in out

"""Every script in ``examples/`` runs to the end in its own process, or stops with one line naming its extra.

Each example's docstring names the install it needs (``pip install 'up-gnnplan[...]'``). Where
that install is here, the example runs to the end; without it, the example must stop at once with
exit code 2 and one line saying what to install (checked by hiding the module in the example's
process). The training example runs with a shorter budget by default and at its defaults with
``--runslow``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXIT_MISSING_EXTRA = 2


def _has_fast_downward() -> bool:
    from unified_planning.shortcuts import get_environment

    return "fast-downward" in get_environment().factory.engines


def _has(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


# name -> (arguments, what the output must contain, whether its install is here, modules whose absence it names)
RUNS = {
    "solve_with_up.py": ([], ["test-20.pddl: SOLVED_SATISFICING", "(plan validated by the engine)"],
                         lambda: _has("onnxruntime"), ["onnxruntime"]),
    "compare_planners.py": (["-o", "cmp"], ["| **total** | 5 | 5 | 5 |", "gnnplan: 0 invalid plans", "cmp/summary.md"],
                            lambda: _has("onnxruntime") and _has_fast_downward(), ["up_fast_downward", "onnxruntime"]),
    "ground_goal.py": ([], ["SOLVED_SATISFICING", "plan validated against the quantified goal"],
                       lambda: _has("onnxruntime") and _has_fast_downward(), ["up_fast_downward", "onnxruntime"]),
    "train_new_domain.py": (["--seconds", "20", "--balls", "12"], ["SOLVED_SATISFICING", "plan validated"],
                            lambda: _has("onnxruntime", "torch", "onnx"), ["torch", "onnx", "onnxruntime"]),
}
# Run the example with some modules hidden (as if their extra were not installed).
HIDE_AND_RUN = ("import runpy, sys\n"
                "for name in sys.argv[1].split(','):\n"
                "    sys.modules[name] = None\n"
                "path = sys.argv[2]\n"
                "sys.argv = sys.argv[2:]\n"
                "runpy.run_path(path, run_name='__main__')\n")


def run(command: list[str], timeout: float, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def run_example(name: str, *args: str, timeout: float, cwd: Path) -> str:
    done = run([sys.executable, str(EXAMPLES / name), *args], timeout, cwd)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_every_example_is_run_here_and_names_its_install():
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert sorted(RUNS) == scripts, "every example needs an entry in RUNS"
    for script in scripts:
        text = (EXAMPLES / script).read_text()
        docstring = text.split('"""')[1]
        assert text.startswith('"""') and f"python examples/{script}" in docstring, script
        assert "pip install 'up-gnnplan[" in docstring, f"{script}: its docstring must name the install it needs"


# train_new_domain.py learns for its whole --seconds budget (20 s here): opt-in, as is its run at its defaults, to keep
# the default run under 10 minutes; tests/learn/test_learn.py learns end to end and solves with the result by default.
SLOW_RUNS = {"train_new_domain.py"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW_RUNS else name
                                  for name in sorted(RUNS)])
def test_example_runs_where_its_install_is(name, tmp_path):
    args, expected, installed, _ = RUNS[name]
    if not installed():
        done = run([sys.executable, str(EXAMPLES / name), *args], 60, tmp_path)
        assert done.returncode == EXIT_MISSING_EXTRA and "pip install 'up-gnnplan[" in done.stderr, done.stderr
        pytest.skip(f"{name}: its install is not here (it said so: {done.stderr.strip()})")
    out = run_example(name, *args, timeout=300, cwd=tmp_path)
    for text in expected:
        assert text in out, f"{name}: {text!r} not in its output:\n{out[-3000:]}"


@pytest.mark.parametrize("name,hidden", [(name, module) for name, entry in sorted(RUNS.items()) for module in entry[3]])
def test_example_without_its_extra_stops_with_one_line(name, hidden, tmp_path):
    done = run([sys.executable, "-c", HIDE_AND_RUN, hidden, str(EXAMPLES / name)], 60, tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == EXIT_MISSING_EXTRA, f"{name} without {hidden}: exit {done.returncode}\n{done.stderr[-2000:]}"
    assert len(lines) == 1 and "pip install 'up-gnnplan[" in lines[0], done.stderr
    assert done.stdout == "", done.stdout


@pytest.mark.slow
def test_train_new_domain_at_its_defaults(tmp_path):
    if not RUNS["train_new_domain.py"][2]():
        pytest.skip("needs onnxruntime, torch and onnx")
    out = run_example("train_new_domain.py", timeout=600, cwd=tmp_path)
    assert "SOLVED_SATISFICING" in out and "plan validated" in out

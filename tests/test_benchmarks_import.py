"""The benchmarks are a package: every module imports, and every script answers ``--help``.

The benchmarks themselves run for hours on public benchmark sets outside the repository; these checks need neither.
They catch a script that no longer imports (a helper it took from another script was removed),
one that runs on import, and a parser that no longer builds.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import benchmarks

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(info.name for info in pkgutil.walk_packages(benchmarks.__path__, "benchmarks."))
# Modules whose import changes the process: imported in a process of their own.
REGISTERS = {"benchmarks.goose.engine": "registers the wl-goose engine in UP's global environment"}
# The scripts, found without importing them (an import error belongs to its own test).
SCRIPTS = [name for name in MODULES if "\ndef main(" in Path(importlib.util.find_spec(name).origin).read_text()]


def test_the_package_has_the_scripts_and_the_peer():
    assert {"benchmarks.common", "benchmarks.build_zoo", "benchmarks.policy_steps", "benchmarks.goose.train"} <= set(MODULES)
    assert len(SCRIPTS) >= 25


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    if name in REGISTERS:
        subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, check=True, timeout=120)
    else:
        importlib.import_module(name)


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_answers_help(name, capsys):
    module = importlib.import_module(name)
    with pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    assert stop.value.code == 0
    assert "usage:" in capsys.readouterr().out
    assert f"python -m {name}" in module.__doc__, "the docstring gives the command that runs the script"


def test_no_module_edits_sys_path():
    edits = [str(path.relative_to(ROOT)) for path in (ROOT / "benchmarks").rglob("*.py")
             if "sys.path.insert" in path.read_text() or "sys.path.append" in path.read_text()]
    assert edits == []

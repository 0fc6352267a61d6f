"""The documents stay usable: the MkDocs site builds strictly, and the README and RESULTS stay short and linked.

The strict build fails on any warning: a link to a page or anchor that does not exist, a page
missing from the nav. It needs the ``docs`` extra (skipped without it).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETUP_COMMANDS = (
    "pip install -e '.[cpu]' && gnnplan solve --example blocksworld",
    "pip install torch==2.13.0 -e '.[all]' && python -m pytest -q -n auto --dist loadfile",
)
MODELS_BEGIN = "<!-- gnnplan models --markdown: begin"
MODELS_END = "<!-- gnnplan models --markdown: end -->"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="needs the docs extra (mkdocs)")
def test_the_documentation_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "learning" / "index.html").is_file()


def test_the_models_page_is_the_models_command_output():
    page = (ROOT / "docs" / "models.md").read_text()
    table = page.split(MODELS_BEGIN)[1].split("\n", 1)[1].split(MODELS_END)[0]
    gnnplan = shutil.which("gnnplan", path=str(Path(sys.executable).parent)) or shutil.which("gnnplan")
    if gnnplan is None:
        pytest.skip("the gnnplan command is not installed")
    done = subprocess.run([gnnplan, "models", "--markdown"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert table.strip() == done.stdout.strip(), (
        "docs/models.md is out of date: replace its table with the output of `gnnplan models --markdown`")


def test_the_readme_is_short_and_keeps_the_two_setup_commands():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    for command in SETUP_COMMANDS:
        assert f"```bash\n{command}\n```" in readme, command


def test_every_relative_link_of_the_readme_and_the_benchmark_docs_exists():
    for document in (ROOT / "README.md", ROOT / "benchmarks" / "RESULTS.md", ROOT / "benchmarks" / "README.md"):
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", document.read_text()):
            if "://" in target:
                continue
            assert (document.parent / target).exists(), f"{document.name}: the link {target} leads nowhere"


def test_results_hold_current_figures_only():
    """RESULTS.md stays a short page of tables and short paragraphs; a run's story goes to its folder's README."""
    lines = (ROOT / "benchmarks" / "RESULTS.md").read_text().splitlines()
    assert len(lines) < 500
    in_code = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code:
            limit = 400 if line.startswith("|") else 120
            assert len(line) <= limit, f"RESULTS.md line {number}: {len(line)} characters (at most {limit})"


def _shown_commands() -> dict[str, set[str]]:
    """Return, per gnnplan subcommand, the options the README and docs/ show in their code blocks."""
    shown: dict[str, set[str]] = {}
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```(?:bash)?\n(.*?)```", document.read_text(), flags=re.S):
            for command in re.split(r"\n|&&|;|\||\$\(", block.replace("\\\n", " ")):
                words = command.split("#")[0].split()
                if len(words) >= 2 and words[0] == "gnnplan" and not words[1].startswith("-"):
                    shown.setdefault(words[1], set()).update(
                        w.split("=")[0] for w in words[2:] if w.startswith("--"))
    return shown


# One interpreter prints the help of every subcommand (the console script's entry point, as `gnnplan SUB --help`).
HELP_ALL = """
import contextlib, io, sys
from importlib.metadata import entry_points
entry = next(iter(entry_points(group="console_scripts", name="gnnplan"))).load()
for sub in sys.argv[1:]:
    out = io.StringIO()
    sys.argv = ["gnnplan", sub, "--help"]
    with contextlib.redirect_stdout(out):
        try:
            entry()
        except SystemExit as stop:
            code = stop.code
    print(f"@@@ {sub} {code}")
    print(out.getvalue())
"""


def test_every_option_the_documents_show_is_one_the_command_takes():
    shown = _shown_commands()
    assert {"solve", "learn", "compare"} <= set(shown)
    done = subprocess.run([sys.executable, "-c", HELP_ALL, *sorted(shown)], capture_output=True, text=True,
                          timeout=120)
    if "No module named" in done.stderr or "StopIteration" in done.stderr:
        pytest.skip("the gnnplan command is not installed")
    assert done.returncode == 0, done.stderr[-2000:]
    for part in done.stdout.split("@@@ ")[1:]:
        head, text = part.split("\n", 1)
        sub, code = head.split()
        assert code in ("0", "None"), f"the documents show `gnnplan {sub}`, which is not a command"
        options = set(re.findall(r"--[a-z][a-z0-9-]*", text)) | {"--help"}
        unknown = sorted(shown[sub] - options)
        assert not unknown, f"the documents show `gnnplan {sub}` with {unknown}, which it does not take"

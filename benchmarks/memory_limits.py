"""Peak memory and wall time of `gnnplan solve` against problem size, before and after the limits work.

For the largest generated instances of several domains (Childsnack in the IPC 2023 Learning
Track layout, Blocksworld, Gripper), this runs the same command line of two versions of the
package on the same files, one run after the other on this machine:

- *before*: a git revision (default ``efecf4f``, the last commit before chunked evaluation and
  the memory limit), checked out into a temporary worktree and run with ``PYTHONPATH`` on it;
- *after*: the working tree.

Each run is ``gnnplan solve DOMAIN PROBLEM --timeout T`` of that version in its own process (the
package imported from the version's folder, not from an editable install),
under an address-space cap (``--cap-mb``, default 8000) so that the old version cannot take the
machine down, and with a wall-clock kill at ``T + --grace``. The peak resident memory of that
process comes from ``os.wait4``; the status from the command's last line (or the kill / the cap).
A third row per instance runs *after* with ``--memory`` (``--memout-mb``) to show the clean
``memout``. Results go to ``OUT/results.json`` and a markdown table on stdout and in ``OUT/summary.md``:

    OMP_NUM_THREADS=1 python -m benchmarks.memory_limits -o benchmarks/results/memory_limits
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import ROOT, run_capped
# (domain, size parameters): the largest instances first of each domain are the ones that matter.
INSTANCES = [
    ("childsnack", {"children": 10, "allergic_children": 6, "trays": 3, "sandwiches": 15}),
    ("childsnack", {"children": 20, "allergic_children": 12, "trays": 3, "sandwiches": 30}),
    ("childsnack", {"children": 30, "allergic_children": 18, "trays": 4, "sandwiches": 45}),
    ("childsnack", {"children": 40, "allergic_children": 24, "trays": 5, "sandwiches": 60}),
    ("blocksworld", {"blocks": 100}),
    ("blocksworld", {"blocks": 200}),
    ("blocksworld", {"blocks": 400}),
    ("gripper", {"balls": 100}),
    ("gripper", {"balls": 200}),
    ("gripper", {"balls": 400}),
]


# Run the CLI of the package on PYTHONPATH (the version's folder): an editable install's import
# hook would otherwise win over it.
BOOTSTRAP = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith('__editable__')]
from up_gnnplan.cli import main
sys.argv = ['gnnplan'] + sys.argv[1:]
main()
"""


def generate_instances(folder: Path) -> list[dict]:
    """Write the instances (seed 0, one problem each) with the working tree's generators."""
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.problems import load_task

    out = []
    for domain, sizes in INSTANCES:
        target = folder / f"{domain}-{'-'.join(f'{k}{v}' for k, v in sizes.items())}"
        (problem,) = generate(domain, target, count=1, seed=0, **sizes)
        task = load_task(target / "domain.pddl", problem)
        out.append({"domain": domain, "sizes": sizes, "objects": task.num_objects,
                    "successors": len(task.initial_state().generate_applicable_actions()),
                    "domain_file": str(target / "domain.pddl"), "problem_file": str(problem)})
    return out


def worktree(revision: str) -> Path:
    """Return a checkout of ``revision`` (made once, kept in the temp folder)."""
    path = Path(tempfile.gettempdir()) / f"gnnplan-worktree-{revision}"
    if not path.is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), revision], check=True,
                       capture_output=True)
    return path


def run(code_root: Path, instance: dict, timeout: float, grace: float, cap_mb: int, extra: list[str]) -> dict:
    """Run one ``gnnplan solve`` and return its status, wall time and peak resident memory."""
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(code_root), os.environ.get("PYTHONPATH")) if p)}
    command = [sys.executable, "-c", BOOTSTRAP, "solve", instance["domain_file"],
               instance["problem_file"], "--timeout", f"{timeout:g}", *extra]
    ran = run_capped(command, cap_mb=cap_mb, kill_after=timeout + grace, env=env, cwd=tempfile.gettempdir())
    text = ran.text
    lines = [line for line in text.strip().splitlines() if line.strip()]
    found = re.search(r": (solved_satisficing|timeout|memout|unsolvable_incompletely|unsolvable_proven)\b",
                      "\n".join(lines[-3:]))
    if ran.killed:
        outcome = f"killed after {timeout:g} s + {grace:g} s"
    elif found:
        outcome = found.group(1)
    elif "MemoryError" in text or "bad_alloc" in text or "Failed to allocate" in text or "std::bad" in text:
        outcome = f"crashed at the {cap_mb} MB cap (out of memory)"
    else:
        outcome = f"exit {os.waitstatus_to_exitcode(ran.status)}: {lines[-1][:120] if lines else ''}"
    return {"outcome": outcome, "wall": round(ran.seconds, 2), "peak_mb": ran.peak_mb,
            "tail": lines[-1][:300] if lines else ""}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--before", default="efecf4f", help="git revision of the 'before' rows")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--grace", type=float, default=60.0, help="seconds past the limit before a run is killed")
    parser.add_argument("--cap-mb", type=int, default=8000, help="address-space cap of every run")
    parser.add_argument("--memout-mb", type=int, default=1000, help="--memory of the third row")
    parser.add_argument("--only", nargs="*", help="domains to run (default: all)")
    parser.add_argument("--summary-only", action="store_true", help="write summary.md from OUT/results.json again")
    args = parser.parse_args(argv)
    if args.summary_only:
        rows = json.loads((args.output / "results.json").read_text())
        write_summary(rows, args)
        return
    args.output = args.output.resolve()
    args.output.mkdir(parents=True, exist_ok=True)
    # The problems are regenerated from their seed, not kept with the results.
    problems = Path(tempfile.mkdtemp(prefix="gnnplan-memory-limits-"))
    instances = [i for i in generate_instances(problems) if not args.only or i["domain"] in args.only]
    versions = [("before", worktree(args.before), []), ("after", ROOT, []),
                ("after --memory", ROOT, ["--memory", str(args.memout_mb)])]
    rows = []
    for instance in instances:
        for label, root, extra in versions:
            result = run(root, instance, args.timeout, args.grace, args.cap_mb, extra)
            row = {**{k: instance[k] for k in ("domain", "sizes", "objects", "successors")}, "version": label, **result}
            rows.append(row)
            print(json.dumps(row), flush=True)
            (args.output / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    write_summary(rows, args)


def write_summary(rows: list[dict], args) -> None:
    """Write OUT/summary.md: one row per run; 'command s' is the time the command itself reported."""
    table = ["| domain | size | objects | successors of s0 | version | outcome | command s | process s | peak RSS MB |",
             "|---|---|---:|---:|---|---|---:|---:|---:|"]
    for r in rows:
        size = ", ".join(f"{k}={v}" for k, v in r["sizes"].items())
        reported = re.search(r"(?:after |, )([\d.]+) s\b", r["tail"])
        table.append(f"| {r['domain']} | {size} | {r['objects']} | {r['successors']:,} | {r['version']} | "
                     f"{r['outcome']} | {reported.group(1) if reported else ''} | {r['wall']} | {r['peak_mb']:,} |")
    summary = (f"`OMP_NUM_THREADS=1 python -m benchmarks.memory_limits -o {args.output.name if args.summary_only else args.output} "
               f"--timeout {args.timeout:g} --grace {args.grace:g} --cap-mb {args.cap_mb} --memout-mb {args.memout_mb}`"
               f" (before = {args.before}); 'process s' includes starting Python and importing the package\n\n"
               + "\n".join(table) + "\n")
    (args.output / "summary.md").write_text(summary)
    print(summary)


if __name__ == "__main__":
    main()

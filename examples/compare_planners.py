"""Compare gnnplan with Fast Downward (LAMA-first) on the bundled problems, through the compare API.

Shows: ``up_gnnplan.compare`` runs every engine on every problem, each task in its own process
with a time and a memory limit, validates every plan, appends each result to
``OUT/results.jsonl`` as it finishes (a JSON object per task), and writes ``summary.md`` and
(with matplotlib) PNG plots from it. gnnplan uses the shipped model of each domain. The same run
from the command line is ``gnnplan compare --engine gnnplan --engine fast-downward --example
blocksworld --example gripper -o OUT``.

Needs onnxruntime and LAMA-first: ``pip install 'up-gnnplan[cpu,fast-downward]'`` (add ``plot``
for the PNG plots). Run (about ten seconds)::

    OMP_NUM_THREADS=1 python examples/compare_planners.py [-o compare-out] [--timeout 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

DOMAINS = ["blocksworld", "gripper"]
EXIT_MISSING_EXTRA = 2


def missing_extra() -> str | None:
    """Return the one line saying what to install, or None when everything this example needs is there."""
    if importlib.util.find_spec("onnxruntime") is None:
        return "this example solves with onnxruntime: pip install 'up-gnnplan[cpu]'"
    from unified_planning.shortcuts import get_environment

    if "fast-downward" not in get_environment().factory.engines:
        return "this example compares with LAMA-first: pip install 'up-gnnplan[fast-downward]'"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", default=None, help="results folder (default: a temporary one)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per task (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=2, help="tasks in parallel (default: %(default)s)")
    args = parser.parse_args()
    problem = missing_extra()
    if problem:
        print(problem, file=sys.stderr)
        sys.exit(EXIT_MISSING_EXTRA)

    from up_gnnplan.compare import compare, file_problems
    from up_gnnplan.data import example

    problems = [entry for domain in DOMAINS
                for entry in file_problems(example(domain), sorted(example(domain).parent.glob("p*.pddl")))]
    with tempfile.TemporaryDirectory() as workdir:
        out = Path(args.output or Path(workdir) / "compare")
        outcome = compare(["gnnplan", "fast-downward"], problems, out, timeout=args.timeout, jobs=args.jobs)
        print(outcome.summary)
        for record in outcome.records:
            print(f"{record['engine']:<14} {record['domain'] + '/' + record['problem']:<22} {record['status']:<19} "
                  f"length {record['plan_length']}, valid {record['valid']}, {record['solve_time']} s")
        print(f"\nfiles: {', '.join(str(f) for f in outcome.files)}" + ("" if args.output else " (deleted on exit)"))


if __name__ == "__main__":
    main()

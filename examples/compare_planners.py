"""Compare gnnplan with Fast Downward (LAMA-first) on the bundled problems, through the compare API.

Shows: ``up_gnnplan.compare`` runs every engine on every problem, each task in its own
process with a time and a memory limit, validates every plan, appends each result to
``OUT/results.jsonl`` as it finishes (the one results file: a JSON object per task), and
writes ``summary.md`` and (with matplotlib) PNG plots from it. The same run from the command line is
``gnnplan compare --engine gnnplan:auto --engine fast-downward --example blocksworld
--example gripper -o OUT``.

The gnnplan models are the shipped ones when ``gnnplan models`` lists them; otherwise tiny
ones are trained for ``--seconds`` each first (see ``solve_with_up.py``), so the point here is
the harness, not the quality of the models.

Run (about a minute without shipped models)::

    OMP_NUM_THREADS=1 python examples/compare_planners.py [-o compare-out] [--seconds 15]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solve_with_up import model_for  # noqa: E402

from up_gnnplan.data import example  # noqa: E402

DOMAINS = ["blocksworld", "gripper"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", default=None, help="results folder (default: a temporary one)")
    parser.add_argument("--seconds", type=float, default=15.0, help="training budget per domain when no model ships")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per task (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=2, help="tasks in parallel (default: %(default)s)")
    args = parser.parse_args()

    from up_gnnplan.compare import compare, file_problems

    with tempfile.TemporaryDirectory() as workdir:
        models = {domain: model_for(domain, Path(workdir), args.seconds) for domain in DOMAINS}
        problems = [entry for domain in DOMAINS
                    for entry in file_problems(example(domain), sorted(example(domain).parent.glob("p*.pddl")))]
        out = Path(args.output or Path(workdir) / "compare")
        outcome = compare(["gnnplan:auto", "fast-downward"], problems, out, timeout=args.timeout, jobs=args.jobs,
                          model=models)
        print(outcome.summary)
        for record in outcome.records:
            print(f"{record['engine']:<14} {record['domain'] + '/' + record['problem']:<22} {record['status']:<19} "
                  f"length {record['plan_length']}, valid {record['valid']}, {record['solve_time']} s")
        print(f"\nfiles: {', '.join(str(f) for f in outcome.files)}" + ("" if args.output else " (deleted on exit)"))


if __name__ == "__main__":
    main()

"""Mode auto's learned fallback for a model with a value and an action head: eager GBFS, deferred GBFS,
or best-first search on the action head (issue 33).

Mode auto runs the policy, then a learned search with the time left. For a model with both heads
(every ``gnnplan learn`` model, the shipped Blocksworld one) that search was ``dual-gbfs`` valuing
every fresh successor (eager); ``dual-policy-best-first`` scores a state's actions in one pass; the
engine param ``deferred`` makes ``dual-gbfs`` value a state when it is expanded, its children
ordered by the action head. Each is run here as a mode of its own (``gnnplan solve --mode M``, a
process per task, ``--timeout`` each: the learned search alone, without the policy before it), on
the tasks given, one after the other, and the last line of each solve is kept.

    OMP_NUM_THREADS=1 python -m benchmarks.deferred_gbfs run NAME MODEL DOMAIN PROBLEM... [--timeout 30]
    python -m benchmarks.deferred_gbfs table

Rows: ``results/deferred_gbfs/NAME.jsonl``; ``table`` writes ``table.md`` (solved per search).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from .common import RESULTS, clock_line, note, table

OUT = RESULTS / "deferred_gbfs"
LOG = OUT / "commands.log"
SEARCHES = {"eager dual-gbfs": ["--mode", "dual-gbfs", "--deferred", "false"],
            "deferred dual-gbfs": ["--mode", "dual-gbfs", "--deferred", "true"],
            "dual-policy-best-first": ["--mode", "dual-policy-best-first"]}
_COUNTS = re.compile(r"(\d+) expanded, (\d+) evaluated")


def run_set(args) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    note(LOG, clock_line("start") + " python -m benchmarks.deferred_gbfs " + " ".join(sys.argv[1:]))
    with open(OUT / f"{args.name}.jsonl", "a") as rows:
        for problem in args.problems:
            for search, flags in SEARCHES.items():
                began = time.perf_counter()
                done = subprocess.run(["gnnplan", "solve", args.domain, problem, *flags, "--model", args.model,
                                       "--timeout", str(args.timeout)], capture_output=True, text=True)
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                counts = _COUNTS.search(last)
                row = {"problem": Path(problem).name, "search": search, "solved": done.returncode == 0,
                       "seconds": round(time.perf_counter() - began, 2), "last_line": last[:300],
                       "expanded": int(counts.group(1)) if counts else None}
                rows.write(json.dumps(row) + "\n")
                rows.flush()
                print(f"{row['problem']} {search}: {'solved' if row['solved'] else 'not solved'} in "
                      f"{row['seconds']} s", flush=True)
    note(LOG, clock_line("end"))


def summary(args) -> None:
    lines, totals = [], dict.fromkeys(SEARCHES, 0)
    for path in sorted(OUT.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        tasks = len({r["problem"] for r in rows})
        solved = {s: sum(r["solved"] for r in rows if r["search"] == s) for s in SEARCHES}
        for s in SEARCHES:
            totals[s] += solved[s]
        lines.append([path.stem, str(tasks), *[str(solved[s]) for s in SEARCHES]])
    lines.append(["**total**", "", *[f"**{totals[s]}**" for s in SEARCHES]])
    text = table(["set", "tasks", *SEARCHES], lines, right_from=1)
    (OUT / "table.md").write_text(text + "\n")
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="stage", required=True)
    run = sub.add_parser("run")
    run.add_argument("name")
    run.add_argument("model")
    run.add_argument("domain")
    run.add_argument("problems", nargs="+")
    run.add_argument("--timeout", type=float, default=30.0)
    sub.add_parser("table")
    args = parser.parse_args(argv)
    {"run": run_set, "table": summary}[args.stage](args)


if __name__ == "__main__":
    main()

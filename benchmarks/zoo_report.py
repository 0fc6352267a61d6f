"""Combine the per-domain evaluations of the shipped models into one report with one cactus plot.

``benchmarks/build_zoo.py`` evaluates each shipped model against LAMA-first with
``gnnplan compare`` into ``benchmarks/zoo/eval/NAME/``. This script reads every
``results.jsonl`` there (or the folders given) and writes, with the package's own reporting,
``benchmarks/zoo/eval/all/`` (summary.md with coverage per domain, plan-length and time
ratios on commonly solved tasks, results.csv, and the coverage, cactus and plan-length plots):

    python benchmarks/zoo_report.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from up_gnnplan.compare.report import write_reports

EVAL = Path(__file__).resolve().parent / "zoo" / "eval"


def failure_table(records, baseline: str) -> str:
    """Why the greedy policy failed where it did, per domain, from the recorded step counts.

    The policy stops at the goal, after 1000 steps, or when every successor has been visited.
    ``step limit`` and ``dead end`` (no unvisited successor) are failures of the learned value
    (it leads the policy astray); ``timeout`` is the time limit, with the steps taken by then
    compared with the baseline's plan length on the same task: many more steps than that plan
    has means the policy was wandering (model error), fewer means steps were too slow.
    """
    from collections import defaultdict

    plans = {(r["domain"], r["problem"]): r["plan_length"] for r in records
             if r["engine"] == baseline and r["solved"] and r.get("plan_length")}
    rows = defaultdict(lambda: defaultdict(int))
    wander, slow, ms = defaultdict(int), defaultdict(int), defaultdict(list)
    for r in records:
        if r["engine"] != "gnnplan:policy":
            continue
        d = r["domain"]
        rows[d]["tasks"] += 1
        steps = r.get("expanded") or 0
        if steps and r.get("solve_time"):
            ms[d].append(1000 * r["solve_time"] / steps)
        if r["solved"]:
            rows[d]["solved"] += 1
        elif r["status"] == "timeout":
            rows[d]["timeout"] += 1
            reference = plans.get((d, r["problem"]))
            if reference and steps > 2 * reference:
                wander[d] += 1
            else:
                slow[d] += 1
        elif steps >= 1000:
            rows[d]["step limit"] += 1
        elif r["status"] == "unsolvable_incompletely":
            rows[d]["dead end"] += 1
        else:
            rows[d][r["status"]] += 1
    lines = ["# Why the greedy policy failed", "",
             "| domain | tasks | solved | step limit (1000) | dead end (all successors visited) | "
             "timeout, > 2x the baseline's plan length in steps | timeout, fewer steps | other | ms per step (median) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for d in sorted(rows):
        row = rows[d]
        other = row["tasks"] - row["solved"] - row["step limit"] - row["dead end"] - row["timeout"]
        median = sorted(ms[d])[len(ms[d]) // 2] if ms[d] else float("nan")
        lines.append(f"| {d} | {row['tasks']} | {row['solved']} | {row['step limit']} | {row['dead end']} | "
                     f"{wander[d]} | {slow[d]} | {other} | {median:.0f} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, help="evaluation folders (default: all under benchmarks/zoo/eval)")
    parser.add_argument("-o", "--output", type=Path, default=EVAL / "all")
    parser.add_argument("--baseline", default="fast-downward")
    args = parser.parse_args()
    folders = args.folders or sorted(p.parent for p in EVAL.glob("*/results.jsonl") if p.parent != args.output)
    # Domains are named after their evaluation folder (= the shipped model's name), not after the
    # folder of the domain file (generated domains keep theirs in .../train/).
    records = [{**json.loads(line), "domain": folder.name} for folder in folders
               for line in (folder / "results.jsonl").read_text().splitlines() if line.strip()]
    if not records:
        raise SystemExit(f"no results.jsonl under {', '.join(map(str, folders)) or EVAL}")
    engines = sorted({r["engine"] for r in records}, key=lambda e: (e == args.baseline, e))
    summary, files = write_reports(records, args.output, engines, args.baseline)
    failures = failure_table(records, args.baseline)
    (args.output / "failures.md").write_text(failures)
    files.append(args.output / "failures.md")
    print(summary)
    print(failures)
    print("wrote " + ", ".join(str(f) for f in files))


if __name__ == "__main__":
    main()

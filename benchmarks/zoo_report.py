"""Combine the per-domain evaluations of the shipped models into one report with one cactus plot.

``python -m benchmarks.build_zoo`` evaluates each shipped model against LAMA-first with
``gnnplan compare`` into ``benchmarks/zoo/eval/NAME/``. This script reads every
``results.jsonl`` there (or the folders given) and writes, with the package's own reporting,
``benchmarks/zoo/eval/all/`` (summary.md with coverage per domain, plan-length and time
ratios on commonly solved tasks, and the coverage, cactus and plan-length plots; the rows stay
in each folder's results.jsonl),
and ``failures.md`` (why the greedy policy failed, and what the default mode's GBFS fallback
did on the tasks where it gave up: ``benchmarks/zoo/eval/NAME-auto/``, written by
``benchmarks/ipc_full_eval.sh``):

    python -m benchmarks.zoo_report
"""

from __future__ import annotations

import argparse
from pathlib import Path

from up_gnnplan.compare import read_results
from up_gnnplan.compare.report import write_reports

from .common import ROOT

EVAL = ROOT / "benchmarks" / "zoo" / "eval"


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


def fallback_table(records, fallback) -> str:
    """What ``gnnplan:auto`` did on the tasks where the greedy policy gave up.

    ``auto`` runs the same deterministic policy first and, when it gives up (dead end or step
    limit), greedy best-first search on the learned V with the time that is left; on the other
    tasks its result is the policy's, so these are the tasks where the fallback can matter.
    """
    from collections import defaultdict

    gave_up = {(r["domain"], r["problem"]) for r in records
               if r["engine"] == "gnnplan:policy" and r["status"] == "unsolvable_incompletely"}
    rows = defaultdict(lambda: defaultdict(int))
    for r in fallback:
        if (r["domain"], r["problem"]) not in gave_up:
            continue
        row = rows[r["domain"]]
        row["tasks"] += 1
        row["solved" if r["solved"] else r["status"]] += 1
    if not rows:
        return ""
    statuses = sorted({k for row in rows.values() for k in row} - {"tasks", "solved"})
    lines = ["", "# The GBFS fallback (gnnplan:auto) where the greedy policy gave up", "",
             "| domain | policy gave up | auto solved | " + " | ".join(statuses) + " |",
             "|---|---:|---:|" + "---:|" * len(statuses)]
    for d in sorted(rows):
        row = rows[d]
        lines.append(f"| {d} | {row['tasks']} | {row['solved']} | " + " | ".join(str(row[k]) for k in statuses) + " |")
    total = {k: sum(row[k] for row in rows.values()) for k in ["tasks", "solved", *statuses]}
    lines.append(f"| **total** | {total['tasks']} | {total['solved']} | " + " | ".join(str(total[k]) for k in statuses) + " |")
    return "\n".join(lines) + "\n"


def _read(folder: Path, name: str) -> list[dict]:
    """Return the records of ``folder``'s results.jsonl, their domain named ``name``."""
    return [{**record, "domain": name} for record in read_results(folder / "results.jsonl")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, help="evaluation folders (default: all under benchmarks/zoo/eval)")
    parser.add_argument("-o", "--output", type=Path, default=EVAL / "all")
    parser.add_argument("--baseline", default="fast-downward")
    args = parser.parse_args(argv)
    folders = args.folders or sorted(p.parent for p in EVAL.glob("*/results.jsonl")
                                     if p.parent != args.output and not p.parent.name.endswith("-auto"))
    # Domains are named after their evaluation folder (= the shipped model's name), not after the
    # folder of the domain file (generated domains keep theirs in .../train/).
    records = [r for folder in folders for r in _read(folder, folder.name)]
    fallback = [r for folder in folders if (folder.parent / f"{folder.name}-auto" / "results.jsonl").is_file()
                for r in _read(folder.parent / f"{folder.name}-auto", folder.name)]
    if not records:
        raise SystemExit(f"no results.jsonl under {', '.join(map(str, folders)) or EVAL}")
    engines = sorted({r["engine"] for r in records}, key=lambda e: (e == args.baseline, e))
    summary, files = write_reports(records, args.output, engines, args.baseline)
    failures = failure_table(records, args.baseline) + fallback_table(records, fallback)
    (args.output / "failures.md").write_text(failures)
    files.append(args.output / "failures.md")
    print(summary)
    print(failures)
    print("wrote " + ", ".join(str(f) for f in files))


if __name__ == "__main__":
    main()

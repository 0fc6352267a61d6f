"""Mode auto's fallback after the policy gives up: the model's search alone against the same search
alternating with FF (issue 14).

The default mode runs the greedy policy of the domain's shipped model, then, when it gives up, a
search with the time left: GBFS on V (value models) or best-first search on the action
log-probabilities (action models). Measured before: GBFS on the same V rarely recovers what the
policy lost (15 of 109). ``fallback=model+ff`` alternates that search with pymimir's FF
heuristic, something the model does not already say. Per domain, on all 30 IPC 2023
``testing/easy`` tasks with the domain's shipped default model (the action model where one
ships, else the value model), ``--timeout`` each, one ``gnnplan compare`` run per fallback into
``benchmarks/results/fallbacks/DOMAIN/FALLBACK/``; LAMA-first and the
WL-GOOSE peer on the same tasks and limit come from ``benchmarks/results/action_heads/coverage``
(run there; their rows are read, not run again), as do the rows of the value policy alone with
the same model (``shipped-value``; for most domains action_heads.py read those from the zoo
evaluation, and so does this script). ``table`` writes ``table.md``: coverage of each, and the mean
plan length on the tasks both fallbacks solved.

    OMP_NUM_THREADS=1 python -m benchmarks.fallbacks run transport satellite rovers sokoban
    python -m benchmarks.fallbacks table
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .action_heads import coverage_rows
from .common import DOMAINS, RESULTS, SHARED, run, test_problems, write_json

OUT = RESULTS / "fallbacks"
LOG = OUT / "commands.log"
FALLBACKS = ("model", "model+ff")  # GBFS on V, dual-gbfs


def run_domains(args) -> None:
    for name in args.domains:
        spec = DOMAINS[name]
        tests = test_problems(spec, 30)
        for fallback in FALLBACKS:
            run(["gnnplan", "compare", SHARED / spec.domain, *tests, "--engine", "gnnplan", "--engine-param", f"gnnplan:fallback={fallback}", "--timeout", args.timeout, "--jobs", 1,
                 "--no-plots", "-o", OUT / name / fallback, "--resume"], LOG)


def _rows(path: Path) -> dict:
    from up_gnnplan.compare import read_results

    return {r["problem"]: r for r in read_results(path / "results.jsonl")} if (path / "results.jsonl").is_file() else {}


def table(args) -> None:
    lines = ["| domain | tasks | LAMA-first | WL-GOOSE | value policy alone | gnnplan default mode, fallback model | "
             "fallback model+ff | mean plan length, both solved (model / model+ff) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    summary = {}
    for folder in sorted(p for p in OUT.iterdir() if p.is_dir()):
        runs = {f: _rows(folder / f) for f in FALLBACKS}
        if not all(runs.values()):
            continue
        peers = {label: {r["problem"]: r for r in coverage_rows(folder.name, label)}
                 for label in ("lama-first", "wl-goose", "shipped-value")}
        solved = {k: sum(r["solved"] for r in rows.values()) for k, rows in {**runs, **peers}.items()}
        both = [p for p in runs["model"] if runs["model"][p]["solved"] and runs["model+ff"].get(p, {}).get("solved")]
        lengths = {f: (sum(runs[f][p]["plan_length"] for p in both) / len(both) if both else None) for f in FALLBACKS}
        tasks = len(runs["model"])
        summary[folder.name] = {"tasks": tasks, "solved": solved, "mean_plan_length_both_solved": lengths}
        peer = {k: f"{solved[k]}/{len(peers[k])}" if peers[k] else "not run" for k in peers}
        length = " / ".join(f"{lengths[f]:.1f}" if lengths[f] is not None else "-" for f in FALLBACKS)
        lines.append(f"| {folder.name} | {tasks} | {peer['lama-first']} | {peer['wl-goose']} | {peer['shipped-value']} | "
                     f"{solved['model']}/{tasks} | {solved['model+ff']}/{len(runs['model+ff'])} | {length} |")
    (OUT / "table.md").write_text("\n".join(lines) + "\n")
    write_json(OUT / "table.json", summary)
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["run", "table"])
    parser.add_argument("domains", nargs="*", metavar="DOMAIN", help="one of " + ", ".join(sorted(DOMAINS)))
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    {"run": run_domains, "table": table}[args.stage](args)


if __name__ == "__main__":
    main()

"""Fast Downward's translator alone at the tiers' sizes: can LAMA-first start searching within the minute at all?

Mode auto hands the time its learned part leaves to LAMA-first, whose translator (Python) grounds the
whole task before its search starts; since the hand-off plans from the policy's walk, a walk on course
but too slow walks on while the translator runs beside it (``search/course.py``). This script measures,
per task, the translator's seconds, peak memory and operators alone, beside the ground actions
:func:`up_gnnplan.problems.size.estimate_ground_actions` estimates from the schemas, and reports the
fastest rate (seconds per estimated action) among the translations of at least ``--min-seconds``.

    OMP_NUM_THREADS=1 python -m benchmarks.translate_speed run FOLDER... [-o OUT]
    python -m benchmarks.translate_speed table [-o OUT]

Each FOLDER holds a ``domain.pddl`` and problems (the generated tiers: ``/tmp/gnnplan-tiers/TIER/DOMAIN``);
each translation runs alone, killed after ``--kill-after`` seconds, under ``--memory-mb`` of address space.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from .common import RESULTS, clock_line, fmt, run_capped, table

OUT = RESULTS / "translate_speed"


def _translate(domain: Path, problem: Path, kill_after: float, cap_mb: int) -> dict:
    from up_gnnplan.search.lama import driver

    with tempfile.TemporaryDirectory(prefix="gnnplan-translate-") as folder:
        ran = run_capped([sys.executable, str(driver("")), "--translate", str(domain), str(problem)],
                         cap_mb=cap_mb, kill_after=kill_after, cwd=folder)
        seconds = ran.seconds
        done = not ran.killed and (Path(folder) / "output.sas").is_file()
        operators = None
        if done:
            text = (Path(folder) / "output.sas").read_text()
            operators = text.count("begin_operator")
    return {"seconds": round(seconds, 2), "finished": done, "operators": operators, "peak_mb": ran.peak_mb,
            "outcome": "finished" if done else ("killed" if ran.killed else f"exit status {ran.status}")}


def run(args) -> None:
    from up_gnnplan.problems import Task
    from up_gnnplan.problems.size import estimate_ground_actions

    args.out.mkdir(parents=True, exist_ok=True)
    rows = args.out / "rows.jsonl"
    done = {json.loads(line)["problem"] for line in rows.read_text().splitlines()} if rows.is_file() else set()
    print(clock_line("began"), flush=True)
    for folder in map(Path, args.folders):
        for problem in sorted(folder.glob("p*.pddl")):
            if str(problem) in done:
                continue
            estimate = estimate_ground_actions(Task.from_files(folder / "domain.pddl", problem))
            row = {"domain": folder.name, "tier": folder.parent.name, "problem": str(problem),
                   "estimated_actions": estimate,
                   **_translate(folder / "domain.pddl", problem, args.kill_after, args.memory_mb)}
            print(json.dumps(row), flush=True)
            with rows.open("a") as out:
                out.write(json.dumps(row) + "\n")
    print(clock_line("ended"), flush=True)


def summary(args) -> None:
    rows = [json.loads(line) for line in (args.out / "rows.jsonl").read_text().splitlines()]
    lines = []
    for r in rows:
        rate = r["seconds"] / r["estimated_actions"] if r["estimated_actions"] else None
        bound = "" if r["finished"] else " (at least)"
        lines.append([r["tier"], r["domain"], Path(r["problem"]).name, fmt(r["estimated_actions"], 0),
                      fmt(r["operators"], 0) if r["operators"] is not None else r["outcome"],
                      fmt(r["seconds"], 1) + bound, f"{rate * 1e6:.1f}{bound}" if rate else "n/a"])
    timed = [r for r in rows if r["finished"] and r["seconds"] >= args.min_seconds and r["estimated_actions"]]
    text = table(["tier", "domain", "problem", "estimated actions", "operators", "seconds", "µs per estimated action"],
                 lines, right_from=3)
    if timed:
        fastest = min(timed, key=lambda r: r["seconds"] / r["estimated_actions"])
        text += (f"\n\nFastest among the {len(timed)} translations of at least {args.min_seconds:g} s: "
                 f"{fastest['seconds'] / fastest['estimated_actions'] * 1e6:.1f} µs per estimated action "
                 f"({fastest['domain']}, {Path(fastest['problem']).name}).\n")
    (args.out / "table.md").write_text(text + "\n")
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["run", "table"])
    parser.add_argument("folders", nargs="*", metavar="FOLDER")
    parser.add_argument("-o", "--out", type=Path, default=OUT)
    parser.add_argument("--kill-after", type=float, default=120.0)
    parser.add_argument("--memory-mb", type=int, default=6000)
    parser.add_argument("--min-seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    {"run": run, "table": summary}[args.stage](args)


if __name__ == "__main__":
    main()

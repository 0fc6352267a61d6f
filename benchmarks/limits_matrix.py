"""Does every search mode keep a short time limit on large generated tasks? The largest that do, per domain.

For each domain a ladder of generated tasks (seed 0) runs from the IPC 2023 medium tier's sizes
to beyond its hard tier's. Each task is solved by ``gnnplan solve DOMAIN PROBLEM --mode M
--timeout T`` in a process of its own for every search mode, with the shipped models. What is
measured is the whole process, from its start to its end (the interpreter and the imports
included, as ``--timeout`` promises), against the promise: ``T`` plus 5% or 0.5 s, whichever is
larger. The peak resident memory of each process comes from ``os.wait4``. A process still running
at ``T + 60`` s is killed and counts as a broken limit.

    OMP_NUM_THREADS=1 python -m benchmarks.limits_matrix -o benchmarks/results/limits_matrix --timeout 5

Writes ``OUT/results.jsonl`` (one line a run) and ``OUT/summary.md``: per domain, each size's
worst overshoot over the modes and the largest size where every mode kept its limit.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from .common import clock_line, run_capped

MODES = ["auto", "policy", "gbfs", "action-policy", "policy-best-first", "dual-gbfs", "dual-policy-best-first"]
# (domain, size parameters), smallest first; the first of each is about the IPC 2023 medium tier's
# largest size (its files' generator parameters), the last beyond its hard tier.
LADDERS = {
    "blocksworld": [{"blocks": 146}, {"blocks": 300}, {"blocks": 488}],
    "childsnack": [{"children": 40, "allergic_children": 24, "trays": 5, "sandwiches": 60},
                   {"children": 100, "allergic_children": 60, "trays": 8, "sandwiches": 150}],
    "ferry": [{"cars": 97, "locations": 50}, {"cars": 974, "locations": 200}],
    "floortile": [{"rows": 19, "columns": 13, "robots": 13}, {"rows": 40, "columns": 30, "robots": 30}],
    "gripper": [{"balls": 400}, {"balls": 2000}],
    "miconic": [{"passengers": 78, "floors": 59}, {"passengers": 400, "floors": 300}],
    "rovers": [{"rovers": 10, "waypoints": 88, "cameras": 10, "objectives": 30},
               {"rovers": 30, "waypoints": 300, "cameras": 30, "objectives": 100}],
    "satellite": [{"satellites": 40, "instruments": 78, "modes": 5, "directions": 40},
                  {"satellites": 99, "instruments": 200, "modes": 5, "directions": 100}],
    "sokoban": [{"grid_size": 30, "boxes": 15}, {"grid_size": 49, "boxes": 34}],
    "spanner": [{"spanners": 88, "nuts": 49, "locations": 30}, {"spanners": 487, "nuts": 250, "locations": 100}],
    "transport": [{"packages": 44, "locations": 40, "vehicles": 10}, {"packages": 200, "locations": 150, "vehicles": 30}],
}


def allowed(seconds: float) -> float:
    return seconds + max(0.5, 0.05 * seconds)


def generate(domain: str, params: dict, folder: Path) -> tuple[Path, Path]:
    from up_gnnplan.datasets.generators import generate as make

    tag = "-".join(f"{k}{v}" for k, v in params.items())
    target = folder / domain / tag
    problems = sorted(target.glob("p*.pddl")) if target.is_dir() else []
    if not problems:
        problems = make(domain, target, count=1, seed=0, **params)
    return target / "domain.pddl", Path(problems[0])


def run(domain_file: Path, problem: Path, mode: str, timeout: float, cap_mb: int) -> dict:
    """Run one solve in its own process; return its wall time, peak memory and last line."""
    command = [sys.executable, "-m", "up_gnnplan.cli", "solve", str(domain_file), str(problem), "--mode", mode,
               "--timeout", f"{timeout:g}", "--plan-file", os.devnull]
    ran = run_capped(command, cap_mb=cap_mb, kill_after=timeout + 60, env={**os.environ, "OMP_NUM_THREADS": "1"})
    lines = [line for line in ran.text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return {"seconds": round(ran.seconds, 2), "peak_mb": ran.peak_mb, "killed": ran.killed,
            "exit": os.waitstatus_to_exitcode(ran.status), "last": last[:400],
            "kept": not ran.killed and ran.seconds <= allowed(timeout)}


def summary(rows: list[dict], timeout: float) -> str:
    lines = [f"Every mode ({', '.join(MODES)}) with `--timeout {timeout:g}`; promise: within "
             f"{allowed(timeout):.2f} s of the process's start. Worst process time over the modes of each task:", "",
             "| domain | task | objects | worst seconds (mode) | peak MB | all modes kept the limit |",
             "|---|---|---|---|---|---|"]
    largest = {}
    for domain in LADDERS:
        for tag in dict.fromkeys(r["task"] for r in rows if r["domain"] == domain):
            runs = [r for r in rows if r["domain"] == domain and r["task"] == tag]
            worst = max(runs, key=lambda r: r["seconds"])
            kept = all(r["kept"] for r in runs)
            if kept:
                largest[domain] = f"{tag} ({runs[0]['objects']} objects)"
            lines.append(f"| {domain} | {tag} | {runs[0]['objects']} | {worst['seconds']:.2f} ({worst['mode']}) | "
                         f"{max(r['peak_mb'] for r in runs)} | {'yes' if kept else 'NO: ' + ', '.join(r['mode'] for r in runs if not r['kept'])} |")
    lines += ["", "Largest generated task of each domain on which every mode kept its limit:", ""]
    lines += [f"- {domain}: {largest.get(domain, 'none of the ladder')}" for domain in LADDERS]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--domains", nargs="*", default=list(LADDERS))
    parser.add_argument("--tasks", type=Path, default=Path(tempfile.gettempdir()) / "gnnplan-limits-matrix")
    parser.add_argument("--cap-mb", type=int, default=12000, help="address-space cap of each solve process")
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    rows, started = [], clock_line("started")
    with open(args.output / "results.jsonl", "w") as handle:
        for domain in args.domains:
            for params in LADDERS[domain]:
                domain_file, problem = generate(domain, params, args.tasks)
                objects = _objects(problem)
                tag = ",".join(f"{k}={v}" for k, v in params.items())
                for mode in MODES:
                    row = {"domain": domain, "task": tag, "objects": objects, "mode": mode,
                           **run(domain_file, problem, mode, args.timeout, args.cap_mb)}
                    rows.append(row)
                    handle.write(json.dumps(row) + "\n")
                    handle.flush()
                    print(f"{domain} {tag} {mode}: {row['seconds']:.2f} s, {row['peak_mb']} MB, "
                          f"{'kept' if row['kept'] else 'BROKEN'}: {row['last'][:120]}", flush=True)
    text = f"{started}\n{clock_line('ended')}\n\n" + summary(rows, args.timeout)
    (args.output / "summary.md").write_text(text)
    print(text)


def _objects(problem: Path) -> int:
    """The number of objects declared in ``problem`` (PDDL text, counted without a parser)."""
    import re

    text = problem.read_text().lower()
    match = re.search(r"\(:objects(.*?)\)", text, re.S)
    if not match:
        return 0
    return len([t for t in re.sub(r"-\s*\S+", " ", match.group(1)).split() if t])


if __name__ == "__main__":
    main()

"""Wall time per greedy-policy step on the largest IPC 2023 ``testing/easy`` instances, and where it goes.

A policy step costs about plan length x branching x objects x layers, and decides whether
larger instances fit a time limit at all. For each domain with a shipped model, this takes the
largest ``testing/easy`` problem (by object count, from ``../shared/benchmarks/manifest.csv``),
runs ``--steps`` steps of a copy of ``policy_rollout``'s loop with every part timed (goal test,
successor generation, ``Inputs``, encoding, ``session.run``, the rest; the instrumented copy
lives in ``benchmarks/runtime_speed.py``), and prints one markdown table:

    OMP_NUM_THREADS=1 python benchmarks/policy_steps.py --steps 20
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runtime_speed import PARTS, instrumented_policy, table  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
DOMAINS = ["blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban", "spanner",
           "transport"]


def largest(domain: str) -> tuple[int, Path]:
    folder = f"ipc2023-learning/{domain}/testing/easy"
    with open(SHARED / "manifest.csv", newline="") as f:
        rows = [(int(r["objects"]), r["problem"].strip()) for r in csv.DictReader(f) if r["dir"].strip() == folder]
    objects, name = max(rows)
    return objects, SHARED / folder / name


def largest_tasks(domains):
    """Yield (domain, objects, problem path, task, shipped model path) of each domain's largest
    ``testing/easy`` problem, for the domains with a shipped model (others are reported)."""
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.problems import load_task

    for domain in domains:
        objects, problem = largest(domain)
        task = load_task(SHARED / f"ipc2023-learning/{domain}/domain.pddl", problem)
        path = find_model(task.signature, "value")  # the value policy's step is what this script times
        if path is None:
            print(f"{domain}: no shipped model, skipped", flush=True)
            continue
        yield domain, objects, problem, task, path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domains", nargs="*", default=DOMAINS)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    from up_gnnplan.problems import load_task
    from up_gnnplan.runtime import OnnxValueFunction

    print(f"start {time.strftime('%Y-%m-%d %H:%M:%S')} UTC, load {os.getloadavg()}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}", flush=True)
    rows = []
    for domain, objects, problem, task, path in largest_tasks(args.domains):
        vf = OnnxValueFunction(path)
        instrumented_policy(task, vf, 1)  # warm-up on this size
        task = load_task(SHARED / f"ipc2023-learning/{domain}/domain.pddl", problem)
        records, _, status = instrumented_policy(task, vf, args.steps)
        if not records:
            print(f"{domain}: {status} before the first step", flush=True)
            continue
        mean = {k: 1000 * statistics.mean(r[k] for r in records) for k in PARTS + ["total"]}
        row = [domain, problem.name, str(objects), f"{len(records)} ({status})",
               f"{statistics.mean(r['generated'] for r in records):.1f}",
               f"{statistics.mean(r['atoms'] for r in records):.0f}"]
        row += [f"{mean[k]:.1f} ({100 * mean[k] / mean['total']:.0f}%)" for k in PARTS]
        row += [f"{mean['total']:.1f}", f"{60000 / mean['total']:.0f}"]
        rows.append(row)
        print(" | ".join(row), flush=True)
    print(table(["domain", "problem", "objects", "steps", "successors/step", "atoms/state"]
                + [f"{k} ms (share)" for k in PARTS] + ["total ms/step", "steps per 60 s"], rows))
    print(f"end {time.strftime('%Y-%m-%d %H:%M:%S')} UTC, load {os.getloadavg()}")


if __name__ == "__main__":
    main()

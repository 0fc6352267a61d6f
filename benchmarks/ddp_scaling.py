"""Training states per second with 1 and 2 gloo processes (issue 16), one run, same data and batches.

``gnnplan train`` on the same dataset, seed and global batches, once as one process and once
under ``torchrun --standalone --nproc_per_node=2`` (gloo on the CPU; each process trains on its
share of every global batch and DistributedDataParallel averages the gradients), for a fixed
number of epochs of ``--epoch-states`` states; the two runs alternate ``--repeats`` times so
both see the same machine load. Reported per run: the training record's states per second
(optimisation steps only) and its wall-clock, and the ratio 2 processes / 1 process. The
dataset: every state of two generated 6-block Blocksworld problems (``gnnplan generate``,
``gnnplan dataset``; built once).

    OMP_NUM_THREADS=1 python -m benchmarks.ddp_scaling --repeats 2 --epochs 3 --epoch-states 2048
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from . import common
from .common import RESULTS, write_json

OUT = RESULTS / "ddp_scaling"
WORK = Path("/tmp/gnnplan-ddp")


def run(command: list, log: Path) -> None:
    """Run ``command`` with one thread per process, logged; a failure stops the script."""
    common.run(command, log, env={**os.environ, "OMP_NUM_THREADS": "1"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--epoch-states", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    WORK.mkdir(parents=True, exist_ok=True)
    log = OUT / "commands.log"
    data = WORK / "blocksworld6.npz"
    if not data.is_file():
        run(["gnnplan", "generate", "blocksworld", "-o", WORK / "bw6", "--count", 2, "--seed", 0, "-p", "blocks=6"], log)
        run(["gnnplan", "dataset", WORK / "bw6" / "domain.pddl", *sorted((WORK / "bw6").glob("p-*.pddl")), "-o", data], log)
    options = [data, "--seed", "0", "--batch-size", args.batch_size, "--epoch-states", args.epoch_states,
               "--max-epochs", args.epochs, "--patience", args.epochs, "--max-seconds", 3600, "--device", "cpu",
               "--validation-fraction", "0.1"]
    launchers = {1: ["gnnplan", "train"],
                 2: [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                     "-m", "up_gnnplan.cli", "train"]}
    rows = []
    load_before = os.getloadavg()
    for repeat in range(args.repeats):
        for processes, launcher in launchers.items():
            out = WORK / f"p{processes}-r{repeat}.pt"
            start = time.perf_counter()
            run([*launcher, *options, "-o", out], log)
            wall = time.perf_counter() - start
            import torch

            record = torch.load(out, weights_only=True)["record"]
            rows.append({"processes": processes, "repeat": repeat, "wall_seconds": round(wall, 1),
                         "train_states_per_second": record["train_states_per_second"], "steps": record["steps"],
                         "world_size": record.get("world_size"), "validation": record.get("validation")})
    load_after = os.getloadavg()
    median = {p: statistics.median(r["train_states_per_second"] for r in rows if r["processes"] == p) for p in launchers}
    walls = {p: statistics.median(r["wall_seconds"] for r in rows if r["processes"] == p) for p in launchers}
    summary = {"rows": rows, "median_states_per_second": median, "median_wall_seconds": walls,
               "ratio_2_over_1": round(median[2] / median[1], 2), "load_before": load_before, "load_after": load_after,
               "command": "OMP_NUM_THREADS=1 python -m benchmarks.ddp_scaling "
                          + " ".join(sys.argv[1:] if argv is None else argv)}
    write_json(OUT / "results.json", summary)
    table = ["| processes | states/s (median) | wall s (median) | runs |", "|---:|---:|---:|---:|"]
    for p in launchers:
        table.append(f"| {p} | {median[p]:.0f} | {walls[p]:.0f} | {sum(r['processes'] == p for r in rows)} |")
    report = "\n".join([f"Command: `{summary['command']}`; load average {load_before[0]:.1f} before, "
                        f"{load_after[0]:.1f} after.", "", *table, "",
                        f"2 processes / 1 process: {summary['ratio_2_over_1']}x states per second."])
    (OUT / "report.md").write_text(report + "\n")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Choose the training defaults by measurement: one training run per configuration, same data,
same budget, then greedy-policy coverage on larger instances.

Each configuration runs ``python -m benchmarks.train_eval`` (preset ``blocks2000``: IPC-2000 Blocks with
4-6 blocks fully expanded, plus the 7-block problems labelled along optimal plans; validation on
the 8-block problems labelled along optimal plans; test: the greedy policy on Blocks 10-17) in
its own process, and this script prints one markdown table: training states per second, the
time to reach validation MAE 1.0 / 0.5 / 0.25, the best validation MAE, and the coverage.

    OMP_NUM_THREADS=1 python -m benchmarks.defaults_sweep --minutes 5

The 7- and 8-block datasets are the ones ``python -m benchmarks.build_zoo blocks`` labels
(``/tmp/gnnplan-zoo/blocks-extra.npz`` and ``blocks-valid.npz``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from .common import ROOT, clock_line, table

CONFIGS = {  # name -> benchmarks.train_eval options; the first is the current default
    "default (rgnn, hidden 32, 30 layers, lr 1e-3, batch 32)": [],
    "15 layers": ["--layers", "15"],
    "hidden 64": ["--hidden", "64"],
    "lr 3e-3": ["--lr", "3e-3"],
    "batch 64": ["--batch-size", "64"],
    "rgnn_t (t=1)": ["--arch", "rgnn_t", "--t", "1"],
    "ploi": ["--arch", "ploi"],
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--policy-time-limit", type=float, default=30.0)
    parser.add_argument("--test-limit", type=int, help="only the first N test problems (0: no policy runs)")
    parser.add_argument("--only", nargs="*", help="names of configurations to run (default: all)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/gnnplan-sweep"))
    parser.add_argument("--zoo", type=Path, default=Path("/tmp/gnnplan-zoo"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(clock_line("start"), flush=True)
    rows = []
    for i, (name, options) in enumerate(CONFIGS.items()):
        if args.only and name not in args.only:
            continue
        out = args.out / f"config-{i}.json"
        command = [sys.executable, "-m", "benchmarks.train_eval", "--preset", "blocks2000", "--minutes", str(args.minutes),
                   "--policy-time-limit", str(args.policy_time_limit), "--extra", str(args.zoo / "blocks-extra.npz"),
                   "--validation", str(args.zoo / "blocks-valid.npz"), "--json", str(out), *options]
        if args.test_limit is not None:
            command += ["--test-limit", str(args.test_limit)]
        print("$ " + " ".join(command), flush=True)
        subprocess.run(command, check=True, cwd=ROOT)
        result = json.loads(out.read_text())
        record, reach = result["record"], result["time_to_validation_mae"]
        rows.append([name, f"{record['train_states_per_second']:.0f}",
                     *(f"{reach[k]:.0f}" if reach.get(k) is not None else "not reached" for k in sorted(reach, key=float, reverse=True)),
                     f"{record['best_validation_mae']:.3f} (epoch {record['best_epoch']})", result["coverage"]])
        print(" | ".join(rows[-1]), flush=True)
    print(table(["configuration", "train states/s", "s to val MAE 1.0", "s to 0.5", "s to 0.25", "best val MAE",
                 "greedy coverage 10-17"], rows))
    print(clock_line("end"), flush=True)


if __name__ == "__main__":
    main()

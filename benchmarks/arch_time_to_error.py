"""Time to a given validation error for each architecture, on Blocks and on Gripper (issue 3).

Runs ``python -m benchmarks.train_eval`` (no policy runs) once per architecture and preset, each in its
own process with the same data, budget and seed, and prints one markdown table: training
states per second, epochs, seconds to validation MAE 1.0 / 0.5 / 0.25, best validation MAE.

    OMP_NUM_THREADS=1 python -m benchmarks.arch_time_to_error --minutes 3

Validation sets (larger than the training problems, labelled along optimal plans by
``python -m benchmarks.build_zoo``): Blocks 8 blocks (``/tmp/gnnplan-zoo/blocks-valid.npz``), Gripper
prob04 with 10 balls (``/tmp/gnnplan-zoo/gripper-opt-prob04.npz``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from .common import ROOT, clock_line, table

ARCHS = {"rgnn": [], "rgnn_t (t=0)": ["--arch", "rgnn_t", "--t", "0"], "rgnn_t (t=1)": ["--arch", "rgnn_t", "--t", "1"],
         "rgnn_t (t=2)": ["--arch", "rgnn_t", "--t", "2"], "ploi": ["--arch", "ploi"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--presets", nargs="*", default=["blocks2000", "gripper"])
    parser.add_argument("--only", nargs="*", help="architectures (names as in the table)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/gnnplan-arch"))
    parser.add_argument("--zoo", type=Path, default=Path("/tmp/gnnplan-zoo"))
    args = parser.parse_args(argv)
    validation = {"blocks2000": args.zoo / "blocks-valid.npz", "gripper": args.zoo / "gripper-opt-prob04.npz"}
    extra = {"blocks2000": [args.zoo / "blocks-extra.npz"], "gripper": []}
    args.out.mkdir(parents=True, exist_ok=True)
    print(clock_line("start"), flush=True)
    rows = []
    for preset in args.presets:
        for name, options in ARCHS.items():
            if args.only and name not in args.only:
                continue
            out = args.out / f"{preset}-{name.replace(' ', '').replace('(', '-').replace(')', '').replace('=', '')}.json"
            command = [sys.executable, "-m", "benchmarks.train_eval", "--preset", preset, "--minutes", str(args.minutes),
                       "--test-limit", "0", "--validation", str(validation[preset]), "--json", str(out), *options]
            if extra[preset]:
                command += ["--extra", *map(str, extra[preset])]
            print("$ " + " ".join(command), flush=True)
            if subprocess.run(command, cwd=ROOT).returncode != 0:
                rows.append([preset, name, "failed", "", "", "", "", ""])
                continue
            result = json.loads(out.read_text())
            record, reach = result["record"], result["time_to_validation_mae"]
            rows.append([preset, name, f"{record['train_states_per_second']:.0f}", str(record["epochs"]),
                         *(f"{reach[k]:.0f}" if reach.get(k) is not None else "not reached"
                           for k in sorted(reach, key=float, reverse=True)),
                         f"{record['best_validation_mae']:.3f}"])
            print(" | ".join(rows[-1]), flush=True)
    print(table(["preset", "architecture", "train states/s", "epochs", "s to val MAE 1.0", "s to 0.5", "s to 0.25",
                 "best val MAE"], rows))
    print(clock_line("end"), flush=True)


if __name__ == "__main__":
    main()

"""Train, export and ship the pretrained models, each with the exact commands recorded.

For each domain: pick the training instances whose whole state space fits (from
``../shared/benchmarks/manifest.csv``), label them with ``gnnplan dataset``, train with
``gnnplan train``, export and ship with ``gnnplan export --ship NAME``. Every command is
printed and appended to ``benchmarks/zoo/commands.log``; the training record inside the
shipped entry (``up_gnnplan/models_zoo/index.json``) repeats command, data, seed, minutes and
validation error. Run domains one at a time in the background; each takes about
``--minutes`` plus labelling time:

    OMP_NUM_THREADS=1 nohup python benchmarks/build_zoo.py blocks --minutes 15 &
"""

from __future__ import annotations

import argparse
import csv
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "benchmarks"
WORK = Path("/tmp/gnnplan-zoo")

# Larger instances labelled along optimal plans: extra training data, and the validation set
# that picks the best epoch (selecting on small held-out problems favours fitting the training
# sizes over generalising to larger ones). name -> (extra training problems, validation problems)
OPTIMAL = {
    "blocks": ([f"ipc-classic/blocks/probBLOCKS-7-{i}.pddl" for i in range(3)],
               [f"ipc-classic/blocks/probBLOCKS-8-{i}.pddl" for i in range(3)]),
}

# name -> (domain file, training folder, largest state space to expand, architecture)
DOMAINS = {
    "blocks": ("ipc-classic/blocks/domain.pddl", "ipc-classic/blocks", 8000, "rgnn"),
    "blocksworld": ("ipc2023-learning/blocksworld/domain.pddl", "ipc2023-learning/blocksworld/training/easy", 8000, "rgnn"),
    "childsnack": ("ipc2023-learning/childsnack/domain.pddl", "ipc2023-learning/childsnack/training/easy", 20000, "rgnn"),
    "ferry": ("ipc2023-learning/ferry/domain.pddl", "ipc2023-learning/ferry/training/easy", 20000, "rgnn"),
    "floortile": ("ipc2023-learning/floortile/domain.pddl", "ipc2023-learning/floortile/training/easy", 20000, "rgnn"),
    "miconic": ("ipc2023-learning/miconic/domain.pddl", "ipc2023-learning/miconic/training/easy", 20000, "rgnn"),
    "rovers": ("ipc2023-learning/rovers/domain.pddl", "ipc2023-learning/rovers/training/easy", 20000, "rgnn"),
    "satellite": ("ipc2023-learning/satellite/domain.pddl", "ipc2023-learning/satellite/training/easy", 20000, "rgnn"),
    "sokoban": ("ipc2023-learning/sokoban/domain.pddl", "ipc2023-learning/sokoban/training/easy", 20000, "rgnn"),
    "spanner": ("ipc2023-learning/spanner/domain.pddl", "ipc2023-learning/spanner/training/easy", 20000, "rgnn"),
    "transport": ("ipc2023-learning/transport/domain.pddl", "ipc2023-learning/transport/training/easy", 20000, "rgnn"),
    "gripper": ("ipc-classic/gripper/domain.pddl", "ipc-classic/gripper", 20000, "rgnn"),
    "logistics": ("tiny/logistics/domain.pddl", "tiny/logistics/training/easy", 20000, "rgnn"),
    "visitall": ("tiny/visitall/domain.pddl", "tiny/visitall/training/easy", 20000, "rgnn"),
    "grid": ("tiny/grid/domain.pddl", "tiny/grid/training/easy", 20000, "rgnn"),
}


def expandable(folder: str, limit: int, most: int) -> list[Path]:
    """Return up to ``most`` problems of ``folder`` with at most ``limit`` reachable states, small first."""
    rows = []
    with open(SHARED / "manifest.csv", newline="") as f:
        for row in csv.DictReader(f):
            states = row["reachable_states"].strip()
            if row["dir"].strip() == folder and states.isdigit() and 1 < int(states) <= limit:
                rows.append((int(states), row["problem"].strip()))
    rows.sort()
    if len(rows) > most:  # spread the picks over all sizes
        step = len(rows) / most
        rows = [rows[int(i * step)] for i in range(most)]
    return [SHARED / folder / name for _, name in rows]


def run(command: list[str], log: Path, output: Path | None = None, reuse: bool = False) -> None:
    """Run ``command`` and log it; with ``reuse``, an existing ``output`` is kept (and logged as such)."""
    line = " ".join(shlex.quote(str(c)) for c in command)
    reused = reuse and output is not None and output.is_file()
    print(f"$ {line}" + ("   # reused existing output" if reused else ""), flush=True)
    with log.open("a") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')}  {line}{'   # reused existing output' if reused else ''}\n")
    if not reused:
        subprocess.run(command, check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domains", nargs="+", choices=sorted(DOMAINS))
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--most", type=int, default=40, help="at most this many training problems")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="keep dataset files that already exist")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    log = ROOT / "benchmarks" / "zoo" / "commands.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    for name in args.domains:
        domain, folder, limit, arch = DOMAINS[name]
        problems = expandable(folder, limit, args.most)
        if not problems:
            sys.exit(f"{name}: no training problem with a state space of at most {limit} states in the manifest")
        data, checkpoint = WORK / f"{name}.npz", WORK / f"{name}.pt"
        run(["gnnplan", "dataset", SHARED / domain, *problems, "-o", data], log, data, args.reuse)
        datasets, validation = [data], []
        if name in OPTIMAL:
            extra, valid = OPTIMAL[name]
            for label, files in (("extra", extra), ("valid", valid)):
                out = WORK / f"{name}-{label}.npz"
                run(["gnnplan", "dataset", SHARED / domain, *(SHARED / f for f in files), "--method", "optimal",
                     "--successor-time-limit", "2", "--plan-time-limit", "120", "-o", out], log, out, args.reuse)
            datasets.append(WORK / f"{name}-extra.npz")
            validation = ["--validation-dataset", WORK / f"{name}-valid.npz"]
        run(["gnnplan", "train", *datasets, "-o", checkpoint, "--arch", arch, "--seed", str(args.seed),
             "--max-seconds", str(int(60 * args.minutes)), *validation], log)
        run(["gnnplan", "export", checkpoint, "-o", WORK / f"{name}.onnx", "--ship", name], log)


if __name__ == "__main__":
    main()

"""Train, export, ship and evaluate the pretrained models, each with the exact commands recorded.

For each domain:

1. label the training problems whose whole state space fits (from
   ``../shared/benchmarks/manifest.csv``) with ``gnnplan dataset`` (exact V* by expansion);
2. label the next larger problems (the smallest ones that do not fit) along optimal plans, one
   ``gnnplan dataset --method optimal`` per problem (a problem whose optimal plan is not found
   in time is skipped and logged): the first ``--optimal`` of them are extra training data, the
   next ``--optimal`` the validation set that picks the best epoch. Selecting on held-out
   *small* problems favours fitting the training sizes over generalising to larger ones
   (measured on Blocks: 0/17 against 16/17 greedy coverage, benchmarks/RESULTS.md);
3. ``gnnplan train``, then ``gnnplan export --ship NAME``;
4. ``gnnplan compare`` of the shipped model's greedy policy against LAMA-first on the domain's
   test problems (``--eval-count`` of them spread over the sizes, 60 s each); the coverage is written into the
   shipped entry of ``up_gnnplan/models_zoo/index.json``.

Every command is printed and appended to ``benchmarks/zoo/commands.log``; the training record
inside the shipped entry repeats command, data, seed, minutes and validation error. Run it in
the background, at most one per core:

    OMP_NUM_THREADS=1 nohup python benchmarks/build_zoo.py ferry miconic --minutes 8 &
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "benchmarks"
WORK = Path("/tmp/gnnplan-zoo")
EVAL = ROOT / "benchmarks" / "zoo" / "eval"


@dataclass
class Spec:
    domain: str  # domain file, relative to ../shared/benchmarks
    train: str  # folder of training problems (as in manifest.csv)
    test: str  # folder of test problems
    limit: int = 20000  # largest state space expanded for training
    larger: str | None = None  # folder of the optimal-plan problems (default: the training folder)
    test_min_objects: int = 0  # only test problems with at least this many objects


def _ipc2023(name: str) -> Spec:
    base = f"ipc2023-learning/{name}"
    return Spec(f"{base}/domain.pddl", f"{base}/training/easy", f"{base}/testing/easy")


DOMAINS = {
    "blocks": Spec("ipc-classic/blocks/domain.pddl", "ipc-classic/blocks", "ipc-classic/blocks", 8000,
                   test_min_objects=10),
    **{name: _ipc2023(name) for name in ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers",
                                         "satellite", "sokoban", "spanner", "transport")},
    "gripper": Spec("ipc-classic/gripper/domain.pddl", "ipc-classic/gripper", "ipc-classic/gripper",
                    test_min_objects=20),
    "logistics": Spec("generated/logistics-train/domain.pddl", "generated/logistics-train", "generated/logistics-valid"),
    "visitall": Spec("tiny/visitall/domain.pddl", "tiny/visitall/training/easy", "ipc-classic/visitall-opt11-strips",
                     larger="goose-aaai24/visitall/train"),
    "grid": Spec("generated/grid-train/domain.pddl", "generated/grid-train", "generated/grid-valid",
                 larger="generated/grid-valid"),
}


def _manifest(folder: str) -> list[tuple[int, str, str]]:
    """(objects, problem, reachable_states) of ``folder``'s problems, smallest first."""
    with open(SHARED / "manifest.csv", newline="") as f:
        rows = [(int(r["objects"]), r["problem"].strip(), r["reachable_states"].strip())
                for r in csv.DictReader(f) if r["dir"].strip() == folder]
    return sorted(rows, key=lambda r: (r[0], _natural(r[1])))


def _natural(name: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def expandable(folder: str, limit: int, most: int) -> list[Path]:
    """Up to ``most`` problems of ``folder`` with at most ``limit`` reachable states, spread over all sizes."""
    rows = sorted((int(s), name) for _, name, s in _manifest(folder) if s.isdigit() and 1 < int(s) <= limit)
    if len(rows) > most:
        step = len(rows) / most
        rows = [rows[int(i * step)] for i in range(most)]
    return [SHARED / folder / name for _, name in rows]


def larger(folder: str, limit: int, exclude: set[str], count: int) -> list[Path]:
    """The ``count`` smallest problems of ``folder`` whose state space does not fit under ``limit``."""
    rows = [name for _, name, s in _manifest(folder)
            if not s.startswith("unsolvable") and not (s.isdigit() and int(s) <= limit)
            and str(SHARED / folder / name) not in exclude]
    return [SHARED / folder / name for name in rows[:count]]


def test_problems(spec: Spec, count: int) -> list[Path]:
    """Up to ``count`` test problems spread evenly over the sizes, the smallest and the largest included."""
    rows = [name for objects, name, _ in _manifest(spec.test) if objects >= spec.test_min_objects]
    if len(rows) > count:
        rows = [rows[round(i * (len(rows) - 1) / (count - 1))] for i in range(count)]
    return [SHARED / spec.test / name for name in rows]


def run(command: list, log: Path, output: Path | None = None, reuse: bool = False, check: bool = True) -> bool:
    """Run ``command`` and log it; with ``reuse``, an existing ``output`` is kept (and logged as such)."""
    line = " ".join(shlex.quote(str(c)) for c in command)
    reused = reuse and output is not None and output.is_file()
    note = "   # reused existing output" if reused else ""
    print(f"$ {line}{note}", flush=True)
    with log.open("a") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')}  {line}{note}\n")
    if reused:
        return True
    ok = subprocess.run([str(c) for c in command]).returncode == 0
    if not ok:
        with log.open("a") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')}  # failed (skipped): {line}\n")
        if check:
            sys.exit(f"failed: {line}")
    return ok


def label_optimal(domain: Path, problems: list[Path], name: str, log: Path, reuse: bool) -> list[Path]:
    """Label each problem along optimal plans into its own file; return the files that succeeded."""
    done = []
    for problem in problems:
        out = WORK / f"{name}-opt-{problem.stem}.npz"
        if run(["gnnplan", "dataset", domain, problem, "--method", "optimal", "--plan-time-limit", "60",
                "--successor-time-limit", "2", "-o", out], log, out, reuse, check=False):
            done.append(out)
    return done


def record_coverage(name: str, folder: Path, spec: Spec, timeout: float) -> str:
    """Summarise OUT/results.jsonl of the evaluation and store it in the shipped entry."""
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines() if line.strip()]
    engines = sorted({r["engine"] for r in rows})
    tasks = len({r["problem"] for r in rows})
    solved = {e: sum(1 for r in rows if r["engine"] == e and r["solved"] and r["valid"]) for e in engines}
    total = len([1 for objects, _, _ in _manifest(spec.test) if objects >= spec.test_min_objects])
    text = (f"{spec.test}, {tasks} of its {total} problems spread over the sizes, {timeout:g} s each: "
            + ", ".join(f"{e} {solved[e]}/{tasks}" for e in engines)
            + f". Per-task results: benchmarks/zoo/eval/{name}/summary.md")
    index = ROOT / "up_gnnplan" / "models_zoo" / "index.json"
    data = json.loads(index.read_text())
    for entry in data["models"]:
        if entry["name"] == name:
            entry["coverage"] = text
    index.write_text(json.dumps(data, indent=1) + "\n")
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domains", nargs="+", choices=sorted(DOMAINS))
    parser.add_argument("--minutes", type=float, default=8.0, help="training budget per domain")
    parser.add_argument("--most", type=int, default=40, help="at most this many expanded training problems")
    parser.add_argument("--optimal", type=int, default=3,
                        help="larger problems labelled along optimal plans, for training and again for validation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-count", type=int, default=10, help="test problems, spread over the sizes")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per evaluation task")
    parser.add_argument("--reuse", action="store_true", help="keep dataset files that already exist")
    parser.add_argument("--skip-train", action="store_true", help="only evaluate the shipped model")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    log = ROOT / "benchmarks" / "zoo" / "commands.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    for name in args.domains:
        spec = DOMAINS[name]
        domain = SHARED / spec.domain
        tests = test_problems(spec, args.eval_count)
        if not args.skip_train:
            problems = expandable(spec.train, spec.limit, args.most)
            if not problems:
                sys.exit(f"{name}: no training problem with at most {spec.limit} states in the manifest")
            data, checkpoint = WORK / f"{name}.npz", WORK / f"{name}.pt"
            run(["gnnplan", "dataset", domain, *problems, "-o", data], log, data, args.reuse)
            candidates = larger(spec.larger or spec.train, spec.limit, {str(p) for p in tests}, 2 * args.optimal)
            extra = label_optimal(domain, candidates[: args.optimal], name, log, args.reuse)
            valid = label_optimal(domain, candidates[args.optimal:], name, log, args.reuse)
            validation = [a for v in valid for a in ("--validation-dataset", v)]
            run(["gnnplan", "train", data, *extra, "-o", checkpoint, "--arch", "rgnn", "--seed", args.seed,
                 "--max-seconds", int(60 * args.minutes), *validation], log)
            run(["gnnplan", "export", checkpoint, "-o", WORK / f"{name}.onnx", "--ship", name], log)
        out = EVAL / name
        run(["gnnplan", "compare", domain, *tests, "--engine", "gnnplan:policy", "--engine", "fast-downward",
             "--timeout", args.timeout, "--jobs", 1, "-o", out], log)
        print(record_coverage(name, out, spec, args.timeout), flush=True)


if __name__ == "__main__":
    main()

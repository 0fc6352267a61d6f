"""Train a value function on small instances, then measure greedy-policy coverage on larger ones.

Records, per architecture: training throughput, the validation curve (time to reach a given
validation MAE), and the coverage and plan lengths of the greedy policy (Ståhlberg et al.
2024, §9: unvisited successor with the lowest V; 1000 steps at most) on the test problems.

Example (the issue-3 Blocks setting: train on IPC-2000 Blocks with 4-6 blocks, test on 10-17):

    OMP_NUM_THREADS=1 python -m benchmarks.train_eval --preset blocks2000 --arch rgnn --minutes 5
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from .common import SHARED

PRESETS = {
    "blocks2000": {
        "domain": SHARED / "ipc-classic/blocks/domain.pddl",
        "train": [SHARED / f"ipc-classic/blocks/probBLOCKS-{n}-{i}.pddl" for n in (4, 5, 6) for i in (0, 1, 2)],
        "test": sorted((SHARED / "ipc-classic/blocks").glob("probBLOCKS-1[0-7]-*.pddl")),
    },
    "gripper": {
        "domain": SHARED / "ipc-classic/gripper/domain.pddl",
        "train": [SHARED / f"ipc-classic/gripper/prob0{i}.pddl" for i in (1, 2)],
        "test": sorted((SHARED / "ipc-classic/gripper").glob("prob*.pddl"))[2:],
    },
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="blocks2000")
    parser.add_argument("--arch", default="rgnn")
    parser.add_argument("--t", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--layers", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--minutes", type=float, default=5.0, help="training budget")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target-mae", type=float, nargs="*", default=[1.0, 0.5, 0.25])
    parser.add_argument("--policy-time-limit", type=float, default=60.0)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/gnnplan-bench"))
    parser.add_argument("--json", type=Path, help="write the full result here")
    parser.add_argument("--extra", type=Path, nargs="*", default=[], help="more training datasets (.npz)")
    parser.add_argument("--validation", type=Path, nargs="*", default=[],
                        help="validation datasets (.npz, e.g. larger problems labelled along optimal plans); "
                             "default: held-out training problems")
    parser.add_argument("--test-limit", type=int, help="only the first N test problems")
    parser.add_argument("--policy-validation", type=Path, nargs="*", default=[],
                        help="choose the best epoch by the greedy policy on these problems (of --policy-validation-domain)")
    parser.add_argument("--policy-validation-domain", type=Path, help="domain file of --policy-validation")
    parser.add_argument("--policy-steps", type=int, default=150)
    args = parser.parse_args(argv)

    import torch

    from up_gnnplan.datasets import Dataset
    from up_gnnplan.datasets.build import build_dataset
    from up_gnnplan.problems import load_task
    from up_gnnplan.search import policy_rollout
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.adapters import TorchValueFunction
    from up_gnnplan.training.loop import train

    torch.set_num_threads(1)
    preset = PRESETS[args.preset]
    args.cache.mkdir(parents=True, exist_ok=True)
    cached = args.cache / f"{args.preset}.npz"
    start = time.perf_counter()
    data = Dataset.load(cached) if cached.is_file() else build_dataset(preset["domain"], preset["train"])
    data.save(cached)
    for path in args.extra:
        data.extend(Dataset.load(path, expect=data.signature))
    validation = Dataset.load_all(args.validation, expect=data.signature)
    print(f"dataset: {len(data)} states from {len(data.problems)} problems ({time.perf_counter() - start:.1f} s)")

    config = TrainConfig(architecture=args.arch, t=args.t, hidden=args.hidden, layers=args.layers,
                         batch_size=args.batch_size, lr=args.lr, max_seconds=60 * args.minutes,
                         max_epochs=10_000, patience=10_000, seed=args.seed, policy_steps=args.policy_steps)
    tasks = [load_task(args.policy_validation_domain, p) for p in args.policy_validation]
    curve = []
    t0 = time.perf_counter()

    def on_epoch(epoch, loss, val, best, judge=None):
        curve.append((time.perf_counter() - t0, epoch, loss, val))
        print(f"  epoch {epoch:3d}  {curve[-1][0]:6.0f} s  loss {loss:.3f}  val MAE {val:.3f}", flush=True)

    model, encoding, record = train(data, config, on_epoch, validation=validation, validation_tasks=tasks)
    if tasks:
        print("policy validation per epoch (epoch, solved, steps): "
              + ", ".join(f"({row[0]}, {row[4]}, {row[5]})" for row in record["curve"]), flush=True)
    reach = {m: next((round(t, 1) for t, _, _, v in curve if v <= m), None) for m in args.target_mae}

    value_fn = TorchValueFunction(model, encoding)
    runs = []
    for problem in preset["test"][: args.test_limit]:
        task = load_task(preset["domain"], problem)
        result = policy_rollout(task, value_fn, time_limit=args.policy_time_limit)
        runs.append({"problem": problem.name, "objects": task.num_objects, "status": result.status.value,
                     "length": len(result.actions), "seconds": round(result.seconds, 2)})
        print(f"  {problem.name}: {result.status.value}, {len(result.actions)} steps, {result.seconds:.1f} s", flush=True)
    solved = [r for r in runs if r["status"] == "solved"]
    summary = {
        "preset": args.preset, "config": config.to_dict(), "record": record, "time_to_validation_mae": reach,
        "coverage": f"{len(solved)}/{len(runs)}", "plan_length_total": sum(r["length"] for r in solved),
        "plan_length_median": float(np.median([r["length"] for r in solved])) if solved else None, "runs": runs,
    }
    print(json.dumps({k: v for k, v in summary.items() if k not in ("runs", "record", "config")}, indent=1))
    print(f"train states/s (optimisation steps only): {record['train_states_per_second']}, "
          f"best validation MAE {record['best_validation_mae']:.3f} at epoch {record['best_epoch']}"
          + (f", policy validation {record['policy_validation']}" if tasks else ""))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()

"""Navig-xy: can R-GNN and R-GNN[1] learn the exact goal distance? (issue 3)

Ståhlberg, Bonet & Geffner (2024), section 7: in Navig-xy an ``n x m`` grid is given by
``n + m`` coordinate objects, not one object per cell. Computing the true (obstacle-aware)
distance to the goal needs each cell ``⟨x, y⟩`` to talk to its neighbours ``⟨x', y⟩`` and
``⟨x, y'⟩``, i.e. atoms over three objects, which only R-GNN[t] with ``t >= 1`` has (its
compose atoms); the plain R-GNN can only compute Manhattan-like distances.

This script measures that on small generated grids, in one run:

1. generate training and validation instances with the package's generator (different seeds,
   validation grids may be slightly larger), label every state of each with V* by full
   expansion (``build_dataset``, method ``expand``);
2. train each architecture with the same ``TrainConfig`` apart from the architecture (same
   seed, same wall-clock budget ``--minutes``), ``validation_fraction=0`` (the best epoch is
   the one with the lowest training MAE);
3. evaluate on every non-dead-end validation state with ``predict``: MAE, max error, share of
   states with ``|V - V*| < 0.5`` (exact after rounding), and the MAE split into states whose
   V* equals the Manhattan distance to the goal and states that need a detour;
4. run the greedy policy (``policy_rollout``, unvisited successor with the lowest V) from the
   initial state of every validation instance: success rate and mean ratio of plan length to
   the optimal length V*(initial) over the solved instances.

A reference row "Manhattan distance" uses |x - xg| + |y - yg| as the value function (no
learning): it is what a model limited to Manhattan distances can achieve at best.

Run single-threaded (two torch threads are much slower on this kind of small graph)::

    OMP_NUM_THREADS=1 python -m benchmarks.navig_expressiveness --minutes 4 --markdown table.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .common import fmt, load_average, table

# Fields of the training record kept in the JSON output (those present in this package version).
RECORD_KEYS = ("seconds", "epochs", "steps", "best_epoch", "train", "train_states_per_second",
               "states_per_second_overall", "curve")


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """Return [(width, height), ...] from ``"3x3,3x4,4x4"``."""
    sizes = []
    for item in text.split(","):
        w, sep, h = item.strip().lower().partition("x")
        if not sep:
            raise argparse.ArgumentTypeError(f"size {item!r} is not WIDTHxHEIGHT")
        sizes.append((int(w), int(h)))
    return sizes


def make_instances(out_dir: Path, sizes, count: int, seed: int, blocked_ratio: float) -> list[Path]:
    """Generate ``count`` instances of each size into out_dir (one seed for the whole split)."""
    from up_gnnplan.datasets.generators import generate

    paths = []
    for w, h in sizes:
        paths += generate("navig-xy", out_dir, count=count, seed=seed, width=w, height=h, blocked_ratio=blocked_ratio)
    return paths


def layout_key(path: Path) -> str:
    """Return the problem text without its name line: equal keys mean the same instance."""
    return path.read_text().split("\n", 1)[1]


def coordinates(names: list[str]) -> np.ndarray:
    """Return the 1-based coordinate of each object (``x3`` -> 3, ``y2`` -> 2)."""
    return np.array([int(n[1:]) for n in names], dtype=np.int64)


def robot_and_goal(signature, atoms, goal) -> tuple[tuple[int, int], tuple[int, int]]:
    """Return the (x, y) object ids of the robot and of the goal cell."""
    at = signature.index["at"]
    (robot,) = [tuple(a[:2]) for p, a in zip(atoms.pred.tolist(), atoms.args.tolist()) if p == at]
    (target,) = [tuple(a[:2]) for p, a in zip(goal.pred.tolist(), goal.args.tolist()) if p == at]
    return robot, target


def manhattan_of_states(dataset, indices) -> np.ndarray:
    """Return |x - xg| + |y - yg| of dataset states ``indices``."""
    out = np.empty(len(indices))
    for k, i in enumerate(indices):
        record = dataset.problems[dataset.state_problem[i]]
        coord = coordinates(record.object_names)
        (x, y), (xg, yg) = robot_and_goal(dataset.signature, dataset.fluent_atoms(i), record.goal)
        out[k] = abs(coord[x] - coord[xg]) + abs(coord[y] - coord[yg])
    return out


class ManhattanValue:
    """A value function (list of StateInput -> values) giving the Manhattan distance to the goal."""

    def __init__(self, task):
        self.signature, self.coord = task.signature, coordinates(task.object_names)

    def __call__(self, inputs) -> np.ndarray:
        out = []
        for s in inputs:
            (x, y), (xg, yg) = robot_and_goal(self.signature, s.atoms, s.goal)
            out.append(abs(self.coord[x] - self.coord[xg]) + abs(self.coord[y] - self.coord[yg]))
        return np.array(out, dtype=np.float64)


def errors(pred: np.ndarray, target: np.ndarray, detour: np.ndarray) -> dict:
    """Return MAE, max error, share within 0.5, and the MAE on straight / detour states."""
    err = np.abs(pred - target)
    return {
        "mae": float(err.mean()),
        "max_error": float(err.max()),
        "within_0.5": float((err < 0.5).mean()),
        "mae_straight": float(err[~detour].mean()) if (~detour).any() else float("nan"),
        "mae_detour": float(err[detour].mean()) if detour.any() else float("nan"),
        "mae_by_vstar": {f"{v:g}": float(err[target == v].mean()) for v in np.unique(target)},
    }


def rollouts(val, make_value_fn, max_steps: int, time_limit: float) -> dict:
    """Run the greedy policy on every validation instance; return success and length ratio."""
    from up_gnnplan.problems import load_task
    from up_gnnplan.search import policy_rollout

    solved, ratios, details = 0, [], []
    for record in val.problems:
        task = load_task(record.domain_file, record.problem_file)
        result = policy_rollout(task, make_value_fn(task), max_steps=max_steps, time_limit=time_limit)
        optimal = float(record.stats["initial_value"])
        entry = {"problem": record.name, "status": result.status.value, "length": len(result.actions), "optimal": optimal}
        if result.solved:
            solved += 1
            if optimal > 0:
                ratios.append(len(result.actions) / optimal)
        details.append(entry)
    return {
        "solved": solved,
        "instances": len(val.problems),
        "mean_length_ratio": float(np.mean(ratios)) if ratios else float("nan"),
        "runs": details,
    }


COLUMNS = ["architecture", "training s", "epochs (best)", "steps", "train MAE", "val MAE", "val max error",
           "val exact (\\|V-V*\\| < 0.5)", "val MAE straight / detour", "policy solved", "plan length / optimal"]


def results_table(rows: list[dict]) -> str:
    """Return the markdown table of the measured ``rows``, one per value function."""
    cells = []
    for r in rows:
        v, p = r["validation"], r["policy"]
        trained = r.get("record")
        if trained:
            seconds, epochs, steps = trained["seconds"], f"{trained['epochs']} ({trained['best_epoch']})", trained["steps"]
            train_mae = trained["train"]["mae"]
        else:
            seconds = epochs = steps = "—"
            train_mae = r["train_mae"]
        cells.append([r["name"], str(seconds), str(epochs), str(steps), fmt(train_mae, 3), fmt(v["mae"], 3),
                      fmt(v["max_error"], 2), f"{100 * v['within_0.5']:.1f} %",
                      f"{fmt(v['mae_straight'], 3)} / {fmt(v['mae_detour'], 3)}",
                      f"{p['solved']} / {p['instances']}", fmt(p["mean_length_ratio"], 2)])
    return table(COLUMNS, cells)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train-sizes", type=parse_sizes, default=parse_sizes("3x3,3x4,4x3,4x4"),
                        help="training grid sizes WIDTHxHEIGHT, comma-separated (default: %(default)s)")
    parser.add_argument("--train-count", type=int, default=16, help="training instances per size (default: %(default)s)")
    parser.add_argument("--train-seed", type=int, default=1, help="generator seed of the training split (default: %(default)s)")
    parser.add_argument("--val-sizes", type=parse_sizes, default=parse_sizes("4x4,4x5,5x4"),
                        help="validation grid sizes (default: %(default)s)")
    parser.add_argument("--val-count", type=int, default=5, help="validation instances per size (default: %(default)s)")
    parser.add_argument("--val-seed", type=int, default=2, help="generator seed of the validation split (default: %(default)s)")
    parser.add_argument("--blocked-ratio", type=float, default=0.25, help="share of blocked cells (default: %(default)s)")
    parser.add_argument("--archs", default="rgnn,rgnn_t", help="architectures, comma-separated (default: %(default)s)")
    parser.add_argument("--t", type=int, default=1, help="R-GNN[t] parameter (default: %(default)s)")
    parser.add_argument("--hidden", type=int, default=16, help="embedding size (default: %(default)s)")
    parser.add_argument("--layers", type=int, default=12, help="message-passing rounds (default: %(default)s)")
    parser.add_argument("--aggregation", default="smoothmax", help="smoothmax | max | sum | mean (default: %(default)s)")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=16, help="states per step (default: %(default)s)")
    parser.add_argument("--minutes", type=float, default=4.0, help="training wall-clock budget per model (default: %(default)s)")
    parser.add_argument("--max-epochs", type=int, default=100_000, help="epoch cap (default: %(default)s, i.e. the time budget decides)")
    parser.add_argument("--patience", type=int, default=100_000, help="early-stopping patience in epochs (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="training seed, the same for every architecture (default: %(default)s)")
    parser.add_argument("--max-steps", type=int, default=1000, help="step limit of one policy rollout (default: %(default)s)")
    parser.add_argument("--rollout-seconds", type=float, default=120.0, help="time limit of one policy rollout (default: %(default)s)")
    parser.add_argument("--workdir", type=Path, help="keep generated instances and datasets here (default: a temporary folder)")
    parser.add_argument("--markdown", type=Path, help="also write the markdown table (and set-up lines) to this file")
    parser.add_argument("--json", type=Path, help="write all measurements as JSON to this file")
    args = parser.parse_args(argv)

    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("warning: set OMP_NUM_THREADS=1 for comparable timings", file=sys.stderr)

    import torch

    from up_gnnplan.datasets.build import BuildOptions, build_dataset
    from up_gnnplan.datasets.store import check_signature
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.adapters import TorchValueFunction
    from up_gnnplan.training.loop import predict, train

    started = datetime.datetime.now(datetime.timezone.utc)
    command = "OMP_NUM_THREADS=1 python -m benchmarks.navig_expressiveness " + shlex.join(sys.argv[1:] if argv is None else argv)
    print(f"{command}\n{started:%Y-%m-%d %H:%M} UTC, load average {load_average()}, {os.cpu_count()} cores, "
          f"{platform.machine()}, torch {torch.__version__}", flush=True)

    tmp = None
    if args.workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="navig-expr-")
        workdir = Path(tmp.name)
    else:
        workdir = args.workdir
    try:
        t0 = time.perf_counter()
        train_paths = make_instances(workdir / "train", args.train_sizes, args.train_count, args.train_seed, args.blocked_ratio)
        val_paths = make_instances(workdir / "val", args.val_sizes, args.val_count, args.val_seed, args.blocked_ratio)
        shared = {layout_key(p) for p in train_paths} & {layout_key(p) for p in val_paths}
        options = BuildOptions(method="expand")
        train_data = build_dataset(workdir / "train" / "domain.pddl", train_paths, options)
        val_data = build_dataset(workdir / "val" / "domain.pddl", val_paths, options)
        check_signature(val_data, train_data.signature, "the validation dataset")
        build_seconds = time.perf_counter() - t0

        val_idx = np.flatnonzero(~val_data.dead_end)
        train_idx = np.flatnonzero(~train_data.dead_end)
        target = val_data.value[val_idx]
        detour = target > manhattan_of_states(val_data, val_idx)
        max_train, max_val = train_data.value[train_idx].max(), target.max()
        setup = (
            f"Training: {len(train_paths)} instances ({', '.join(f'{w}x{h}' for w, h in args.train_sizes)}, "
            f"{args.train_count} each, seed {args.train_seed}), {len(train_idx)} states, V* 0–{max_train:g}. "
            f"Validation: {len(val_paths)} instances ({', '.join(f'{w}x{h}' for w, h in args.val_sizes)}, "
            f"{args.val_count} each, seed {args.val_seed}), {len(val_idx)} states, V* 0–{max_val:g}, "
            f"{int(detour.sum())} of them ({100 * detour.mean():.0f} %) with V* > Manhattan distance. "
            f"blocked_ratio {args.blocked_ratio}; {len(shared)} validation layout(s) identical to a training one. "
            f"Generation and V* labelling: {build_seconds:.0f} s."
        )
        print(setup, flush=True)
        if args.layers < max_val + 2:
            print(f"warning: {args.layers} layers < max V* + 2 = {max_val + 2:g}: the goal's information may not "
                  "reach the readout in the farthest states", file=sys.stderr)

        rows = []
        manhattan_train = manhattan_of_states(train_data, train_idx)
        rows.append({
            "name": "Manhattan distance (no learning)",
            "train_mae": float(np.abs(manhattan_train - train_data.value[train_idx]).mean()),
            "validation": errors(manhattan_of_states(val_data, val_idx), target, detour),
            "policy": rollouts(val_data, ManhattanValue, args.max_steps, args.rollout_seconds),
        })
        for arch in [a.strip() for a in args.archs.split(",") if a.strip()]:
            config = TrainConfig(
                architecture=arch, t=args.t, hidden=args.hidden, layers=args.layers, aggregation=args.aggregation,
                lr=args.lr, batch_size=args.batch_size, max_epochs=args.max_epochs, max_seconds=60 * args.minutes,
                patience=args.patience, validation_fraction=0.0, seed=args.seed, threads=1,
            )
            print(f"training {arch} for {args.minutes:g} min (load average {load_average()}) ...", flush=True)
            model, encoding, record = train(train_data, config)
            pred = predict(model, encoding, val_data, val_idx)
            value_fn = lambda task, model=model, encoding=encoding: TorchValueFunction(model, encoding)
            name = f"R-GNN[{args.t}] (rgnn_t, t={args.t})" if arch == "rgnn_t" else {"rgnn": "R-GNN (rgnn)"}.get(arch, arch)
            row = {
                "name": name,
                "architecture": arch,
                "config": config.to_dict(),
                "record": {k: v for k, v in record.items() if k in RECORD_KEYS},
                "validation": errors(pred, target, detour),
                "policy": rollouts(val_data, value_fn, args.max_steps, args.rollout_seconds),
            }
            rows.append(row)
            v = row["validation"]
            print(f"  {arch}: {record['epochs']} epochs in {record['seconds']} s, train MAE {record['train']['mae']:.3f}, "
                  f"val MAE {v['mae']:.3f} (max {v['max_error']:.2f}, exact {100 * v['within_0.5']:.1f} %), "
                  f"policy {row['policy']['solved']}/{row['policy']['instances']}", flush=True)
            print("  val MAE by V*: " + ", ".join(f"{k}: {x:.2f}" for k, x in v["mae_by_vstar"].items()), flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()

    finished = datetime.datetime.now(datetime.timezone.utc)
    header = (
        f"Command: `{command}`\n\n"
        f"Date: {started:%Y-%m-%d %H:%M}–{finished:%H:%M} UTC. Machine: {os.cpu_count()} cores ({platform.machine()}), "
        f"no GPU, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, torch {torch.__version__}; "
        f"load average at end {load_average()}.\n\n"
        f"{setup}\n\n"
        f"Model: hidden {args.hidden}, {args.layers} layers (shared weights), {args.aggregation}, L1 loss, Adam lr {args.lr}, "
        f"batch {args.batch_size}, seed {args.seed}, {args.minutes:g} min per model, best epoch by training MAE.\n"
    )
    text = header + "\n" + results_table(rows) + "\n"
    print("\n" + text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"command": command, "started": started.isoformat(), "setup": setup, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

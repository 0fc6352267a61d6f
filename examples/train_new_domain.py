"""Learn a new domain end to end: generate Navig-xy instances, label, train, export, solve larger ones.

Shows the whole pipeline from Python, on a domain no model ships for:

1. ``up_gnnplan.datasets.generators.generate`` writes seeded Navig-xy instances (the R-GNN[t]
   paper's grid-navigation domain; ``gnnplan generate navig-xy`` on the command line);
2. ``build_dataset`` labels every reachable state of the small ones with its optimal
   cost-to-go V* (``gnnplan dataset``);
3. ``train`` fits an R-GNN value function for ``--seconds`` on the CPU (``gnnplan train``);
4. ``export_onnx`` writes the ONNX model with its metadata (``gnnplan export``);
5. ``OneshotPlanner(name="gnnplan")`` solves a larger generated grid with the exported model
   through Unified Planning: onnxruntime only, no torch; and Fast Downward, when installed,
   solves it too for a reference plan length.

Needs torch and onnx (``pip install 'up-gnnplan[cpu,train,export]'``). Run (about a minute)::

    OMP_NUM_THREADS=1 python examples/train_new_domain.py [--seconds 40] [--width 12 --height 8]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

TRAIN_SIZES = [(3, 3), (4, 3), (4, 4)]  # width x height of the training grids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="training budget (default: %(default)s)")
    parser.add_argument("--width", type=int, default=12, help="width of the grid to solve (default: %(default)s)")
    parser.add_argument("--height", type=int, default=8, help="height of the grid to solve (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=10, help="generator seed of the grid (default: %(default)s)")
    args = parser.parse_args()

    from up_gnnplan.datasets.build import BuildOptions, build_dataset
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.loop import train

    with tempfile.TemporaryDirectory() as workdir:
        work = Path(workdir)
        start = time.perf_counter()
        # 1. Small training grids: 4 instances of each size, one seed per size.
        problems = []
        for seed, (width, height) in enumerate(TRAIN_SIZES, start=1):
            problems += generate("navig-xy", work / "train", count=4, seed=seed, width=width, height=height)
        # 2. V* of every reachable state (these state spaces are tiny, so expand them fully).
        data = build_dataset(work / "train" / "domain.pddl", problems, BuildOptions(method="expand"))
        print(f"dataset: {len(data)} states of {len(problems)} grids up to 4x4 ({time.perf_counter() - start:.1f} s)")
        # 3. Train on all of them; the time budget decides when to stop.
        config = TrainConfig(architecture="rgnn", hidden=16, layers=12, lr=3e-3, batch_size=16,
                             max_seconds=args.seconds, max_epochs=10**6, patience=10**6, validation_fraction=0.0)
        model, encoding, record = train(data, config)
        print(f"trained {record['epochs']} epochs in {record['seconds']:.0f} s, "
              f"training MAE {record['train']['mae']:.3f} (V* in steps)")
        # 4. Export: the ONNX file carries the predicate signature, so it refuses other domains.
        path = export_onnx(model, encoding, work / "navig-xy.onnx", domain=data.domain,
                           train_config=config.to_dict(), training_record=record)
        print(f"exported {path.name} ({path.stat().st_size / 1024:.0f} KiB)")
        # 5. Solve a larger grid than any seen in training, through Unified Planning.
        solve(work, path, args.width, args.height, args.seed)


def solve(work: Path, model: Path, width: int, height: int, seed: int) -> None:
    """Solve one generated ``width`` x ``height`` grid with the model, and with Fast Downward."""
    import up_gnnplan  # noqa: F401  (registers the gnnplan engine)
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.problems.loading import load_pddl

    get_environment().credits_stream = None
    target, = generate("navig-xy", work / "test", count=1, seed=seed, width=width, height=height)
    problem = load_pddl(work / "test" / "domain.pddl", target)
    with OneshotPlanner(name="gnnplan", params={"model": str(model), "mode": "auto"}) as planner:
        result = planner.solve(problem, timeout=120)
    print(f"\n{target.name} ({width}x{height}): {result.status.name}")
    if result.plan is None:
        raise SystemExit(" ".join(m.message for m in result.log_messages))
    for action in result.plan.actions:
        print(f"  {action}")
    print(f"gnnplan: {len(result.plan.actions)} steps, {result.metrics['expanded']} states expanded, "
          f"{float(result.metrics['engine_internal_time']):.2f} s, plan validated")
    if "fast-downward" in get_environment().factory.engines:
        with OneshotPlanner(name="fast-downward") as planner:
            reference = planner.solve(problem, timeout=120)
        if reference.plan is not None:
            print(f"fast-downward (LAMA-first): {len(reference.plan.actions)} steps")


if __name__ == "__main__":
    main()

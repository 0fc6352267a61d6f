"""Learn a domain end to end with ``gnnplan learn``'s Python entry, then solve a larger problem with the model.

Shows the learning system from Python:

1. ``up_gnnplan.datasets.generators.generate`` writes small seeded Gripper problems (2-6 balls;
   ``gnnplan generate gripper`` on the command line); any domain file and problems of your own
   work the same way;
2. ``up_gnnplan.learn.learn`` (``gnnplan learn``) labels them with exact optimal costs, trains an
   R-GNN with an action head and a value head, keeps the epoch whose greedy policy does best on the
   largest problems it held back, and exports the ONNX model, all within one budget (``--seconds``);
3. ``OneshotPlanner(name="gnnplan", params={"model": ...})`` solves a problem several times larger
   than any trained on, with the learned model (onnxruntime only); Fast Downward's LAMA-first,
   when installed, solves it too for a reference plan length.

Needs torch and onnx to learn, onnxruntime to solve: ``pip install 'up-gnnplan[cpu,train,export]'``
(add ``fast-downward`` for the LAMA-first line). Run (about half a minute)::

    OMP_NUM_THREADS=1 python examples/train_new_domain.py [--seconds 20] [--balls 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

TRAIN_BALLS = [2, 3, 4, 5, 6]  # two training problems of each size
EXIT_MISSING_EXTRA = 2


def missing_extras() -> list[str]:
    """Return the extras this example needs that are not installed."""
    missing = []
    if importlib.util.find_spec("onnxruntime") is None:
        missing.append("cpu")
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("onnx") is None:
        missing += ["train", "export"]
    return missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="the whole learning budget: labelling, training, export (default: %(default)s)")
    parser.add_argument("--balls", type=int, default=20, help="balls of the problem to solve (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=7, help="generator seed of that problem (default: %(default)s)")
    args = parser.parse_args()
    missing = missing_extras()
    if missing:
        print(f"this example learns a model and solves with it: pip install 'up-gnnplan[{','.join(missing)}]'",
              file=sys.stderr)
        sys.exit(EXIT_MISSING_EXTRA)

    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.learn import LearnOptions, learn

    with tempfile.TemporaryDirectory() as workdir:
        work = Path(workdir)
        for balls in TRAIN_BALLS:
            generate("gripper", work / "train", count=2, seed=balls, balls=balls)
        model = work / "gripper.onnx"
        start = time.perf_counter()
        try:
            summary = learn(work / "train" / "domain.pddl", [work / "train"], model,
                            LearnOptions(minutes=args.seconds / 60, seed=0), say=print)
        except GnnplanError as error:  # a budget too small, say: the reason, without a traceback
            sys.exit(f"error: {error}")
        judge = summary["judge"]
        print(f"learned {model.name} in {time.perf_counter() - start:.0f} s: {summary['data']['states']:,} states "
              f"labelled; the chosen epoch's policy solved {judge.get('solved', 0)}/{len(judge['problems'])} "
              f"held-back problems")
        solve(work, model, args.balls, args.seed)


def solve(work: Path, model: Path, balls: int, seed: int) -> None:
    """Solve one generated problem with ``balls`` balls with the learned model, and with LAMA-first if installed."""
    import up_gnnplan  # noqa: F401  (registers the gnnplan engine)
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.problems.loading import load_pddl

    get_environment().credits_stream = None
    target, = generate("gripper", work / "test", count=1, seed=seed, balls=balls)
    problem = load_pddl(work / "test" / "domain.pddl", target)
    # The learned file is passed explicitly: without "model", the engine would take the shipped Gripper model.
    with OneshotPlanner(name="gnnplan", params={"model": str(model), "mode": "auto"}) as planner:
        result = planner.solve(problem, timeout=60)
    print(f"\n{target.name} ({balls} balls): {result.status.name}")
    if result.plan is None:
        sys.exit(" ".join(m.message for m in result.log_messages))
    print(f"gnnplan: {len(result.plan.actions)} steps, {result.metrics['expanded']} states expanded, "
          f"{float(result.metrics['engine_internal_time']):.2f} s, plan validated")
    if "fast-downward" in get_environment().factory.engines:
        with OneshotPlanner(name="fast-downward") as planner:
            reference = planner.solve(problem, timeout=60)
        if reference.plan is not None:
            print(f"fast-downward (LAMA-first): {len(reference.plan.actions)} steps")


if __name__ == "__main__":
    main()

"""Solve a bundled Blocksworld problem through Unified Planning with the ``gnnplan`` engine.

Shows: ``import up_gnnplan`` registers the engine, ``OneshotPlanner(name="gnnplan",
params={"model": ..., "mode": "auto"})`` solves a UP problem (the greedy policy first, then
GBFS on the learned value function), and the plan comes back as a UP ``SequentialPlan`` that
was validated before it was returned.

The model is the shipped one for Blocksworld when ``gnnplan models`` lists one; otherwise a
tiny model is trained on the bundled problems for ``--seconds`` and exported to a temporary
folder first (that needs torch and onnx: ``pip install 'up-gnnplan[cpu,train,export]'``).

Run (about half a minute; single-threaded torch is fastest on small graphs)::

    OMP_NUM_THREADS=1 python examples/solve_with_up.py [--problem p04.pddl] [--seconds 20]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from up_gnnplan.data import example


def model_for(domain: str, workdir: Path, seconds: float = 20.0) -> str:
    """Return the shipped model of a bundled domain, or train and export a tiny one into ``workdir``."""
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.problems import load_task

    problems = sorted(example(domain).parent.glob("p*.pddl"))
    shipped = find_model(load_task(example(domain), problems[0]).signature)
    if shipped is not None:
        print(f"using the shipped model for {domain}: {shipped}")
        return str(shipped)
    from up_gnnplan.datasets.build import BuildOptions, build_dataset
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.loop import train

    print(f"no shipped model for {domain}: training a tiny one for {seconds:g} s on the bundled problems")
    data = build_dataset(example(domain), problems, BuildOptions(method="expand"))  # V* of every state
    config = TrainConfig(hidden=16, layers=8, lr=3e-3, batch_size=16, max_seconds=seconds, max_epochs=10**6,
                         patience=10**6, validation_fraction=0.0)
    model, encoding, record = train(data, config)
    path = export_onnx(model, encoding, Path(workdir) / f"{domain}.onnx", domain=data.domain,
                       train_config=config.to_dict(), training_record=record)
    print(f"trained on {len(data)} states in {record['seconds']:.0f} s, exported to {path}")
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="p04.pddl", help="a bundled Blocksworld problem (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=20.0, help="training budget when no model ships")
    args = parser.parse_args()

    import up_gnnplan  # noqa: F401  (registers the gnnplan engine with UP)
    from unified_planning.io import PDDLReader, PDDLWriter
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    get_environment().credits_stream = None  # no credits banner
    problem = PDDLReader().parse_problem(str(example("blocksworld")), str(example("blocksworld", args.problem)))
    with tempfile.TemporaryDirectory() as workdir:
        model = model_for("blocksworld", Path(workdir), args.seconds)
        with OneshotPlanner(name="gnnplan", params={"model": model, "mode": "auto"}) as planner:
            result = planner.solve(problem, timeout=60)
    print(f"\n{args.problem}: {result.status.name}")
    if result.plan is None:
        raise SystemExit(" ".join(m.message for m in result.log_messages))
    print(PDDLWriter(problem).get_plan(result.plan), end="")
    metrics = result.metrics
    print(f"{len(result.plan.actions)} actions, cost {metrics['plan_cost']}, {metrics['expanded']} states expanded, "
          f"{float(metrics['engine_internal_time']):.2f} s (plan validated by the engine)")


if __name__ == "__main__":
    main()

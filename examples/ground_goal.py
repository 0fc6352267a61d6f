"""Solve a problem with an existential goal: a learned model binds the goal's variables, LAMA-first plans.

Shows mode ``ground`` (learned goal grounding, Funkquist et al. 2024) through Unified Planning: a
generated Coloured Blocks problem asks for a tower of blocks of given colours
(``(exists (?x1 ... ?xk) ...)``); the shipped grounding model binds one variable at a time, the
ground problem goes to Fast Downward's LAMA-first, and the plan is checked against the quantified
goal with the binding as its witness. For comparison, LAMA-first then solves the quantified goal
itself.

Needs onnxruntime and LAMA-first: ``pip install 'up-gnnplan[cpu,fast-downward]'``.
Run (a few seconds)::

    python examples/ground_goal.py [--blocks 20] [--variables 4]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

EXIT_MISSING_EXTRA = 2


def missing_extra() -> str | None:
    """Return the one line saying what to install, or None when everything this example needs is there."""
    if importlib.util.find_spec("onnxruntime") is None:
        return "this example binds goals with onnxruntime: pip install 'up-gnnplan[cpu]'"
    from unified_planning.shortcuts import get_environment

    if "fast-downward" not in get_environment().factory.engines:
        return "this example plans with LAMA-first: pip install 'up-gnnplan[fast-downward]'"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=20, help="blocks of the problem (default: %(default)s)")
    parser.add_argument("--variables", type=int, default=4, help="variables of its goal (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=5, help="generator seed (default: %(default)s)")
    args = parser.parse_args()
    problem = missing_extra()
    if problem:
        print(problem, file=sys.stderr)
        sys.exit(EXIT_MISSING_EXTRA)

    import up_gnnplan  # noqa: F401  (registers the gnnplan engine)
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.problems.loading import load_pddl

    get_environment().credits_stream = None
    with tempfile.TemporaryDirectory() as workdir:
        target, = generate("exists-blocks", Path(workdir), count=1, seed=args.seed, blocks=args.blocks,
                           variables=args.variables)
        quantified = load_pddl(Path(workdir) / "domain.pddl", target)
    start = time.perf_counter()
    with OneshotPlanner(name="gnnplan", params={"mode": "ground"}) as planner:
        result = planner.solve(quantified, timeout=60)
    seconds = time.perf_counter() - start
    print(f"{target.name} ({args.blocks} blocks, {args.variables} variables): {result.status.name}")
    if result.plan is None:
        sys.exit(" ".join(m.message for m in result.log_messages))
    print(f"mode ground: binding {result.metrics['binding']}, {len(result.plan.actions)} steps, {seconds:.2f} s, "
          "plan validated against the quantified goal")
    start = time.perf_counter()
    with OneshotPlanner(name="fast-downward") as planner:
        reference = planner.solve(quantified, timeout=60)
    if reference.plan is not None:
        print(f"LAMA-first on the quantified goal: {len(reference.plan.actions)} steps, "
              f"{time.perf_counter() - start:.2f} s")
    else:
        print(f"LAMA-first on the quantified goal: {reference.status.name}")


if __name__ == "__main__":
    main()

"""Solve a bundled Blocksworld problem through Unified Planning with the ``gnnplan`` engine.

Shows: ``import up_gnnplan`` registers the engine, ``OneshotPlanner(name="gnnplan",
params={"mode": "auto"})`` solves a UP problem with the shipped model of the domain (found by the
domain's predicates; ``params={"model": "my.onnx"}`` takes another), and the plan comes back as a
UP ``SequentialPlan`` that was validated before it was returned.

Needs the solving install only: ``pip install 'up-gnnplan[cpu]'`` (onnxruntime; no torch).
Run (a few seconds)::

    python examples/solve_with_up.py [--problem test-20.pddl] [--mode auto]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

NEEDS = "this example solves with onnxruntime: pip install 'up-gnnplan[cpu]'"
EXIT_MISSING_EXTRA = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="test-20.pddl",
                        help="a bundled Blocksworld problem: p02.pddl, p03.pddl, p04.pddl, test-20.pddl (default: %(default)s)")
    parser.add_argument("--mode", default="auto", help="the engine's mode (default: %(default)s)")
    args = parser.parse_args()
    if importlib.util.find_spec("onnxruntime") is None:
        print(NEEDS, file=sys.stderr)
        sys.exit(EXIT_MISSING_EXTRA)

    import up_gnnplan  # noqa: F401  (registers the gnnplan engine with UP)
    from unified_planning.io import PDDLReader, PDDLWriter
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    from up_gnnplan.data import example

    get_environment().credits_stream = None  # no credits banner
    problem = PDDLReader().parse_problem(str(example("blocksworld")), str(example("blocksworld", args.problem)))
    with OneshotPlanner(name="gnnplan", params={"mode": args.mode}) as planner:
        result = planner.solve(problem, timeout=60)
    print(f"{args.problem}: {result.status.name}")
    if result.plan is None:
        sys.exit(" ".join(m.message for m in result.log_messages))
    print(PDDLWriter(problem).get_plan(result.plan), end="")
    metrics = result.metrics
    print(f"{len(result.plan.actions)} actions, cost {metrics['plan_cost']}, {metrics['expanded']} states expanded, "
          f"{float(metrics['engine_internal_time']):.2f} s (plan validated by the engine)")


if __name__ == "__main__":
    main()

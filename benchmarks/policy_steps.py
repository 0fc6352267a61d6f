"""Wall time per greedy-policy step on the largest IPC 2023 ``testing/easy`` instances, and where it goes.

A policy step costs about plan length x branching x objects x layers, and decides whether
larger instances fit a time limit at all. For each domain with a shipped value model, this takes
the largest ``testing/easy`` problem (by object count, from ``../shared/benchmarks/manifest.csv``),
runs ``--steps`` steps of the package's own ``policy_rollout`` with the shipped model, and again
under cProfile, whose record gives each part's share of a step (goal test, successor generation,
symmetry classes, ``Inputs``, encoding with ``pack``, ``session.run``, the rest; the breakdown of
``benchmarks/runtime_speed.py``), and prints one markdown table:

    OMP_NUM_THREADS=1 python -m benchmarks.policy_steps --steps 20
"""

from __future__ import annotations

import argparse

from .common import IPC2023, SHARED, clock_line, largest_tasks, table
from .runtime_speed import POLICY_COLUMNS, policy_row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domains", nargs="*", default=list(IPC2023), metavar="DOMAIN",
                        help="IPC 2023 domains (default: all ten)")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    from up_gnnplan.problems import load_task
    from up_gnnplan.runtime import OnnxValueFunction

    print(clock_line("start"), flush=True)
    rows = []
    for domain, _, problem, _, path in largest_tasks(args.domains):
        domain_file = SHARED / f"ipc2023-learning/{domain}/domain.pddl"
        cells = policy_row(domain, lambda: load_task(domain_file, problem), OnnxValueFunction(path), args.steps,
                           lambda text: print(text, flush=True))
        ms_per_step = float(cells[3])
        rows.append([domain, problem.name, *cells, f"{60000 / ms_per_step:.0f}" if ms_per_step else "n/a"])
    print(table(["domain", "problem", *POLICY_COLUMNS, "steps per 60 s"], rows))
    print(clock_line("end"))


if __name__ == "__main__":
    main()

"""What symmetry costs a search where nothing merges, and what it saves where states do (issue 14).

The searches' symmetry (``up_gnnplan.search.symmetry.SearchSymmetry``) computes a canonical key
per state and the classes of each expanded state's actions. Where interchangeable objects are
never in the same situation, that is pure cost, which the trial (the first ``TRIAL_STATES``
states) is meant to stop. This script runs the same search on the same task for a fixed time in
three settings, interleaved and repeated so that the machine's load falls on all three alike:

- ``off``: ``symmetry=False``;
- ``trial``: ``symmetry=True`` as shipped (dropped after the trial when nothing merged);
- ``always``: ``symmetry=True`` with the trial disabled (the keys computed for every state);

and prints the states expanded and evaluated in that time, with their ratio to ``off`` per
round. The search is the one the default mode falls back to for the task's shipped model
(``dual-gbfs`` for a value model, ``dual-policy-best-first`` for an action model)::

    OMP_NUM_THREADS=1 python -m benchmarks.symmetry_overhead DOMAIN PROBLEM [--seconds 15] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domain")
    parser.add_argument("problem")
    parser.add_argument("--seconds", type=float, default=15.0, help="time of each search")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)

    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.problems import load_task
    from up_gnnplan.runtime import load_value_function
    from up_gnnplan.search import dual_gbfs, dual_policy_best_first, symmetry

    task = load_task(args.domain, args.problem)
    model = load_value_function(find_model(task.signature))
    if model.has_actions:
        search, guide, name = dual_policy_best_first, model.scorer, "dual-policy-best-first"
    else:
        search, guide, name = dual_gbfs, model, "dual-gbfs"
    shipped_trial = symmetry.TRIAL_STATES
    settings = {"off": (False, shipped_trial), "trial": (True, shipped_trial), "always": (True, 10**12)}
    print(f"{args.problem}: {name} with {model.path.name}, {args.seconds:g} s per search, "
          f"{task.num_objects} objects", flush=True)
    search(task, guide, time_limit=2.0, symmetry=False)  # warm-up: sessions, caches
    expanded = {label: [] for label in settings}
    for round_ in range(1, args.rounds + 1):
        for label, (on, trial) in settings.items():
            symmetry.TRIAL_STATES = trial
            began = time.perf_counter()
            result = search(task, guide, time_limit=args.seconds, symmetry=on)
            expanded[label].append(result.expanded)
            print(f"round {round_} {label:6} {result.status.value:9} expanded {result.expanded:7,} "
                  f"evaluated {result.evaluated:9,} in {time.perf_counter() - began:5.1f} s", flush=True)
    symmetry.TRIAL_STATES = shipped_trial
    for label in ("trial", "always"):
        ratios = [a / b for a, b in zip(expanded[label], expanded["off"]) if b]
        if ratios:
            print(f"{label} / off, states expanded in the same time: {statistics.median(ratios):.2f} "
                  f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()

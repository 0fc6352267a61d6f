"""Train, export, ship and evaluate the pretrained models, each with the exact commands recorded.

For each domain:

1. label the training problems whose whole state space fits (from
   ``../shared/benchmarks/manifest.csv``) with ``gnnplan dataset`` (exact V* by expansion);
2. label the next larger problems (the smallest ones that do not fit) along optimal plans, one
   ``gnnplan dataset --method optimal`` per problem (a problem whose optimal plan is not found
   in time is skipped and logged): the first ``--optimal`` of them are extra training data, the
   next ``--optimal`` the validation set that picks the best epoch. Selecting on held-out
   *small* problems favours fitting the training sizes over generalising to larger ones
   (measured on Blocks: 0/17 against 16/17 greedy coverage, benchmarks/HISTORY.md);
3. ``gnnplan train``, then ``gnnplan export --ship NAME``;
4. ``gnnplan compare`` of the shipped model's greedy policy against LAMA-first on the domain's
   test problems (``--eval-count`` of them spread over the sizes, 60 s each); the coverage is written into the
   shipped entry of ``up_gnnplan/models_zoo/index.json``. ``--skip-train --resume`` extends an
   evaluation with more problems (a larger ``--eval-count``) or more ``--engine``s.

Every command is printed and appended to ``benchmarks/zoo/commands.log``; the training record
inside the shipped entry repeats command, data, seed, minutes and validation error. Run it in
the background, at most one per core:

    OMP_NUM_THREADS=1 nohup python -m benchmarks.build_zoo ferry miconic --minutes 8 &
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import (DOMAINS, ROOT, SHARED, ZOO_WORK as WORK, Spec, expandable, generate_splits, larger,
                     manifest, note, run, set_coverage, test_problems)

EVAL = ROOT / "benchmarks" / "zoo" / "eval"
LOG = ROOT / "benchmarks" / "zoo" / "commands.log"


def label_optimal(domain: Path, problems: list[Path], name: str, log: Path, reuse: bool,
                  folder: Path | None = None) -> list[Path]:
    """Label each problem along optimal plans into its own file (``WORK/NAME-opt-PROBLEM.npz``, or
    ``folder/opt-PROBLEM.npz``); return the files that succeeded (with ``reuse``, a file there is kept).

    Each successor off the plan gets at most 5,000 expansions (and 60 s as a guard), so that a file
    built again in a later session is the same and a stopped training continues on it. The files
    of the models shipped up to 2026-11-25 were labelled with ``--successor-time-limit 2`` instead
    (their ``commands.log`` lines), which left out a different set of successors on each build."""
    done = []
    for problem in problems:
        out = folder / f"opt-{problem.stem}.npz" if folder else WORK / f"{name}-opt-{problem.stem}.npz"
        if run(["gnnplan", "dataset", domain, problem, "--method", "optimal", "--plan-time-limit", "60",
                "--successor-time-limit", "60", "--successor-expansion-limit", "5000", "-o", out], log,
               output=out if reuse else None, check=False):
            done.append(out)
    return done


def record_coverage(name: str, folder: Path, spec: Spec, timeout: float) -> str:
    """Summarise the evaluation's ``folder/results.jsonl`` and store it in the shipped entry."""
    from up_gnnplan.compare import read_results

    rows = read_results(folder / "results.jsonl")
    engines = sorted({r["engine"] for r in rows})
    tasks = len({r["problem"] for r in rows})
    solved = {e: sum(1 for r in rows if r["engine"] == e and r["solved"] and r["valid"]) for e in engines}
    if spec.generator:
        sizes = ", ".join(" ".join(f"{k}={v}" for k, v in params.items()) for params, _ in spec.sizes["test"])
        what = f"{tasks} generated {spec.generator} problems ({sizes})"
    else:
        total = len([1 for objects, _, _ in manifest(spec.test) if objects >= spec.test_min_objects])
        what = (f"{spec.test}, all {total} problems" if tasks == total
                else f"{spec.test}, {tasks} of its {total} problems spread over the sizes")
    text = (f"{what}, {timeout:g} s each: "
            + ", ".join(f"{e} {solved[e]}/{tasks}" for e in engines)
            + f". Per-task results: benchmarks/zoo/eval/{name}/summary.md")
    if spec.model:  # a further test set of the shipped model ``spec.model``
        set_coverage(spec.model, text, test_set=name)
    else:
        set_coverage(name, text)
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domains", nargs="+", choices=sorted(DOMAINS))
    parser.add_argument("--minutes", type=float, default=8.0, help="training budget per domain")
    parser.add_argument("--most", type=int, default=40, help="at most this many expanded training problems")
    parser.add_argument("--optimal", type=int, default=3,
                        help="larger problems labelled along optimal plans, for training and again for validation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-count", type=int, default=10, help="test problems, spread over the sizes")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per evaluation task")
    parser.add_argument("--engine", action="append", dest="engines",
                        help="repeatable: engines of the evaluation (default: gnnplan:policy, fast-downward)")
    parser.add_argument("--jobs", type=int, default=1, help="evaluation tasks run in parallel")
    parser.add_argument("--resume", action="store_true",
                        help="keep the evaluation tasks already in benchmarks/zoo/eval/NAME (to add problems or engines)")
    parser.add_argument("--reuse", action="store_true", help="keep dataset files that already exist")
    parser.add_argument("--skip-train", action="store_true", help="only evaluate the shipped model")
    parser.add_argument("--from-checkpoint", action="store_true",
                        help="export, ship and evaluate the checkpoint already trained in /tmp/gnnplan-zoo")
    parser.add_argument("--report-only", action="store_true",
                        help="only record the coverage of an evaluation already in benchmarks/zoo/eval/NAME")
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    for name in args.domains:
        spec = DOMAINS[name]
        if spec.generator:
            splits = generate_splits(name, spec)
            domain, tests = splits["test"][0].parent / "domain.pddl", splits["test"]
            note(LOG, f"# {name}: problems generated by benchmarks.common.generate_splits into {WORK / 'gen' / name}")
        else:
            domain, tests = SHARED / spec.domain, test_problems(spec, args.eval_count)
        if spec.model and not (args.skip_train or args.report_only):
            sys.exit(f"{name} is a test set of the shipped {spec.model} model: run it with --skip-train")
        if args.report_only:
            print(record_coverage(name, EVAL / name, spec, args.timeout), flush=True)
            continue
        if args.from_checkpoint:
            run(["gnnplan", "export", WORK / f"{name}.pt", "-o", WORK / f"{name}.onnx", "--ship", name], LOG)
        elif not args.skip_train:
            if spec.generator:
                problems, candidates = splits["train"], splits["larger"]
            else:
                problems = expandable(spec.train, spec.limit, args.most)
                candidates = larger(spec.larger or spec.train, spec.limit, {str(p) for p in tests}, 2 * args.optimal)
            if not problems:
                sys.exit(f"{name}: no training problem with at most {spec.limit} states in the manifest")
            data, checkpoint = WORK / f"{name}.npz", WORK / f"{name}.pt"
            run(["gnnplan", "dataset", domain, *problems, "-o", data], LOG, output=data if args.reuse else None)
            extra = label_optimal(domain, candidates[: args.optimal], name, LOG, args.reuse)
            valid = label_optimal(domain, candidates[args.optimal:], name, LOG, args.reuse)
            validation = [a for v in valid for a in ("--validation-dataset", v)]
            run(["gnnplan", "train", data, *extra, "-o", checkpoint, "--arch", "rgnn", "--seed", args.seed,
                 "--max-seconds", int(60 * args.minutes), *validation], LOG)
            run(["gnnplan", "export", checkpoint, "-o", WORK / f"{name}.onnx", "--ship", name], LOG)
        out = EVAL / name
        engines = [a for e in args.engines or ["gnnplan:policy", "fast-downward"] for a in ("--engine", e)]
        run(["gnnplan", "compare", domain, *tests, *engines, "--timeout", args.timeout, "--jobs", args.jobs,
             "-o", out, *(["--resume"] if args.resume else [])], LOG)
        print(record_coverage(name, out, spec, args.timeout), flush=True)


if __name__ == "__main__":
    main()

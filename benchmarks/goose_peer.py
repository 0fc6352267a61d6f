"""Train and evaluate the WL-GOOSE peer (benchmarks/goose) on the domains of build_zoo.py.

``train DOMAIN...``: label the same training problems as ``benchmarks/build_zoo.py`` (those
whose state space has at most the domain's limit of states, ``--most`` of them spread over the
sizes) with ``gnnplan dataset`` (exact V* by full expansion), train the peer on them, and write
``benchmarks/results/goose/models/DOMAIN.json`` (wlplan's JSON, small, committed) and the
training time to ``benchmarks/results/goose/training.json``.

``evaluate DOMAIN...``: ``gnnplan compare --register benchmarks.goose.engine --engine wl-goose``
(and any ``--engine`` added) on build_zoo's test problems (``--count`` of them spread over the
sizes, ``--timeout`` s each), into ``benchmarks/results/goose/eval/DOMAIN/``.

Every command is printed and appended to ``benchmarks/results/goose/commands.log``. Needs the
``peer`` extra (wlplan, scikit-learn) and ``../shared/benchmarks``. Run from the repository root:

    OMP_NUM_THREADS=1 python -m benchmarks.goose_peer train blocksworld spanner
    OMP_NUM_THREADS=1 python -m benchmarks.goose_peer evaluate blocksworld --count 5
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from .common import DOMAINS, RESULTS as ALL_RESULTS, ROOT, SHARED, expandable, note, read_json, run, test_problems

RESULTS = ALL_RESULTS / "goose"
WORK = Path("/tmp/gnnplan-goose")
LOG = RESULTS / "commands.log"
ENGINE_MODULE = "benchmarks.goose.engine"


def _spec(name: str):
    spec = DOMAINS[name]
    if spec.generator or spec.model:
        sys.exit(f"{name}: a generated or evaluation-only set of build_zoo; the peer trains on ../shared domains only")
    return spec


def _log(text: str) -> None:
    print(text, flush=True)
    note(LOG, text)


def train(args) -> None:
    from .goose.train import TrainConfig, train_file  # the peer extra's packages: only here

    config = TrainConfig(model=args.model, iterations=args.iterations, max_rows=args.max_rows, seed=args.seed)
    timings_path = RESULTS / "training.json"
    for name in args.domains:
        spec = _spec(name)
        domain = SHARED / spec.domain
        problems = expandable(spec.train, spec.limit, args.most)
        if not problems:
            sys.exit(f"{name}: no training problem with at most {spec.limit} states in the manifest")
        data = WORK / f"{name}.npz"
        reused = args.reuse and data.is_file()
        started = time.perf_counter()
        run(["gnnplan", "dataset", domain, *problems, "-o", data], LOG, output=data if args.reuse else None)
        labelling = time.perf_counter() - started
        model = RESULTS / "models" / f"{name}.json"
        record = train_file(data, model, config)
        timings = read_json(timings_path)
        timings[name] = {
            "model": str(model.relative_to(ROOT)),
            "config": record["config"],
            "training_problems": len(problems),
            "states_embedded": record["states_embedded"],
            "distinct_feature_vectors": record["distinct_feature_vectors"],
            "features": record["features"],
            "fit": record["fit"],
            "seconds": {**record["seconds"], "labelling": None if reused else round(labelling, 2)},
            "wlplan": record["wlplan"], "scikit_learn": record["scikit_learn"],
            "date": time.strftime("%Y-%m-%d"),
        }
        timings_path.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")
        _log(f"# {name}: {model.relative_to(ROOT)} ({model.stat().st_size / 1024:.0f} KB), {record['features']} features, "
             f"{config.model} {record['fit']}, training {record['seconds']['total']:.1f} s "
             + ("(dataset reused)" if reused else f"(labelling {labelling:.1f} s)"))


def evaluate(args) -> None:
    from up_gnnplan.compare import read_results

    for name in args.domains:
        spec = _spec(name)
        model = RESULTS / "models" / f"{name}.json"
        if not model.is_file():
            sys.exit(f"{name}: no model {model}; run `train {name}` first")
        out = RESULTS / "eval" / name
        engines = [a for e in ["wl-goose", *(args.engines or [])] for a in ("--engine", e)]
        command = ["gnnplan", "compare", SHARED / spec.domain, *test_problems(spec, args.count),
                   "--register", ENGINE_MODULE, *engines,
                   "--engine-param", f"wl-goose:model={model.relative_to(ROOT)}",
                   "--timeout", args.timeout, "--jobs", args.jobs, "-o", out.relative_to(ROOT),
                   *(["--resume"] if args.resume else [])]
        # From the repository root, where the engine module and the model are found.
        run(command, LOG, cwd=ROOT)
        rows = read_results(out / "results.jsonl")
        for engine in sorted({r["engine"] for r in rows}):
            mine = [r for r in rows if r["engine"] == engine]
            _log(f"# {name}: {engine} solved {sum(r['solved'] for r in mine)}/{len(mine)} "
                 f"({args.timeout:g} s each; {out.relative_to(ROOT)}/summary.md)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    names = sorted(n for n, s in DOMAINS.items() if not (s.generator or s.model))
    t = commands.add_parser("train", help="label the training problems and train the peer")
    t.add_argument("domains", nargs="+", choices=names)
    t.add_argument("--model", choices=("rank-svm", "gpr"), default="rank-svm")
    t.add_argument("--iterations", type=int, default=2, help="WL iterations")
    t.add_argument("--max-rows", type=int, default=2000, help="states embedded per training problem at most")
    t.add_argument("--most", type=int, default=40, help="training problems at most (as build_zoo.py)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--reuse", action="store_true", help=f"keep dataset files already in {WORK}")
    e = commands.add_parser("evaluate", help="run gnnplan compare with the peer on the test problems")
    e.add_argument("domains", nargs="+", choices=names)
    e.add_argument("--count", type=int, default=30, help="test problems, spread over the sizes (build_zoo: 30)")
    e.add_argument("--timeout", type=float, default=60.0)
    e.add_argument("--jobs", type=int, default=1)
    e.add_argument("--engine", action="append", dest="engines",
                   help="repeatable: more engines beside wl-goose (fast-downward, gnnplan:policy)")
    e.add_argument("--resume", action="store_true", help="keep the tasks already in the evaluation folder")
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    _log(shlex.join(["python", "-m", "benchmarks.goose_peer", *(sys.argv[1:] if argv is None else argv)]))
    (train if args.command == "train" else evaluate)(args)


if __name__ == "__main__":
    main()

"""Architectures side by side: the same data, training minutes and test instances (issue 15).

Every architecture of ``--archs`` is trained on the same datasets for the same minutes with the
same seed, and evaluated on the same test problems, which are larger than any training
problem. Problems come from the package's generators (``gnnplan generate``, sizes in
``DOMAINS``); everything else goes through the package's own CLI. Stages, each run for every
domain of ``--domains`` and each skipping what already exists (a stopped run resumes):

``data``
    ``gnnplan generate`` the training, validation and test problems into ``WORK/DOMAIN/SPLIT/``;
    ``gnnplan dataset`` labels the training problems with exact V* (``--method auto``: the whole
    state space when it has at most ``--max-states`` states, else along optimal plans) into one
    file, and each validation problem along its optimal plans into a file of its own (a problem
    whose plan is not found in time is left out and logged).
``train``
    ``gnnplan train --arch KEY --max-seconds 60*MINUTES`` on the training file with the validation
    files choosing the best epoch, then ``gnnplan export`` (with its torch/onnxruntime parity
    check). ``training.json`` gets each run's training record: minutes, epochs, states/s, the
    validation error, and the parameters of the model (counted on the checkpoint).
``test``
    evaluated states per second of every model on one fixed batch of states of a test problem
    (``OnnxValueFunction``, onnxruntime, one thread, encoding included; the models in interleaved
    rounds so that they share the machine's load) into ``speed.json``; then, per architecture,
    one ``gnnplan compare`` of the greedy policy (``gnnplan:policy``) and the engine's default
    mode (``gnnplan``: the policy, then GBFS on V) on the test problems into
    ``compare/DOMAIN/ARCH/``.
``report``
    ``results.json`` (every figure, per domain and architecture) and ``report.md``: the tables in
    the layout of Tables 1-2 of Ståhlberg, Bonet & Geffner (2024, R-GNN[t]) and of Table 2 of
    Müller et al. (2024), the training and run-time figures, the papers' figures beside ours and
    where and why they differ.
``all``
    data, train and test for one domain after the other (so a long run completes domains in
    turn), then report.

Results go to ``benchmarks/results/ablation/`` with every command (and its exit status and
seconds) in ``commands.log``; datasets, problems and models to ``WORK`` (``/tmp``). Run it in the
background, one thread per process::

    OMP_NUM_THREADS=1 nohup python -m benchmarks.ablation all --domains blocksworld gripper \\
        --minutes 3 --tests 10 --timeout 30 &
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shlex
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from up_gnnplan.compare import natural_key

from . import common
from .common import RESULTS, ROOT, fmt, note, random_walk, read_json, write_json

OUT = RESULTS / "ablation"
WORK = Path("/tmp/gnnplan-ablation")


@dataclass(frozen=True)
class Sizes:
    """The generated problems of one domain: (size parameters, count) per split."""

    generator: str
    train: tuple  # labelled with exact V* (whole state space when it fits under --max-states)
    valid: tuple  # larger, labelled along optimal plans: they choose the best epoch
    test: tuple  # larger still: each entry gives ceil(--tests / len(test)) problems, --tests kept spread over them
    paper: str  # the paper's sizes, for the report


DOMAINS = {
    # Blocks of the R-GNN[t] paper: training 4-9 blocks, test 10-17 (Blocks-s) or up to 20 (Blocks-m).
    "blocksworld": Sizes("blocksworld",
                         train=(({"blocks": 4}, 2), ({"blocks": 5}, 2), ({"blocks": 6}, 3), ({"blocks": 7}, 2)),
                         valid=(({"blocks": 8}, 2), ({"blocks": 9}, 2)),
                         test=tuple({"blocks": n} for n in range(10, 20)),
                         paper="R-GNN[t]: training and validation 4-9 blocks, test 10-17 (Blocks-s) / up to 20 (Blocks-m); "
                               "Müller et al.: Blocks-clear, graphs of 27-44 nodes in test"),
    # Gripper: training and validation up to 14 balls, test 16-50 (R-GNN[t]).
    "gripper": Sizes("gripper",
                     train=tuple(({"balls": n}, 1) for n in range(2, 9)),
                     valid=(({"balls": 10}, 1), ({"balls": 12}, 1)),
                     test=tuple({"balls": n} for n in (16, 19, 22, 26, 30, 34, 38, 42, 46, 50)),
                     paper="R-GNN[t]: training and validation up to 14 balls, test 16-50; Müller et al.: graphs of 65-138 "
                           "nodes in test"),
    # Logistics: training 2-5 cities and 3-5 packages, test 15-19 cities and 8-11 packages (R-GNN[t]).
    "logistics": Sizes("logistics",
                       train=(({"cities": 2, "city_size": 2, "packages": 2, "airplanes": 1}, 3),
                              ({"cities": 2, "city_size": 2, "packages": 3, "airplanes": 1}, 3),
                              ({"cities": 3, "city_size": 2, "packages": 3, "airplanes": 1}, 2)),
                       valid=(({"cities": 3, "city_size": 2, "packages": 4, "airplanes": 1}, 2),
                              ({"cities": 4, "city_size": 2, "packages": 4, "airplanes": 1}, 2)),
                       test=tuple({"cities": c, "city_size": 3, "packages": p, "airplanes": a}
                                  for c, p, a in ((5, 5, 1), (6, 6, 1), (8, 7, 2), (10, 8, 2), (12, 10, 2))),
                       paper="R-GNN[t]: training and validation 2-5 cities, 3-5 packages; test 15-19 cities, 8-11 packages"),
    # Visitall-xy: training and validation up to 21 cells, test more, up to 100 (R-GNN[t]).
    "visitall-xy": Sizes("visitall-xy",
                         train=(({"width": 2, "height": 2}, 2), ({"width": 3, "height": 2}, 2), ({"width": 4, "height": 2}, 2),
                                ({"width": 3, "height": 3}, 2)),
                         valid=(({"width": 4, "height": 3}, 2), ({"width": 4, "height": 4}, 2)),
                         test=tuple({"width": n, "height": n} for n in (5, 6, 7, 8, 10)),
                         paper="R-GNN[t]: training and validation up to 21 cells, test more, up to 100"),
    # Vacuum: training and validation 8-38 locations and 1-6 robots, test 40-93 locations and 6-10 robots (R-GNN[t]).
    "vacuum": Sizes("vacuum",
                    train=tuple(({"locations": n, "robots": r, "extra_edges": 1}, 3) for n, r in ((5, 2), (6, 2), (8, 2), (6, 3))),
                    valid=(({"locations": 12, "robots": 3}, 4),),
                    test=tuple({"locations": n, "robots": r} for n, r in ((16, 3), (20, 3), (30, 4), (40, 4), (60, 5))),
                    paper="R-GNN[t]: training and validation 8-38 locations, 1-6 robots; test 40-93 locations, 6-10 robots"),
}

# The architectures whose networks give V(s) by design: the registry's entries that do not build
# their own (action) heads; typed_policy is compared as an action policy by action_heads.py.
NAMES = {"rgnn": "R-GNN", "ploi": "PLOI", "gcn": "GCN", "gatv2": "GATv2", "gin": "GIN", "performer": "Performer",
         "gps": "GPS", "edge_transformer": "ET", "typed_policy": "typed policy"}

# The papers' figures for the same domain and model: Ståhlberg, Bonet & Geffner (2024) Tables 1-2
# (coverage, mean plan length; 12 h on an A10 GPU, best of 3 seeds); Müller et al. (2024) Table 2
# (solved, optimally solved; grid search, best of 3 seeds). Blocks is their Blocks-s; Müller et
# al.'s Blocks is Blocks-clear (another goal), named so.
PAPER = {
    ("blocksworld", "rgnn"): "17/17, mean 39 (Blocks-s)", ("blocksworld", "rgnn_t0"): "17/17, mean 39 (Blocks-s)",
    ("blocksworld", "rgnn_t1"): "17/17, mean 40 (Blocks-s)", ("blocksworld", "edge_transformer"): "16/17, mean 51 (Blocks-s)",
    ("blocksworld", "gcn"): "10/11 (2 optimal), Blocks-clear", ("blocksworld", "gin"): "11/11 (1), Blocks-clear",
    ("blocksworld", "gatv2"): "11/11 (6), Blocks-clear", ("blocksworld", "performer"): "11/11 (3), Blocks-clear",
    ("blocksworld", "gps"): "11/11 (6), Blocks-clear",
    ("gripper", "rgnn"): "18/18, mean 266", ("gripper", "rgnn_t0"): "18/18, mean 98", ("gripper", "rgnn_t1"): "11/18, mean 77",
    ("gripper", "edge_transformer"): "4/18, mean 61",
    **{("gripper", key): "39/39 (39 optimal)" for key in ("gcn", "gin", "gatv2", "performer", "gps")},
    ("logistics", "rgnn"): "10/20, mean 51", ("logistics", "rgnn_t0"): "9/20, mean 48", ("logistics", "rgnn_t1"): "20/20, mean 52",
    ("logistics", "edge_transformer"): "0/20",
    ("vacuum", "rgnn"): "20/20, mean 215", ("vacuum", "rgnn_t0"): "20/20, mean 9", ("vacuum", "rgnn_t1"): "20/20, mean 9",
    ("vacuum", "edge_transformer"): "unsuitable (ternary predicates)",
    ("visitall-xy", "rgnn"): "5/20, mean 178", ("visitall-xy", "rgnn_t0"): "15/20, mean 97",
    ("visitall-xy", "rgnn_t1"): "20/20, mean 91", ("visitall-xy", "edge_transformer"): "3/20, mean 151",
}


def default_archs() -> list[str]:
    from up_gnnplan.models import ARCHITECTURES

    return [key for key, architecture in ARCHITECTURES.items() if not architecture.builds_heads]


def label(arch: str, t: int) -> str:
    return f"R-GNN[{t}]" if arch == "rgnn_t" else NAMES.get(arch, arch)


def paper_key(arch: str, t: int) -> str:
    return f"rgnn_t{t}" if arch == "rgnn_t" else arch


# -- commands ------------------------------------------------------------------------------------


def log(text: str) -> None:
    """Append ``text`` to this run's commands.log (``--out`` chooses where)."""
    note(OUT / "commands.log", text)


def run(command: list, check: bool = True, cwd: Path | None = None) -> tuple[bool, str]:
    """Run ``command``, logged in this run's commands.log; return (ok, the last lines of its stderr)."""
    ran = common.run(command, OUT / "commands.log", check=check, cwd=cwd, keep_tail=True)
    return ran.ok, ran.tail


def natural(path: Path) -> list:
    """Sort key of a problem file by its name: p2 before p10."""
    return natural_key(path.name)


# -- data ----------------------------------------------------------------------------------------


def split_files(name: str, split: str, tests: int) -> list[Path]:
    """Generate (once) the problems of a split and return them in generation order."""
    sizes = DOMAINS[name]
    folder = WORK / name / split
    listing = folder / "files.json"
    if listing.is_file():
        return [Path(p) for p in json.loads(listing.read_text())]
    if split == "test":
        per_size = math.ceil(tests / len(sizes.test))
        entries = [(params, per_size) for params in sizes.test]
    else:
        entries = list(getattr(sizes, split))
    seed = ("train", "valid", "test").index(split) + 1
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.pddl"):  # a generation that stopped half-way starts again
        old.unlink()
    files = []
    for params, count in entries:
        before = set(folder.glob("p-*.pddl"))
        run(["gnnplan", "generate", sizes.generator, "-o", folder, "--count", count, "--seed", seed,
             *[a for k, v in params.items() for a in ("-p", f"{k}={v}")]])
        files += sorted(set(folder.glob("p-*.pddl")) - before, key=natural)
    if split == "test" and len(files) > tests:  # keep --tests of them, spread over the sizes
        files = [files[round(i * (len(files) - 1) / max(tests - 1, 1))] for i in range(tests)]
    listing.write_text(json.dumps([str(p) for p in files], indent=1) + "\n")
    return files


def data(args, name: str) -> None:
    folder = WORK / name
    train_files = split_files(name, "train", args.tests)
    valid_files = split_files(name, "valid", args.tests)
    split_files(name, "test", args.tests)
    domain = folder / "train" / "domain.pddl"
    if not (folder / "train.npz").is_file():
        run(["gnnplan", "dataset", domain, *train_files, "--method", "auto", "--max-states", args.max_states,
             "--plan-time-limit", 120, "-o", folder / "train.npz"])
    for problem in valid_files:
        out = folder / f"valid-{problem.stem}.npz"
        failed = out.with_suffix(".failed")
        if out.is_file() or failed.is_file():
            continue
        ok, tail = run(["gnnplan", "dataset", folder / "valid" / "domain.pddl", problem, "--method", "optimal",
                        "--plan-time-limit", 120, "--successor-time-limit", 2, "-o", out], check=False)
        if not ok:
            failed.write_text(tail + "\n")


def validation_files(name: str) -> list[Path]:
    return sorted((WORK / name).glob("valid-*.npz"), key=natural)


# -- train ---------------------------------------------------------------------------------------


def model_path(name: str, arch: str) -> Path:
    return WORK / name / "models" / f"{arch}.onnx"


def train(args, name: str) -> None:
    folder = WORK / name
    records = read_json(OUT / "training.json")
    validation = [a for v in validation_files(name) for a in ("--validation-dataset", v)]
    for arch in args.archs:
        onnx = model_path(name, arch)
        checkpoint, failed = onnx.with_suffix(".pt"), onnx.with_suffix(".failed")
        onnx.parent.mkdir(parents=True, exist_ok=True)
        if failed.is_file() and not args.retry_failed:
            continue
        if not checkpoint.is_file():
            options = ["--t", args.t] if arch == "rgnn_t" else []
            if arch == "ploi" and higher_arity(folder / "train.npz"):
                options = ["--decompose-higher-arity"]  # PLOI's pairwise edges take a ternary atom only split (lossy)
            ok, tail = run(["gnnplan", "train", folder / "train.npz", "-o", checkpoint, "--arch", arch, *options,
                            "--seed", args.seed, "--max-seconds", int(60 * args.minutes), "--epoch-states", args.epoch_states,
                            *validation], check=False)
            if not ok:
                failed.write_text(tail + "\n")
                records[f"{name}/{arch}"] = {"failed": "train", "error": tail.splitlines()[-1] if tail else ""}
                write_json(OUT / "training.json", records)
                continue
        if not onnx.is_file():
            ok, tail = run(["gnnplan", "export", checkpoint, "-o", onnx], check=False)
            if not ok:
                failed.write_text(tail + "\n")
                records[f"{name}/{arch}"] = {"failed": "export", "error": tail.splitlines()[-1] if tail else ""}
                write_json(OUT / "training.json", records)
                continue
        if f"{name}/{arch}" not in records or "failed" in records[f"{name}/{arch}"]:
            records[f"{name}/{arch}"] = training_summary(checkpoint)
            write_json(OUT / "training.json", records)


def higher_arity(dataset: Path) -> list[str]:
    """The predicates of arity 3 or more of a dataset's domain."""
    from up_gnnplan.datasets.store import Dataset

    return [f"{n}/{a}" for n, a in Dataset.load(dataset).signature.predicates if a >= 3]


def training_summary(checkpoint: Path) -> dict:
    """Return the training record's figures and the parameters of the model in ``checkpoint``."""
    from up_gnnplan.training.checkpoint import load_checkpoint

    model, _, config, saved = load_checkpoint(checkpoint)
    record = saved["record"]
    best = next((row for row in record["curve"] if row[0] == record["best_epoch"]), record["curve"][-1])
    return {"seconds": record["seconds"], "minutes": round(record["seconds"] / 60, 2), "epochs": record["epochs"],
            "best_epoch": record["best_epoch"], "minutes_to_best_epoch": round(best[1] / 60, 2),
            "train_states_per_second": record["train_states_per_second"], "states_trained": record["steps"] * config.batch_size,
            "parameters": sum(p.numel() for p in model.parameters()), "validation": record["validation"],
            "validation_states": record["validation_states"], "validation_problems": record["validation_problems"],
            "train_states": record["train_states"], "train": record["train"], "layers": config.layers,
            "hidden": config.hidden, "heads": config.heads, "t": config.t, "lr": config.lr, "command": record.get("command")}


# -- test ----------------------------------------------------------------------------------------


def speed_batch(name: str, size: int, seed: int):
    """Return (problem, objects, inputs): ``size`` distinct states of the smallest test problem, from seeded random walks.

    The smallest, because the Edge Transformer's O(n^3) layers take tens of seconds per batch of
    64 states of 50 objects on a loaded core (measured on Gripper), and every model gets at least 3 rounds.
    """
    from up_gnnplan.problems import load_task
    from up_gnnplan.search.common import Inputs

    tests = split_files(name, "test", 0)
    problem = tests[0]
    task = load_task(WORK / name / "test" / "domain.pddl", problem)
    rng, seen, states = random.Random(seed), set(), []
    for _ in range(50 * size):
        if len(states) >= size:
            break
        start = task.initial_state()
        state = [start, *random_walk(start, rng.randint(1, 60), rng)][-1]
        if state.get_index() not in seen:
            seen.add(state.get_index())
            states.append(state)
    return problem, task.num_objects, Inputs(task)(states)


def speed(args, name: str) -> None:
    """Evaluated states/s of every model on one batch, in interleaved rounds (all see the same load)."""
    from up_gnnplan.runtime import OnnxValueFunction

    table = read_json(OUT / "speed.json")
    done = table.get(name, {}).get("states_per_second", {})
    if all(arch in done or not model_path(name, arch).is_file() for arch in args.archs):
        return
    # Every model of the domain, not only --archs: the rounds interleave them all (same load), and the
    # entry is written whole.
    models = {arch: model_path(name, arch) for arch in default_archs() if model_path(name, arch).is_file()}
    problem, objects, batch = speed_batch(name, args.speed_batch, args.seed)
    functions, errors = {}, {}
    for arch, path in models.items():
        try:
            functions[arch] = OnnxValueFunction(path, threads=1, device="cpu")
            functions[arch](batch)  # warm-up: the session's first run allocates
        except Exception as error:  # a model that refuses the batch (e.g. too many objects) is recorded, not timed
            errors[arch] = f"{type(error).__name__}: {str(error)[:200]}"
            functions.pop(arch, None)
    times = {arch: [] for arch in functions}
    start, rounds = time.perf_counter(), 0
    while functions and (rounds < 3 or time.perf_counter() - start < args.speed_seconds) and rounds < 1000:
        order = list(functions) if rounds % 2 == 0 else list(functions)[::-1]
        for arch in order:
            tick = time.perf_counter()
            functions[arch](batch)
            times[arch].append(time.perf_counter() - tick)
        rounds += 1
    table[name] = {"problem": problem.name, "objects": objects, "batch": len(batch), "rounds": rounds,
                   "load_average": [round(x, 2) for x in os.getloadavg()],
                   "states_per_second": {arch: round(len(batch) / statistics.median(t), 1) for arch, t in times.items()},
                   "ms_per_batch": {arch: round(1000 * statistics.median(t), 2) for arch, t in times.items()},
                   "errors": errors, "date": time.strftime("%Y-%m-%d %H:%M"),
                   "how": "OnnxValueFunction(threads=1, device='cpu')(batch), encoding included; median over rounds, "
                          "every model once per round, order reversed every other round"}
    write_json(OUT / "speed.json", table)
    log(f"# {name}: states/s on {len(batch)} states of {problem.name} ({objects} objects), {rounds} rounds: "
        + json.dumps(table[name]["states_per_second"]))


def test(args, name: str) -> None:
    from up_gnnplan.compare import read_results

    speed(args, name)
    tests = split_files(name, "test", args.tests)
    for arch in args.archs:
        model = model_path(name, arch)
        if not model.is_file():
            continue
        out = OUT / "compare" / name / arch
        if len(read_results(out / "results.jsonl")) >= 2 * len(tests):
            continue
        # symmetry=False: the value policy values every successor, as in every run of this table since
        # it began (the pruning of symmetric successors became the default later and would make the
        # architectures tested after it faster than those before).
        run(["gnnplan", "compare", WORK / name / "test" / "domain.pddl", *tests, "--engine", "gnnplan:policy",
             "--engine", "gnnplan", "--model", model, "--engine-param", "gnnplan:symmetry=False", "--timeout",
             args.timeout, "--jobs", args.jobs, "--no-plots", "-o", out, "--resume"], check=False)
    # The baseline on the same tasks and limit, beside every architecture in the report.
    out = OUT / "compare" / name / "lama-first"
    if len(read_results(out / "results.jsonl")) < len(tests):
        run(["gnnplan", "compare", WORK / name / "test" / "domain.pddl", *tests, "--engine", "fast-downward",
             "--timeout", args.timeout, "--jobs", args.jobs, "--no-plots", "-o", out, "--resume"], check=False)
    goose(args, name, tests)


def goose(args, name: str, tests: list[Path]) -> None:
    """The strongest learned peer, WL-GOOSE (``benchmarks/goose/``: WL features, rank-SVM, GBFS), trained
    on the architectures' training file and run on the same tasks and limit."""
    from up_gnnplan.compare import read_results

    model = OUT / "goose" / f"{name}.json"
    if not model.is_file():
        from .goose.train import TrainConfig, train_file  # the peer extra's packages: only here

        config = TrainConfig(seed=args.seed)
        log(f"# {name}: WL-GOOSE trained in-process: benchmarks.goose.train.train_file({WORK / name / 'train.npz'}, "
            f"{model.relative_to(ROOT)}, {config})")
        record = train_file(WORK / name / "train.npz", model, config)
        records = read_json(OUT / "training.json")
        records[f"{name}/wl-goose"] = {"features": record["features"], "states_embedded": record["states_embedded"],
                                       "fit": record["fit"], "seconds": record["seconds"]}
        write_json(OUT / "training.json", records)
    out = OUT / "compare" / name / "wl-goose"
    if len(read_results(out / "results.jsonl")) < len(tests):
        # From the repository root, where the engine module and the model are found.
        run(["gnnplan", "compare", WORK / name / "test" / "domain.pddl", *tests, "--register", "benchmarks.goose.engine",
             "--engine", "wl-goose", "--engine-param", f"wl-goose:model={model}", "--timeout", args.timeout,
             "--jobs", args.jobs, "--no-plots", "-o", out, "--resume"], check=False, cwd=ROOT)


# -- report --------------------------------------------------------------------------------------


def domain_results(name: str, archs: list[str], training: dict, speeds: dict) -> dict:
    """Every figure of one domain: per architecture its training, speed and both engines' results."""
    from up_gnnplan.compare import read_results

    out = {"sizes": {split: [p.name for p in split_files(name, split, 0)] for split in ("train", "valid", "test")}
           if (WORK / name / "test" / "files.json").is_file() else {},
           "speed": {k: v for k, v in speeds.get(name, {}).items() if k not in ("states_per_second", "ms_per_batch")},
           "archs": {}}
    for key, folder in (("lama_first", "lama-first"), ("wl_goose", "wl-goose")):
        # One record per problem, the last (a rerun appends; it replaces).
        rows = {r["problem"]: r for r in read_results(OUT / "compare" / name / folder / "results.jsonl")}.values()
        out[key] = {"tasks": len(rows), "solved": sorted(r["problem"] for r in rows if r["solved"] and r["valid"]),
                    "plan_length": {r["problem"]: r["plan_length"] for r in rows if r["solved"] and r["valid"]}}
    for arch in archs:
        row = {"training": training.get(f"{name}/{arch}"),
               "states_per_second": speeds.get(name, {}).get("states_per_second", {}).get(arch),
               "speed_error": speeds.get(name, {}).get("errors", {}).get(arch)}
        records = read_results(OUT / "compare" / name / arch / "results.jsonl")
        for engine, key in (("gnnplan:policy", "policy"), ("gnnplan:auto", "default")):
            # One record per problem, the last (a rerun with other params appends; it replaces).
            mine = list({r["problem"]: r for r in records if r["engine"] == engine}.values())
            row[key] = {"tasks": len(mine), "solved": sorted(r["problem"] for r in mine if r["solved"] and r["valid"]),
                        "plan_length": {r["problem"]: r["plan_length"] for r in mine if r["solved"] and r["valid"]},
                        "statuses": {r["problem"]: r["status"] for r in mine}}
        out["archs"][arch] = row
    return out


def plan_lengths(lengths: list[int]) -> tuple[str, str, str]:
    if not lengths:
        return "-", "-", "-"
    return str(sum(lengths)), f"{statistics.median(lengths):g}", f"{statistics.mean(lengths):.0f}"


def report(args) -> None:
    training, speeds = read_json(OUT / "training.json"), read_json(OUT / "speed.json")
    domains = [d for d in args.domains if (WORK / d / "test" / "files.json").is_file() or (OUT / "compare" / d).is_dir()]
    results = {"setting": {"archs": args.archs, "t": args.t, "minutes": args.minutes, "tests": args.tests,
                           "timeout": args.timeout, "seed": args.seed, "epoch_states": args.epoch_states,
                           "max_states": args.max_states, "machine": f"{platform.machine()}, {os.cpu_count()} cores"},
               "domains": {d: domain_results(d, args.archs, training, speeds) for d in domains}}
    write_json(OUT / "results.json", results)
    lines = ["# Architectures side by side (issue 15)", "",
             "Written by `python -m benchmarks.ablation report` from the raw results next to it: `commands.log` (every command, its "
             "exit status and seconds), `training.json` (training records), `speed.json` (evaluated states/s), "
             "`compare/DOMAIN/ARCH/` (`gnnplan compare`: per-task results of the greedy policy and the default mode), "
             "`results.json` (all of it per domain and architecture).", "",
             "## Setting", "",
             f"Every architecture trained for {args.minutes:g} minutes (wall clock, `gnnplan train --max-seconds "
             f"{int(60 * args.minutes)}`, one thread, seed {args.seed}, `--epoch-states {args.epoch_states}`, the package's "
             "defaults otherwise: hidden 32, Adam at 1e-3, L1 loss on V*; 30 layers with shared weights for R-GNN, R-GNN[t], "
             "PLOI and ET, 4 for the Müller et al. models) on the same dataset; the epoch kept is the one with the lowest "
             "error on the validation problems (larger than the training ones, labelled along optimal plans). Test problems "
             f"are larger than any training or validation problem; {args.timeout:g} s per task, one task at a time. "
             "*Greedy policy*: `gnnplan:policy` (the unvisited successor of lowest V, at most 1000 steps); *default mode*: "
             "`gnnplan` (the policy, then GBFS on V in the time left). *Evaluated states/s*: onnxruntime, one thread, one "
             "fixed batch of test states, encoding included.", ""]
    for name in domains:
        sizes = DOMAINS[name]
        files = results["domains"][name]["sizes"]
        describe = "; ".join(f"{split}: " + ", ".join(" ".join(f"{k}={v}" for k, v in p.items()) + (f" x{c}" if c > 1 else "")
                                                    for p, c in getattr(sizes, split)) for split in ("train", "valid"))
        tests = ", ".join(" ".join(f"{k}={v}" for k, v in p.items()) for p in sizes.test)
        lines.append(f"- **{name}** ({sizes.generator} generator): {describe}; test: {len(files.get('test', []))} problems "
                     f"spread over {tests}. Papers: {sizes.paper}.")
    lines += ["", "## Coverage and plan length (layout of Tables 1-2 of Ståhlberg, Bonet & Geffner 2024)", "",
              "*Policy's timeouts*: the greedy policy's unsolved tasks that ran out of time (the others ended in a state "
              "without unvisited successors or at 1000 steps). Plan length over each model's own solved tasks (total, median, "
              "mean), as in the paper, and the mean over the *common tasks*: those that the greedy policy of every model with any "
              "coverage solved (their number next to the domain). *Paper*: the figure of the same model on the same domain "
              "(R-GNN[t] paper Tables 1-2; Müller et al. Table 2), with the paper's own test sizes. A run still going shows "
              "its tasks so far (*partial*).", "",
              "| Domain | Model | Coverage, policy (%) | Policy's timeouts | Coverage, default mode | Total | Median | Mean | "
              "Mean on common tasks | Paper |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name in domains:
        archs = results["domains"][name]["archs"]
        count = len(results["domains"][name]["sizes"].get("test", []))
        tested = [a for a in archs if archs[a]["policy"]["solved"]]
        common = set.intersection(*(set(archs[a]["policy"]["solved"]) for a in tested)) if tested else set()
        for i, arch in enumerate(args.archs):
            row = archs[arch]
            policy, default = row["policy"], row["default"]
            first = f"{name} ({len(common)} common)" if i == 0 else ""
            if not policy["tasks"]:
                why = "training failed" if (row["training"] or {}).get("failed") else "not run"
                lines.append(f"| {first} | {label(arch, args.t)} | {why} | | | | | | | {PAPER.get((name, paper_key(arch, args.t)), '')} |")
                continue
            solved = len(policy["solved"])
            total, median, mean = plan_lengths(list(policy["plan_length"].values()))
            on_common = [policy["plan_length"][p] for p in common] if arch in tested else []
            partial = ", partial" if policy["tasks"] < count else ""
            lines.append(f"| {first} | {label(arch, args.t)} | {solved} / {policy['tasks']} ({100 * solved / policy['tasks']:.0f} %{partial}) | "
                         f"{list(policy['statuses'].values()).count('timeout')} | "
                         f"{len(default['solved'])} / {default['tasks']} | {total} | {median} | {mean} | "
                         f"{f'{statistics.mean(on_common):.1f}' if on_common else '-'} | "
                         f"{PAPER.get((name, paper_key(arch, args.t)), '')} |")
    lines += ["", "## Solved test problems per architecture (layout of Table 2 of Müller et al. 2024)", "",
              "Greedy policy, and in parentheses the default mode (Müller et al.'s parentheses count the optimally solved "
              "ones; the optimal plan lengths of these test problems are not known here); LAMA-first (`gnnplan compare "
              "--engine fast-downward`) and the strongest learned peer, WL-GOOSE (`benchmarks/goose/`: WL features and a "
              "rank-SVM trained on the same training file, GBFS), on the same tasks and limit.", "",
              "| Domain (#problems) | " + " | ".join(label(a, args.t) for a in args.archs) + " | LAMA-first | WL-GOOSE |",
              "|---|" + "---:|" * (len(args.archs) + 2)]
    for name in domains:
        archs = results["domains"][name]["archs"]
        count = len(results["domains"][name]["sizes"].get("test", []))
        # The best: most solved by the greedy policy, ties broken by the default mode.
        best = max(((len(archs[a]["policy"]["solved"]), len(archs[a]["default"]["solved"])) for a in args.archs
                    if archs[a]["policy"]["tasks"]), default=None)
        cells = []
        for arch in args.archs:
            policy, default = archs[arch]["policy"], archs[arch]["default"]
            if not policy["tasks"]:
                cells.append("-")
                continue
            solved = len(policy["solved"])
            text = f"{solved} ({len(default['solved'])})" + (f" of {policy['tasks']} so far" if policy["tasks"] < count else "")
            cells.append(f"**{text}**" if (solved, len(default["solved"])) == best and any(best) else text)
        for key in ("lama_first", "wl_goose"):
            baseline = results["domains"][name].get(key, {})
            cells.append(f"{len(baseline['solved'])}" + (f" of {baseline['tasks']} so far" if baseline.get("tasks", count) < count else "")
                         if baseline.get("tasks") else "not run")
        lines.append(f"| {name} ({count}) | " + " | ".join(cells) + " |")
    lines += ["", "## Training and run time", "",
              "Minutes of training (to the best epoch), epochs, training states/s, parameters, evaluated states/s "
              "(onnxruntime, one thread, one batch) and the validation error of the kept epoch (MAE of V against V* on the "
              "validation problems, and the share within 0.5).", "",
              "| Domain | Model | Training min (to best) | Epochs | Train states/s | Parameters | Evaluated states/s | "
              "Validation MAE | Within 0.5 |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in domains:
        archs = results["domains"][name]["archs"]
        for i, arch in enumerate(args.archs):
            row, first = archs[arch], name if i == 0 else ""
            t = row["training"]
            if not t:
                lines.append(f"| {first} | {label(arch, args.t)} | not trained | | | | | | |")
                continue
            if t.get("failed"):
                lines.append(f"| {first} | {label(arch, args.t)} | {t['failed']} failed: {t['error'][:120]} | | | | | | |")
                continue
            sps = row["states_per_second"]
            shown = fmt(sps, 1) if sps is not None else (f"refused: {row['speed_error'][:80]}" if row["speed_error"] else "")
            lines.append(f"| {first} | {label(arch, args.t)} | {t['minutes']:.1f} ({t['minutes_to_best_epoch']:.1f}) | "
                         f"{t['epochs']} | {t['train_states_per_second']:g} | {t['parameters']:,} | {shown} | "
                         f"{t['validation']['mae']:.3f} | {100 * t['validation']['within_0.5']:.0f} % |")
    for name in domains:
        s = speeds.get(name)
        if s:
            lines.append(f"\nEvaluated states/s, {name}: {s['batch']} states of `{s['problem']}` ({s['objects']} objects) "
                         f"from seeded random walks, median of {s['rounds']} rounds, load average {s['load_average']} "
                         f"({s['date']}).")
    lines += ["", "## Where our figures differ from the papers', and why", ""] + differences(results, args, training)
    lines += ["", "## Commands", "", "```bash"] + invocations() + ["```", ""]
    (OUT / "report.md").write_text("\n".join(lines))
    print("\n".join(lines))


def differences(results: dict, args, training: dict) -> list[str]:
    """The paragraph on the papers: which of our figures differ from theirs (computed) and the reasons (the setting)."""
    gaps, same = [], []
    for name, domain in results["domains"].items():
        for arch, row in domain["archs"].items():
            paper = PAPER.get((name, paper_key(arch, args.t)))
            count = len(domain["sizes"].get("test", []))
            if not paper or row["policy"]["tasks"] < count or "/" not in paper.split(",")[0]:
                continue
            solved, total = paper.split(",")[0].split(" ")[0].split("/")
            ours = len(row["policy"]["solved"]) / row["policy"]["tasks"]
            text = f"{name} {label(arch, args.t)}: {len(row['policy']['solved'])}/{row['policy']['tasks']} against {paper}"
            (gaps if abs(ours - int(solved) / int(total)) > 0.2 else same).append(text)
    hours = 12 * 60 / args.minutes
    minutes = sorted(t["minutes"] for t in training.values() if isinstance(t, dict) and "minutes" in t)
    lines = []
    if gaps:
        lines.append("Coverage of the greedy policy more than 20 percentage points away from the paper's (ours against "
                     "theirs): " + "; ".join(gaps) + ".")
    if same:
        lines.append("Within 20 percentage points of the paper's: " + "; ".join(same) + ".")
    statuses = [status for domain in results["domains"].values() for row in domain["archs"].values()
                for status in row["policy"]["statuses"].values() if status not in ("solved_satisficing", "solved_optimally")]
    if statuses:
        lines.append(f"Of the greedy policies' {len(statuses)} unsolved tasks, {statuses.count('timeout')} ran out of the "
                     f"{args.timeout:g} s (the others ended where no unvisited successor was left, or at 1000 steps): on "
                     "this machine the time limit decides much of the coverage, where the papers count only the step limit.")
    lines.append("")
    lines.append(
        "Why they differ. *Budget*: the R-GNN[t] paper trained every model for 12 hours on an NVIDIA A10 GPU and kept the "
        "best of three seeds; Müller et al. ran a grid search (layers, width, dropout, heads) with three seeds per "
        f"configuration; here each model had {args.minutes:g} minutes of wall clock on one CPU thread"
        + (f" ({minutes[0]:.1f}-{minutes[-1]:.1f} min recorded)" if minutes else "")
        + ", one seed and one configuration, on a 2-core machine that was running other benchmarks at the same time, so "
        "the slower architectures (R-GNN[t] over object pairs, the O(n^3) Edge Transformer) saw far fewer states than the "
        "fast ones (see *train states/s*), which is the effect the R-GNN[t] paper names for its own drops in coverage, "
        f"here with {hours:.0f} times less wall-clock time than its 12 hours, on a CPU core instead of a GPU. *Setting*: the package's defaults (Adam at 1e-3, "
        "hidden 32, L1 on V*, best epoch by the error on larger validation problems) for every model, not the papers' "
        "(2e-4 and batches of 16 in the R-GNN[t] paper; MSE, a halving schedule and tuned dropout in Müller et al.); our "
        "Müller et al. graphs use one-hot node kinds and predicates instead of raw integer ids (README, Architectures). "
        "*Sizes and data*: our problems come from the package's generators with the sizes listed above, smaller test "
        "sets (the papers: 17-22 Blocks, 18 Gripper, 20 per C3 domain; Müller et al. 11-39), a time limit of "
        f"{args.timeout:g} s per task on a loaded CPU where the papers count only the 1000-step limit, and datasets "
        "expanded or labelled along optimal plans instead of the papers' random walks; Müller et al.'s Blocks is "
        "Blocks-clear, a different goal. Their figures are therefore an upper reference for what these architectures "
        "reach with enough training, not a target this run's minutes could meet.")
    return lines


def invocations() -> list[str]:
    """The ablation.py invocations recorded in commands.log."""
    path = OUT / "commands.log"
    if not path.is_file():
        return []
    found = [line.split("  # run: ", 1)[1] for line in path.read_text().splitlines() if "  # run: " in line]
    return list(dict.fromkeys(found))


def main(argv: list[str] | None = None) -> None:
    global OUT, WORK
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["data", "train", "test", "report", "all"])
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=sorted(DOMAINS))
    parser.add_argument("--archs", nargs="+", default=None, metavar="KEY",
                        help="registry keys (default: every architecture whose network gives V, i.e. all but those that "
                             "build their own action heads)")
    parser.add_argument("--t", type=int, default=1, help="R-GNN[t]'s t (--arch rgnn_t)")
    parser.add_argument("--minutes", type=float, default=3.0, help="training minutes of every architecture")
    parser.add_argument("--epoch-states", type=int, default=2048,
                        help="states per epoch: the validation error is taken after each, so slow models get a choice too")
    parser.add_argument("--max-states", type=int, default=50000, help="training problems with more states are labelled "
                                                                       "along optimal plans instead of expanded")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tests", type=int, default=10, help="test problems per domain, spread over the test sizes")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per test task")
    parser.add_argument("--jobs", type=int, default=1, help="test tasks at once")
    parser.add_argument("--speed-batch", type=int, default=64, help="states in the batch of the states/s measurement")
    parser.add_argument("--speed-seconds", type=float, default=20.0, help="time of the states/s rounds per domain")
    parser.add_argument("--retry-failed", action="store_true", help="train again the architectures that failed")
    parser.add_argument("--out", type=Path, default=OUT, help="results folder")
    parser.add_argument("--work", type=Path, default=WORK, help="folder of problems, datasets and models")
    args = parser.parse_args(argv)
    OUT, WORK = args.out.resolve(), args.work.resolve()
    from up_gnnplan.models import ARCHITECTURES

    args.archs = args.archs or default_archs()
    unknown = sorted(set(args.archs) - set(ARCHITECTURES))
    if unknown:
        parser.error(f"unknown architecture(s) {', '.join(unknown)}; choose from {', '.join(ARCHITECTURES)}")
    threads = f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} " if "OMP_NUM_THREADS" in os.environ else ""
    arguments = sys.argv[1:] if argv is None else argv
    log("# run: " + threads + shlex.join(["python", "-m", "benchmarks.ablation", *arguments]))
    stages = {"data": data, "train": train, "test": test}
    if args.stage == "report":
        report(args)
        return
    for name in args.domains:
        for stage in (("data", "train", "test") if args.stage == "all" else (args.stage,)):
            log(f"# {name}: stage {stage}")
            stages[stage](args, name)
    if args.stage == "all":
        report(args)


if __name__ == "__main__":
    main()

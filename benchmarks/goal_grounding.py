"""Goal grounding against LAMA-first on the quantified goal (issue 13; the paper's Tables 1 and 3).

Funkquist, Ståhlberg & Geffner (2024) on the package's generators of their five domains
(``gnnplan generate exists-*``). Stages, each recorded under ``benchmarks/results/goal_grounding/``
with every command in ``commands.log``:

``data DOMAIN...``
    generates training problems (1-4 variables, 1-6 colours, with and without inequalities, the
    small sizes of ``SIZES``), labels V*(s; G) under goal variants with ``gnnplan dataset
    --grounding``, and a validation set of the next size up; generates the three test sets: *optimal*
    (one size larger than training, 1-6 variables, small enough to expand, so V* is exact), *lama*
    (2-4 times the training size) and *hard* (5-10 times, 4-6 variables: where a quantified goal
    slows LAMA-first down).
``train DOMAIN...``
    one model per domain file (Blocks and Blocks-C are one domain and train one model on both sets):
    ``gnnplan train`` (MSE, learning rate 1e-3 as in the paper, the epoch chosen on the validation
    set) for ``--minutes``, then ``gnnplan export``.
``test DOMAIN... --set optimal|lama|hard [--shipped] [--run NAME [--mark 20min]] [--beam K]``
    (the set is generated first if it is not there; the model trained in WORK, or the shipped one
    with ``--shipped`` or when there is none) ``gnnplan compare`` of mode ``ground`` (LAMA-first on
    the ground problem) with and without the
    static filter, and of LAMA-first on the quantified goal, on the same tasks with ``--timeout``
    each; on the optimal set also V* of every task (full expansion by pymimir).
``ship DOMAIN... [--run NAME [--mark M]]``
    adds each domain's model to the package's shipped models as ``MODEL-grounding`` (Blocks and
    Blocks-C share ``exists-blocks-grounding``), its entry carrying the figures of ``table``; a run's
    model replaces the shipped one, and its results become the *shipped* rows (the replaced
    model's: ``@before-NAME``).
``record DOMAIN...``
    only writes the figures of ``table`` into the shipped models' entries (after new test runs).
``--run NAME`` (every stage)
    another recipe beside the shipped one, on the same test sets: its training and validation data
    (``--valid-share``: the chance that a bound variable of a goal variant gets an object breaking no
    static atom, 0.5 for the shipped models; ``--shared-states``: the same states labelled under every
    goal variant), its model (``--ema``: weight averaging; ``--loss mse+rank``: the goal variants of
    each state ranked, beside the shipped models' ``mse``) and its results
    (``ground-filter@NAME``, ``ground-no-filter@NAME``; LAMA-first's runs are shared). Its training
    keeps its state in ``WORK/MODEL/state@NAME.safetensors``: the same command continues a stopped
    run; the state's header (config, and the curve of every epoch) goes to
    ``results/goal_grounding/MODEL@NAME.metadata.json``. ``--judge`` (train) chooses the epoch by
    what the binder makes of larger problems (``JUDGE_SEED``'s problems of the ``judge`` sizes: greedy binding with the static filter, the ground
    goal solved by LAMA-first; most solved, then the fewest plan steps in all;
    :mod:`up_gnnplan.grounding.judge`) in place of the validation error. ``--beam K`` tests mode ground with ``binding_beam=K`` (the model's K best partial
    bindings per step, the ground goals ordered by FF) with the static filter only: results
    ``ground-filter@beamK`` (the shipped model) or ``ground-filter@NAME+beamK``. Every test says
    ``binding_entailment`` (the engine's default since 2026-11-25: a binding that adds nothing to the
    goal is made without the model); ``--no-entailment`` tests the paper's greedy binding, with and
    without the filter: ``ground-*@no-entail`` or ``ground-*@NAME+no-entail``. Results of runs made
    before that day (``mae``, ``paper67``, ``judge-20min``, ``before-judge`` and the rest) are the
    paper's greedy binding: their rows' params say so.
``pair DOMAIN... [--against NAME]``
    the shipped model against another (``before-judge``: the one it replaced) on the tasks both
    solved: plan cost summed, and on how many tasks each was cheaper.
``speed DOMAIN... --set SET``
    mode ground (the shipped model, the engine's defaults) and LAMA-first on the quantified goal in one
    ``gnnplan compare``, the two taking turns per task (``DOMAIN/SET/speed/``), and ``speed.md``: the
    speed-up as a ratio taken in one run (``table``'s divides times of runs made at other times).
``table``
    per domain, set and model (the shipped one, each run): tasks, coverage (with the filter, without it, LAMA on the quantified goal),
    V/V* (optimal set) or V/V^L (lama and hard sets: plan cost over LAMA-first's on the quantified goal, both
    solved), and the speed-up of LAMA-first on the quantified goal over mode ground (geometric mean
    of the per-task wall-time ratios, both solved).

    OMP_NUM_THREADS=1 python -m benchmarks.goal_grounding data exists-blocks
    OMP_NUM_THREADS=1 python -m benchmarks.goal_grounding train exists-blocks --minutes 10
    OMP_NUM_THREADS=1 python -m benchmarks.goal_grounding test exists-blocks --set optimal
    python -m benchmarks.goal_grounding table
    OMP_NUM_THREADS=1 python -m benchmarks.goal_grounding data exists-blocks exists-blocks-c --run valid --valid-share 0.9
    OMP_NUM_THREADS=1 python -m benchmarks.goal_grounding train exists-blocks --run valid --minutes 60 --layers 16
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import subprocess
from pathlib import Path

from .common import RESULTS, ROOT, note, read_json, record_state, run, set_coverage, write_json

OUT = RESULTS / "goal_grounding"
WORK = Path("/tmp/gnnplan-grounding")
LOG = OUT / "commands.log"

# Per domain: the size parameters of training, validation and the two test sets (lists of dicts,
# each generated with every number of variables of the set). Sizes follow the paper's Table 2
# where our expansion limits allow (Blocks: 8 blocks do not expand in reasonable time, so the
# optimal set has 6).
SIZES = {
    "exists-blocks": {"train": [{"blocks": n} for n in (3, 4, 5)], "valid": [{"blocks": 6}],
                      "optimal": [{"blocks": 6}], "lama": [{"blocks": n} for n in (9, 12, 15)],
                      "hard": [{"blocks": n} for n in (25, 30)], "judge": [{"blocks": n} for n in (8, 10)]},
    "exists-blocks-c": {"train": [{"blocks": n} for n in (3, 4, 5)], "valid": [{"blocks": 6}],
                        "optimal": [{"blocks": 6}], "lama": [{"blocks": n} for n in (9, 12, 15)],
                        "hard": [{"blocks": n} for n in (25, 30)], "judge": [{"blocks": n} for n in (8, 10)]},
    "exists-gripper": {"train": [{"balls": n, "rooms": 3} for n in (2, 3, 4)], "valid": [{"balls": 5, "rooms": 3}],
                       "optimal": [{"balls": 5, "rooms": 3}],
                       "lama": [{"balls": n, "rooms": r} for n, r in ((8, 3), (12, 4), (16, 5))],
                       "hard": [{"balls": n, "rooms": r} for n, r in ((30, 6), (40, 8))],
                       "judge": [{"balls": n, "rooms": r} for n, r in ((6, 3), (8, 4))]},
    "exists-delivery": {"train": [{"width": 3, "height": 3, "packages": p} for p in (1, 2)],
                        "valid": [{"width": 4, "height": 3, "packages": 2}],
                        "optimal": [{"width": 4, "height": 3, "packages": 2}],
                        "lama": [{"width": w, "height": w, "packages": p} for w, p in ((5, 3), (6, 4), (8, 5))],
                        "hard": [{"width": w, "height": w, "packages": p} for w, p in ((10, 6), (12, 8))],
                        "judge": [{"width": w, "height": w, "packages": p} for w, p in ((4, 2), (5, 3))]},
    "exists-visitall": {"train": [{"width": 3, "height": h} for h in (2, 3)], "valid": [{"width": 4, "height": 3}],
                        "optimal": [{"width": 4, "height": 4}],
                        "lama": [{"width": w, "height": w} for w in (5, 7, 10)],
                        "hard": [{"width": w, "height": w} for w in (12, 15)],
                        "judge": [{"width": w, "height": w} for w in (4, 5)]},
}
# One grounding model per domain file: Blocks and Blocks-C are one domain (the same predicates,
# the goals differ), so one model learns from both training sets and serves both.
MODEL_OF = {"exists-blocks": "exists-blocks", "exists-blocks-c": "exists-blocks", "exists-gripper": "exists-gripper",
            "exists-delivery": "exists-delivery", "exists-visitall": "exists-visitall"}
VARIABLES = {"train": (1, 2, 3, 4), "valid": (1, 2, 3, 4), "optimal": (1, 2, 3, 4, 5, 6), "lama": (1, 2, 3, 4, 5, 6),
             "hard": (4, 5, 6), "judge": (2, 4, 6)}
# The test sets: seed of their generation. *hard*: the sizes where LAMA-first's landmarks suffer
# from a quantified goal (measured here: 30 blocks and 5 variables, 43 s against 0.5 s grounded).
TEST_SEEDS = {"optimal": 2000, "lama": 3000, "hard": 4000}
# --judge: the problems that choose the epoch (one per size and variable count, seed JUDGE_SEED: none is a
# test problem), 1.5-2 times the training size, where LAMA-first solves a ground goal in about a second.
JUDGE_SEED = 5000


def generate(domain: str, split: str, count: int, seed: int, sizes: list[dict] | None = None,
             folder: str = "") -> list[Path]:
    """Generate ``count`` problems per (size, variables, colours, neq) choice of ``split`` (its ``SIZES``, or
    ``sizes``) into ``WORK/domain/folder`` (default: the split's name); return them."""
    folder = WORK / domain / (folder or split)
    rng = random.Random(seed)
    problems = []
    lowest = 2 if domain == "exists-blocks" else 1  # a tower has two blocks at least
    for index, (size, variables) in enumerate(itertools.product(sizes or SIZES[domain][split], VARIABLES[split])):
        if variables < lowest:
            continue
        out = folder / f"s{index}"
        colours, neq = rng.randint(1, 6), rng.randint(0, 1)
        params = {**size, "variables": variables, "colours": colours, "neq": neq}
        if domain == "exists-blocks":
            params["on_table"] = rng.randint(0, 1)
        arguments = [a for k, v in params.items() for a in ("-p", f"{k}={v}")]
        done = run(["gnnplan", "generate", domain, "-o", out, "--count", count, "--seed", seed + index, *arguments],
                   LOG, check=False)
        if not done:  # e.g. more colours than objects: try with fewer colours once
            params["colours"] = 1 + colours // 2
            arguments = [a for k, v in params.items() for a in ("-p", f"{k}={v}")]
            run(["gnnplan", "generate", domain, "-o", out, "--count", count, "--seed", seed + index, *arguments],
                LOG, check=False)
        problems += sorted(out.glob("p-*.pddl"))
    return problems


def data(args) -> None:
    for domain in args.domains:
        folder = WORK / domain
        sizes = json.loads(args.train_sizes) if args.train_sizes else None  # a run's own sizes, its own folder
        train = generate(domain, "train", args.train_count, 0, sizes, f"train{suffix(args)}" if sizes else "")
        valid = generate(domain, "valid", 2, 1000)
        domain_file = train[0].parent / "domain.pddl"
        for split, problems, goals in (("train", train, args.goals), ("valid", valid, 8)):
            out = folder / f"{split}{suffix(args)}.npz"
            share = ["--valid-share", args.valid_share] if args.valid_share != 0.5 else []
            share += ["--shared-states"] if args.shared_states else []
            run(["gnnplan", "dataset", domain_file, *problems, "--grounding", "--goals-per-problem", goals,
                 "--states-per-goal", args.states, "--max-states", args.max_states, *share, "-o", out], LOG, output=out)
        for split, seed in TEST_SEEDS.items():
            if not (WORK / domain / split).is_dir():  # the same seeds make the same files: not rewritten under a test
                generate(domain, split, args.test_count, seed)


def suffix(args) -> str:
    """``@NAME`` for the files and results of ``--run NAME``, else nothing."""
    return f"@{args.run}" if args.run else ""


def model_file(domain: str, extension: str = ".onnx", run_suffix: str = "") -> Path:
    """Return the grounding model (or checkpoint) that serves ``domain``'s problems."""
    return WORK / MODEL_OF[domain] / f"grounding{run_suffix}{extension}"


def train(args) -> None:
    for model in dict.fromkeys(MODEL_OF[d] for d in args.domains):
        served = [d for d, m in MODEL_OF.items() if m == model]
        data = [WORK / d / f"train{suffix(args)}.npz" for d in served]
        data += [WORK / d / f"train@{args.also_data}.npz" for d in served] if args.also_data else []
        validation = [a for d in served for a in ("--validation-dataset", WORK / d / f"valid{suffix(args)}.npz")]
        checkpoint = model_file(model, ".pt", suffix(args))
        state = WORK / model / f"state{suffix(args)}.safetensors"  # megabytes: out of the repository
        extra = ["--state", state] if args.run else []
        extra += ["--ema", args.ema] if args.ema else []
        extra += ["--patience", args.patience] if args.patience else []
        extra += ["--snapshot-minutes", args.marks] if args.marks else []
        extra += judge_options(served) if args.judge else []
        run(["gnnplan", "train", *data, *validation, "--loss", args.loss, "--lr", "1e-3", "--layers", args.layers,
             "--seed", args.seed, "--max-seconds", int(60 * args.minutes), *extra, "-o", checkpoint], LOG)
        if args.run:
            record_state(state, OUT / f"{model}{suffix(args)}.metadata.json")
        run(["gnnplan", "export", checkpoint, "-o", model_file(model, ".onnx", suffix(args))], LOG)


def judge_options(domains: list[str]) -> list:
    """``gnnplan train``'s options of the binding judge: the judge problems of ``domains`` (generated once)."""
    problems = []
    for domain in domains:
        problems += sorted((WORK / domain / "judge").glob("s*/p-*.pddl")) or generate(domain, "judge", 1, JUDGE_SEED)
    return ["--validation-domain", problems[0].parent / "domain.pddl",
            *[a for p in problems for a in ("--validation-problem", p)]]


def ship(args) -> None:
    """Ship each model as ``MODEL-grounding`` with the figures of ``table`` for the domains it serves.

    With ``--run NAME`` (and ``--mark``), the run's model is shipped in place of the shipped one, and
    the test results follow: the replaced model's folders become ``LABEL@before-NAME`` (its beam runs
    ``ground-filter@before-NAME+beamK``), the run's become the shipped model's, so that ``table``'s
    *shipped* rows stay the shipped file's.
    """
    for model in dict.fromkeys(MODEL_OF[d] for d in args.domains):
        tag = suffix(args) + (f"-{args.mark}" if args.mark else "")
        run(["gnnplan", "export", model_file(model, ".pt", tag), "-o", WORK / model / "grounding-shipped.onnx",
             "--ship", f"{model}-grounding"], LOG)
        if args.run:
            for domain in (d for d, m in MODEL_OF.items() if m == model):
                for split in TEST_SEEDS:
                    _promote(OUT / domain / split, tag.removeprefix("@"), f"before-{args.run}")
    # The figures recorded are the new shipped rows': the tables again after the folders moved
    # (the replaced model's ``speed`` run is ``speed@before-NAME`` now, out of ``speed.json``).
    table(args)
    speed_table()
    record(args)


def _promote(base: Path, name: str, old: str) -> None:
    """Rename the shipped model's result folders of ``base`` to ``@old`` and run ``name``'s to the shipped ones.

    The shipped model's runs with other params (``@beamK``, ``@no-entail``, ``@beamK+no-entail``)
    become ``@old+beamK`` and the rest, its ``speed`` folder ``speed@old``.
    """
    moves = []
    for folder in sorted(base.glob("ground-*")):
        label, _, run_name = folder.name.partition("@")
        if not run_name:
            moves.append((folder, base / f"{label}@{old}"))
        elif run_name.startswith("beam") or run_name == "no-entail":  # the shipped model with other params
            moves.append((folder, base / f"{label}@{old}+{run_name}"))
    if (base / "speed").is_dir():  # speed's mode ground ran the shipped model
        moves.append((base / "speed", base / f"speed@{old}"))
    moves += [(base / f"{label}@{name}", base / label) for label in ("ground-filter", "ground-no-filter")
              if (base / f"{label}@{name}").is_dir()]
    vacated = {source for source, _ in moves}
    for source, target in moves:
        if target.exists() and target not in vacated:
            raise SystemExit(f"{target} exists: not overwritten")
    for source, target in moves:  # the shipped model's folders first, so the run's can take their names
        if _tracked(source):
            subprocess.run(["git", "mv", str(source), str(target)], check=False)
        else:
            source.rename(target)
        note(LOG, f"# moved {source.relative_to(OUT)} to {target.relative_to(OUT)}")


def _tracked(path: Path) -> bool:
    return subprocess.run(["git", "ls-files", "--error-unmatch", str(path)], capture_output=True,
                          cwd=ROOT).returncode == 0


def record(args) -> None:
    """Write the figures of ``table`` into the index entries of the shipped ``MODEL-grounding`` models."""
    summary, timed = read_json(OUT / "table.json"), read_json(OUT / "speed.json")
    for model in dict.fromkeys(MODEL_OF[d] for d in args.domains):
        parts = []
        for key, row in summary.items():
            domain, split = key.split("/")
            if MODEL_OF[domain] != model or "@" in split:  # a run's row: not the shipped model's figures
                continue
            ratio = row["cost_ratio"] and f"{row['cost_ratio']:.2f}"
            one_run = timed.get(key)  # ``speed``'s ratio taken in one run, where it was measured
            times = one_run or row
            speed = times["speedup"] and f"{times['speedup']:.1f}x"
            bound = times.get("speedup_at_least") and f"{times['speedup_at_least']:.1f}x"
            parts.append(f"{domain} {split} set: mode ground (static filter) {row['ground-filter']}/{row['tasks']}, "
                         f"without the filter {row['ground-no-filter']}/{row['tasks']}, LAMA-first on the quantified goal "
                         f"{row['lama-quantified']}/{row['tasks']}; V/{row['cost_ratio_of']} {ratio}; speed-up {speed}"
                         f" (at least {bound} counting LAMA-first's timeouts"
                         + ("; both in one run)" if one_run else "; LAMA-first's times from another run)"))
        set_coverage(f"{model}-grounding", "; ".join(parts) + ". Per-task results: benchmarks/results/goal_grounding/"
                     if parts else "not measured")


def tests_of(domain: str, split: str) -> tuple[Path, list[Path]]:
    problems = sorted((WORK / domain / split).glob("s*/p-*.pddl"))
    return problems[0].parent / "domain.pddl", problems


def test(args) -> None:
    for domain in args.domains:
        if not (WORK / domain / args.set).is_dir():
            generate(domain, args.set, args.test_count, TEST_SEEDS[args.set])
        domain_file, problems = tests_of(domain, args.set)
        model = model_file(domain, ".onnx", suffix(args))
        if args.mark:  # a snapshot of the run's training: exported once, its results kept apart
            snapshot = model_file(domain, f"-{args.mark}.pt", suffix(args))
            model = snapshot.with_suffix(".onnx")
            if not model.is_file():
                run(["gnnplan", "export", snapshot, "-o", model], LOG)
        if args.run and not model.is_file():
            raise SystemExit(f"{model}: run {args.run!r} has no model; train it first")
        if args.shipped or not model.is_file():  # the shipped model: the name the zoo knows it by
            model = f"{MODEL_OF[domain]}-grounding"
        base = OUT / domain / args.set
        tag = f"{suffix(args)}{f'-{args.mark}' if args.mark else ''}"
        grounding = ["--engine-param", f"gnnplan:grounding_model={model}"]
        configurations = [("ground-filter", []), ("ground-no-filter", ["--engine-param", "gnnplan:static_filter=false"])]
        if args.beam > 1:  # FF proves a statically false binding unreachable: without the filter the beam is one
            tag = f"{tag}+beam{args.beam}" if tag else f"@beam{args.beam}"
            grounding += ["--engine-param", f"gnnplan:binding_beam={args.beam}"]
            configurations = configurations[:1]
        if args.no_entailment:  # the paper's greedy binding: the model asked at every step
            tag = f"{tag}+no-entail" if tag else "@no-entail"
        # Said in every run, whatever the engine's default: a row's params tell which binding made it.
        grounding += ["--engine-param", f"gnnplan:binding_entailment={str(not args.no_entailment).lower()}"]
        for label, extra in configurations:
            run(["gnnplan", "compare", domain_file, *problems, "--engine", "gnnplan:ground", *grounding, *extra,
                 "--timeout", args.timeout, "--no-plots", "-o", base / f"{label}{tag}", "--resume"], LOG)
        run(["gnnplan", "compare", domain_file, *problems, "--engine", "fast-downward", "--timeout", args.timeout,
             "--no-plots", "-o", base / "lama-quantified", "--resume"], LOG)
        if args.set == "optimal":
            optimal_costs(domain_file, problems, base / "vstar.json")


def optimal_costs(domain_file: Path, problems: list[Path], out: Path) -> None:
    """Write V* of each task's initial state (full expansion; None where it does not fit)."""
    from up_gnnplan.datasets.expansion import expand
    from up_gnnplan.errors import StateLimitExceeded
    from up_gnnplan.problems import load_task

    costs = read_json(out)
    for problem in problems:
        if problem.name in costs:
            continue
        try:
            labelled = expand(load_task(domain_file, problem), max_states=300_000)
            costs[problem.name] = float(labelled.initial_value)
        except StateLimitExceeded:
            costs[problem.name] = None
        write_json(out, costs)
    note(LOG, f"# V* of {len(problems)} tasks by expansion -> {out}")


def _table_row(base: Path, split: str, name: str, lama: dict) -> dict | None:
    """The figures of one model (``name``: "" for the shipped one, else a run) on one test set."""
    from up_gnnplan.compare import read_results

    tag = f"@{name}" if name else ""
    runs = {label: {r["problem"]: r for r in read_results(base / f"{label}{tag}" / "results.jsonl")}
            for label in ("ground-filter", "ground-no-filter")}
    if not runs["ground-filter"]:
        return None
    runs["lama-quantified"] = lama
    solved = {label: sum(r["solved"] for r in rows.values()) for label, rows in runs.items()}
    figures = {label: _quality_and_speed(base, split, runs[label], lama) for label in ("ground-filter", "ground-no-filter")}
    return {"tasks": len(runs["ground-filter"]), **solved, "ran": {label: len(rows) for label, rows in runs.items()},
            **figures["ground-filter"], **{f"{key}_no_filter": value for key, value in figures["ground-no-filter"].items()},
            "cost_ratio_of": "V*" if split == "optimal" else "LAMA-first"}


def _quality_and_speed(base: Path, split: str, ours: dict, lama: dict) -> dict:
    """Plan cost over V* (optimal set) or over LAMA-first's on the quantified goal (the mean of the per-task
    ratios), and LAMA-first's wall time over ours (geometric mean), on the tasks both solved."""
    if split == "optimal" and (base / "vstar.json").is_file():
        vstar = json.loads((base / "vstar.json").read_text())
        ratios = [ours[p]["plan_cost"] / vstar[p] for p in ours if ours[p]["solved"] and vstar.get(p)]
    else:
        ratios = [ours[p]["plan_cost"] / lama[p]["plan_cost"] for p in ours
                  if ours[p]["solved"] and p in lama and lama[p]["solved"] and lama[p]["plan_cost"]]
    speed = [lama[p]["wall_time"] / ours[p]["wall_time"] for p in ours if ours[p]["solved"] and p in lama and lama[p]["solved"]]
    # A lower bound where LAMA-first ran out of time: its wall time counted as the time limit.
    bound = [(lama[p]["wall_time"] if lama[p]["solved"] else lama[p]["timeout"]) / ours[p]["wall_time"]
             for p in ours if ours[p]["solved"] and p in lama]
    return {"cost_ratio": sum(ratios) / len(ratios) if ratios else None,
            "speedup": math.exp(sum(map(math.log, speed)) / len(speed)) if speed else None,
            "speedup_at_least": math.exp(sum(map(math.log, bound)) / len(bound)) if bound else None}


def table(args) -> None:
    from up_gnnplan.compare import read_results

    lines = ["| domain | set | model | tasks | coverage (filter) | coverage (no filter) | LAMA-first on the quantified "
             "goal | V/V* or V/V^L (filter) | V/V* or V/V^L (no filter) | speed-up over LAMA-first (filter) | speed-up "
             "(no filter) | speed-up (filter), LAMA-first's timeouts as the limit |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    summary = {}
    for domain in SIZES:
        for split in TEST_SEEDS:
            base = OUT / domain / split
            lama = {r["problem"]: r for r in read_results(base / "lama-quantified" / "results.jsonl")}
            runs = [""] + sorted(p.name.partition("@")[2] for p in base.glob("ground-filter@*"))
            for name in runs:
                row = _table_row(base, split, name, lama)
                if row is None:
                    continue
                key = f"{domain}/{split}" + (f"@{name}" if name else "")
                summary[key] = row
                shown = {label: f"{row[label]}/{row['ran'][label]}" if row["ran"][label] else "not run"
                         for label in row["ran"]}
                run_without = row["ran"]["ground-no-filter"] > 0

                def figure(key: str, form: str, without: bool = False) -> str:
                    if without and not run_without:
                        return "not run"
                    value = row[f"{key}_no_filter" if without else key]
                    return "None" if value is None else form.format(value)

                lines.append(f"| {domain} | {split} | {name or 'shipped'} | {row['tasks']} | {shown['ground-filter']} | "
                             f"{shown['ground-no-filter']} | {shown['lama-quantified']} | {figure('cost_ratio', '{:.3f}')} | "
                             f"{figure('cost_ratio', '{:.3f}', True)} | {figure('speedup', '{:.1f}x')} | "
                             f"{figure('speedup', '{:.1f}x', True)} | {figure('speedup_at_least', '>= {:.1f}x')} |")
    (OUT / "table.md").write_text("\n".join(lines) + "\n")
    write_json(OUT / "table.json", summary)
    print("\n".join(lines))


def speed(args) -> None:
    """Run mode ground (the shipped model, the engine's defaults) and LAMA-first on the quantified goal in one
    ``gnnplan compare``, taking turns per task, into ``DOMAIN/SET/speed/``; then tabulate every such run.

    The speed-up of ``table`` divides times taken in different runs, under whatever else the machine ran
    then (2026-11-25: two runs of the same bindings on Delivery's lama set differed 2x); this one is a
    ratio taken in one run, the two engines alternating on the same tasks.
    """
    for domain in args.domains:
        domain_file, problems = tests_of(domain, args.set)
        run(["gnnplan", "compare", domain_file, *problems, "--engine", "gnnplan:ground", "--engine", "fast-downward",
             "--engine-param", f"gnnplan:grounding_model={MODEL_OF[domain]}-grounding", "--timeout", args.timeout,
             "--no-plots", "-o", OUT / domain / args.set / "speed", "--resume"], LOG)
    speed_table()


def speed_table() -> None:
    """Write ``speed.md`` and ``speed.json`` from every ``DOMAIN/SET/speed/`` run there is."""
    from up_gnnplan.compare import read_results

    lines = ["| domain | set | tasks | mode ground | LAMA-first on the quantified goal | speed-up (both solved) | "
             "speed-up, LAMA-first's timeouts as the limit | median s, mode ground | median s, LAMA-first |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    summary = {}
    for folder in sorted(OUT.glob("*/*/speed")):
        domain, split = folder.parts[-3], folder.parts[-2]
        rows = read_results(folder / "results.jsonl")
        ours = {r["problem"]: r for r in rows if r["engine"] == "gnnplan:ground"}
        lama = {r["problem"]: r for r in rows if r["engine"] == "fast-downward"}
        both = [p for p in ours if p in lama]
        solved = {name: sum(bool(side[p]["solved"]) for p in both) for name, side in (("ours", ours), ("lama", lama))}
        figures = _quality_and_speed(folder.parent, split, ours, lama)
        median = {name: sorted(side[p]["wall_time"] for p in both)[len(both) // 2] if both else None
                  for name, side in (("ours", ours), ("lama", lama))}
        summary[f"{domain}/{split}"] = {"tasks": len(both), "solved": solved, "speedup": figures["speedup"],
                                        "speedup_at_least": figures["speedup_at_least"], "median_seconds": median}
        shown = [f"{v:.1f}x" if v else "None" for v in (figures["speedup"], figures["speedup_at_least"])]
        lines.append(f"| {domain} | {split} | {len(both)} | {solved['ours']}/{len(both)} | {solved['lama']}/{len(both)} | "
                     f"{shown[0]} | >= {shown[1]} | {median['ours']:.2f} | {median['lama']:.2f} |")
    (OUT / "speed.md").write_text("\n".join(lines) + "\n")
    write_json(OUT / "speed.json", summary)
    print("\n".join(lines))


def pair(args) -> None:
    """Print the shipped model against ``--against``'s (a run, or ``before-NAME``) on the same tasks:
    plan cost with the static filter summed over the tasks both solved, and on how many each was cheaper."""
    from up_gnnplan.compare import read_results

    print(f"| domain | set | tasks both solved | plan cost, shipped / {args.against} | cheaper | dearer |")
    print("|---|---|---:|---:|---:|---:|")
    for domain in args.domains:
        for split in TEST_SEEDS:
            base = OUT / domain / split
            ours = {r["problem"]: r for r in read_results(base / "ground-filter" / "results.jsonl")}
            theirs = {r["problem"]: r for r in read_results(base / f"ground-filter@{args.against}" / "results.jsonl")}
            both = [p for p in ours if ours[p]["solved"] and p in theirs and theirs[p]["solved"]]
            if both:
                a, b = ([rows[p]["plan_cost"] for p in both] for rows in (ours, theirs))
                print(f"| {domain} | {split} | {len(both)} | {sum(a) / sum(b):.2f} | {sum(x < y for x, y in zip(a, b))} | "
                      f"{sum(x > y for x, y in zip(a, b))} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["data", "train", "test", "table", "ship", "record", "pair", "speed"])
    parser.add_argument("domains", nargs="*", metavar="DOMAIN", help="one of " + ", ".join(sorted(SIZES)))
    parser.add_argument("--train-count", type=int, default=3, help="problems per training size and variable count")
    parser.add_argument("--test-count", type=int, default=2, help="problems per test size and variable count")
    parser.add_argument("--goals", type=int, default=24, help="goal variants per training problem")
    parser.add_argument("--states", type=int, default=32, help="states per goal variant")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layers", type=int, default=30, help="R-GNN layers of the grounding model")
    parser.add_argument("--set", choices=list(TEST_SEEDS), default="optimal")
    parser.add_argument("--shipped", action="store_true",
                        help="test the shipped grounding model (the default when no model was trained in WORK)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--run", default="", help="another recipe's data, model and results (see above)")
    parser.add_argument("--valid-share", type=float, default=0.5,
                        help="data: chance that a bound variable of a goal variant gets a statically valid object")
    parser.add_argument("--shared-states", action="store_true",
                        help="data: the same states under every goal variant (gnnplan dataset --shared-states)")
    parser.add_argument("--loss", default="mse", choices=["mse", "mse+rank", "l1+rank", "rank"],
                        help="train: gnnplan train --loss (the +rank ones rank each state's goal variants)")
    parser.add_argument("--ema", type=float, default=None, help="train: weight averaging (gnnplan train --ema)")
    parser.add_argument("--patience", type=int, default=0,
                        help="train: epochs without a better one before stopping (gnnplan train --patience; 0: its default)")
    parser.add_argument("--judge", action="store_true",
                        help="train: choose the epoch by the greedy binding of larger problems, their ground goals "
                        "solved by LAMA-first (gnnplan train --validation-problem on grounding data)")
    parser.add_argument("--against", default="before-judge", help="pair: the other model's results (a run's NAME)")
    parser.add_argument("--beam", type=int, default=1, help="test: mode ground's binding_beam (1: greedy binding)")
    parser.add_argument("--no-entailment", action="store_true",
                        help="test: mode ground with binding_entailment=False (the paper's greedy binding, the model "
                        "asked at every step): results ground-*@no-entail (the shipped model) or ground-*@NAME+no-entail")
    parser.add_argument("--mark", default="", help="test: a snapshot of the run (e.g. 20min) in place of its final model")
    parser.add_argument("--max-states", type=int, default=50_000,
                        help="data: the state-space limit of labelling one training problem (7 blocks: 66k states)")
    parser.add_argument("--train-sizes", default="", help="data: the training sizes of a run in place of SIZES' "
                        "(JSON, e.g. '[{\"blocks\": 6}, {\"blocks\": 7}]'; problems in WORK/DOMAIN/train@NAME)")
    parser.add_argument("--also-data", default="", help="train: also run NAME's training data (e.g. a run of "
                        "larger --train-sizes beside the usual sizes)")
    parser.add_argument("--marks", default="", help="train: also keep the best model so far at these minutes "
                        "(gnnplan train --snapshot-minutes, e.g. 20,60: files grounding@NAME-20min.pt)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.domains) - set(SIZES))
    if unknown:
        parser.error(f"unknown domain(s) {', '.join(unknown)}; choose from {', '.join(sorted(SIZES))}")
    if args.train_sizes and not args.run:
        parser.error("--train-sizes needs --run NAME: the shipped recipe's training problems keep SIZES'")
    OUT.mkdir(parents=True, exist_ok=True)
    {"data": data, "train": train, "test": test, "table": table, "ship": ship, "record": record,
     "pair": pair, "speed": speed}[args.stage](args)


if __name__ == "__main__":
    main()

"""Action heads against value functions: the same data and minutes, step times, coverage (issue 12).

Three stages, each recorded in ``benchmarks/results/action_heads/`` with every command in
``commands.log`` (run them in this order; each reads what the earlier ones wrote):

``train DOMAIN...``
    builds, per domain, one dataset as ``build_zoo.py`` does for the shipped models (the
    training problems whose state space fits, expanded; ``--optimal`` larger ones labelled along
    optimal plans for training, as many again for validation), then trains one model per
    ``--heads`` entry on it with the same ``--minutes`` and seed (``value``: the shipped models'
    objective; ``logits``, ``q``: action heads), and exports each. ``training.json`` gets each
    run's states trained per second and the minutes to its best epoch.
``steps DOMAIN...``
    ms per step on the largest ``testing/easy`` task of each IPC 2023 domain, the value policy
    against the action policy, both through the package's own searches (``policy_rollout``,
    ``action_policy_rollout``) for ``--steps`` steps, one after the other in the same process,
    models of the same size (hidden 32, 30 layers): the value policy with the shipped model, the
    action policy with the ``logits`` model of ``train``. Writes ``steps.json`` and a table.
``larger DOMAIN...``
    generates problems 2, 3, 4 and 5 times the largest training problem of the domain (its
    size parameters from the first line of the IPC 2023 file, scaled by ``SCALE``; two seeds
    per factor) with ``gnnplan generate``, into ``WORK/DOMAIN/larger/``, for ``coverage --larger``.
``coverage DOMAIN...``
    ``gnnplan compare`` of each trained model (value policy for ``value``, action policy for the
    action heads, and the default mode of each), the shipped model's value policy, the WL-GOOSE
    peer (``benchmarks/goose``, when its model for the domain exists) and LAMA-first on the domain's test
    problems (``--count``, spread over the sizes, ``--timeout`` each; the shipped model's rows on
    testing/easy are read from the zoo run, see ``_zoo_rows``), one compare run per
    model into ``coverage/DOMAIN/MODEL/``; then one table.
``report``
    writes ``report.md``: the training, step-time and coverage tables.
``ship DOMAIN... --heads SPEC``
    exports SPEC's model of each domain into the shipped models under the domain's name and
    records its coverage (from ``coverage``) in the index.

    OMP_NUM_THREADS=1 nohup python -m benchmarks.action_heads train childsnack satellite --minutes 6 &

A spec ``HEAD@LOSS`` trains with ``--loss LOSS``: ``--heads value value@rank value@l1+rank``
compares the V* regression with the ranking objective (issue 14) on the same data and minutes.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from up_gnnplan.compare import natural_key

from .build_zoo import label_optimal
from .common import (DOMAINS, RESULTS, ROOT, SHARED, expandable, keep_value_model, largest, larger, note, read_json,
                     run, set_coverage, test_problems, write_json)

OUT = RESULTS / "action_heads"
WORK = Path("/tmp/gnnplan-actions")
LOG = OUT / "commands.log"
GOOSE_MODELS = RESULTS / "goose" / "models"
ZOO_EVAL = ROOT / "benchmarks" / "zoo" / "eval"


def model_file(domain: str, spec: str) -> Path:
    """The ONNX file of a model spec: ``HEAD`` (an R-GNN with that head), ``ARCH:HEAD``, either
    followed by ``@LOSS`` (``value@rank``: the ranking objective of issue 14)."""
    return WORK / domain / f"{spec.replace(':', '-').replace('@', '-')}.onnx"


def arch_and_head(spec: str) -> tuple[str, str]:
    arch, _, head = spec.partition("@")[0].rpartition(":")
    return arch or "rgnn", head


def loss_options(spec: str) -> list[str]:
    """Return the ``gnnplan train`` options of a spec's loss (none: the head's default)."""
    loss = spec.partition("@")[2]
    return ["--loss", loss] if loss else []


def datasets(name: str, optimal: int, most: int, reuse: bool) -> tuple[Path, list[Path], list[str]]:
    """Build (or, with ``reuse``, keep) the datasets of ``name`` as the shipped models' are built:
    return (the expanded training problems' file, the optimal-plan files trained on, the
    ``--validation-dataset`` options of the optimal-plan files the best epoch is chosen on)."""
    spec = DOMAINS[name]
    folder = WORK / name
    folder.mkdir(parents=True, exist_ok=True)
    domain = SHARED / spec.domain
    tests = {str(p) for p in test_problems(spec, 30)}
    problems = expandable(spec.train, spec.limit, most)
    candidates = larger(spec.larger or spec.train, spec.limit, tests, 2 * optimal)
    data = folder / "train.npz"
    run(["gnnplan", "dataset", domain, *problems, "-o", data], LOG, output=data if reuse else None)
    labelled = label_optimal(domain, candidates, name, LOG, reuse, folder=folder)
    extra, valid = labelled[:optimal], labelled[optimal:]
    return data, extra, [a for v in valid for a in ("--validation-dataset", v)]


def train(args) -> None:
    records = read_json(OUT / "training.json")
    for name in args.domains:
        data, extra, validation = datasets(name, args.optimal, args.most, args.reuse)
        for spec in args.heads:
            arch, head = arch_and_head(spec)
            checkpoint = model_file(name, spec).with_suffix(".pt")
            run(["gnnplan", "train", data, *extra, "-o", checkpoint, "--arch", arch, "--head", head, *loss_options(spec),
                 "--seed", args.seed, "--max-seconds", int(60 * args.minutes), *validation], LOG)
            run(["gnnplan", "export", checkpoint, "-o", model_file(name, spec)], LOG)
            records[f"{name}/{spec}"] = _training_summary(model_file(name, spec))
            write_json(OUT / "training.json", records)


def _training_summary(path: Path) -> dict:
    """States trained per second, minutes to the best epoch and the validation figures of a model file."""
    from up_gnnplan.runtime import read_metadata

    record = read_metadata(path)["training_record"]
    best = next((row for row in record["curve"] if row[0] == record["best_epoch"]), record["curve"][-1])
    return {"seconds": record["seconds"], "epochs": record["epochs"], "best_epoch": record["best_epoch"],
            "minutes_to_best_epoch": round(best[1] / 60, 2), "train_states_per_second": record["train_states_per_second"],
            "states_trained": record["steps"] * 32, "error_name": record.get("error_name", "MAE"),
            "validation": record["validation"], "train_states": record["train_states"],
            "validation_states": record["validation_states"]}


def steps(args) -> None:
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.problems import load_task
    from up_gnnplan.runtime import OnnxValueFunction
    from up_gnnplan.search import action_policy_rollout, policy_rollout

    rows = read_json(OUT / "steps.json")  # on the same largest testing/easy task as policy_steps.py
    for name in args.domains:
        objects, problem = largest(name)
        task = load_task(SHARED / DOMAINS[name].domain, problem)
        value, action = OnnxValueFunction(find_model(task.signature, "value")), OnnxValueFunction(model_file(name, "logits"))
        row = {"problem": problem.name, "objects": objects}
        for label, search, guide in (("value", policy_rollout, value), ("action", action_policy_rollout, action.scorer)):
            search(task, guide, max_steps=1)  # warm-up: sessions, lookup tables
            start = time.perf_counter()
            result = search(task, guide, max_steps=args.steps, time_limit=args.seconds)
            seconds = time.perf_counter() - start
            done = max(1, len(result.actions))
            row[label] = {"ms_per_step": round(1000 * seconds / done, 2), "steps": len(result.actions),
                          "evaluated_per_step": round(result.evaluated / done, 1), "status": result.status.value}
        row["ratio"] = round(row["value"]["ms_per_step"] / row["action"]["ms_per_step"], 1)
        rows[name] = row
        write_json(OUT / "steps.json", rows)
        print(json.dumps({name: row}), flush=True)
    lines = ["| domain | problem | objects | successors/step | value ms/step | action ms/step | value / action |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['problem']} | {row['objects']} | {row['value']['evaluated_per_step']:g} | "
                     f"{row['value']['ms_per_step']:g} | {row['action']['ms_per_step']:g} | {row['ratio']:g}x |")
    (OUT / "steps.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


# How a domain's size parameters grow by a factor f (the others, such as max_capacity, stay).
SCALE = {
    "blocksworld": lambda p, f: {"blocks": f * p["blocks"]},
    # Allergic children: 60% as in the testing files (the largest training problems have none).
    "childsnack": lambda p, f: {"children": f * p["children"], "allergic_children": round(0.6 * f * p["children"]),
                                "trays": max(1, round(p["trays"] * f ** 0.5)), "sandwiches": f * p["sandwiches"]},
    "gripper": lambda p, f: {"balls": f * p["balls"]},
    "logistics": lambda p, f: {"cities": round(p["cities"] * f ** 0.5), "city_size": p["city_size"],
                               "packages": f * p["packages"], "airplanes": max(1, round(p["airplanes"] * f ** 0.5))},
    "transport": lambda p, f: {"vehicles": max(1, round(p["vehicles"] * f ** 0.5)), "packages": f * p["packages"],
                               "locations": f * p["locations"], "max_capacity": p["max_capacity"]},
    "ferry": lambda p, f: {"cars": f * p["cars"], "locations": f * p["locations"]},
    "miconic": lambda p, f: {"passengers": f * p["passengers"], "floors": f * p["floors"]},
    "spanner": lambda p, f: {"spanners": f * p["spanners"], "nuts": f * p["nuts"], "locations": f * p["locations"]},
    "satellite": lambda p, f: {"satellites": max(1, round(p["satellites"] * f ** 0.5)), "instruments": f * p["instruments"],
                               "modes": p["modes"], "directions": f * p["directions"]},
    "rovers": lambda p, f: {"rovers": max(1, round(p["rovers"] * f ** 0.5)), "waypoints": f * p["waypoints"],
                            "cameras": max(1, round(p["cameras"] * f ** 0.5)), "objectives": f * p["objectives"]},
    # Floortile and Sokoban grow in area: f times the tiles or cells, sqrt(f) times the robots or boxes.
    "floortile": lambda p, f: {"rows": round(p["rows"] * f ** 0.5), "columns": round(p["columns"] * f ** 0.5),
                               "robots": max(1, round(p["robots"] * f ** 0.5))},
    "sokoban": lambda p, f: {"grid_size": round(p["grid_size"] * f ** 0.5), "boxes": max(1, round(p["boxes"] * f ** 0.5))},
}


def size_params(problem: Path) -> dict:
    """The size parameters of a training problem: the ``key=value`` pairs of an IPC 2023 file's
    header comment (without its instance id and seed), the ``cN-sN-pN-aN`` of a generated
    Logistics problem's name, the balls of a Gripper one."""
    text = problem.read_text()
    found = re.search(r"logistics-c(\d+)-s(\d+)-p(\d+)-a(\d+)", text)
    if found:
        return dict(zip(("cities", "city_size", "packages", "airplanes"), map(int, found.groups())))
    if "gripper" in text.split("\n", 3)[1]:
        return {"balls": len(re.findall(r"\(ball \w+\)", text))}
    header = next((line for line in text.splitlines() if line.startswith(";") and "=" in line), "")
    items = (item.split("=", 1) for item in header.lstrip("; ").split(", ") if "=" in item)
    return {k: int(v) for k, v in items if v.isdigit() and k not in ("instance_id", "seed")}


def larger_problems(args) -> None:
    from up_gnnplan.datasets.store import Dataset

    for name in args.domains:
        folder = WORK / name
        used = [Path(record.problem_file) for path in [folder / "train.npz", *sorted(folder.glob("opt-*.npz"))][:1 + args.optimal]
                for record in Dataset.load(path).problems]
        biggest = max(used, key=lambda problem: (size_params(problem).get("blocks", 0), sum(size_params(problem).values())))
        params = size_params(biggest)
        note(LOG, f"# {name}: largest training problem {biggest} ({params})")
        for factor in (2, 3, 4, 5):
            sizes = [a for k, v in SCALE[name](params, factor).items() for a in ("-p", f"{k}={v}")]
            run(["gnnplan", "generate", name, "-o", folder / "larger", "--count", 2, "--seed", factor, *sizes], LOG)


def coverage(args) -> None:
    from up_gnnplan.compare import read_results

    table = read_json(OUT / "coverage.json")
    for name in args.domains:
        spec = DOMAINS[name]
        domain, tests = SHARED / spec.domain, test_problems(spec, args.count)
        if args.larger:
            domain = WORK / name / "larger" / "domain.pddl"
            tests = sorted(domain.parent.glob("p-*.pddl"), key=lambda p: natural_key(p.name))
        key = f"{name}-larger" if args.larger else name
        runs = [("lama-first", "fast-downward", None), ("shipped-value", "gnnplan:policy", None)]
        peer = GOOSE_MODELS / f"{name}.json"
        if peer.is_file():  # the standing learned peer (benchmarks/goose)
            runs.append(("wl-goose", "wl-goose", peer))
        for spec in args.heads:
            if model_file(name, spec).is_file():
                value_only = arch_and_head(spec)[1] == "value"
                if not args.auto_only:
                    runs.append((spec, "gnnplan:policy" if value_only else "gnnplan:action-policy", model_file(name, spec)))
                runs.append((f"{spec}-auto", "gnnplan", model_file(name, spec)))
        for label, engine, model in runs:
            out = OUT / "coverage" / key / label
            records = _zoo_rows(name, tests) if label == "shipped-value" and not (
                args.larger or args.rerun_shipped or out.is_dir()) else []
            if records:
                note(LOG, f"# {name}: shipped-value rows read from {ZOO_EVAL.relative_to(ROOT)}/{name}/results.jsonl")
                table.setdefault(key, {})[label] = {"solved": sum(1 for r in records if r["solved"]),
                                                    "tasks": len(records), "from": "benchmarks/zoo/eval"}
                continue
            if engine == "wl-goose":
                chosen = ["--register", "benchmarks.goose.engine", "--engine-param", f"wl-goose:model={model}"]
            else:
                chosen = ["--model", model] if model else []
            run(["gnnplan", "compare", domain, *tests, "--engine", engine, *chosen, "--timeout", args.timeout,
                 "--jobs", args.jobs, "--no-plots", "-o", out, "--resume"], LOG)
            records = read_results(out / "results.jsonl")
            table.setdefault(key, {})[label] = {"solved": sum(1 for r in records if r["solved"]), "tasks": len(records)}
            write_json(OUT / "coverage.json", table)
    labels = sorted({label for row in table.values() for label in row})
    lines = ["| domain | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for name, row in table.items():
        lines.append(f"| {name} | " + " | ".join(f"{row[k]['solved']}/{row[k]['tasks']}" if k in row else "" for k in labels)
                     + " |")
    (OUT / "coverage.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def ship(args) -> None:
    """Ship ``--heads``' first spec of each domain as the domain's model, with its coverage next to it.

    The shipped value model of the domain is kept as NAME-value (modes policy and gbfs use it) and
    the exported file ships as NAME (mode auto and the action modes use it); its entry gets the figures of ``coverage`` (default mode, testing/easy and the
    larger generated set when measured) beside LAMA-first, the replaced model and WL-GOOSE.
    """
    from up_gnnplan.compare import read_results

    spec = args.heads[0]
    table = read_json(OUT / "coverage.json")
    for name in args.domains:
        checkpoint = model_file(name, spec).with_suffix(".pt")
        keep_value_model(name)
        run(["gnnplan", "export", checkpoint, "-o", WORK / name / f"{spec.replace(':', '-')}-shipped.onnx",
             "--ship", name], LOG)
        parts = []
        for key, what in ((name, f"{DOMAINS[name].test}, all 30 problems"),
                          (f"{name}-larger", "generated problems 2-5x the largest training problem")):
            row = table.get(key, {})
            ours = read_results(OUT / "coverage" / key / f"{spec}-auto" / "results.jsonl")
            if not ours:
                continue
            solved = sum(1 for r in ours if r["solved"] and r["valid"])
            others = ", ".join(f"{label} {row[label]['solved']}/{row[label]['tasks']}"
                               for label in ("lama-first", "shipped-value", "wl-goose") if label in row)
            parts.append(f"{what}, {args.timeout:g} s each: gnnplan (default mode) {solved}/{len(ours)}; {others} "
                         f"(shipped-value: the domain's value model, {name}-value). Per-task results: "
                         f"benchmarks/results/action_heads/coverage/{key}/")
        set_coverage(name, " ".join(parts) or "not measured", shipped_now=True)
        print(name, " ".join(parts) or "not measured")


def report(args) -> None:
    """Write ``report.md``: the training, step-time and coverage tables from the stages' JSON files."""
    training, steps_ = read_json(OUT / "training.json"), read_json(OUT / "steps.json")
    # The coverage counts come from the results files themselves (coverage.json is a convenience
    # written by each coverage run, and two runs at once can overwrite each other's rows).
    from up_gnnplan.compare import read_results

    cover = {}
    for folder in sorted((OUT / "coverage").iterdir()):
        for label in sorted({run_dir.name for run_dir in folder.iterdir()} | {"shipped-value"}):
            records = coverage_rows(folder.name, label)
            if records:
                cover.setdefault(folder.name, {})[label] = {
                    "solved": sum(1 for r in records if r["solved"] and r["valid"]), "tasks": len(records)}
    write_json(OUT / "coverage.json", cover)
    lines = ["## Training (same data and minutes per domain)", "",
             "| domain | head | states trained | states/s | epochs | minutes to the best epoch | validation |",
             "|---|---|---:|---:|---:|---:|---|"]
    for key, row in training.items():
        name, spec = key.split("/", 1)
        v = row["validation"]
        if "best_action_optimal" in v:
            shown = f"best action optimal in {100 * v['best_action_optimal']:.0f}% of {v['action_states']} states"
        elif "mae" in v:
            shown = f"MAE {v['mae']:.3f}, within 0.5: {100 * v['within_0.5']:.0f}%"
        else:  # a ranking objective alone: no V* error to speak of
            shown = f"lowest-valued successor optimal in {100 * v['best_successor_optimal']:.0f}% of {v['rank_states']} states"
        lines.append(f"| {name} | {spec} | {row['states_trained']:,} | {row['train_states_per_second']:g} | {row['epochs']} | "
                     f"{row['minutes_to_best_epoch']:g} | {shown} |")
    lines += ["", "## Time per step (largest testing/easy task)", "",
              "| domain | problem | objects | successors/step | value policy ms/step | action policy ms/step | ratio |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for name, row in steps_.items():
        lines.append(f"| {name} | {row['problem']} | {row['objects']} | {row['value']['evaluated_per_step']:g} | "
                     f"{row['value']['ms_per_step']:g} | {row['action']['ms_per_step']:g} | {row['ratio']:g}x |")
    labels = ["lama-first", "wl-goose", "shipped-value", "logits", "logits-auto"]
    titles = ["LAMA-first", "WL-GOOSE", "shipped value model (policy)", "action policy", "action model, default mode"]
    if any("q" in row for row in cover.values()):  # the Q-value head, where it was trained
        labels += ["q", "q-auto"]
        titles += ["Q head: policy", "Q head: default mode"]
    lines += ["", "## Coverage (60 s per task) and plan length", "",
              "| test set | " + " | ".join(titles) + " | plan length / LAMA-first's (logits, default mode, both solved) |",
              "|---|" + "---:|" * (len(labels) + 1)]
    for key, row in cover.items():
        cells = [f"{row[k]['solved']}/{row[k]['tasks']}" if k in row else "" for k in labels]
        ours = {r["problem"]: r for r in read_results(OUT / "coverage" / key / "logits-auto" / "results.jsonl")}
        lama = {r["problem"]: r for r in read_results(OUT / "coverage" / key / "lama-first" / "results.jsonl")}
        ratios = [ours[p]["plan_length"] / lama[p]["plan_length"] for p in ours
                  if ours[p]["solved"] and p in lama and lama[p]["solved"] and lama[p]["plan_length"]]
        cells.append(f"{sum(ratios) / len(ratios):.2f} ({len(ratios)} tasks)" if ratios else "")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    (OUT / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _zoo_rows(name: str, tests=None) -> list[dict]:
    """The shipped model's policy rows of the zoo evaluation (same tasks, 60 s, same models): those of
    ``tests`` (none when a task is missing), or all of them.

    The zoo run of 2026-11-23 (benchmarks/zoo/eval, README "Evaluation against LAMA-first") already
    ran ``gnnplan:policy`` with every shipped model on all 30 testing/easy tasks; running it again
    would take up to 30 minutes per domain for the same figure. The rows stay in the zoo's file:
    ``coverage`` notes in commands.log that it took them, and ``coverage_rows`` reads them there.
    """
    from up_gnnplan.compare import read_results

    rows = {r["problem_file"]: r for r in read_results(ZOO_EVAL / name / "results.jsonl")
            if r["engine"] == "gnnplan:policy" and r["timeout"] == 60.0}
    if tests is None:
        return list(rows.values())
    return [rows[str(t)] for t in tests] if all(str(t) in rows for t in tests) else []


def coverage_rows(key: str, label: str) -> list[dict]:
    """``label``'s rows on the test set ``key``: ``coverage/KEY/LABEL/results.jsonl``; for
    ``shipped-value`` without that folder, the zoo evaluation's rows where commands.log says
    ``coverage`` took them from there (up to 2026-11-25 it copied them into the folder)."""
    from up_gnnplan.compare import read_results

    path = OUT / "coverage" / key / label / "results.jsonl"
    if label == "shipped-value" and not path.is_file():
        taken = re.compile(rf"  # {re.escape(key)}: shipped-value rows (copied|read) from ")
        return _zoo_rows(key) if LOG.is_file() and taken.search(LOG.read_text()) else []
    return read_results(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["train", "steps", "larger", "coverage", "ship", "report"])
    parser.add_argument("domains", nargs="*", metavar="DOMAIN", help="one of " + ", ".join(sorted(DOMAINS)))
    parser.add_argument("--heads", nargs="+", default=["value", "logits", "q"],
                        help="model specs: HEAD (an R-GNN with that --head) or ARCH:HEAD (e.g. typed_policy:logits), either with "
                             "@LOSS (e.g. value@rank)")
    parser.add_argument("--minutes", type=float, default=6.0, help="training budget of each head")
    parser.add_argument("--most", type=int, default=40)
    parser.add_argument("--optimal", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="keep dataset files that already exist")
    parser.add_argument("--steps", type=int, default=10, help="policy steps per measurement (stage steps)")
    parser.add_argument("--seconds", type=float, default=120.0, help="time limit of one step measurement")
    parser.add_argument("--count", type=int, default=30, help="test problems (stage coverage)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--larger", action="store_true", help="coverage on the problems of stage larger")
    parser.add_argument("--auto-only", action="store_true",
                        help="stage coverage: run each model in the default mode only (not also its policy alone)")
    parser.add_argument("--rerun-shipped", action="store_true",
                        help="run the shipped model's policy again instead of taking its rows from benchmarks/zoo/eval")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.domains) - set(DOMAINS))
    if unknown:
        parser.error(f"unknown domain(s) {', '.join(unknown)}; choose from {', '.join(sorted(DOMAINS))}")
    OUT.mkdir(parents=True, exist_ok=True)
    {"train": train, "steps": steps, "larger": larger_problems, "coverage": coverage, "ship": ship,
     "report": report}[args.stage](args)


if __name__ == "__main__":
    main()

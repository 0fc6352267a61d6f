"""The standing comparison (issue 14): gnnplan's default mode with the shipped files, beside
LAMA-first and the WL-GOOSE peer, on all 30 IPC 2023 ``testing/easy`` tasks of each of the ten
domains, 60 s per task.

``run [DOMAIN...]``
    ``gnnplan compare --engine gnnplan`` (mode auto, fallback model+ff, the shipped model of
    the domain: no ``--model``) into ``benchmarks/results/standing/DOMAIN/gnnplan/``. The two
    baselines are not run again where a complete record of the same tasks and limit exists:
    the action-heads run (``python -m benchmarks.action_heads coverage``, same machine) wrote
    ``benchmarks/results/action_heads/coverage/DOMAIN/{lama-first,wl-goose}/``, and the zoo
    evaluation LAMA-first's rows into ``benchmarks/zoo/eval/DOMAIN/``. A baseline
    without such a record (or every baseline, with ``--rerun-baselines``) runs here, into
    ``standing/DOMAIN/{lama-first,wl-goose}/``.
``run --variant NAME --engine-param KEY=VALUE [...] [DOMAIN...]``
    gnnplan's default mode with engine params (e.g. ``astray_factor=4``) into
    ``standing/DOMAIN/gnnplan@NAME/``; no baselines. The report puts every variant found beside
    the default mode, so a change of default is decided on the same 330 tasks. With
    ``--only-unsolved``, only the tasks the default mode's column left unsolved: what a change
    can recover, at a fraction of the time (the report says "(n run)"); with ``--only-gave-up``,
    only the tasks where its policy gave up, solved by the fallback or not: the only ones a change
    of the fallback alone can change.
``pair --pair A B``
    two variants (``default``: the default mode's column) side by side on the tasks both ran
    (coverage, and plan cost and wall time on the tasks both solved), into ``standing/pair-A-B.md``.
``report``
    ``standing/report.md`` and ``standing/results.json``: coverage of each engine per domain
    and in total (each column names where its rows come from), gnnplan's plan length against
    LAMA-first's on the tasks both solved, and for every task gnnplan did not solve, why,
    read from the engine's own messages (each record's ``notes``): the policy out of time
    (time per step), the policy astray and the fallback out of time (model error), or a
    limit of memory. Then how long each learned planner trained, per domain: gnnplan's shipped
    model (the one its default mode picks) from the zoo's index, WL-GOOSE's from
    ``goose/training.json``.

Every command goes to ``standing/commands.log``. Needs ``../shared/benchmarks`` and, for the
peer, the ``peer`` extra. Run in the background, one thread::

    OMP_NUM_THREADS=1 nohup python -m benchmarks.standing run > /tmp/standing.log 2>&1 &
    python -m benchmarks.standing report
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path

from .action_heads import SCALE, size_params
from .common import (DOMAINS, IPC2023, RESULTS, ROOT, SHARED, editing_index, generate_splits, note, read_json, run,
                     test_problems, write_json)

OUT = RESULTS / "standing"
LOG = OUT / "commands.log"
# Earlier records of the same tasks and limit, same machine, read in this order: the action-heads
# run (2026-11-24; LAMA-first and WL-GOOSE) and the zoo evaluation (2026-11-23; LAMA-first only).
EARLIER = (RESULTS / "action_heads" / "coverage", ROOT / "benchmarks" / "zoo" / "eval")
GOOSE_MODELS = RESULTS / "goose" / "models"
GOOSE_TRAINING = RESULTS / "goose" / "training.json"  # goose_peer.py train's record
# Generated problems larger than any public set of these domains (build_zoo.py's ``*-large`` test
# sets, 10 each, same seeds and files as the zoo evaluation's), for the shipped model of the base domain.
LARGE = ("blocksworld-large", "gripper-large", "logistics-large")
# Generated problems 3-10x the largest problem the shipped model of each IPC 2023 domain was trained
# (or had its epoch chosen) on: action_heads.py's size parameters scaled by each factor, one
# problem per factor (seed = factor), written to SCALED_WORK/DOMAIN-scaled/.
SCALED = tuple(f"{name}-scaled" for name in IPC2023)
FACTORS = (3, 4, 6, 8, 10)
SCALED_WORK = Path("/tmp/gnnplan-standing")
SCALED_SETS = OUT / "scaled_sets.json"  # the sizes of each scaled set, fixed when it was made
# label: (the engine of gnnplan compare, what the table calls it)
ENGINES = {"gnnplan": ("gnnplan", "gnnplan (default mode)"), "lama-first": ("fast-downward", "LAMA-first"),
           "wl-goose": ("wl-goose", "WL-GOOSE")}


def read(path: Path) -> list[dict]:
    from up_gnnplan.compare import read_results

    return read_results(path) if path.is_file() else []


def engine_of(label: str) -> str:
    """The compare engine of a label (``gnnplan@NAME``, a variant, is gnnplan with params)."""
    return ENGINES[label.split("@")[0]][0]


def title_of(label: str) -> str:
    base, _, variant = label.partition("@")
    return f"{base} ({variant})" if variant else ENGINES[base][1]


def variants() -> list[str]:
    """The ``gnnplan@NAME`` labels that have a folder under ``standing/``, sorted."""
    return sorted({folder.name for folder in OUT.glob("*/gnnplan@*") if folder.is_dir()})


def rows_of(folder: Path, label: str, timeout: float) -> dict[str, dict]:
    """``label``'s rows in ``folder``'s results.jsonl by problem file (a folder may hold several engines)."""
    engine = engine_of(label)
    engines = {engine, f"{engine}:auto"}  # compare records gnnplan's default mode as gnnplan:auto
    return {r["problem_file"]: r for r in read(folder / "results.jsonl") if r["engine"] in engines and r["timeout"] == timeout}


def source(name: str, label: str, tests: list[Path], timeout: float) -> Path | None:
    """The folder that holds ``label``'s rows of every test of ``name``: this run's, else an earlier run's."""
    earlier = () if "@" in label else (EARLIER[0] / name / label, EARLIER[1] / name)
    for folder in (OUT / name / label, *earlier):
        if set(rows_of(folder, label, timeout)) >= {str(t) for t in tests}:
            return folder
    return None


def largest_trained(name: str) -> Path:
    """The largest IPC 2023 problem (by the sum of its size parameters) that the shipped model of
    ``name`` was trained or validated on, read from the model's training record."""
    from up_gnnplan.models_zoo import resolve
    from up_gnnplan.runtime import read_metadata

    record = read_metadata(resolve(name))["training_record"]
    folder = SHARED / DOMAINS[name].train
    seen = [folder / f"{problem}.pddl" for problem in record["problems"] + record.get("validation_problems", [])]
    return max((p for p in seen if p.is_file()), key=lambda p: sum(size_params(p).values()))


def scaled_tests(name: str) -> tuple[Path, list[Path]]:
    """The domain file and problems of ``DOMAIN-scaled``, generated on first use.

    The sizes of a set are fixed when it is first made and kept in ``SCALED_SETS`` (committed): a
    later model of the domain may have been trained on other problems, and the set the results
    were taken on must come back the same from a fresh clone, not be scaled again from the new model.
    """
    base, folder = name.removesuffix("-scaled"), SCALED_WORK / name
    pinned = read_json(SCALED_SETS)
    if name not in pinned:
        largest = largest_trained(base)
        params = size_params(largest)
        pinned[name] = {"largest_trained": str(largest.relative_to(SHARED)), "largest_params": params,
                        "problems": [{"factor": f, "seed": f, "params": SCALE[base](params, f)} for f in FACTORS]}
        write_json(SCALED_SETS, pinned)
        note(LOG, f"# {name}: largest problem the shipped model saw {pinned[name]['largest_trained']} ({params}), "
                  f"scaled by {', '.join(map(str, FACTORS))} (sizes kept in {SCALED_SETS.name})")
    if not (folder / "domain.pddl").is_file():
        for problem in pinned[name]["problems"]:
            sizes = [a for k, v in problem["params"].items() for a in ("-p", f"{k}={v}")]
            run(["gnnplan", "generate", base, "-o", folder, "--count", 1, "--seed", problem["seed"], *sizes], LOG)
    factor_of = re.compile(r"-(\d+)-0\.pddl$")
    problems = sorted(folder.glob("p-*.pddl"), key=lambda p: int(factor_of.search(p.name).group(1)))
    return folder / "domain.pddl", problems


def tests_of(name: str) -> tuple[Path, list[Path]]:
    """The domain file and the test problems of the set ``name`` (generated ones written first)."""
    if name.endswith("-scaled"):
        return scaled_tests(name)
    spec = DOMAINS[name]
    if spec.generator:
        tests = generate_splits(name, spec)["test"]
        return tests[0].parent / "domain.pddl", tests
    return SHARED / spec.domain, test_problems(spec, 30)


def run_domains(args) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in args.domains:
        domain, tests = tests_of(name)
        if args.variant:
            params = [item for param in args.engine_param for item in ("--engine-param", f"gnnplan:{param}")]
            if args.only_unsolved or args.only_gave_up:
                from up_gnnplan.compare import read_results

                rows = read_results(OUT / name / "gnnplan" / "results.jsonl")
                keep = ({r["problem"] for r in rows if not r["solved"]} if args.only_unsolved else
                        {r["problem"] for r in rows if any(p["status"] == "gave-up" for p in phases(r["notes"]))})
                tests = [t for t in tests if t.name in keep]
                if not tests:
                    continue
            run(["gnnplan", "compare", domain, *tests, "--engine", "gnnplan", *params, "--timeout", args.timeout,
                 "--jobs", args.jobs, "--no-plots", "-o", OUT / name / f"gnnplan@{args.variant}", "--resume"], LOG)
            continue
        labels = ["gnnplan"] + [b for b in ("lama-first", "wl-goose")
                                if args.rerun_baselines or source(name, b, tests, args.timeout) is None]
        labels = [label for label in labels if label in args.engines]
        for label in labels:
            engine = ENGINES[label][0]
            extra = []
            if label == "wl-goose":
                base = name.removesuffix("-scaled")
                model = GOOSE_MODELS / f"{DOMAINS[base].model or base}.json"
                if not model.is_file():
                    print(f"{name}: no WL-GOOSE model ({model}); the peer is left out", flush=True)
                    continue
                extra = ["--register", "benchmarks.goose.engine", "--engine-param", f"wl-goose:model={model}"]
            run(["gnnplan", "compare", domain, *tests, "--engine", engine, *extra, "--timeout", args.timeout,
                 "--jobs", args.jobs, "--no-plots", "-o", OUT / name / label, "--resume"], LOG)


# -- why a task was not solved -------------------------------------------------------------------

# gnnplan's message of one search phase: "NAME: STATUS after N steps|expansions [in S s] MESSAGE"
# (plugins/engine.py; the phase's seconds since 2026-11-24 16:00)
PHASE = re.compile(r"(?P<search>[a-z-]+): (?P<status>solved|gave-up|timeout|memout|unsolvable) after (?P<count>\d+) "
                   r"(?P<unit>steps|expansions)(?: in (?P<seconds>[0-9.]+) s)?(?P<message>.*)")


def phases(notes: str | None) -> list[dict]:
    return [m.groupdict() for part in (notes or "").split(" | ") if (m := PHASE.match(part))]


def cause(record: dict) -> tuple[str, int | None]:
    """Why gnnplan did not solve this task, in the terms of issue 14 (time per step, model error),
    and the policy's steps before it stopped (``None`` when no policy ran)."""
    if record["status"] in ("memout",) or "memory limit" in (record.get("notes") or ""):
        return "memory limit", None
    if record["status"] not in ("timeout", "unsolvable_incompletely", "unsolvable_proven"):
        return f"{record['status']}: {(record.get('error') or '')[:80]}", None
    found = phases(record.get("notes"))
    if not found:
        return ("no engine message (killed)" if record.get("killed") else "no engine message"), None
    first = found[0]
    steps = int(first["count"]) if first["unit"] == "steps" else None
    if first["status"] == "timeout":
        return f"{first['search']} out of time (time per step)", steps
    if first["status"] == "gave-up":
        why = "step limit" if "step limit" in first["message"] else "no unvisited successor"
        fallback = found[1]["status"] if len(found) > 1 else "none"
        return f"{first['search']} astray ({why}), fallback {fallback} (model error)", steps
    if first["status"] == "solved" and "not validated in time" in record.get("notes", ""):
        return f"{first['search']} solved, no time left to validate the plan (time per step)", steps
    return f"{first['search']} {first['status']}", steps


def cause_rows(records) -> list[tuple[str, int, str]]:
    """(cause, tasks, the policy's steps as "min-max") for the unsolved ``records``, most frequent first."""
    steps: dict[str, list[int]] = {}
    for record in records:
        what, count = cause(record)
        steps.setdefault(what, []).append(count)
    rows = []
    for what, counts in sorted(steps.items(), key=lambda item: -len(item[1])):
        known = [c for c in counts if c is not None]
        span = "" if not known else str(known[0]) if min(known) == max(known) else f"{min(known)}-{max(known)}"
        rows.append((what, len(counts), span))
    return rows


# -- report --------------------------------------------------------------------------------------


def report(args) -> None:
    table, causes, lengths, sources, folders = {}, {}, [], {}, {}
    counts = {}
    for name in (*IPC2023, *LARGE, *SCALED):
        if name in SCALED and not (SCALED_WORK / name).is_dir() and not (OUT / name).is_dir():
            continue  # never run: the table says "not run" (a set with results is generated again, same sizes)
        tests = [str(t) for t in tests_of(name)[1]]
        counts[name] = len(tests)
        row = {}
        for label in [*ENGINES, *variants()]:
            folder = source(name, label, [Path(t) for t in tests], args.timeout)
            if folder is None and "@" in label and (OUT / name / label).is_dir():
                folder = OUT / name / label  # a variant run on some tasks (--only-unsolved)
            if folder is None:
                continue
            rows = rows_of(folder, label, args.timeout)
            rows = {t: rows[t] for t in tests if t in rows}
            if not rows:
                continue
            row[label] = rows
            folders[(name, label)] = folder
            sources.setdefault(label, set()).add(str(folder.relative_to(ROOT)).replace(f"/{name}", "/DOMAIN"))
        table[name] = row
        if "gnnplan" in row:
            causes[name] = cause_rows(r for r in row["gnnplan"].values() if not r["solved"])
        if "gnnplan" in row and "lama-first" in row:
            both = [t for t in tests if row["gnnplan"][t]["solved"] and row["lama-first"][t]["solved"]]
            ratio = [row["gnnplan"][t]["plan_cost"] / row["lama-first"][t]["plan_cost"] for t in both
                     if row["lama-first"][t]["plan_cost"]]
            lengths.append((name, len(both), statistics.geometric_mean(ratio) if ratio else None))
    solved = {name: {label: sum(r["solved"] for r in rows.values()) for label, rows in row.items()}
              for name, row in table.items()}
    ran = {name: {label: len(rows) for label, rows in row.items()} for name, row in table.items()}
    labels = [*ENGINES, *variants()]
    trained = training(table)

    def coverage_table(names):
        names = [n for n in names if n in counts]
        lines = ["| domain | tasks | " + " | ".join(title_of(label) for label in labels) + " |",
                 "|---|---:|" + "---:|" * len(labels)]
        def cell(name, label):
            if label not in solved[name]:
                return "not run"
            part = "" if ran[name][label] == counts[name] else f" ({ran[name][label]} run)"
            return f"{solved[name][label]}/{counts[name]}{part}"

        for name in names:
            lines.append(f"| {name} | {counts[name]} | " + " | ".join(cell(name, label) for label in labels) + " |")
        totals = {label: (sum(solved[n][label] for n in names if label in solved[n]),
                          sum(counts[n] for n in names if label in solved[n]),
                          sum(ran[n][label] for n in names if label in solved[n])) for label in labels}
        lines.append(f"| **total** | {sum(counts[n] for n in names)} | "
                     + " | ".join((f"**{a}/{b}**" + ("" if n == b else f" ({n} run)")) if b else "not run"
                                  for a, b, n in totals.values()) + " |")
        return lines, totals

    lines, totals = coverage_table(IPC2023)
    large_lines, large_totals = coverage_table(LARGE)
    scaled_lines, scaled_totals = coverage_table(SCALED)
    text = ["# The standing comparison: IPC 2023 testing/easy, 60 s per task", "",
            "Written by `python -m benchmarks.standing report`; the commands are in `commands.log`.", "",
            *lines, "", "## Larger generated problems (build_zoo.py's `*-large` sets, 60 s per task)", "",
            *large_lines, "", f"## Generated problems {min(FACTORS)}-{max(FACTORS)}x the largest training problem "
            f"(factors {', '.join(map(str, FACTORS))}; 60 s per task)", "", *scaled_lines, "", "Rows from: " + "; ".join(f"{title_of(label)}: {', '.join(sorted(s))}"
                                                 for label, s in sources.items()) + ".", "",
            *training_lines(trained), "",
            "## gnnplan's plan cost against LAMA-first's (geometric mean, tasks both solved)", "",
            "| domain | tasks | ratio |", "|---|---:|---:|",
            *[f"| {name} | {n} | {ratio:.2f} |" if ratio else f"| {name} | {n} | |" for name, n, ratio in lengths], "",
            "## Why gnnplan did not solve a task (from the engine's messages)", "",
            "| domain | cause | tasks | policy steps before it |", "|---|---|---:|---:|",
            *[f"| {name} | {c} | {n} | {span} |" for name, rows in causes.items() for c, n, span in rows]]
    fit = model_fit()
    text += ["", "## The shipped model's error on its training states and on its validation problems", "",
             "A model that does not fit its own training states fails for want of training or of expressiveness; "
             "one that fits them but not the (larger) validation problems, for want of generalisation.", "",
             "| domain | model | figure | training states | validation |", "|---|---|---|---:|---:|",
             *[f"| {name} | {row['model']} | {row['figure']} | {row['train']} | {row['validation']} |"
               for name, row in fit.items()]]
    (OUT / "report.md").write_text("\n".join(text) + "\n")
    record_standing(trained, solved, counts, folders)
    (OUT / "results.json").write_text(json.dumps({"solved": solved, "totals": totals, "large_totals": large_totals, "scaled_totals": scaled_totals,
                                                  "tasks": counts, "plan_cost_ratio": lengths,
                                                  "causes": {n: [{"cause": c, "tasks": k, "policy_steps": span} for c, k, span in rows]
                                                             for n, rows in causes.items()},
                                                  "sources": {k: sorted(v) for k, v in sources.items()},
                                                  "model_fit": fit, "training": trained}, indent=1))
    print("\n".join(text))


def training(table: dict) -> dict[str, dict]:
    """Return, per domain whose models the report runs (the IPC 2023 ones and each ``*-large`` set's
    base), how long each learned planner trained and on what, as recorded: gnnplan's shipped model and its
    entry in the zoo's index, WL-GOOSE's entry in ``GOOSE_TRAINING`` (``None``: no record)."""
    from up_gnnplan.models_zoo import entries, find_model
    from up_gnnplan.problems import load_task

    index = {entry["file"]: entry["training"] for entry in entries()}
    goose = read_json(GOOSE_TRAINING)
    rows = {}
    for name in (*IPC2023, *LARGE):
        base = DOMAINS[name].model or name  # a *-large set runs its base domain's models (run_domains)
        domain, tests = tests_of(name)
        # The file the default mode (auto) loads: found by the problem's predicates, as the engine does.
        shipped = find_model(load_task(domain, tests[0]).signature)
        row = rows.setdefault(base, {"sets": [], "gnnplan": {}, "wl-goose": None, "rows_named": []})
        row["sets"].append(name)
        if shipped is not None and shipped.name not in row["gnnplan"]:
            record = index.get(shipped.name) or {}
            row["gnnplan"][shipped.name] = {
                "minutes": record.get("minutes"), "epochs": record.get("epochs"), "best_epoch": record.get("best_epoch"),
                "states_trained": record.get("states_trained"),
                "training_problems": len(record["problems"]) if record.get("problems") is not None else None,
                "validation_problems": (len(record["validation_problems"])
                                        if record.get("validation_problems") is not None else None)}
        # The model the default mode's rows name, where not the shipped file (rows copied from another run).
        named = {m.group(1) for r in table.get(name, {}).get("gnnplan", {}).values()
                 if (m := re.search(r"model (\S+\.onnx)", r.get("notes") or ""))}
        row["rows_named"] += sorted(named - set(row["gnnplan"]) - set(row["rows_named"]))
        if base in goose:
            record = goose[base]
            row["wl-goose"] = {"model": record.get("model"), "seconds": record.get("seconds"),
                               "states_embedded": record.get("states_embedded"),
                               "training_problems": record.get("training_problems")}
    return rows


def record_standing(trained: dict, solved: dict, counts: dict, folders: dict) -> None:
    """Write each shipped model's current figures into its zoo entry (``standing``, shown by ``gnnplan models``).

    An entry's ``coverage`` is what was measured when the model shipped, with the engine of that
    day; ``standing`` is the default mode's coverage on the report's sets with the engine of the
    report's rows, beside LAMA-first and WL-GOOSE. A model whose default-mode rows were taken with
    another file gets none (its ``standing`` is removed).
    """
    day = time.strftime("%Y-%m-%d")
    standing = {}  # file -> its figures, or None where its rows were taken with another file
    for base, row in trained.items():
        sets = [*row["sets"], *(n for n in SCALED if n.removesuffix("-scaled") == base and n in solved)]
        parts = []
        for name in sets:
            figures = solved.get(name, {})
            if "gnnplan" not in figures:
                continue
            n = counts[name]
            peers = ", ".join(f"{ENGINES[label][1]} {figures[label]}/{n}" for label in ("lama-first", "wl-goose")
                              if label in figures)
            rows = folders[(name, "gnnplan")].relative_to(ROOT)
            parts.append(f"{name} ({n} tasks): {figures['gnnplan']}/{n}; {peers} (rows: {rows}/)")
        for file in row["gnnplan"]:
            if row["rows_named"]:
                standing[file] = None
            elif parts:
                standing[file] = (f"the engine's default mode, 60 s per task (python -m benchmarks.standing report of {day}): "
                                  + "; ".join(parts))
    with editing_index() as models:
        for entry in models:
            if entry["file"] not in standing:
                continue
            if standing[entry["file"]] is None:
                entry.pop("standing", None)
            else:
                entry["standing"] = standing[entry["file"]]


def training_lines(trained: dict[str, dict]) -> list[str]:
    """Return the table of ``training``'s figures, one row per model, and a note of what each figure counts."""
    def shown(value):
        return "no record" if value is None else f"{value:,}" if isinstance(value, int) else str(value)

    lines = ["## Training of the learned planners", "",
             "| domain | sets | gnnplan model | minutes | epochs (best) | states trained | problems (+ validation) "
             "| WL-GOOSE s, features + fit | WL-GOOSE s, labelling | states embedded | problems |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    odd = []
    for base, row in trained.items():
        goose = row["wl-goose"] or {}
        seconds = goose.get("seconds") or {}
        peer = [shown(seconds.get("total")), shown(seconds.get("labelling")), shown(goose.get("states_embedded")),
                shown(goose.get("training_problems"))]
        for file, g in row["gnnplan"].items() or [("no shipped model", {})]:
            epochs = shown(g.get("epochs")) + ("" if g.get("best_epoch") is None else f" ({g['best_epoch']})")
            problems = shown(g.get("training_problems")) + (
                "" if g.get("validation_problems") is None else f" (+ {g['validation_problems']})")
            lines.append(f"| {base} | {', '.join(row['sets'])} | {file} | {shown(g.get('minutes'))} | {epochs} "
                         f"| {shown(g.get('states_trained'))} | {problems} | " + " | ".join(peer) + " |")
        if row["rows_named"]:
            odd.append(f"{base}'s default-mode rows were taken with {', '.join(row['rows_named'])}, not the shipped "
                       f"file (see `commands.log`)")
    return lines + ["", "gnnplan: the shipped file its default mode loads for the domain's problems (found by their "
                    "predicates, the action model where the domain ships one) and that file's training record in "
                    "`up_gnnplan/models_zoo/index.json`: minutes of the training run (optimisation and validation), "
                    "epochs (the one kept), states trained (optimisation steps x batch size: a state counts once per "
                    "epoch), training problems (+ validation problems); the labelling of its training data is not in "
                    "the record. WL-GOOSE: `benchmarks/results/goose/training.json` (`goose_peer.py train`): seconds "
                    "of WL feature collection and embedding plus the fit (its `total`), and apart the seconds of "
                    "labelling its training problems (`gnnplan dataset`, V* by full expansion); states embedded "
                    "(training states and the successors they are ranked against, at most `max_rows` per problem); "
                    "training problems (no validation). The `-scaled` sets run the models of their IPC 2023 domain."
                    + "".join(f" Note: {text}." for text in odd)]


def model_fit() -> dict[str, dict]:
    """Per IPC 2023 domain, the shipped model's figure on its training states and validation problems
    (the share of states whose best-scored action is optimal, or the MAE of V*), from its record."""
    from up_gnnplan.models_zoo import resolve
    from up_gnnplan.runtime import read_metadata

    rows = {}
    for name in IPC2023:
        metadata = read_metadata(resolve(name))
        record = metadata["training_record"]
        train, valid = record["train"], record["validation"] or {}
        if "best_action_optimal" in train:
            figure, show = "best action optimal", lambda m: f"{m['best_action_optimal']:.1%}" if m else ""
        else:
            figure, show = "MAE of V*", lambda m: f"{m['mae']:.2f}" if m else ""
        config = metadata.get("train_config") or {}
        rows[name] = {"model": f"{config.get('architecture', 'rgnn')} ({config.get('head', 'value')})", "figure": figure,
                      "train": show(train), "validation": show(valid)}
    return rows


def pair(args) -> None:
    """Print, per set, two variants side by side on the tasks both ran (``pair A B``; ``default``:
    the default mode's column): tasks,
    solved by each, and on the tasks both solved the geometric mean of B's plan cost and wall time
    over A's. Written to ``standing/pair-A-B.md``."""
    first, second = args.pair
    lines = [f"| set | tasks run by both | {first} solved | {second} solved | tasks both solved | "
             f"plan cost, {second} / {first} | wall time, {second} / {first} |", "|---|---:|---:|---:|---:|---:|---:|"]
    totals = [0, 0, 0]
    for name in (*IPC2023, *LARGE, *SCALED):
        folders = [OUT / name / ("gnnplan" if label == "default" else f"gnnplan@{label}") for label in (first, second)]
        if not all((f / "results.jsonl").is_file() for f in folders):
            continue
        a, b = (rows_of(f, "gnnplan", args.timeout) for f in folders)
        tasks = sorted(set(a) & set(b))
        both = [t for t in tasks if a[t]["solved"] and b[t]["solved"]]
        cost = [b[t]["plan_cost"] / a[t]["plan_cost"] for t in both if a[t]["plan_cost"]]
        wall = [b[t]["wall_time"] / a[t]["wall_time"] for t in both]
        solved = [sum(rows[t]["solved"] for t in tasks) for rows in (a, b)]
        totals = [totals[0] + len(tasks), totals[1] + solved[0], totals[2] + solved[1]]
        mean = (lambda xs: f"{statistics.geometric_mean(xs):.2f}" if xs else "")
        lines.append(f"| {name} | {len(tasks)} | {solved[0]} | {solved[1]} | {len(both)} | {mean(cost)} | {mean(wall)} |")
    lines.append(f"| **total** | {totals[0]} | **{totals[1]}** | **{totals[2]}** | | | |")
    text = "\n".join(lines) + "\n"
    (OUT / f"pair-{first}-{second}.md").write_text(text)
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["run", "report", "pair"])
    parser.add_argument("domains", nargs="*", default=list(IPC2023), metavar="DOMAIN",
                        help=", ".join(IPC2023 + LARGE + SCALED) + " [default: the IPC 2023 ones]")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--rerun-baselines", action="store_true", help="run LAMA-first and WL-GOOSE here too")
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES),
                        help="run only these (e.g. the peer last, after every domain's gnnplan and LAMA-first rows)")
    parser.add_argument("--variant", help="run gnnplan with --engine-param into DOMAIN/gnnplan@VARIANT (no baselines)")
    parser.add_argument("--engine-param", action="append", default=[], metavar="KEY=VALUE",
                        help="gnnplan engine param of --variant (repeatable)")
    parser.add_argument("--only-unsolved", action="store_true",
                        help="--variant: only the tasks the default mode's column left unsolved")
    parser.add_argument("--only-gave-up", action="store_true",
                        help="--variant: only the tasks where the default mode's policy gave up (the only ones a "
                             "change of the fallback can change)")
    parser.add_argument("--pair", nargs=2, metavar=("A", "B"), default=["seed-off", "seed-on"],
                        help="pair: the two variants to put side by side")
    args = parser.parse_intermixed_args(argv)
    if bool(args.variant) != bool(args.engine_param):
        parser.error("--variant and --engine-param go together")
    args.domains = args.domains or list(IPC2023)
    {"run": run_domains, "report": report, "pair": pair}[args.stage](args)


if __name__ == "__main__":
    main()

"""Coverage against training time (issue 14): what more minutes of training buy.

One long training per domain, on the data the shipped model of the domain was trained on
(``action_heads.py``'s datasets: the expanded training problems plus problems labelled along
optimal plans, others of them choosing the best epoch), with the package's own resumable
training: ``gnnplan train --state`` keeps the run's state in
``/tmp/gnnplan-curve/DOMAIN/state.safetensors`` (a stopped run continues from it with the same
command; its header, with the curve of every epoch, is kept in
``benchmarks/results/training_curve/DOMAIN/state.metadata.json``) and ``--snapshot-minutes``
writes the best model so far at each mark. Each snapshot is then run in the engine's default
mode on the test sets of the domain, 60 s per task, beside the shipped file on the same tasks.

``train DOMAIN [--minutes 60] [--marks 5,15,30,60] [--head logits] [--judge policy|error] [--ema DECAY]``
    the training, in the background; the same command continues a stopped run. ``--judge policy``
    (the default) chooses the best epoch by the greedy policy on ``JUDGE``'s generated problems,
    larger than training and apart from every test set (``gnnplan train --validation-problem``:
    most solved, then fewest steps, then the validation error); ``--judge error`` by the
    validation error on optimal-plan files alone, as the Logistics and Transport curves were run
    (Transport's validation error stopped falling at epoch 5, so the error could not tell later
    epochs apart).
``DOMAIN@RUN`` in place of ``DOMAIN`` (every stage) is another curve of the domain, with its own
state, snapshots and results (``logistics@policy``: Logistics again with the policy judge).

``test DOMAIN [--only MARK,...]``
    exports every snapshot there is (and the final model) and runs ``gnnplan compare`` on the
    domain's test sets into ``training_curve/DOMAIN/SET/MARK/`` (``--resume``: run it again as
    snapshots appear; ``--only 5min,60min`` first, the marks between them later).
``ship DOMAIN MARK [--keep-as NAME]``
    ships the snapshot ``MARK`` as the domain's model (``gnnplan export --ship``; the model it
    replaces stays as ``--keep-as``, or goes), with its coverage on the domain's test sets beside
    LAMA-first's and the replaced model's standing rows (same tasks, 60 s) in its zoo entry.
``report``
    ``training_curve/report.md`` and ``results.json``: per domain and mark, the states trained,
    the validation figure, and the coverage on each test set; ``curve.png`` (matplotlib).

    OMP_NUM_THREADS=1 nohup python -m benchmarks.training_curve train logistics --minutes 60 &
    OMP_NUM_THREADS=1 python -m benchmarks.training_curve test logistics
    python -m benchmarks.training_curve report
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from .action_heads import WORK as DATA_WORK, datasets
from .common import RESULTS, keep_as, read_json, record_state, run, set_coverage, write_json
from .standing import rows_of, source, tests_of

OUT = RESULTS / "training_curve"
WORK = Path("/tmp/gnnplan-curve")
LOG = OUT / "commands.log"
# The test sets of each domain: standing.py's sets (IPC 2023 testing/easy, build_zoo's *-large),
# and "NAME-larger": action_heads.py's generated problems 2-5x the largest training problem.
# "NAME-scaled": standing.py's problems 3-10x the largest problem the shipped model was trained on.
SETS = {"logistics": ("logistics-large", "logistics-larger"),
        "transport": ("transport", "transport-larger", "transport-scaled"),
        "blocksworld": ("blocksworld", "blocksworld-large"), "ferry": ("ferry", "ferry-scaled"),
        "rovers": ("rovers", "rovers-scaled"), "sokoban": ("sokoban", "sokoban-scaled"),
        "satellite": ("satellite", "satellite-scaled"), "floortile": ("floortile", "floortile-scaled"),
        "miconic": ("miconic", "miconic-scaled"), "childsnack": ("childsnack", "childsnack-scaled"),
        "spanner": ("spanner", "spanner-scaled")}


# The judge problems of --judge policy: (generator, size parameters, count), seed JUDGE_SEED; 2-3x the
# largest expanded training problem, at most the smallest test sizes, never a test problem.
JUDGE = {"blocksworld": ("blocksworld", (({"blocks": 12}, 2), ({"blocks": 16}, 2))),
         "logistics": ("logistics", (({"cities": 3, "city_size": 3, "packages": 6, "airplanes": 1}, 2),
                                     ({"cities": 4, "city_size": 3, "packages": 8, "airplanes": 2}, 2))),
         "transport": ("transport", (({"vehicles": 2, "packages": 6, "locations": 10}, 2),
                                     ({"vehicles": 3, "packages": 8, "locations": 14}, 2))),
         # Ferry's largest training problem has 5 cars and 7 locations, its scaled test set starts at 3x.
         "ferry": ("ferry", (({"cars": 10, "locations": 14}, 2), ({"cars": 12, "locations": 17}, 2))),
         # Rovers': 1 rover, 5 waypoints, 1 camera, 3 objectives; the scaled set starts at 3x.
         "rovers": ("rovers", (({"rovers": 1, "waypoints": 10, "cameras": 1, "objectives": 6}, 2),
                               ({"rovers": 2, "waypoints": 12, "cameras": 2, "objectives": 7}, 2))),
         # Sokoban's: a 9x9 grid with 2 boxes; the scaled set starts at 16x16 with 3.
         "sokoban": ("sokoban", (({"grid_size": 12, "boxes": 2}, 2), ({"grid_size": 14, "boxes": 3}, 2))),
         # Satellite's: 3 satellites, 4 instruments, 1 mode, 4 directions; the scaled set starts at 3x.
         "satellite": ("satellite", (({"satellites": 3, "instruments": 8, "modes": 1, "directions": 8}, 2),
                                     ({"satellites": 4, "instruments": 10, "modes": 1, "directions": 10}, 2))),
         # Floortile's: a 4x3 grid with 1 robot; the scaled set starts at 7x5 with 2.
         "floortile": ("floortile", (({"rows": 5, "columns": 4, "robots": 1}, 2), ({"rows": 6, "columns": 4, "robots": 2}, 2))),
         # Miconic's: 7 passengers, 14 floors; the scaled set starts at 21 and 42.
         "miconic": ("miconic", (({"passengers": 14, "floors": 28}, 2), ({"passengers": 18, "floors": 36}, 2))),
         # Childsnack's: 4 children, none allergic, 1 tray, 4 sandwiches; the scaled set starts at 12 children.
         "childsnack": ("childsnack", (({"children": 8, "allergic_children": 5, "trays": 2, "sandwiches": 8}, 2),
                                       ({"children": 10, "allergic_children": 6, "trays": 2, "sandwiches": 10}, 2))),
         # Spanner's: 8 spanners, 4 nuts, 9 locations; the scaled set starts at 24, 12, 27.
         "spanner": ("spanner", (({"spanners": 16, "nuts": 8, "locations": 18}, 2),
                                 ({"spanners": 20, "nuts": 10, "locations": 22}, 2)))}
JUDGE_SEED = 4242
# Problems labelled along optimal plans and trained on (as many again choose the epoch with the
# judge), where the shipped model had more than action_heads.py's 3: Rovers' was trained on 13.
OPTIMAL = {"rovers": 13}


def judge_problems(domain: str) -> list[str]:
    """Generate (once) the judge problems of ``domain`` and return the ``--validation-problem`` options."""
    generator, sizes = JUDGE[base(domain)]
    folder = WORK / domain / "judge"
    options = []
    for i, (params, count) in enumerate(sizes):
        target = folder / str(i)
        if not (target / "domain.pddl").is_file():
            run(["gnnplan", "generate", generator, "-o", target, "--count", count, "--seed", JUDGE_SEED + i,
                 *[a for k, v in params.items() for a in ("-p", f"{k}={v}")]], LOG)
        options += [a for f in sorted(target.glob("*.pddl")) if f.name != "domain.pddl"
                    for a in ("--validation-problem", f)]
    return ["--validation-domain", folder / "0" / "domain.pddl", *options]


def base(run: str) -> str:
    """The domain of a curve: ``logistics`` for ``logistics`` and for ``logistics@policy``."""
    return run.partition("@")[0]


def runs() -> list[str]:
    """The curves there are: each domain's, then its other runs (``DOMAIN@RUN``)."""
    found = sorted(p.name for p in OUT.iterdir() if p.is_dir() and base(p.name) in SETS) if OUT.is_dir() else []
    return sorted(found, key=lambda run: (list(SETS).index(base(run)), run))


def test_set(name: str) -> tuple[Path, list[Path]]:
    """The domain file and the problems of a test set."""
    if name.endswith("-larger"):
        folder = DATA_WORK / name.removesuffix("-larger") / "larger"
        return folder / "domain.pddl", sorted(p for p in folder.glob("*.pddl") if p.name != "domain.pddl")
    return tests_of(name)


def checkpoint(domain: str, head: str) -> Path:
    return WORK / domain / f"{head}.pt"


def train(args) -> None:
    optimal = OPTIMAL.get(base(args.domain), 3)
    data, extra, validation = datasets(base(args.domain), optimal=optimal, most=40, reuse=True)
    (OUT / args.domain).mkdir(parents=True, exist_ok=True)
    if args.judge == "policy":
        validation += judge_problems(args.domain)
    run(["gnnplan", "train", data, *extra, "-o", checkpoint(args.domain, args.head), "--head", args.head,
         "--seed", args.seed, "--max-seconds", int(60 * args.minutes), "--patience", args.patience, *validation,
         "--state", state_file(args.domain), "--snapshot-minutes", args.marks,
         *(["--ema", args.ema] if args.ema else [])], LOG)
    record_state(state_file(args.domain), state_record(args.domain))


def state_file(domain: str) -> Path:
    """The training state of a curve (weights, optimiser: megabytes, kept out of the repository)."""
    return WORK / domain / "state.safetensors"


def state_record(domain: str) -> Path:
    """The state's header kept with the results: the config and the progress, with every epoch's row."""
    return OUT / domain / "state.metadata.json"


MARK = re.compile(r"(?P<minutes>[0-9.]+)min(?P<last>-last)?")


def marks_of(domain: str, head: str) -> dict[str, Path]:
    """The snapshots written so far by mark ("5min": the best epoch after 5 minutes, "30min-last": the
    last epoch after 30), and the final model ("final") when it is there."""
    base = checkpoint(domain, head)
    found = {p.stem.removeprefix(f"{base.stem}-"): p for p in base.parent.glob(f"{base.stem}-*min*.pt")}
    found = {mark: path for mark, path in found.items() if MARK.fullmatch(mark)}
    found = dict(sorted(found.items(), key=lambda item: (float(MARK.fullmatch(item[0])["minutes"]), item[0])))
    if base.is_file():
        found["final"] = base
    return found


def chosen_epochs(domain: str, head: str) -> dict[str, tuple[int, str]]:
    """Per mark, the epoch whose weights it holds and the mark first holding them (a run whose
    validation error does not fall keeps the same best epoch over several marks)."""
    import torch

    first, out = {}, {}
    for mark, path in marks_of(domain, head).items():
        record = torch.load(path, weights_only=True, map_location="cpu")["record"]
        epoch = record["best_epoch"]
        out[mark] = (epoch, first.setdefault(epoch, mark))
    return out


def test(args) -> None:
    same = chosen_epochs(args.domain, args.head)
    for mark, path in marks_of(args.domain, args.head).items():
        if args.only and mark not in args.only.split(","):
            continue
        if same[mark][1] != mark:
            print(f"{mark}: the weights of epoch {same[mark][0]}, as {same[mark][1]}: not run again", flush=True)
            continue
        model = path.with_suffix(".onnx")
        if not model.is_file() or model.stat().st_mtime < path.stat().st_mtime:
            run(["gnnplan", "export", path, "-o", model], LOG)
        for name in SETS[base(args.domain)]:
            domain, problems = test_set(name)
            run(["gnnplan", "compare", domain, *problems, "--engine", "gnnplan", "--model", model, "--timeout",
                 args.timeout, "--jobs", 1, "--no-plots", "-o", OUT / args.domain / name / mark, "--resume"], LOG)


def ship(args) -> None:
    from up_gnnplan.compare import read_results

    path = marks_of(args.domain, args.head)[args.mark]
    tested = chosen_epochs(args.domain, args.head)[args.mark][1]
    parts = []
    for name in SETS[base(args.domain)]:
        records = read_results(OUT / args.domain / name / tested / "results.jsonl")
        if not records:
            continue
        problems = test_set(name)[1]
        solved = sum(1 for r in records if r["solved"] and r["valid"])
        others = []
        for label, what in (("lama-first", "LAMA-first"), ("gnnplan", "the model shipped before")):
            folder = source(name, label, problems, args.timeout) if not name.endswith("-larger") else None
            if folder is not None:
                rows = rows_of(folder, label, args.timeout)
                others.append(f"{what} {sum(1 for r in rows.values() if r['solved'] and r['valid'])}/{len(rows)}")
        parts.append(f"{name} ({len(problems)} problems), {args.timeout:g} s each: gnnplan (default mode) "
                     f"{solved}/{len(records)}" + (f"; {', '.join(others)}" if others else "")
                     + f". Per-task results: benchmarks/results/training_curve/{args.domain}/{name}/{tested}/")
    if args.keep_as:
        keep_as(base(args.domain), args.keep_as)
    run(["gnnplan", "export", path, "-o", path.with_name(f"{path.stem}-shipped.onnx"), "--ship", base(args.domain)], LOG)
    set_coverage(base(args.domain), " ".join(parts) or "not measured", shipped_now=True)
    print(args.domain, " ".join(parts))


def report(args) -> None:
    import torch

    from up_gnnplan.compare import read_results

    # The rows of the last report: a run whose snapshots are not on this machine (they live in /tmp)
    # keeps them, and a mark measured here replaces its row.
    earlier = read_json(OUT / "results.json")
    results, lines = {}, ["# Coverage against training time", "",
                          "Written by `python -m benchmarks.training_curve report`; commands in `commands.log`.", ""]
    for domain in runs():
        sets = SETS[base(domain)]
        marks = marks_of(domain, args.head)
        if not marks and not earlier.get(domain):
            continue
        rows, same = [], chosen_epochs(domain, args.head) if marks else {}
        for mark, path in marks.items():
            tested = same[mark][1]  # the mark whose run holds this mark's weights
            if not path.with_suffix(".onnx").is_file() and tested == mark:
                continue
            record = torch.load(path, weights_only=True, map_location="cpu")["record"]
            validation = record["validation"] or record["train"]
            figure = validation.get("best_action_optimal", validation.get("mae"))
            row = {"mark": mark, "minutes": round(record["seconds"] / 60, 1), "states_trained": record["states_trained"],
                   "best_epoch": record["best_epoch"], "validation": figure, "coverage": {}}
            row["same_weights_as"] = tested if tested != mark else None
            for name in sets:
                found = OUT / domain / name / tested / "results.jsonl"
                records = read_results(found) if found.is_file() else []
                row["coverage"][name] = [sum(r["solved"] for r in records), len(test_set(name)[1]), len(records)]
            rows.append(row)
        measured = {row["mark"] for row in rows}
        rows = [row for row in earlier.get(domain, []) if row["mark"] not in measured] + rows
        rows.sort(key=_mark_order)
        results[domain] = rows
        lines += [f"## {domain}", "", "| model | minutes | states trained | epoch | validation | "
                  + " | ".join(sets) + " |", "|---|---:|---:|---:|---:|" + "---:|" * len(sets)]
        for row in rows:
            cells = ["not run" if n == 0 else f"{a}/{b}" + ("" if n == b else f" ({n} run)")
                     for a, b, n in row["coverage"].values()]
            lines.append(f"| {row['mark']}{' (= ' + row['same_weights_as'] + ')' if row['same_weights_as'] else ''} | "
                         f"{row['minutes']} | {row['states_trained']:,} | {row['best_epoch']} | "
                         f"{row['validation']:.3f} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += judged_epochs(args.head)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "report.md").write_text("\n".join(lines) + "\n")
    write_json(OUT / "results.json", results)
    _plot(results)
    print("\n".join(lines))


def _mark_order(row: dict) -> tuple:
    """Marks in training order: 5min, 5min-last, 15min, ..., final."""
    found = MARK.fullmatch(row["mark"])
    return (float("inf"), 0) if found is None else (float(found["minutes"]), bool(found["last"]))


def judged_epochs(head: str) -> list[str]:
    """How often an epoch's greedy policy works: per policy-judged run, how many of its epochs solved
    each number of the judge problems (from the curve in the record of the run's state)."""

    lines = ["## How often an epoch's policy works (policy-judged runs)", "",
             "Per epoch the judge runs the greedy policy on its generated problems (`JUDGE`, larger than training); "
             "the epochs of the whole run by how many of them their policy solved, over the first and the second half "
             "of the run, and the count of every epoch in order. One seed per run; the runs named `@seedN` repeat "
             "another run with seed N (its other settings the same).", "",
             "| run | epochs | judge problems | all solved | none solved | all solved, first half | all solved, second half "
             "| solved per epoch |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    rows = 0
    for domain in runs():
        if base(domain) not in JUDGE:
            continue
        if state_file(domain).is_file():  # here, newer than its record when the run was stopped
            record_state(state_file(domain), state_record(domain))
        if not state_record(domain).is_file():
            continue
        curve = read_json(state_record(domain))["progress"]["curve"]
        solved = [row[4] for row in curve if len(row) == 6]
        if not solved:
            continue
        k, half = sum(count for _, count in JUDGE[base(domain)][1]), len(solved) // 2
        first, second = solved[:half], solved[half:]
        lines.append(f"| {domain} | {len(solved)} | {k} | {solved.count(k)} | {solved.count(0)} | "
                     f"{first.count(k)}/{len(first)} | {second.count(k)}/{len(second)} | {''.join(map(str, solved))} |")
        rows += 1
    return lines + [""] if rows else []


def _plot(results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for domain, rows in results.items():
        for kind, style in (("best", "-o"), ("last", "--s")):
            timed = [r for r in rows if r["mark"] != "final" and r["mark"].endswith("-last") == (kind == "last")]
            for name in SETS[base(domain)]:
                points = [(r["minutes"], r["coverage"][name][0] / r["coverage"][name][1]) for r in timed
                          if r["coverage"][name][2] == r["coverage"][name][1]]
                if points:
                    axes.plot(*zip(*points), style, label=f"{name} ({kind} epoch)")
    axes.set_xlabel("training minutes (one CPU thread)")
    axes.set_ylabel("coverage, 60 s per task")
    axes.set_ylim(0, 1.05)
    axes.legend()
    figure.tight_layout()
    figure.savefig(OUT / "curve.png", dpi=120)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["train", "test", "ship", "report"])
    parser.add_argument("domain", nargs="?", metavar="DOMAIN[@RUN]",
                        help=f"{', '.join(sorted(SETS))}; DOMAIN@RUN: another curve of DOMAIN (e.g. logistics@policy, "
                        "its own state, snapshots and results)")
    parser.add_argument("mark", nargs="?", help="ship: the snapshot to ship (e.g. 15min)")
    parser.add_argument("--keep-as", help="ship: the name the replaced model stays under (default: it goes)")
    parser.add_argument("--minutes", type=float, default=60.0, help="training budget over all sessions")
    parser.add_argument("--marks", default="5,15,30,60", help="snapshot minutes")
    parser.add_argument("--head", default="logits")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", choices=["policy", "error"], default="policy",
                        help="train: choose the best epoch by the greedy policy on JUDGE's larger problems, "
                        "or by the validation error alone")
    parser.add_argument("--ema", type=float, default=0.0, help="train: gnnplan train --ema DECAY (weight averaging; "
                        "0: off), e.g. logistics@ema against logistics@policy")
    parser.add_argument("--patience", type=int, default=1000, help="epochs without improvement before stopping "
                        "(large: the curve wants the whole budget)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--only", default="", metavar="MARK,...",
                        help="test: these snapshots only (e.g. 5min,60min,60min-last); the others later")
    args = parser.parse_args(argv)
    if args.domain and base(args.domain) not in SETS:
        parser.error(f"no test sets for {base(args.domain)!r}: one of {', '.join(sorted(SETS))}")
    if args.stage != "report" and not args.domain:
        parser.error(f"{args.stage} needs a DOMAIN")
    if args.stage == "ship" and not args.mark:
        parser.error("ship needs a MARK")
    {"train": train, "test": test, "ship": ship, "report": report}[args.stage](args)


if __name__ == "__main__":
    main()

"""Mode auto with and without the on-course extension of the learned part's share (engine param ``on_course``).

On the generated IPC 2023 medium- and hard-tier tasks of ``benchmarks/tiers.py`` (``python -m
benchmarks.tiers generate`` writes them to ``/tmp/gnnplan-tiers``), and on tasks ``generate`` makes
between the two tiers' sizes (``--tier between``: :data:`BETWEEN`, where the shipped policies are
sound but their walks take about the learned part's share of a minute), each task is solved twice in
turn, with ``on_course`` on (the default) and off, by ``gnnplan compare --engine gnnplan --resume``
into ``OUT/ARM/TIER-DOMAIN/``: one task, both arms, then the next, so that both arms see the same
load. The default mode and the shipped models; 60 s a task, every plan validated. ``table`` prints
per domain and tier each arm's coverage, how many plans the learned part found, the extensions
granted (read from the engine's log) and the mean time on the tasks both solved.

    python -m benchmarks.on_course generate -o DIR   # the between tier, seed SEED
    OMP_NUM_THREADS=1 python -m benchmarks.on_course run [DOMAIN ...] [--tier medium|between] -o DIR
    python -m benchmarks.on_course table -o DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import add_task_options, fmt, run, table, write_json
from .tiers import SEED, SETS

# Between the medium tier's largest and our hard-tier sizes (benchmarks/load_speed.py), for domains
# whose shipped policy solves the medium tier.
BETWEEN = [
    ("blocksworld", {"blocks": 250}),
    ("childsnack", {"children": 80, "allergic_children": 48, "trays": 10, "sandwiches": 96}),
    ("ferry", {"cars": 250, "locations": 100}),
    ("miconic", {"passengers": 150, "floors": 100}),
    ("spanner", {"spanners": 200, "nuts": 100, "locations": 80}),
]
ARMS = {"on": [], "off": ["--engine-param", "gnnplan:on_course=false"]}


def generate(args) -> None:
    for domain, sizes in BETWEEN:
        if args.domains and domain not in args.domains:
            continue
        folder = SETS / "between" / domain
        params = [x for name, value in sizes.items() for x in ("-p", f"{name}={value}")]
        run(["gnnplan", "generate", domain, "-o", folder, *params, "--count", args.count, "--seed", SEED],
            args.output / "commands.log", output=folder / "domain.pddl")


def _tasks(args) -> list[tuple[str, str, Path]]:
    tasks = []
    for tier in ([args.tier] if args.tier else ["medium", "between", "hard"]):
        for folder in sorted((SETS / tier).iterdir()) if (SETS / tier).is_dir() else []:
            if args.domains and folder.name not in args.domains:
                continue
            tasks += [(tier, folder.name, problem) for problem in sorted(folder.glob("p*.pddl"))]
    if not tasks:
        raise SystemExit(f"no tasks under {SETS}: run python -m benchmarks.tiers generate first")
    return tasks


def run_arms(args) -> None:
    log = args.output / "commands.log"
    for tier, domain, problem in _tasks(args):
        for arm, extra in ARMS.items():
            target = args.output / arm / f"{tier}-{domain}"
            run(["gnnplan", "compare", "--engine", "gnnplan", *extra, problem.parent / "domain.pddl", problem,
                 "--timeout", args.timeout, "--memory-mb", args.memory_mb, "--no-plots", "--resume", "-o", target],
                log, check=False)


def summary(args) -> None:
    from up_gnnplan.compare import read_results

    rows, data = [], {}
    groups = sorted({p.name for arm in ARMS for p in (args.output / arm).glob("*-*") if p.is_dir()})
    totals = {arm: 0 for arm in ARMS}
    for group in groups:
        by_arm = {}
        for arm in ARMS:
            path = args.output / arm / group / "results.jsonl"
            by_arm[arm] = {r["problem"]: r for r in read_results(path)} if path.is_file() else {}
        keys = sorted(set().union(*by_arm.values()))
        solved = {arm: [k for k in keys if by_arm[arm].get(k, {}).get("solved")] for arm in ARMS}
        both = [k for k in keys if all(k in solved[arm] for arm in ARMS)]
        cells = {}
        for arm in ARMS:
            learned = sum(by_arm[arm][k].get("found_by") == "learned" for k in solved[arm])
            extended = sum("on course" in (by_arm[arm][k].get("notes") or "") for k in by_arm[arm])
            seconds = sum(by_arm[arm][k]["wall_time"] for k in both) / len(both) if both else None
            totals[arm] += len(solved[arm])
            cells[arm] = {"solved": len(solved[arm]), "by_the_model": learned, "extended": extended,
                          "mean_seconds_both_solved": seconds}
        data[group] = {"tasks": len(keys), **cells}
        rows.append([group, str(len(keys)),
                     *[f"{cells[a]['solved']} ({cells[a]['by_the_model']})" for a in ARMS],
                     str(cells["on"]["extended"]),
                     " / ".join(fmt(cells[a]["mean_seconds_both_solved"], 1) for a in ARMS) + f" ({len(both)})"])
    rows.append(["**total**", "", *[f"**{totals[a]}**" for a in ARMS], "", ""])
    text = table(["tier-domain", "tasks", "on_course (by the model)", "off (by the model)", "extended (on)",
                  "mean s, both solved: on / off (tasks)"], rows)
    (args.output / "table.md").write_text(text + "\n")
    write_json(args.output / "table.json", {"groups": data, "totals": totals})
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["generate", "run", "table"])
    parser.add_argument("domains", nargs="*", metavar="DOMAIN", help="IPC 2023 domains (default: all ten)")
    parser.add_argument("--tier", choices=["medium", "between", "hard"], help="one tier only (default: all)")
    parser.add_argument("--count", type=int, default=2, help="generate: tasks per domain")
    add_task_options(parser)
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    {"generate": generate, "run": run_arms, "table": summary}[args.stage](args)


if __name__ == "__main__":
    main()

"""Two checkouts of the code side by side, task by task, on the generated IPC 2023 tiers.

A change to the engine that has no param to turn it off is measured against the code before it:
each arm is ``NAME=CHECKOUT`` (a git worktree or clone; ``.`` is this working tree), run as
``python -m up_gnnplan.cli compare --engine gnnplan ...`` in the checkout, with it first on
``PYTHONPATH`` (for the task processes), into ``OUT/NAME/TIER-DOMAIN/``. ``--lama`` adds
LAMA-first on the files (``compare --engine fast-downward``) as an arm of its own. The arms of one task run together (``--jobs``, by
default one per arm), so that they see the same load, then the next task. Default mode, shipped
models, 60 s and 4 GB a task, every plan validated. ``table`` prints per tier and domain each arm's
coverage (by the model), the mean time on the tasks every arm solved, and each failure's cause
read from the engine's messages.

    git worktree add /tmp/before HEAD~1
    OMP_NUM_THREADS=1 python -m benchmarks.code_ab run [DOMAIN ...] --tier medium --arm before=/tmp/before \\
        --arm after=. --lama -o DIR
    python -m benchmarks.code_ab table -o DIR

The tasks are those of ``python -m benchmarks.tiers generate`` (and ``benchmarks.on_course generate``
for the between tier) under ``/tmp/gnnplan-tiers``; ``--set NAME=DOMAIN:FOLDER[:MODEL]`` (repeatable) runs the
problems of FOLDER instead, with the model given (a ``gnnplan learn`` model of a domain no shipped model covers):

    OMP_NUM_THREADS=1 python -m benchmarks.code_ab run --set elevators=$P/domain.pddl:$P/test:learn.onnx \
        --arm before=/tmp/before --arm after=. --lama --jobs 1 -o DIR
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .common import add_task_options, fmt, read_json, run, table, write_json
from .on_course import _tasks

LAMA = "lama-first"


def _arms(args) -> dict[str, Path | None]:
    arms: dict[str, Path | None] = {}
    for spec in args.arm:
        name, _, path = spec.partition("=")
        checkout = Path(path or ".").resolve()
        if not (checkout / "up_gnnplan" / "__init__.py").is_file():
            raise SystemExit(f"--arm {spec}: {checkout} is not a checkout of up-gnnplan (no up_gnnplan/__init__.py)")
        arms[name] = checkout
    if args.lama:
        arms[LAMA] = None
    return arms


def run_arms(args) -> None:
    arms, log = _arms(args), args.output / "commands.log"
    write_json(args.output / "arms.json", {name: str(path) if path else "on the files" for name, path in arms.items()})

    def one(task, arm: str) -> None:
        group, domain_file, problem, model = task
        checkout, env = arms[arm], dict(os.environ)
        if checkout is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(checkout), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        engine = ["--engine", "gnnplan"] if checkout is not None else ["--engine", "fast-downward"]
        if model is not None and checkout is not None:
            engine += ["--model", model]
        # Run in the checkout: ``python -m`` puts the current folder before PYTHONPATH.
        run([sys.executable, "-m", "up_gnnplan.cli", "compare", *engine, domain_file, problem,
             "--timeout", args.timeout, "--memory-mb", args.memory_mb, "--no-plots", "--resume",
             "-o", args.output.resolve() / arm / group], log, check=False, env=env,
            cwd=checkout or args.output.resolve())

    with ThreadPoolExecutor(args.jobs or len(arms)) as pool:
        for task in _sets(args):
            list(pool.map(lambda arm: one(task, arm), arms))


def _sets(args) -> list[tuple[str, Path, Path, Path | None]]:
    """The tasks as (group, domain file, problem file, model or None): ``--set``'s, else the tiers'."""
    if not args.set:
        return [(f"{tier}-{domain}", problem.parent / "domain.pddl", problem, None)
                for tier, domain, problem in _tasks(args)]
    tasks = []
    for spec in args.set:
        name, _, rest = spec.partition("=")
        domain_file, folder, *model = rest.split(":")
        problems = sorted(Path(folder).glob("*.pddl"))
        if not name or not Path(domain_file).is_file() or not problems or len(model) > 1:
            raise SystemExit(f"--set {spec}: give NAME=DOMAIN:FOLDER[:MODEL], a domain file and a folder of problems")
        model_file = Path(model[0]).resolve() if model else None
        tasks += [(f"set-{name}", Path(domain_file).resolve(), problem.resolve(), model_file)
                  for problem in problems if problem.name != "domain.pddl"]
    return tasks


def _failure(record: dict) -> str:
    """Why a task was not solved, in a few words from the engine's message."""
    message = record.get("error") or (record.get("notes") or "").split(" | ")[-1] or record.get("status") or ""
    return message.strip()[:160]


def summary(args) -> None:
    from up_gnnplan.compare import read_results

    arms = list(read_json(args.output / "arms.json"))
    groups = sorted({p.name for arm in arms for p in (args.output / arm).glob("*-*") if p.is_dir()})
    rows, data, totals = [], {}, {arm: [0, 0] for arm in arms}
    for group in groups:
        by_arm = {arm: {r["problem"]: r for r in read_results(args.output / arm / group / "results.jsonl")}
                  for arm in arms}
        keys = sorted(set().union(*by_arm.values()))
        solved = {arm: [k for k in keys if by_arm[arm].get(k, {}).get("solved")] for arm in arms}
        every = [k for k in keys if all(k in solved[arm] for arm in arms if arm != LAMA)]  # all of our arms solved
        cells, failures = {}, []
        for arm in arms:
            learned = sum(by_arm[arm][k].get("found_by") == "learned" for k in solved[arm])
            mine = [k for k in every if k in solved[arm]]  # LAMA-first: those of them it solved
            seconds = sum(by_arm[arm][k]["wall_time"] for k in mine) / len(mine) if mine else None
            totals[arm][0] += len(solved[arm])
            totals[arm][1] += learned
            cells[arm] = {"solved": len(solved[arm]), "by_the_model": learned, "mean_seconds_all_solved": seconds}
            failures += [f"{arm} {k}: {_failure(by_arm[arm][k])}" for k in keys
                         if k in by_arm[arm] and k not in solved[arm]]
        data[group] = {"tasks": len(keys), "arms": cells, "failures": failures}
        rows.append([group, str(len(keys)),
                     *[f"{cells[a]['solved']}" + ("" if a == LAMA else f" ({cells[a]['by_the_model']})") for a in arms],
                     " / ".join(fmt(cells[a]["mean_seconds_all_solved"], 1) for a in arms) + f" ({len(every)})"])
        cells["tasks_all_solved"] = every
    rows.append(["**total**", "", *[f"**{totals[a][0]}**" + ("" if a == LAMA else f" ({totals[a][1]})")
                                    for a in arms], ""])
    header = ["tier-domain", "tasks", *[a if a == LAMA else f"{a} (by the model)" for a in arms],
              "mean s where our arms all solved: " + " / ".join(arms) + " (tasks; LAMA-first: of those it solved)"]
    text = table(header, rows)
    causes = [f"- {line}" for group in groups for line in data[group]["failures"]]
    (args.output / "table.md").write_text(text + "\n\nNot solved, as the engines said:\n\n" + "\n".join(causes) + "\n")
    write_json(args.output / "table.json", {"groups": data, "totals": totals})
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["run", "table"])
    parser.add_argument("domains", nargs="*", metavar="DOMAIN", help="IPC 2023 domains (default: all ten)")
    parser.add_argument("--tier", choices=["medium", "between", "hard", "hard-lower"],
                        help="one tier only (default: medium, between, hard)")
    parser.add_argument("--arm", action="append", default=[], metavar="NAME=CHECKOUT",
                        help="repeatable: an arm's name and the checkout it runs (. for this working tree)")
    parser.add_argument("--lama", action="store_true", help="LAMA-first on the files as an arm too")
    parser.add_argument("--jobs", type=int, default=0, help="tasks run at once (default: one per arm)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=DOMAIN:FOLDER[:MODEL]",
                        help="repeatable: the problems of FOLDER (with MODEL) instead of the tiers'")
    add_task_options(parser)
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    if args.stage == "run" and not args.arm:
        parser.error("run: give at least one --arm NAME=CHECKOUT")
    {"run": run_arms, "table": summary}[args.stage](args)


if __name__ == "__main__":
    main()

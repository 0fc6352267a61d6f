"""LAMA-first on the task's own files against LAMA-first through UP's engine, on the standing comparison's sets.

Until 2026-11-27, ``gnnplan compare --engine fast-downward`` ran LAMA-first through up-fast-downward's
UP engine: UP's reader, then UP's PDDL writer, then Fast Downward. The writer alone took 24 s of a
51 s solve of a small Sokoban task whose search took 1 s. Since then it runs the same driver and alias
on the files (:func:`up_gnnplan.compare.runner._lama_first_on_files`). This script runs LAMA-first that
way on every set of the standing comparison (IPC 2023 ``testing/easy`` and the ``*-scaled`` sets), 60 s
per task, into ``results/lama_files/SET/``, and tables it beside the through-UP rows the standing
comparison recorded (:func:`benchmarks.standing.source`).

    OMP_NUM_THREADS=1 python -m benchmarks.lama_files run [SET ...]
    python -m benchmarks.lama_files table
"""

from __future__ import annotations

import argparse

from .common import IPC2023, RESULTS, run, table, write_json
from .standing import SCALED, rows_of, source, tests_of

OUT = RESULTS / "lama_files"
LOG = OUT / "commands.log"
TIMEOUT = 60.0


def _sets(names) -> list[str]:
    return list(names) or [*IPC2023, *SCALED]


def run_sets(args) -> None:
    for name in _sets(args.sets):
        domain, tests = tests_of(name)
        run(["gnnplan", "compare", domain, *tests, "--engine", "fast-downward", "--timeout", TIMEOUT, "--jobs", 1,
             "--no-plots", "-o", OUT / name], LOG, output=OUT / name / "summary.md", check=False)


def summary(args) -> None:
    lines, data, totals = [], {}, [0, 0, 0]
    for name in _sets(args.sets):
        domain, tests = tests_of(name)
        files = rows_of(OUT / name, "lama-first", TIMEOUT)
        if not set(files) >= {str(t) for t in tests}:  # not run, or stopped before the set's end
            continue
        earlier = source(name, "lama-first", tests, TIMEOUT)
        through_up = rows_of(earlier, "lama-first", TIMEOUT) if earlier else {}
        keys = [str(t) for t in tests]
        on_files = sum(bool(files.get(k, {}).get("solved")) for k in keys)
        up = sum(bool(through_up.get(k, {}).get("solved")) for k in keys) if through_up else None
        both = [k for k in keys if files.get(k, {}).get("solved") and through_up.get(k, {}).get("solved")]
        seconds = (sum(files[k]["solve_time"] for k in both) / len(both),
                   sum(through_up[k]["solve_time"] for k in both) / len(both)) if both else None
        data[name] = {"tasks": len(keys), "on_files": on_files, "through_up": up, "mean_seconds_both": seconds}
        totals[0] += len(keys)
        totals[1] += on_files
        totals[2] += up or 0
        lines.append([name, str(len(keys)), str(on_files), "not recorded" if up is None else str(up),
                      f"{seconds[0]:.2f} / {seconds[1]:.2f} ({len(both)})" if seconds else "-"])
    lines.append(["**total**", str(totals[0]), f"**{totals[1]}**", f"**{totals[2]}**", ""])
    text = table(["set", "tasks", "LAMA-first on the files", "through UP's engine",
                  "mean solve seconds, both solved (tasks)"], lines, right_from=1)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "table.md").write_text(text + "\n")
    write_json(OUT / "table.json", data)
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["run", "table"])
    parser.add_argument("sets", nargs="*", metavar="SET", help="IPC 2023 domains and DOMAIN-scaled sets (default: all)")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    {"run": run_sets, "table": summary}[args.stage](args)


if __name__ == "__main__":
    main()

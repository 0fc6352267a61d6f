"""Mode auto's learned search alone against the same search handing the time left to LAMA-first, and
LAMA-first itself, on medium-sized generated tasks (issue 33).

The sets are generated with the package's generators (``gnnplan generate``), 3 tasks per domain
at sizes in the IPC 2023 medium range, small enough that UP's PDDL reader loads each in a few
seconds (Rovers, the slowest, about 7 s: loading does not count against the time limit of
``compare``). Each configuration is one ``gnnplan compare`` run over all of them, ``--jobs 1``,
into ``benchmarks/results/lama_handoff/CONFIG/``:

- ``learned``: ``gnnplan`` mode auto with ``fallback=model+ff`` (the default before this issue):
  the policy, then the dual learned search with the time left;
- ``handoff``: ``gnnplan`` with ``fallback=model+lama``: the same, but the learned search gives
  the time left to LAMA-first when it stalls (``handoff_stall`` expansions without a lower FF
  value) or has spent its share (``handoff_share`` of the time left after the policy);
- ``lama-first``: Fast Downward's LAMA-first through up-fast-downward (``--engine fast-downward``).

``table`` writes ``table.md`` and ``table.json``: per domain, each configuration's coverage, how
many of the hand-off's plans the learned part found, the mean plan cost on the tasks all three
solved, and the failure causes read from the engines' messages.

    OMP_NUM_THREADS=1 python -m benchmarks.lama_handoff generate
    OMP_NUM_THREADS=1 python -m benchmarks.lama_handoff run learned handoff lama-first
    python -m benchmarks.lama_handoff table
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from .common import RESULTS, fmt, run, table, write_json

OUT = RESULTS / "lama_handoff"
LOG = OUT / "commands.log"
SETS = Path("/tmp/gnnplan-lama-handoff/sets")
SEED = 33
# Sizes in the IPC 2023 medium range (medium tops: Rovers 10 rovers/88 waypoints, Satellite 40
# satellites/78 instruments, Sokoban grid 49/34 boxes, Transport 44 packages/40 locations).
SIZES = {
    "blocksworld": {"blocks": 60},
    "rovers": {"rovers": 6, "waypoints": 40, "cameras": 6, "objectives": 15},
    "satellite": {"satellites": 20, "instruments": 40, "modes": 5, "directions": 30},
    "sokoban": {"grid_size": 20, "boxes": 8},
    "spanner": {"spanners": 40, "nuts": 25, "locations": 30},
    "transport": {"vehicles": 6, "packages": 25, "locations": 25, "max_capacity": 4},
}
CONFIGS = {
    "learned": ["--engine", "gnnplan", "--engine-param", "gnnplan:fallback=model+ff"],
    "handoff": ["--engine", "gnnplan", "--engine-param", "gnnplan:fallback=model+lama"],
    "lama-first": ["--engine", "fast-downward"],
}


def generate(args) -> None:
    for domain, sizes in SIZES.items():
        folder = SETS / domain
        params = [x for name, value in sizes.items() for x in ("-p", f"{name}={value}")]
        run(["gnnplan", "generate", domain, "-o", folder, *params, "--count", 3, "--seed", SEED], LOG,
            output=folder / "domain.pddl")


def run_configs(args) -> None:
    suites = [x for domain in SIZES for x in ("--suite", SETS / domain)]
    for name in args.configs:
        extra = [x for param in args.param for x in ("--engine-param", f"gnnplan:{param}")]
        run(["gnnplan", "compare", *suites, *CONFIGS[name], *extra, "--timeout", args.timeout, "--jobs", 1,
             "--memory-mb", args.memory_mb, "--no-plots", "-o", OUT / (args.name or name)], LOG)


def _rows(name: str) -> list[dict]:
    from up_gnnplan.compare import read_results

    path = OUT / name / "results.jsonl"
    return read_results(path) if path.is_file() else []


# Failure causes, read from an engine's status and messages, first match wins.
CAUSES = [("memout", re.compile(r"memout|memory limit|out of memory", re.I)),
          ("timeout", re.compile(r"timeout|time limit|killed after", re.I)),
          ("gave up", re.compile(r"gave-up|unsolvable_incompletely", re.I))]


# gnnplan's log line of a search that ended: "dual-gbfs: timeout after ...".
_ENDED = re.compile(r"([a-z-]+): (timeout|memout|gave-up) after")


def cause(row: dict) -> str:
    """Return why ``row``'s task was not solved, in a word or two, and in which of gnnplan's parts."""
    text = " ".join(str(row.get(k) or "") for k in ("status", "error"))
    word = next((word for word, pattern in CAUSES if pattern.search(text)), row["status"])
    ended = _ENDED.findall(row.get("notes") or "")
    return f"{word} in {ended[-1][0]}" if ended else word


def summary(args) -> None:
    configs = args.configs or [name for name in CONFIGS if _rows(name)] + sorted(
        p.name for p in OUT.iterdir() if p.name not in CONFIGS and (p / "results.jsonl").is_file())
    runs = {name: {(r["domain"], r["problem"]): r for r in _rows(name)} for name in configs}
    domains = sorted({domain for rows in runs.values() for domain, _ in rows})
    lines, data = [], {}
    header = ["domain", "tasks", *configs, "mean cost, all solved", "failures"]
    for domain in domains:
        keys = sorted({k for rows in runs.values() for k in rows if k[0] == domain})
        solved = {c: [k for k in keys if runs[c].get(k, {}).get("solved")] for c in configs}
        common = [k for k in keys if all(k in solved[c] for c in configs)]
        costs = {c: (sum(runs[c][k]["plan_cost"] for k in common) / len(common) if common else None) for c in configs}
        by = {c: {who: sum(runs[c][k].get("found_by") == who for k in solved[c])
                  for who in ("learned", "lama-first", "walk+lama-first")} for c in configs}
        failures = {c: sorted(cause(runs[c][k]) for k in keys if k in runs[c] and k not in solved[c]) for c in configs}
        data[domain] = {"tasks": len(keys), "solved": {c: len(solved[c]) for c in configs}, "found_by": by,
                        "mean_cost_all_solved": costs, "failures": failures}
        cells = [f"{len(solved[c])}/{len(keys)}" + (f" ({by[c]['learned']} learned, {by[c]['lama-first']} LAMA, "
                                                    f"{by[c]['walk+lama-first']} LAMA from the walk)"
                                                    if by[c]["lama-first"] or by[c]["walk+lama-first"] else "")
                 for c in configs]
        lines.append([domain, str(len(keys)), *cells,
                      " / ".join(fmt(costs[c], 1) for c in configs) + f" ({len(common)} tasks)" if common else "-",
                      " / ".join(", ".join(failures[c]) or "-" for c in configs)])
    text = table(header, lines)
    (OUT / "table.md").write_text(text + "\n")
    write_json(OUT / "table.json", data)
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["generate", "run", "table"])
    parser.add_argument("configs", nargs="*", metavar="CONFIG", help="of " + ", ".join(CONFIGS))
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--memory-mb", type=int, default=3500)
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="more gnnplan engine params (with --name, a variant of a configuration)")
    parser.add_argument("--name", help="the results folder of a variant (default: the configuration's name)")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    {"generate": generate, "run": run_configs, "table": summary}[args.stage](args)


if __name__ == "__main__":
    main()

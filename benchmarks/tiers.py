"""The IPC 2023 medium and hard tiers, generated: gnnplan beside LAMA-first and WL-GOOSE in one run (issue 33).

For each of the ten IPC 2023 Learning Track domains and each tier, ``--count`` tasks are generated
with the package's generators (``gnnplan generate``, seed ``SEED``) at the sizes of
``benchmarks/load_speed.py``: the medium tier's largest (issue 33's list) and a hard-tier size of
our choice (3-10 times beyond, as the hard tier is). The hard tier begins where the medium tier ends
(IPC 2023's tiers grow linearly in their generators' parameters), so tier ``hard-lower`` samples it
there: one task at each of ``LOWER_HARD``'s fractions of the way from the medium tier's largest
sizes to our hard ones. One ``gnnplan compare`` per domain and tier
runs the three engines on the same tasks, one task at a time, 60 s each, every plan validated:

- ``gnnplan``: the default mode with the shipped model (auto: the learned part, then LAMA-first
  with the time left where it stalls; ``found_by`` says who found each plan);
- ``fast-downward``: LAMA-first (up-fast-downward);
- ``wl-goose``: the WL-GOOSE peer with its model of the domain (``results/goose/models/``).

``run --lama-only`` runs LAMA-first alone into ``TIER/DOMAIN-lama/`` (the runs before LAMA-first ran
on the files: through UP's engine, UP's PDDL writer took much of its time), and ``table`` takes
LAMA-first's rows from there where they are. ``table`` writes ``table.md`` and ``table.json`` under
``results/tiers/``: per domain and tier,
each engine's coverage, how many of gnnplan's plans its learned part found, the mean plan cost on
the tasks all three solved, and each failure's cause read from the engines' messages.

    OMP_NUM_THREADS=1 python -m benchmarks.tiers generate
    OMP_NUM_THREADS=1 python -m benchmarks.tiers run [DOMAIN ...] [--tier medium]
    python -m benchmarks.tiers table

The tasks are written to ``/tmp/gnnplan-tiers`` (the hard ones are megabytes each); ``run`` skips
a domain and tier whose results are there, so a stopped run continues.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import RESULTS, fmt, run, table, write_json
from .lama_handoff import cause
from .load_speed import INSTANCES

OUT = RESULTS / "tiers"
LOG = OUT / "commands.log"
SETS = Path("/tmp/gnnplan-tiers")
SEED = 61
GOOSE_MODELS = RESULTS / "goose" / "models"
ENGINES = ("gnnplan", "fast-downward", "wl-goose")
TITLES = {"gnnplan": "gnnplan", "fast-downward": "LAMA-first", "wl-goose": "WL-GOOSE"}


LOWER_HARD = (0.25, 0.5)
TIERS = ("medium", "hard", "hard-lower")


def _between(low: dict, high: dict, fraction: float) -> dict:
    return {name: round(low[name] + fraction * (high[name] - low[name])) for name in high}


def instances() -> list[tuple[str, str, list[dict]]]:
    """(tier, domain, the sizes of its tasks) of every tier: one size for medium and hard (``--count``
    tasks of it), ``LOWER_HARD``'s for hard-lower (one task of each)."""
    medium = {domain: sizes for tier, domain, sizes in INSTANCES if tier == "medium"}
    out = [(tier, domain, [sizes]) for tier, domain, sizes in INSTANCES]
    return out + [("hard-lower", domain, [_between(medium[domain], sizes, f) for f in LOWER_HARD])
                  for tier, domain, sizes in INSTANCES if tier == "hard"]


def _folder(tier: str, domain: str) -> Path:
    return SETS / tier / domain


def generate(args) -> None:
    for tier, domain, every in instances():
        if args.domains and domain not in args.domains or args.tier and tier != args.tier:
            continue
        for sizes in every:  # the file names tell the sizes apart
            params = [x for name, value in sizes.items() for x in ("-p", f"{name}={value}")]
            run(["gnnplan", "generate", domain, "-o", _folder(tier, domain), *params,
                 "--count", args.count if len(every) == 1 else 1, "--seed", SEED], LOG)


def run_tiers(args) -> None:
    for tier, domain, _ in instances():
        if args.domains and domain not in args.domains or args.tier and tier != args.tier:
            continue
        target = OUT / tier / (f"{domain}-lama" if args.lama_only else domain)
        goose = GOOSE_MODELS / f"{domain}.json"
        engines = ["--engine", "fast-downward"] if args.lama_only else ["--engine", "gnnplan", "--engine", "fast-downward"]
        if goose.is_file() and not args.lama_only:
            engines += ["--register", "benchmarks.goose.engine", "--engine", "wl-goose",
                        "--engine-param", f"wl-goose:model={goose}"]
        run(["gnnplan", "compare", "--suite", _folder(tier, domain), *engines, "--timeout", args.timeout,
             "--jobs", 1, "--memory-mb", args.memory_mb, "--no-plots", "-o", target], LOG,
            output=target / "summary.md", check=False)


def _rows(tier: str, domain: str) -> list[dict]:
    """The rows of a domain and tier, LAMA-first's from its own run on the files where there is one."""
    from up_gnnplan.compare import read_results

    path, lama = OUT / tier / domain / "results.jsonl", OUT / tier / f"{domain}-lama" / "results.jsonl"
    rows = read_results(path) if path.is_file() else []
    if lama.is_file():
        rows = [r for r in rows if r["engine"] != "fast-downward"] + read_results(lama)
    return rows


def _engine(row: dict) -> str:
    return next(name for name in ENGINES if row["engine"].startswith(name))


def summary(args) -> None:
    lines, data, totals = [], {}, {}
    for tier, domain, _ in instances():
        rows = _rows(tier, domain)
        if not rows:
            continue
        by_engine = {name: {r["problem"]: r for r in rows if _engine(r) == name} for name in ENGINES}
        keys = sorted({r["problem"] for r in rows})
        solved = {e: [k for k in keys if by_engine[e].get(k, {}).get("solved")] for e in ENGINES}
        ran = [e for e in ENGINES if by_engine[e]]
        common = [k for k in keys if all(k in solved[e] for e in ran)]
        costs = {e: sum(by_engine[e][k]["plan_cost"] for k in common) / len(common) if common else None for e in ran}
        learned = sum(by_engine["gnnplan"][k].get("found_by") == "learned" for k in solved["gnnplan"])
        failures = {e: sorted(cause(by_engine[e][k]) for k in keys if k in by_engine[e] and k not in solved[e])
                    for e in ran}
        data.setdefault(tier, {})[domain] = {
            "tasks": len(keys), "solved": {e: len(solved[e]) for e in ran}, "gnnplan_by_the_model": learned,
            "mean_cost_all_solved": costs, "failures": failures}
        for e in ran:
            totals.setdefault(tier, {}).setdefault(e, 0)
            totals[tier][e] += len(solved[e])
        cells = []
        for e in ENGINES:
            if e not in ran:
                cells.append("not run")
                continue
            cell = f"{len(solved[e])}/{len(keys)}"
            cells.append(cell + (f" ({learned} by the model)" if e == "gnnplan" and solved[e] else ""))
        lines.append([tier, domain, *cells,
                      " / ".join(fmt(costs[e], 1) for e in ran) + f" ({len(common)})" if common else "-",
                      "; ".join(f"{TITLES[e]}: {', '.join(failures[e])}" for e in ran if failures[e]) or "-"])
    for tier, counts in totals.items():
        lines.append([tier, "**total**", *[f"**{counts[e]}**" if e in counts else "" for e in ENGINES], "", ""])
    text = table(["tier", "domain", *[TITLES[e] for e in ENGINES], "mean cost, all solved (tasks)", "failures"], lines)
    (OUT / "table.md").write_text(text + "\n")
    write_json(OUT / "table.json", {"tiers": data, "totals": totals})
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["generate", "run", "table"])
    parser.add_argument("domains", nargs="*", metavar="DOMAIN", help="IPC 2023 domains (default: all ten)")
    parser.add_argument("--tier", choices=TIERS, help="one tier only (default: all)")
    parser.add_argument("--count", type=int, default=2, help="tasks per domain and tier")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--memory-mb", type=int, default=4000)
    parser.add_argument("--lama-only", action="store_true", help="run: LAMA-first alone, into TIER/DOMAIN-lama")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    {"generate": generate, "run": run_tiers, "table": summary}[args.stage](args)


if __name__ == "__main__":
    main()

"""Tallies of comparison records that the reports and the plots share: coverage, times, and the
tasks two engines both solved."""

from __future__ import annotations

from collections import defaultdict

from up_gnnplan.compare import is_solved

MIN_SECONDS = 1e-3  # times below a millisecond are counted as one, so ratios stay finite


def seconds(record: dict) -> float:
    """Return the time of a record for ratios and plots: its ``solve_time`` (the planner call), else its
    ``wall_time``, at least :data:`MIN_SECONDS`."""
    value = record.get("solve_time")
    return max(MIN_SECONDS, value if value is not None else record.get("wall_time") or 0.0)


def by_task(records: list[dict]) -> dict[tuple[str, str], dict[str, dict]]:
    """Group records by (domain, problem), then by engine."""
    tasks: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for record in records:
        tasks[(record["domain"], record["problem"])][record["engine"]] = record
    return tasks


def common_pairs(records, engine: str, baseline: str):
    """Yield (domain, engine record, baseline record) for the tasks both engines solved."""
    for (domain, _), runs in sorted(by_task(records).items()):
        if engine in runs and baseline in runs and is_solved(runs[engine]) and is_solved(runs[baseline]):
            yield domain, runs[engine], runs[baseline]


def coverage(records, engines) -> dict[str, dict[str, int]]:
    """Return domain → engine → tasks solved with a plan not found invalid."""
    table = {domain: {e: 0 for e in engines} for domain in sorted({r["domain"] for r in records})}
    for record in records:
        if is_solved(record) and record["engine"] in engines:
            table[record["domain"]][record["engine"]] += 1
    return table

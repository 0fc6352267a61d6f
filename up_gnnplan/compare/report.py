"""Reports of a comparison: ``summary.md``, the plots and a live display.

The rows themselves are in one file, ``results.jsonl`` (one JSON object per task, appended as
tasks finish; ``pandas.read_json(path, lines=True)`` reads it into a table).

The summary compares every engine with a baseline engine on the tasks both solved: plan-length
and time ratios (engine / baseline; below 1 means shorter or faster), as geometric mean and
median per domain. Times are the planner call measured in the task's process (``solve_time``:
the engine's own set-up, like a model load or Fast Downward's translator, included); the
parent's ``wall_time`` adds the process start and the plan validation.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from up_gnnplan.compare import is_solved
from up_gnnplan.compare.plots import write_plots
from up_gnnplan.compare.tallies import MIN_SECONDS, common_pairs, coverage, seconds

def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _ratio_table(records, engines, baseline, value) -> str:
    """Return per-domain geometric mean and median of value(engine) / value(baseline)."""
    rows = []
    for engine in (e for e in engines if e != baseline):
        ratios = defaultdict(list)
        for domain, mine, theirs in common_pairs(records, engine, baseline):
            a, b = value(mine), value(theirs)
            if a is not None and b is not None and a > 0 and b > 0:  # empty plans have no ratio
                ratios[domain].append(a / b)
                ratios["**all**"].append(a / b)
        for domain, values in sorted(ratios.items(), key=lambda item: (item[0] == "**all**", item[0])):
            rows.append([domain, engine, len(values), f"{_geomean(values):.2f}", f"{statistics.median(values):.2f}"])
    if not rows:
        return "No task solved by both an engine and the baseline."
    return _table(["domain", "engine", "tasks", "geometric mean", "median"], rows)


def outcomes(records, engines) -> dict[str, Counter]:
    """Return engine → counts of solved, invalid, unvalidated and each other status."""
    counts = {e: Counter() for e in engines}
    for record in records:
        count = counts.setdefault(record["engine"], Counter())
        if record.get("valid") is False:
            count["invalid plan"] += 1
        elif is_solved(record):
            count["solved"] += 1
            count["unvalidated"] += record.get("valid") is None
        else:
            count[record["status"]] += 1
    return counts


def summary_markdown(records, engines, baseline, plot_note: str = "") -> str:
    """Return the Markdown summary of ``records``."""
    timeouts = sorted({r["timeout"] for r in records})
    memory = sorted({r.get("memory_mb") for r in records if r.get("memory_mb")})
    models = sorted({f"{r['engine']}: {r['model']}" for r in records if r.get("model")})
    problems = {(r["domain"], r["problem"]) for r in records}
    lines = ["# Planner comparison", "",
             f"Engines: {', '.join(engines)}; baseline **{baseline}**. {len(problems)} problem(s) in "
             f"{len({d for d, _ in problems})} domain(s); time limit {', '.join(f'{t:g}' for t in timeouts)} s; "
             f"memory {', '.join(map(str, memory)) or '?'} MB per task."]
    if models:
        lines.append(f"Models: {'; '.join(models)}.")
    lines += ["", "## Coverage (tasks solved with a valid plan)", ""]
    table = coverage(records, engines)
    sizes = Counter(d for d, _ in problems)
    rows = [[d, sizes[d], *(table[d][e] for e in engines)] for d in table]
    rows.append(["**total**", len(problems), *(sum(table[d][e] for d in table) for e in engines)])
    lines += [_table(["domain", "problems", *engines], rows), ""]
    lines += [f"## Plan length / {baseline} (commonly solved)", "",
              _ratio_table(records, engines, baseline, lambda r: r.get("plan_length")), ""]
    lines += [f"## Time / {baseline} (commonly solved; solve_time, floored at {MIN_SECONDS:g} s)", "",
              _ratio_table(records, engines, baseline, seconds), ""]
    counts = outcomes(records, engines)
    statuses = sorted({s for c in counts.values() for s in c} - {"solved", "invalid plan", "unvalidated"})
    columns = ["solved", "invalid plan", "unvalidated", *statuses]
    rows = [[e, *(counts[e][c] for c in columns)] for e in counts]
    lines += ["## Outcomes", "", _table(["engine", *columns], rows), ""]
    gnnplan = [e for e in counts if e.startswith("gnnplan")]
    if gnnplan:
        bad = sum(counts[e]["invalid plan"] for e in gnnplan)
        plans = sum(counts[e]["solved"] - counts[e]["unvalidated"] for e in gnnplan)
        lines.append(f"**gnnplan returned {bad} invalid plan(s): a bug.**" if bad else
                     f"gnnplan: 0 invalid plans ({plans} plan(s) validated).")
    lines += ["", "Every plan of every engine was checked in its task's process with UP's SequentialPlanValidator "
              "(existential goals: gnnplan's validation helper); `unvalidated` plans could not be checked "
              "(see `validation_note` in results.jsonl)."]
    if plot_note:
        lines += ["", "## Plots", "", plot_note]
    return "\n".join(lines) + "\n"


def write_reports(records, out_dir, engines, baseline, plots: bool = True) -> tuple[str, list[Path]]:
    """Write summary.md (and the plots) from the rows of results.jsonl; return the summary and the files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "summary.md"]
    note = ""
    if plots:
        written, note = write_plots(records, out, engines, baseline)
        files += written
    summary = summary_markdown(records, engines, baseline, note)
    files[0].write_text(summary)
    return summary, files


class LiveDisplay:
    """Show tasks done out of all and the tasks each engine solved, while a comparison runs.

    Quiet when stderr is not a terminal (or ``enabled`` is False).
    """

    def __init__(self, tasks, done: list[dict], enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.total = len(tasks)
        self.per_engine = Counter(t.engine for t in tasks)
        self.done = len(done)
        self.solved = Counter(r["engine"] for r in done if is_solved(r))
        self._progress = None

    def _solved_text(self) -> str:
        return "  ".join(f"{e} {self.solved[e]}/{n}" for e, n in self.per_engine.items())

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("tasks"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                      TextColumn("solved: {task.fields[solved]}"), console=Console(stderr=True),
                                      transient=True)
            self._progress.__enter__()
            self._bar = self._progress.add_task("tasks", total=self.total, completed=self.done,
                                                solved=self._solved_text())
        return self

    def add(self, record: dict) -> None:
        self.done += 1
        self.solved[record["engine"]] += is_solved(record)
        if self._progress is not None:
            self._progress.update(self._bar, completed=self.done, solved=self._solved_text())

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.__exit__(*exc)
        return False

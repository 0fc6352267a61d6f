"""Plots of a comparison (PNG, matplotlib's Agg canvas; only when matplotlib is installed).

- ``coverage.png``: tasks solved per domain, one bar per engine;
- ``cactus.png``: tasks solved within a time, one line per engine (log time axis);
- ``plan_length.png``: plan length of each engine against the baseline's on commonly solved
  tasks (log axes; points below the diagonal are shorter than the baseline's).

Figures are drawn on ``matplotlib.figure.Figure`` objects with an Agg canvas, never through
pyplot, so plotting changes no global backend and opens no window.
"""

from __future__ import annotations

from pathlib import Path

from up_gnnplan.compare import is_solved
from up_gnnplan.compare.tallies import common_pairs, coverage, seconds

INSTALL_HINT = "matplotlib is not installed, so no plots were drawn: pip install 'up-gnnplan[plot]'"


def _figure(width: float = 7.0, height: float = 4.5):
    """Return a new figure on an Agg canvas and its one set of axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=120)
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _plain_numbers(axis) -> None:
    """Label a log axis with plain numbers (0.5, 2, 30) rather than powers of ten.

    Minor ticks are labelled too when the axis spans less than about a decade, where there
    would be no major tick to read.
    """
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    low, high = axis.get_view_interval()
    axis.set_major_formatter(plain)
    axis.set_minor_formatter(plain if low > 0 and high / low < 20 else NullFormatter())


def coverage_chart(records, engines, path: Path) -> Path:
    """Draw grouped bars: tasks solved per domain and engine, over the domain's problem count."""
    from matplotlib.ticker import MaxNLocator

    table = coverage(records, engines)
    domains = list(table)
    sizes = {d: len({r["problem"] for r in records if r["domain"] == d}) for d in domains}
    figure, axes = _figure(max(5.0, 1.2 + 0.9 * len(domains) * max(1, len(engines)) / 2))
    width = 0.8 / max(1, len(engines))
    for i, engine in enumerate(engines):
        xs = [j + (i - (len(engines) - 1) / 2) * width for j in range(len(domains))]
        axes.bar(xs, [table[d][engine] for d in domains], width, label=engine)
    axes.set_xticks(range(len(domains)), [f"{d}\n({sizes[d]})" for d in domains])
    axes.set_ylim(0, 1.25 * max(sizes.values(), default=1))  # room for the legend above full bars
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylabel("tasks solved")
    axes.set_title("Coverage per domain (problems in brackets)")
    axes.legend(loc="upper right", ncols=min(3, len(engines)))
    figure.tight_layout()
    figure.savefig(path)
    return path


def cactus_plot(records, engines, path: Path) -> Path:
    """Draw the number of tasks each engine solved within t seconds, against t."""
    from matplotlib.ticker import MaxNLocator

    figure, axes = _figure()
    for engine in engines:
        times = sorted(seconds(r) for r in records if r["engine"] == engine and is_solved(r))
        if times:
            axes.step(times, range(1, len(times) + 1), where="post", marker=".", label=engine)
    axes.set_xscale("log")
    _plain_numbers(axes.xaxis)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("time (s, planner call)")
    axes.set_ylabel("tasks solved")
    axes.set_title("Solved tasks over time")
    axes.grid(True, which="both", alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    return path


def plan_length_scatter(records, engines, baseline, path: Path) -> Path:
    """Draw each engine's plan length against the baseline's on the tasks both solved."""
    figure, axes = _figure(5.5, 5.0)
    low, high = float("inf"), 0.0
    for engine in (e for e in engines if e != baseline):
        pairs = [(theirs["plan_length"], mine["plan_length"])
                 for _, mine, theirs in common_pairs(records, engine, baseline)
                 if mine.get("plan_length") and theirs.get("plan_length")]  # log axes: no empty plans
        if pairs:
            xs, ys = zip(*pairs)
            axes.scatter(xs, ys, label=engine, alpha=0.7)
            low, high = min(low, *xs, *ys), max(high, *xs, *ys)
    if high > 0:
        axes.plot([low, high], [low, high], color="grey", linewidth=1, linestyle="--")
        axes.set_xscale("log")
        axes.set_yscale("log")
        _plain_numbers(axes.xaxis)
        _plain_numbers(axes.yaxis)
        axes.legend()
    else:
        axes.text(0.5, 0.5, "no task solved by an engine and the baseline", ha="center", transform=axes.transAxes)
    axes.set_xlabel(f"plan length of {baseline}")
    axes.set_ylabel("plan length")
    axes.set_title("Plan length against the baseline")
    figure.tight_layout()
    figure.savefig(path)
    return path


def write_plots(records, out_dir, engines, baseline) -> tuple[list[Path], str]:
    """Write the three plots into ``out_dir``; return the files and a Markdown note about them."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return [], INSTALL_HINT
    out = Path(out_dir)
    files = [coverage_chart(records, engines, out / "coverage.png"), cactus_plot(records, engines, out / "cactus.png")]
    if len(engines) > 1:
        files.append(plan_length_scatter(records, engines, baseline, out / "plan_length.png"))
    return files, "\n\n".join(f"![{f.stem}]({f.name})" for f in files)

"""``gnnplan compare``: planners on the same problems, each task in its own process, with reports."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from up_gnnplan.cli.common import SECONDS, Command, bundled_example, fail, memory_option
from up_gnnplan.executors import EXECUTORS  # the executors' names: no ray
from up_gnnplan.search.modes import MODES


@click.command(cls=Command)
@click.argument("files", nargs=-1, type=click.Path(exists=True), metavar="[DOMAIN PROBLEM...]")
@click.option("--engine", "engines", multiple=True, required=True, metavar="SPEC",
              help=f"Repeatable: gnnplan[:MODE] (MODE one of {', '.join(MODES)}), fast-downward (LAMA-first), or any "
                   "UP OneshotPlanner name.")
@click.option("--model", "models", multiple=True, metavar="[DOMAIN=]MODEL",
              help="Model of the gnnplan engines (shipped name or ONNX file); DOMAIN=MODEL for one domain only. "
                   "Default: the shipped model of each domain.")
@click.option("--register", "register", multiple=True, metavar="MODULE",
              help="Repeatable: a Python module that registers more UP engines when imported (found from the "
                   "current folder or the Python path); imported here and in each task's process.")
@click.option("--engine-param", "engine_params", multiple=True, metavar="ENGINE:KEY=[DOMAIN=]VALUE",
              help="Repeatable: a param for one engine (any engine; --model is for gnnplan), for all domains or, "
                   "with DOMAIN=, for one: --engine-param wl-goose:model=blocksworld=bw.json. A domain's own value "
                   "wins; an existing file is passed as an absolute path.")
@click.option("--suite", "suites", multiple=True, type=click.Path(file_okay=False, exists=True), metavar="DIR",
              help="Repeatable: a folder of problems with domain.pddl in it or up to two folders above.")
@click.option("--example", "examples", multiple=True, metavar="NAME", help="Repeatable: a bundled example domain.")
@click.option("--timeout", type=SECONDS, default=60.0, show_default=True,
              help="Seconds given to the planner of each task.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Tasks run in parallel [default: 1; with --executor ray, as many as the cluster has CPUs].")
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="local: processes on this machine; ray: each task a Ray task with the same limits, run again if "
                   "its worker is lost (pip install 'up-gnnplan[ray]').")
@click.option("--address", metavar="HOST:PORT",
              help="With --executor ray: the cluster's head (`ray start --head` prints it); 'local' starts a new "
                   "local instance [default: RAY_ADDRESS, else a cluster on this machine, else a new local one].")
@memory_option("of each task (gnnplan's own limit; the task's process gets an address space with room for what "
               "it maps, which bounds other planners too).", default=3500)
@click.option("--grace", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="Seconds past the time limit before a task is killed (and recorded as timeout).")
@click.option("-o", "--output", type=click.Path(file_okay=False), required=True, help="Folder for results and reports.")
@click.option("--resume", is_flag=True, help="Skip the tasks already in OUT/results.jsonl (else it starts anew).")
@click.option("--baseline", metavar="SPEC", help="The engine of the ratios (default: the last --engine).")
@click.option("--no-plots", is_flag=True, help="Do not draw the PNG plots.")
def compare(files, engines, models, register, engine_params, suites, examples, timeout, jobs, executor, address,
            memory_mb, grace, output, resume, baseline, no_plots):
    """Compare planners: every --engine on every problem, each task in its own process.

    Problems are DOMAIN PROBLEM... files, --suite folders and --example domains. Every plan is
    validated; each task's row goes to OUT/results.jsonl as it finishes, then OUT/summary.md and
    PNG plots are written from them. Each engine's configuration (its params, its models) is checked
    before any task runs; an engine whose every task ends in the same error (unsupported_problem,
    internal_error, error) makes the command fail (exit 2) after the reports are written. Example:
    gnnplan compare --engine gnnplan:gbfs --engine fast-downward --suite bench/blocks -o out --timeout 60

    An engine of another package, with its model per domain (run from the repository root):
    gnnplan compare --register benchmarks.goose.engine --engine wl-goose
    --engine-param wl-goose:model=blocksworld=bw.json --suite bench/blocks -o out

    On a Ray cluster (the nodes need this package and the files at the same paths):
    gnnplan compare --engine gnnplan --suite bench/blocks -o out --executor ray --address HOST:6379
    """
    import os

    from up_gnnplan.compare import compare as run, file_problems, parse_models, suite_problems
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.limits import address_space_for

    files = list(files)
    suites = list(suites) + [f for f in files if Path(f).is_dir()]
    files = [f for f in files if not Path(f).is_dir()]
    model = parse_models(models)
    if register and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would: modules of the current folder can be named
    try:
        problems = file_problems(files[0], files[1:]) if files else []
        if files and len(files) < 2:
            raise click.UsageError("give a DOMAIN file and at least one PROBLEM file")
        for suite in suites:
            problems += suite_problems(suite)
        for name in examples:
            bundled = bundled_example(name)
            problems += file_problems(bundled[0], bundled[1:])
        if not problems:
            raise click.UsageError("give DOMAIN PROBLEM... files, --suite DIR or --example NAME")
        outcome = run(list(engines), problems, output, timeout=timeout, jobs=jobs, model=model,
                      memory_mb=address_space_for(memory_mb),  # the process's limit: room for what it maps
                      resume=resume, baseline=baseline, grace=grace, plots=not no_plots, register=register,
                      engine_params=list(engine_params), executor=executor, address=address)
    except (ValueError, FileNotFoundError, click.UsageError, GnnplanError) as error:
        fail(error)
    click.echo(outcome.summary, nl=False)
    click.echo(f"\n{len(outcome.records)} task(s); results and reports in {output}/: "
               + ", ".join(f.name for f in outcome.files))
    if outcome.faults:  # an engine that failed every task alike did not run: the command failed
        fail("; ".join(outcome.faults))

"""``gnnplan solve`` and ``gnnplan ground``: a problem solved by the engine, or its goal bound.

``solve`` is the engine's UP contract on the command line: its options are the engine's params
(:data:`~up_gnnplan.plugins.params.PARAMS`, whose defaults and help they take), its ``--mode``
choices are :data:`~up_gnnplan.search.modes.MODES`, and an option the chosen mode does not take
is refused. The plan goes to standard output (or ``--plan-file``) as Fast Downward writes plans,
the summary line to standard error.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from click.core import ParameterSource

from up_gnnplan.cli.common import (EXIT_AT_ONCE, EXIT_INPUT_ERROR, EXIT_LIMIT, EXIT_OK, EXIT_UNSOLVABLE, MEGABYTES,
                                   SECONDS, Command,
                                   device_option, fail, memory_option, refuse_files_with_example, renamed)
from up_gnnplan.plugins.params import PARAMS, applies_to
from up_gnnplan.search.modes import FALLBACKS, MODES, PLANNERS


def engine_option(*decls, param: str, modes: bool = True, **kwargs):
    """An option that sets the engine param ``param``: the param's default and help, prefixed with the
    modes that take it (``modes``)."""
    kwargs.setdefault("default", PARAMS[param].default)
    kwargs.setdefault("show_default", kwargs["default"] is not None and not kwargs.get("is_flag"))
    help = kwargs.pop("help", PARAMS[param].help)
    prefix = applies_to(param) if modes else ""
    if prefix and help[1:2].islower():  # "Modes auto, ground: the search after ..."
        help = help[0].lower() + help[1:]
    return click.option(*decls, param, help=prefix + help, **kwargs)


def grounding_options(modes: bool):
    """The options of the goal binding, the same in ``solve --mode ground`` and ``ground``."""
    options = [
        engine_option("--grounding-model", param="grounding_model", modes=modes),
        engine_option("--no-static-filter", param="static_filter", modes=modes, is_flag=True, flag_value=False,
                      help="Let the model bind a variable even where a static goal atom (a colour), an inequality or "
                           "an invariant of the domain (one ball in two rooms) rules the object out."),
        engine_option("--binding-beam", param="binding_beam", modes=modes, type=click.IntRange(min=1)),
        renamed("--beam", "--binding-beam", "binding_beam", type=click.IntRange(min=1)),
        engine_option("--binding-entailment/--no-binding-entailment", param="binding_entailment", modes=modes),
        renamed("--entailment/--no-entailment", "--binding-entailment", "binding_entailment"),
    ]

    def decorate(function):
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def exit_code(status) -> int:
    """Return the exit code of a UP plan-generation status (see :mod:`up_gnnplan.cli.common`)."""
    name = status.name.lower()
    if name.startswith("solved"):
        return EXIT_OK
    if name in ("timeout", "memout"):
        return EXIT_LIMIT
    return EXIT_INPUT_ERROR if name in ("unsupported_problem", "internal_error") else EXIT_UNSOLVABLE


def engine_params(ctx: click.Context) -> dict:
    """Return the engine params given on the command line (the engine's defaults stand for the rest);
    refuse an option the chosen mode does not take, by its option name."""
    mode = MODES[ctx.params["mode"]]
    given = {"mode": mode.name}
    for param in ctx.command.params:
        name = param.name
        if name not in PARAMS or name == "mode" or ctx.get_parameter_source(name) == ParameterSource.DEFAULT:
            continue
        if not mode.takes(name):
            raise click.UsageError(f"{param.opts[0]}: {applies_to(name)[:-2].lower()} only, not mode {mode.name}")
        given[name] = ctx.params[name]
    return given


@click.command(cls=Command)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False), metavar="DOMAIN PROBLEM")
@click.option("--example", help="Solve a bundled example instead: NAME or NAME/PROBLEM (e.g. blocksworld/p04.pddl).")
@engine_option("--mode", param="mode", type=click.Choice(list(MODES)), show_default=True)
@engine_option("--model", param="model")
@engine_option("--fallback", param="fallback", type=click.Choice(FALLBACKS))
@engine_option("--handoff-share", param="handoff_share", type=click.FloatRange(min=0.0, max=1.0))
@engine_option("--handoff-stall", param="handoff_stall", type=click.IntRange(min=0))
@engine_option("--on-course/--no-on-course", param="on_course")
@engine_option("--handoff-from-walk/--no-handoff-from-walk", param="handoff_from_walk")
@engine_option("--handoff-reduced/--no-handoff-reduced", param="handoff_reduced")
@engine_option("--keep-goals/--no-keep-goals", param="keep_goals")
@click.option("--timeout", type=SECONDS, default=60.0, show_default=True,
              help="Seconds from the start of the command: reading the PDDL, search and validation all count.")
@memory_option("half the machine's RAM, within what is free, by default; 0: none.")
@renamed("--memory", "--memory-mb", "memory_mb", type=MEGABYTES)
@device_option(PARAMS["device"].help)
@engine_option("--max-steps", param="max_steps", type=click.IntRange(min=1))
@engine_option("--astray-factor", param="astray_factor", type=click.FloatRange(min=0.0))
@engine_option("--seed-fallback/--no-seed-fallback", param="seed_fallback")
@engine_option("--backtrack/--no-backtrack", param="backtrack")
@engine_option("--hide-done/--no-hide-done", param="hide_done")
@engine_option("--action-elimination/--no-action-elimination", param="action_elimination")
@engine_option("--symmetry/--no-symmetry", param="symmetry")
@engine_option("--deferred", param="deferred", type=click.Choice(["auto", "true", "false"]))
@click.option("-v", "--verbose", is_flag=True,
              help="Print the engine's whole log on standard error as it happens: each search, its limits and how "
                   "it ended (without it: warnings and errors, at the end).")
@click.option("--plan-file", type=click.Path(dir_okay=False),
              help="Write the plan here instead of to standard output.")
@grounding_options(modes=True)
@engine_option("--planner", param="planner", type=click.Choice(PLANNERS))
@engine_option("--max-groundings", param="max_groundings", type=click.IntRange(min=1))
@click.pass_context
def solve(ctx, files, example, timeout, plan_file, verbose, **options):
    """Solve PROBLEM of DOMAIN with a learned model: the plan on standard output (or --plan-file),
    ending with its cost line as Fast Downward writes it, and a summary line on standard error.

    Example: gnnplan solve domain.pddl p01.pddl --timeout 60 > p01.plan
    """
    from up_gnnplan.limits import MemoryLimitReached, command_start

    start = command_start()  # the limit counts from the command's start, its imports included
    EXIT_AT_ONCE["on"] = True
    from unified_planning.exceptions import UPUsageError

    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.limits import Limits, TimeLimitReached, default_memory_mb
    from up_gnnplan.plugins.engine import GnnplanEngine
    from up_gnnplan.problems import Task

    refuse_files_with_example(files, example)
    if example:
        from up_gnnplan.data import example_problem

        try:
            files = [str(path) for path in example_problem(example)]
        except ValueError as error:
            fail(error)
    if len(files) != 2:
        raise click.UsageError("give DOMAIN and PROBLEM files (or --example NAME)")
    if plan_file and not Path(plan_file).resolve().parent.is_dir():
        fail(f"--plan-file {plan_file}: the folder {Path(plan_file).resolve().parent} does not exist")
    params = engine_params(ctx)
    try:
        engine = GnnplanEngine(**params)
    except UPUsageError as error:
        fail(error)
    engine.error_on_failed_checks = False  # an unsupported problem becomes a status with our message
    name, mode = Path(files[1]).name, params["mode"]
    memory_mb = options["memory_mb"]
    limits = Limits(timeout, default_memory_mb() if memory_mb is None else memory_mb, start=start)
    try:  # pymimir reads the files; UP's reader only where a UP answer is needed (mode ground)
        task = Task.from_files(*files, check=lambda what: limits.check(f"{what}, reading the PDDL files"))
        limits.check("after reading the PDDL files")
    except TimeLimitReached:
        click.echo(f"{name}: timeout after {time.perf_counter() - start:.2f} s (mode {mode}): time limit of "
                   f"{timeout:g} s reached while reading the PDDL files", err=True)
        sys.exit(EXIT_LIMIT)
    except MemoryLimitReached as error:
        click.echo(f"{name}: memout after {time.perf_counter() - start:.2f} s (mode {mode}): {error}", err=True)
        sys.exit(EXIT_LIMIT)
    except GnnplanError as error:
        fail(error)
    engine.clock_start = start
    result = engine.solve_task(task, timeout=timeout, output_stream=sys.stderr if verbose else None)
    _report(name, mode, task, result, time.perf_counter() - start, plan_file, verbose)
    sys.exit(exit_code(result.status))


def _report(name: str, mode: str, task, result, seconds: float, plan_file, verbose: bool = False) -> None:
    """Print the engine's warnings and errors (unless ``verbose`` printed the whole log already), the
    plan (or write it), and the summary line."""
    from up_gnnplan.problems.plans import plan_text

    for log in result.log_messages:
        if log.level.name in ("ERROR", "WARNING") and not verbose:
            click.echo(f"{log.level.name.lower()}: {log.message}", err=True)
    status, metrics = result.status.name.lower(), result.metrics
    if result.plan is None:
        last = result.log_messages[-1].message if result.log_messages else ""
        reason = f": {last}" if status in ("timeout", "memout") and last else ""
        click.echo(f"{name}: {status} after {seconds:.2f} s (mode {mode}){reason}", err=True)
        return
    text = plan_text(None if task.from_files_only else task.up_problem, result.plan, metrics.get("plan_cost"))
    if plan_file:
        try:
            Path(plan_file).write_text(text)
        except OSError as error:  # the plan is not lost: it goes to standard output instead
            click.echo(text, nl=False)
            click.echo(f"error: --plan-file {plan_file}: cannot be written ({error.strerror}); the plan is printed "
                       "above", err=True)
    else:
        click.echo(text, nl=False)
    sys.stdout.flush()  # the plan before the summary where both streams go to one file
    if "planner" in metrics:  # mode ground: the binding and the planner of the ground problem
        binding = metrics.get("binding")
        click.echo(f"{name}: {status}, {len(result.plan.actions)} actions, {seconds:.2f} s, "
                   + (f"binding {binding} ({metrics.get('groundings_tried')} tried, model "
                      f"{Path(metrics.get('grounding_model', '')).name}), " if binding else "no quantified variable, ")
                   + f"solved by {metrics.get('planner')}, plan validated", err=True)
        return
    found = metrics.get("found_by")
    found = FOUND_BY.get(found, found) if found != "learned" else metrics.get("search")
    click.echo(f"{name}: {status}, {len(result.plan.actions)} actions, cost {metrics.get('plan_cost')}, "
               f"{seconds:.2f} s, {metrics.get('expanded')} expanded, {metrics.get('evaluated')} evaluated, "
               + (f"found by {found}, " if found else "")
               + f"model {Path(metrics.get('model', '')).name} on {metrics.get('provider')}, plan validated", err=True)


# How the summary line names who found a plan (the metric found_by; "learned": the search's own name).
FOUND_BY = {"lama-first": "LAMA-first", "walk+lama-first": "the walk, then LAMA-first"}


@click.command(cls=Command)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False), metavar="DOMAIN PROBLEM")
@grounding_options(modes=False)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the ground problem (PDDL) here.")
def ground(files, grounding_model, static_filter, binding_beam, binding_entailment, output):
    """Bind the existential goal of PROBLEM with a learned model; print the binding and the ground problem.

    Example: gnnplan ground domain.pddl p01.pddl -o p01-ground.pddl
    """
    if len(files) != 2:
        raise click.UsageError("give DOMAIN and PROBLEM files")
    from unified_planning.io import PDDLWriter

    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.grounding.preprocess import ground_problem
    from up_gnnplan.problems.loading import load_pddl

    try:
        problem = load_pddl(*files)
        grounded = ground_problem(problem, grounding_model, static_filter=static_filter, beam=binding_beam,
                                  entailment=binding_entailment)
    except GnnplanError as error:
        fail(error)
    for step in grounded.steps:
        why = (f"V = {step.value:.3f}, best of {step.candidates} candidates" if step.candidates
               else "adds nothing to the goal: made without the model")
        click.echo(f"?{step.variable} = {step.obj}  ({why})", err=output is None)
    text = PDDLWriter(grounded.problem).get_problem()
    if output:
        Path(output).write_text(text)
    else:
        click.echo(text, nl=False)
    summary = (f"binding {', '.join(f'?{v}={o}' for v, o in grounded.binding.items())} in {grounded.seconds:.2f} s "
               f"({grounded.evaluated} candidates valued)" if grounded.changed else "no quantified variable: unchanged")
    click.echo(f"{Path(files[1]).name}: {summary}" + (f"; ground problem written to {output}" if output else ""),
               err=output is None)

"""``gnnplan dataset`` and ``gnnplan generate``: labelled states of small problems, and problems to label."""

from __future__ import annotations

from pathlib import Path

import click

from up_gnnplan.cli.common import (EXIT_LIMIT, EXIT_UNSOLVABLE, SECONDS, Command, bundled_example, fail, memory_option,
                                   refuse_files_with_example)
from up_gnnplan.executors import EXECUTORS  # the executors' names: no ray


@click.command(cls=Command)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False), metavar="DOMAIN PROBLEMS...")
@click.option("--example", help="Use a bundled example domain and its problems (blocksworld, gripper).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Dataset file to write (.npz).")
@click.option("--method", type=click.Choice(["auto", "expand", "optimal"]), default="auto", show_default=True,
              help="expand: whole state space; optimal: states along optimal plans and their successors; "
                   "auto: expand when the space fits under --max-states, else optimal.")
@click.option("--max-states", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="State limit of one full expansion: a larger space is labelled along an optimal plan instead "
                   "(method auto) or skipped (method expand).")
@click.option("--allow-unsolvable", is_flag=True, help="Keep unsolvable problems (all their states are dead ends).")
@click.option("--heuristic", type=click.Choice(["hmax", "h2", "blind"]), default="hmax", show_default=True,
              help="Admissible heuristic of the optimal planner (method optimal).")
@click.option("--plan-time-limit", type=SECONDS, default=300.0, show_default=True,
              help="Seconds for one optimal plan (method optimal, or auto's fallback).")
@click.option("--successor-time-limit", type=SECONDS, default=5.0, show_default=True,
              help="Seconds to label one successor of a plan state (method optimal).")
@click.option("--successor-expansion-limit", type=click.IntRange(min=1), default=None,
              help="States one successor's search may expand (method optimal). Unlike the time limit, it stops the "
                   "same searches on every machine: with it, and a time limit that is not reached first, a dataset "
                   "built again is the same.")
@click.option("--no-successors", is_flag=True, help="With method optimal, label only the states on the plans.")
@click.option("--grounding", is_flag=True,
              help="Goal-grounding data (problems with existential goals): V*(s; G) under goal variants with some "
                   "variables bound, for a goal-grounding model (Funkquist et al. 2024).")
@click.option("--goals-per-problem", type=click.IntRange(min=1), default=16, show_default=True,
              help="With --grounding: goal variants per problem (the goal as written included).")
@click.option("--states-per-goal", type=click.IntRange(min=1), default=48, show_default=True,
              help="With --grounding: states kept per goal variant (the initial state among them).")
@click.option("--valid-share", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="With --grounding: chance that a bound variable of a goal variant gets an object breaking no "
                   "static atom or inequality (the others are drawn among all objects of its type).")
@click.option("--shared-states", is_flag=True,
              help="With --grounding: draw the kept states once per problem and label them under every goal "
                   "variant, so that each state compares the variants (for --loss rank, l1+rank, mse+rank).")
@click.option("--seed", type=int, default=0, show_default=True, help="With --grounding: seed of the variants and states.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Problems labelled at once, each in its own process [default: 1, in this process; with "
                   "--executor ray, as many as the cluster has CPUs].")
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="local: processes on this machine; ray: each problem a Ray task (pip install 'up-gnnplan[ray]').")
@click.option("--address", metavar="HOST:PORT",
              help="With --executor ray: the cluster's head (`ray start --head` prints it); 'local' starts a new "
                   "local instance [default: RAY_ADDRESS, else a cluster on this machine, else a new local one].")
@memory_option("an expansion that would pass it stops, and its problem is labelled along an optimal plan "
               "instead (method auto) or skipped (expand; optimal, when its plan search passes it), with a line "
               "saying so [default: half the RAM, at most what is free at the start]. In a process per problem "
               "(--jobs, --executor, --task-timeout) it also bounds that process's address space.")
@click.option("--task-timeout", type=SECONDS, default=None,
              help="Seconds for each problem's process (runs each problem in a process of its own).")
def dataset(files, example, output, method, max_states, allow_unsolvable, heuristic, plan_time_limit,
            successor_time_limit, successor_expansion_limit, no_successors, grounding, goals_per_problem,
            states_per_goal, valid_share, shared_states, seed, jobs, executor, address, memory_mb, task_timeout):
    """Label every state of small PROBLEMS of DOMAIN with its exact optimal cost-to-go V*.

    Examples: gnnplan dataset domain.pddl p01.pddl p02.pddl -o blocks.npz;
    gnnplan dataset --example blocksworld -o blocks.npz;
    gnnplan dataset domain.pddl p*.pddl -o blocks.npz --executor ray --address HOST:6379
    """
    refuse_files_with_example(files, example)
    files = bundled_example(example) if example else list(files)
    if len(files) < 2:
        raise click.UsageError("give a DOMAIN file and at least one PROBLEM file (or --example NAME)")
    domain, problems = files[0], files[1:]
    from up_gnnplan.datasets.build import BuildOptions, ProblemsSkipped, build_dataset, sweep_dataset
    from up_gnnplan.errors import GnnplanError, UnsolvableProblemError
    from up_gnnplan.executors import make_executor
    from up_gnnplan.limits import address_space_for
    from up_gnnplan.progress import ProblemProgress

    options = BuildOptions(
        method=method, max_states=max_states, allow_unsolvable=allow_unsolvable, heuristic=heuristic,
        plan_time_limit=plan_time_limit, successor_time_limit=successor_time_limit,
        successor_expansion_limit=successor_expansion_limit,
        include_successors=not no_successors, memory_mb=memory_mb,
    )
    sweep = executor != "local" or (jobs or 1) > 1 or task_timeout is not None
    if (sweep or memory_mb is not None) and grounding:
        raise click.UsageError("--grounding labels in this process only (its goal variants draw from one random "
                               "stream across problems): drop --jobs, --executor, --memory-mb and --task-timeout")
    try:
        with ProblemProgress(len(problems)) as progress:
            if sweep:
                # Each problem's process: its resident limit, and an address space with room for what it maps.
                data = sweep_dataset(domain, list(problems), options, make_executor(executor, jobs, address),
                                     memory_mb=address_space_for(memory_mb), timeout=task_timeout, progress=progress)
            elif grounding:
                from up_gnnplan.grounding.dataset import GroundingDataOptions, build_grounding_dataset

                data = build_grounding_dataset(domain, list(problems), GroundingDataOptions(
                    goals_per_problem=goals_per_problem, states_per_goal=states_per_goal, max_states=max_states,
                    seed=seed, valid_share=valid_share, shared_states=shared_states), progress=progress)
            else:
                data = build_dataset(domain, list(problems), options, progress=progress)
        path = data.save(output)
    except UnsolvableProblemError as error:
        fail(error, EXIT_UNSOLVABLE)
    except ProblemsSkipped as error:  # each over the state or the memory limit
        fail(error, EXIT_LIMIT)
    except GnnplanError as error:
        fail(error)
    dead = int(data.dead_end.sum())
    values = data.value[~data.dead_end]
    spread = f"V* from {values.min():g} to {values.max():g}" if len(values) else "no solvable state"
    click.echo(
        f"{path}: {len(data)} states from {len(data.problems)} problem(s) of domain '{data.domain}', "
        f"{dead} dead end(s), {spread}"
    )
    for record in data.problems:
        stats = record.stats
        click.echo(f"  {record.name}: {stats['states']} states ({record.method}), {stats['objects']} objects, "
                   f"V*(initial) = {stats['initial_value']:g}")
    by_time = sum(record.stats.get("left_out_by_time_limit", 0) for record in data.problems)
    if by_time:
        click.echo(f"warning: {by_time} successor(s) left out by the time limit of {successor_time_limit:g} s: which "
                   "ones depends on this machine's speed and load, so a dataset built again may differ; "
                   "--successor-expansion-limit (with a longer time limit) makes it reproducible", err=True)
    by_memory = sum(record.stats.get("left_out_by_memory_limit", 0) for record in data.problems)
    if by_memory:
        click.echo(f"warning: {by_memory} successor(s) left out by the memory limit (--memory-mb)", err=True)


class _GenerateCommand(click.Command):
    """The generate command: its help ends with every generator's size parameters."""

    def format_epilog(self, ctx, formatter):
        from up_gnnplan.datasets.generators import GENERATORS  # read when the help is shown, not at startup

        with formatter.section("Domains, with their size parameters and defaults"):
            formatter.write_dl([(name, f"{', '.join(f'{k}={v}' for k, v in g.defaults.items())}. {g.description}")
                                for name, g in GENERATORS.items()])
        super().format_epilog(ctx, formatter)


@click.command(cls=_GenerateCommand)
@click.argument("domain_name", metavar="DOMAIN")
@click.option("-o", "--output", type=click.Path(file_okay=False), required=True, help="Folder to write into.")
@click.option("--count", type=int, default=10, show_default=True, help="Number of problems.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Size parameter, e.g. -p width=6 -p height=4 (see the domain's defaults below).")
def generate(domain_name, output, count, seed, params):
    """Generate seeded instances of DOMAIN (blocks, blocksworld, childsnack, gripper, logistics, transport;
    in the IPC 2023 Learning Track layout: ferry, miconic, spanner, satellite, rovers, floortile,
    sokoban; navig-xy, visitall-xy, vacuum; with existential goals over coloured objects:
    exists-blocks, exists-blocks-c, exists-gripper, exists-delivery, exists-visitall). The size
    parameters of each are listed below; a wrong name or size parameter lists them too.
    """
    from up_gnnplan.datasets.generators import GENERATORS, generate as run

    from up_gnnplan.datasets.generators.params import parse_sizes

    try:
        sizes = parse_sizes(params)
    except ValueError as error:
        fail(error)
    try:
        paths = run(domain_name, Path(output), count=count, seed=seed, **sizes)
    except ValueError as error:
        known = ", ".join(f"{k} ({', '.join(f'{n}={v}' for n, v in g.defaults.items())})" for k, g in GENERATORS.items())
        fail(f"{error}\nknown generators: {known}")
    click.echo(f"wrote {Path(output) / 'domain.pddl'} and {len(paths)} problem(s)")

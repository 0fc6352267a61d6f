"""The ``gnnplan`` command line.

Commands are thin: each parses options, calls the package, and prints. Heavy imports (UP,
pymimir, torch, onnxruntime) happen inside the command that needs them, so ``gnnplan --help``
starts fast and never imports torch.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import click

from up_gnnplan.executors import EXECUTORS  # the executors' names: no ray
from up_gnnplan.models import ARCHITECTURES, HEADS, architectures_with, option_default  # the registry: no torch

# Exit codes, named so that scripts can rely on them.
EXIT_OK = 0
EXIT_INPUT_ERROR = 2  # bad input: file, PDDL, unsupported feature, dataset of another domain
EXIT_UNSOLVABLE = 3  # the problem is proven unsolvable (or could not be solved)
EXIT_LIMIT = 4  # the time or memory limit was reached before a plan was found (and validated)

PLANNERS = ("lama-first", "gnnplan")  # who solves a ground problem in mode ground (the engine's)
DEVICES = ("auto", "cpu", "cuda")  # onnxruntime devices (runtime.providers), named here to keep --help fast
MODES = ("auto", "policy", "gbfs", "dual-gbfs", "action-policy", "policy-best-first", "dual-policy-best-first",
         "ground")  # the engine's (checked by a test)


class Seconds(click.ParamType):
    """A time limit: a finite number of seconds above 0 (one rule for every command)."""

    name = "SECONDS"

    def convert(self, value, param, ctx):
        import math

        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds <= 0:
            self.fail(f"{value!r}: give a finite number of seconds above 0", param, ctx)
        return seconds


SECONDS = Seconds()


class FiniteRange(click.FloatRange):
    """A number within a range that is also finite (click's FloatRange lets nan through every bound)."""

    def convert(self, value, param, ctx):
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def _warning_line(message, category, filename, lineno, line=None):
    return f"warning: {message}\n"


def _fail(error: Exception, code: int = EXIT_INPUT_ERROR):
    click.echo(f"error: {error}", err=True)
    sys.exit(code)


@click.group()
@click.version_option(package_name="up-gnnplan")
def main():
    """Learn general policies and heuristics for classical planning with relational GNNs."""
    warnings.formatwarning = _warning_line


def _option_defaults(option: str, note: str = "", own_note: str = "") -> str:
    """Return the defaults of a training option, e.g. ``[default: 30; 4 for gcn, gatv2, gin]``: the
    common one (+ ``note``), then the architectures' own (each + ``own_note``)."""
    from up_gnnplan.training.config import ARCHITECTURE_DEFAULTS  # no torch

    by_value: dict = {}
    for key in ARCHITECTURES:
        if option in dict(ARCHITECTURES[key].defaults):
            by_value.setdefault(option_default(key, option, None), []).append(key)
    own = "".join(f"; {value} for {', '.join(keys)}{own_note}" for value, keys in by_value.items())
    return f"[default: {ARCHITECTURE_DEFAULTS[option]}{note}{own}]"


def _bundled_example(name: str) -> list[str]:
    """Return [domain, problems...] of a bundled example domain."""
    from up_gnnplan.data import example, example_names

    domain = example(name)
    if not domain.is_file():
        _fail(ValueError(f"no bundled example '{name}'; there are: {', '.join(example_names())}"))
    return [str(domain)] + sorted(str(p) for p in domain.parent.glob("p*.pddl"))


@main.command()
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
@click.option("--memory-mb", type=click.IntRange(min=64), default=None,
              help="Limit on the resident memory of the labelling process in MB: an expansion that would pass it "
                   "stops, and its problem is labelled along an optimal plan instead (method auto) or skipped "
                   "(expand; optimal, when its plan search passes it), with a line saying so [default: half the "
                   "RAM, at most what is free at the start]. In a process per problem (--jobs, --executor, "
                   "--task-timeout) it is also that process's address-space limit.")
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
    files = list(files) + (_bundled_example(example) if example else [])
    if len(files) < 2:
        _fail(click.UsageError("give a DOMAIN file and at least one PROBLEM file (or --example NAME)"))
    domain, problems = files[0], files[1:]
    from up_gnnplan.datasets.build import BuildOptions, ProblemsSkipped, build_dataset, sweep_dataset
    from up_gnnplan.errors import GnnplanError, UnsolvableProblemError
    from up_gnnplan.executors import make_executor
    from up_gnnplan.progress import ProblemProgress

    options = BuildOptions(
        method=method, max_states=max_states, allow_unsolvable=allow_unsolvable, heuristic=heuristic,
        plan_time_limit=plan_time_limit, successor_time_limit=successor_time_limit,
        successor_expansion_limit=successor_expansion_limit,
        include_successors=not no_successors, memory_mb=memory_mb,
    )
    sweep = executor != "local" or (jobs or 1) > 1 or task_timeout is not None
    if (sweep or memory_mb is not None) and grounding:
        _fail(click.UsageError("--grounding labels in this process only (its goal variants draw from one random "
                               "stream across problems): drop --jobs, --executor, --memory-mb and --task-timeout"))
    try:
        with ProblemProgress(len(problems)) as progress:
            if sweep:
                data = sweep_dataset(domain, list(problems), options, make_executor(executor, jobs, address),
                                     memory_mb=memory_mb, timeout=task_timeout, progress=progress)
            elif grounding:
                from up_gnnplan.grounding.dataset import GroundingDataOptions, build_grounding_dataset

                data = build_grounding_dataset(domain, list(problems), GroundingDataOptions(
                    goals_per_problem=goals_per_problem, states_per_goal=states_per_goal, max_states=max_states,
                    seed=seed, valid_share=valid_share, shared_states=shared_states), progress=progress)
            else:
                data = build_dataset(domain, list(problems), options, progress=progress)
        path = data.save(output)
    except UnsolvableProblemError as error:
        _fail(error, EXIT_UNSOLVABLE)
    except ProblemsSkipped as error:  # each over the state or the memory limit
        _fail(error, EXIT_LIMIT)
    except GnnplanError as error:
        _fail(error)
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


@main.command(cls=_GenerateCommand)
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

    sizes = {}
    for item in params:
        name, sep, value = item.partition("=")
        if not sep:
            _fail(ValueError(f"size parameter {item!r} is not NAME=VALUE"))
        try:
            sizes[name.strip()] = float(value) if "." in value else int(value)
        except ValueError:
            _fail(ValueError(f"size parameter {item!r}: {value!r} is not a number"))
    try:
        paths = run(domain_name, Path(output), count=count, seed=seed, **sizes)
    except ValueError as error:
        known = ", ".join(f"{k} ({', '.join(f'{n}={v}' for n, v in g.defaults.items())})" for k, g in GENERATORS.items())
        _fail(f"{error}\nknown generators: {known}")
    click.echo(f"wrote {Path(output) / 'domain.pddl'} and {len(paths)} problem(s)")


@main.command()
@click.argument("datasets", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Checkpoint to write (.pt, local use).")
@click.option("--arch", "architecture", type=click.Choice(list(ARCHITECTURES)), default="rgnn", show_default=True,
              help="; ".join(f"{key}: {a.description}" for key, a in ARCHITECTURES.items()) + ".")
@click.option("--head", type=click.Choice(HEADS), default="value", show_default=True,
              help="value: V(s) regressed on V*; logits: one score per applicable action, cross-entropy towards the "
                   "optimal ones; q: Q(s,a) = c(a) + V(s') regressed on the labels; +value: the value head as well. "
                   "Action heads need datasets that record actions (written by this version's `gnnplan dataset`).")
@click.option("--t", "t", type=click.IntRange(min=0), default=1, show_default=True,
              help=f"R-GNN[t] parameter (--arch {', '.join(architectures_with('t'))}).")
@click.option("--goal-mode", type=click.Choice(["separate", "achieved"]), default="separate", show_default=True,
              help="How the goal reaches the model: separate: goal atoms as predicates of their own; achieved: split "
                   "into goal atoms achieved and open in the state.")
@click.option("--decompose-higher-arity", is_flag=True,
              help=f"Split atoms of arity 3 or more into pairwise binary ones, p(a,b,c) into p#1#2(a,b), p#1#3(a,c), "
                   f"p#2#3(b,c) (lossy; --arch {', '.join(architectures_with('decompose_higher_arity'))}, which refuses "
                   "such domains without it).")
@click.option("--hidden", type=click.IntRange(min=1), default=32, show_default=True, help="Embedding size.")
@click.option("--layers", type=click.IntRange(min=1), default=None,
              help="Message-passing rounds "
                   f"{_option_defaults('layers', ' (weights shared across rounds)', ' (one set of weights per layer)')}.")
@click.option("--aggregation", type=click.Choice(["smoothmax", "max", "sum", "mean"]), default="smoothmax", show_default=True,
              help=f"Message aggregation (--arch {', '.join(architectures_with('aggregation'))}).")
@click.option("--dropout", type=FiniteRange(0.0, 1.0, max_open=True), default=0.0, show_default=True,
              help=f"Dropout after each layer in training (--arch {', '.join(architectures_with('dropout'))}).")
@click.option("--heads", type=click.IntRange(min=1), default=None,
              help=f"Attention heads; --hidden must be a multiple (--arch {', '.join(architectures_with('heads'))}) "
                   f"{_option_defaults('heads')}.")
@click.option("--loss", type=click.Choice(["l1", "mse", "rank", "l1+rank", "mse+rank"]), default=None,
              help="Loss on V*: l1 (the R-GNN paper), mse for goal-grounding data (Funkquist et al.); rank: "
                   "each state's optimal successor valued below its other successors and its parent (what the greedy "
                   "policy and GBFS need), the best epoch chosen by the share of states whose lowest-valued successor "
                   "is optimal; l1+rank, mse+rank: both. Value heads; ranking needs datasets that record actions. On "
                   "goal-grounding data the ranking is over the goal variants of each state instead (the cheaper "
                   "binding valued lower; best epoch by the share of states whose lowest-valued variant is a cheapest "
                   "one; see dataset --shared-states). [default: l1; mse on goal-grounding data]")
@click.option("--rank-siblings", type=click.IntRange(min=1), default=16, show_default=True,
              help="Ranking losses: at most this many non-optimal successors per state in a training step.")
@click.option("--rank-margin", type=FiniteRange(min=0.0, min_open=True), default=1.0, show_default=True,
              help="Ranking losses: the margin by which the optimal successor is to be valued lower.")
@click.option("--lr", type=FiniteRange(min=0.0, min_open=True), default=1e-3, show_default=True,
              help="Adam learning rate.")
@click.option("--lr-patience", type=click.IntRange(min=0), default=0, show_default=True,
              help="Halve the learning rate after this many epochs without a lower validation error (Müller et al.: 25); "
                   "0: constant.")
@click.option("--ema", type=FiniteRange(0.0, 1.0, max_open=True), default=0.0, show_default=True, metavar="DECAY",
              help="Weight averaging: evaluate, choose and write an exponential moving average of the weights (decay per "
                   "step, e.g. 0.999) instead of the last step's; smooths the epoch-to-epoch swings of the policy on larger "
                   "problems. 0: off.")
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True,
              help="States per optimisation step.")
@click.option("--curriculum", type=click.IntRange(min=0), default=0, show_default=True, metavar="EPOCHS",
              help="A curriculum over sizes: epoch e trains on the states of the smallest e/EPOCHS of the training "
                   "problems (by objects), all of them from epoch EPOCHS on; 0: all from the start.")
@click.option("--max-epochs", type=click.IntRange(min=1), default=500, show_default=True,
              help="Epochs at most (each followed by an evaluation).")
@click.option("--epoch-states", type=click.IntRange(min=0), default=8192, show_default=True,
              help="States per epoch at most (0: all training states); the model is evaluated after each epoch.")
@click.option("--max-seconds", type=SECONDS, default=300.0, show_default=True,
              help="Wall-clock budget of the whole command, counted from its start: reading the datasets and "
                   "validation problems, the epochs with their evaluations and the judge of --validation-problem, "
                   "snapshots, the final evaluation and writing the checkpoint (with --state: over all sessions). "
                   "Epochs stop early enough for the final steps; with little time left, the final evaluation takes "
                   "fewer states and the record says so.")
@click.option("--patience", type=click.IntRange(min=1), default=30, show_default=True,
              help="Epochs without improvement before stopping.")
@click.option("--validation-fraction", type=FiniteRange(0.0, 1.0, max_open=True), default=0.2, show_default=True,
              help="Share of the training problems (of the states, with one problem) held out to choose the best "
                   "epoch on; 0: none (without --validation-dataset, the best epoch is then chosen on the training "
                   "error).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seeds the weights, the batch order and the split (and the attention's random features of --arch "
                   f"{', '.join(architectures_with('seed'))}).")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True,
              help="Torch threads (1 is fastest on small graphs).")
@click.option("--device", default="auto", show_default=True, metavar="auto|cpu|cuda|cuda:N",
              help="Torch device to train on; auto: CUDA when torch sees a GPU, else the CPU. Under torchrun, auto and "
                   "cuda give each process its own GPU.")
@click.option("--amp", is_flag=True,
              help="Mixed precision: forward pass and loss in bfloat16 (torch.autocast); compare the validation error.")
@click.option("--validation-dataset", "validation_datasets", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="Repeatable. Choose the best epoch on this dataset (e.g. larger instances labelled with --method optimal) "
                   "and train on all of DATASETS.")
@click.option("--validation-problem", "validation_problems", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="Repeatable. Choose the best epoch by the greedy policy on these problems (larger than the training "
                   "ones): most solved, then fewest steps, then validation MAE. Needs --validation-domain. On grounding "
                   "data (problems with existential goals): by the greedy binding, the ground goal solved by "
                   "LAMA-first, fewest plan steps in all.")
@click.option("--validation-domain", type=click.Path(dir_okay=False, exists=True),
              help="Domain file of the --validation-problem files.")
@click.option("--policy-steps", type=click.IntRange(min=1), default=150, show_default=True,
              help="Step limit of the greedy policy on each --validation-problem.")
@click.option("--state", "state_path", type=click.Path(dir_okay=False),
              help="Training state (safetensors: weights, Adam's moments, random generators, clock), written after "
                   "every epoch. If the file exists, training continues from it: run the same command again after a "
                   "stop (the unfinished epoch is lost), or with a larger --max-seconds to extend a finished run; the "
                   "budget counts over all sessions.")
@click.option("--snapshot-minutes", type=str, default="", metavar="M1,M2,...",
              help="Also write the best model so far as OUTPUT-Mmin.pt, and the last epoch's as OUTPUT-Mmin-last.pt, "
                   "after M minutes of training (each M; with --state, over all sessions), for coverage against "
                   "training time.")
def train(datasets, output, validation_datasets, validation_problems, validation_domain, state_path, snapshot_minutes,
          **options):
    """Train a value function on one or more DATASETS (files written by `gnnplan dataset`).

    Started by torchrun, the processes train together (DistributedDataParallel) and rank 0
    alone shows progress and writes the checkpoint.

    Example: gnnplan train blocks.npz -o blocks.pt --arch rgnn --max-seconds 300
    """

    from up_gnnplan.limits import command_start

    started = command_start()  # --max-seconds counts from here: the command's start, its imports included
    try:
        import torch  # noqa: F401
    except ImportError:
        _fail(RuntimeError("training needs torch: pip install 'up-gnnplan[train]'"))
    from up_gnnplan.datasets import Dataset
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.checkpoint import save_checkpoint
    from up_gnnplan.training.devices import autocast, resolve_device
    from up_gnnplan.training.distributed import process_rank
    from up_gnnplan.limits import LimitReached
    from up_gnnplan.training.loop import train as run

    try:  # refuse a device that cannot be had before loading anything
        autocast(resolve_device(options["device"]), options["amp"])
    except GnnplanError as error:
        _fail(error)
    main_process = process_rank() == 0
    loss = options.pop("loss")
    try:
        minutes = sorted({float(m) for m in snapshot_minutes.split(",") if m.strip()})
    except ValueError:
        raise click.BadParameter(f"{snapshot_minutes!r} is not a comma-separated list of minutes",
                                 param_hint="--snapshot-minutes") from None
    if any(m <= 0 for m in minutes):
        raise click.BadParameter("minutes must be positive", param_hint="--snapshot-minutes")
    try:
        data = Dataset.load(datasets[0])
        for path in datasets[1:]:
            data.extend(Dataset.load(path, expect=data.signature))
        validation = None
        for path in validation_datasets:
            if validation is None:
                validation = Dataset.load(path, expect=data.signature)
            else:
                validation.extend(Dataset.load(path, expect=data.signature))
        tasks = _validation_tasks(validation_domain, validation_problems, data)
    except GnnplanError as error:
        _fail(error)
    from up_gnnplan.grounding.encoding import is_grounding_signature

    config = TrainConfig(**options, loss=loss or ("mse" if is_grounding_signature(data.signature) else "l1"))
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[info]}"),
                  TimeElapsedColumn(), disable=not (sys.stderr.isatty() and main_process), transient=True) as bar:
        task = bar.add_task("training", total=config.max_epochs, info="")

        def on_epoch(epoch, loss, val, best):
            bar.update(task, completed=epoch, info=f"loss {loss:.3f}  validation error {val:.3f}  best {best:.3f}")

        def describe(record):
            record["datasets"] = [str(p) for p in datasets]
            record["validation_datasets"] = list(validation_datasets)
            record["validation_problem_files"] = list(validation_problems)
            record["command"] = "gnnplan train " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else "gnnplan train"
            return record

        def on_snapshot(minutes, kind, model, encoding, record):
            path = Path(output)
            path = path.with_name(f"{path.stem}-{minutes:g}min{'-last' if kind == 'last' else ''}{path.suffix or '.pt'}")
            save_checkpoint(path, model, encoding, config, describe(record), data.domain)
            bar.console.print(f"snapshot after {minutes:g} min ({record['states_trained']} states trained, "
                              f"{'best epoch so far' if kind == 'best' else 'last epoch'}): {path}")

        try:
            model, encoding, record = run(data, config, on_epoch, validation=validation, validation_tasks=tasks,
                                          state_path=state_path, snapshot_minutes=minutes, on_snapshot=on_snapshot,
                                          started=started)
        except LimitReached as error:
            _fail(error, EXIT_LIMIT)
        except (GnnplanError, ValueError) as error:  # e.g. a head the architecture or the dataset cannot serve
            _fail(error)
        except KeyboardInterrupt:
            if state_path and main_process:
                click.echo(f"\nstopped; the state of the last finished epoch is in {state_path}: run the same command "
                           "to continue", err=True)
            raise SystemExit(130) from None
    if not main_process:
        return  # rank 0 writes and reports
    path = save_checkpoint(output, model, encoding, config, describe(record), data.domain)
    val = record["validation"] or record["train"]
    choices = (("best_action_optimal", "action_states", "best action optimal"),
               ("best_successor_optimal", "rank_states", "lowest-valued successor optimal"),
               ("best_variant_optimal", "variant_states", "lowest-valued goal variant a cheapest one"))
    choice = next((c for c in choices if c[0] in val), None)
    if choice is not None:
        metric, count, what = choice
        quality = (f"{what} in {val[metric]:.1%} of {val[count]} validation states"
                   + (f", value MAE {val['mae']:.3f}" if "mae" in val else ""))
    else:
        valued = record.get("validation_error_states", record["validation_states"])
        of = f" of {record['validation_states']}" if valued < record["validation_states"] else ""
        quality = (f"validation MAE {val.get('mae', float('nan')):.3f} (max {val.get('max_error', float('nan')):.2f}) "
                   f"on {valued}{of} states")
    click.echo(f"{path}: {config.architecture} ({config.head}) on '{data.domain}', {record['epochs']} epochs in "
               f"{record['seconds']} s, best epoch {record['best_epoch']}, {quality}"
               + _judged(record, tasks))
    for note in (record.get("time_limit_note"), (record.get("policy_validation") or {}).get("stopped_by_time_limit")):
        if note:
            click.echo(f"note: {note}", err=True)


def _judged(record: dict, tasks: list) -> str:
    """The end of train's summary line: what the judge of the chosen epoch saw (nothing without one)."""
    if not tasks:
        return ""
    judged = record["policy_validation"]
    if "judge" in judged:  # a grounding model: bound, then solved by LAMA-first
        return (f"; greedy binding + LAMA-first solved {judged['solved']}/{len(tasks)} validation problems, plans of "
                f"{judged['steps']} steps in all")
    return f"; greedy policy solved {judged['solved']}/{len(tasks)} validation problems in {judged['steps']} steps"


def _validation_tasks(domain, problems, data) -> list:
    """Load the --validation-problem files and check that they are of the dataset's domain."""
    if bool(domain) != bool(problems):
        raise click.UsageError("--validation-problem and --validation-domain go together")
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.grounding.encoding import grounding_signature, is_grounding_signature
    from up_gnnplan.grounding.goal import QuantifiedGoal
    from up_gnnplan.problems import load_task

    grounding = is_grounding_signature(data.signature)
    tasks = []
    for problem in problems:
        task = load_task(domain, problem)
        signature = grounding_signature(task.signature) if grounding else task.signature
        if signature != data.signature:
            raise GnnplanError(f"{problem}: not of the training data's domain: predicates "
                               f"{signature.describe_difference(data.signature)} (first: the problem's domain)")
        if grounding and not QuantifiedGoal.of(task.up_problem).variables:
            raise GnnplanError(f"{problem}: the goal has no existentially quantified variable; a grounding model is "
                               "judged by binding such goals")
        tasks.append(task)
    return tasks


@main.command()
@click.argument("checkpoint", type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="ONNX file to write.")
@click.option("--check/--no-check", default=True, show_default=True,
              help="Compare onnxruntime with torch on example states after exporting.")
@click.option("--ship", "ship_name", metavar="NAME",
              help="Also add the model to the package's shipped models under NAME (developers).")
def export(checkpoint, output, check, ship_name):
    """Export a training CHECKPOINT to an ONNX model with its metadata inside.

    CHECKPOINT may also be an ONNX model written by an earlier `gnnplan export`: its weights
    and training record are read from the file and written again with this version's graph
    (the values of both files are compared).

    Example: gnnplan export blocks.pt -o blocks.onnx
    """
    try:
        import onnx  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        _fail(RuntimeError("exporting needs torch, onnx and an ONNX runtime: pip install 'up-gnnplan[export,cpu]'"))
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.exporters.reexport import compare_files, is_onnx_file, load_exported
    from up_gnnplan.training.checkpoint import load_checkpoint

    reexport = is_onnx_file(checkpoint)
    if reexport and Path(checkpoint).resolve() == Path(output).resolve():
        _fail(click.UsageError("write the re-exported model to another file than the one it is read from"))
    notes = []
    try:
        model, encoding, config, data = (load_exported if reexport else load_checkpoint)(checkpoint)
        path = export_onnx(model, encoding, output, domain=data["domain"], train_config=config.to_dict(),
                           training_record=data["record"], source=data.get("source"))
        if check:
            from up_gnnplan.exporters.parity import check_parity

            notes.append(f"onnxruntime vs torch: largest difference (relative above 1) {check_parity(model, encoding, path):.2e}")
        if reexport:
            difference = compare_files(checkpoint, path, encoding)
            notes.append(f"vs {Path(checkpoint).name} max |diff| {difference:.2e}")
            if difference > 1e-4:
                path.unlink()
                raise GnnplanError(f"{path}: its values differ from {checkpoint}'s by {difference:.2e}; not kept")
    except GnnplanError as error:
        _fail(error)
    if ship_name:
        from up_gnnplan.models_zoo import ship

        shipped = ship(path, ship_name, data, config)
        click.echo(f"shipped as '{ship_name}': {shipped}")
    note = f", {'; '.join(notes)}" if notes else ""
    click.echo(f"{path}: {config.architecture} for '{data['domain']}' ({path.stat().st_size / 1024:.0f} KiB){note}")


@main.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False), metavar="DOMAIN PROBLEM")
@click.option("--example", help="Solve a bundled example instead: NAME or NAME/PROBLEM (e.g. blocksworld/p04.pddl).")
@click.option("--model", help="A shipped model's name or an ONNX file (default: the shipped model of the domain).")
@click.option("--mode", type=click.Choice(MODES), default="auto", show_default=True,
              help="policy: greedy policy of V; gbfs: greedy best-first search on V; action-policy: greedy policy of an "
                   "action head; policy-best-first: best-first on its log-probabilities; dual-*: the search alternating "
                   "with the FF heuristic; auto: the action policy (or the value policy for value models), then GBFS on "
                   "V (or policy-best-first) with the time left.")
@click.option("--fallback", type=click.Choice(["model", "model+ff"]), default="model+ff", show_default=True,
              help="Mode auto: the search after a policy that gave up, guided by the model alone or alternating with "
                   "the FF heuristic (dual-gbfs, dual-policy-best-first).")
@click.option("--timeout", type=SECONDS, default=60.0, show_default=True,
              help="Seconds from the start of the command: reading the PDDL, search and validation all count.")
@click.option("--memory", "memory_mb", type=click.IntRange(min=0), default=None,
              help="Limit on the resident memory in MB [default: half the machine's RAM, within what is free; 0: none].")
@click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True,
              help="Where the model runs: cuda needs onnxruntime-gpu (pip install 'up-gnnplan[gpu]').")
@click.option("--max-steps", type=click.IntRange(min=1), default=1000, show_default=True, help="Step limit of the policy.")
@click.option("--astray-factor", type=click.FloatRange(min=0.0), default=4.0, show_default=True,
              help="Mode auto: the policy also gives up after this many times FF's estimate of the initial state's "
                   "cost plus 50 steps, leaving the time left to the fallback; 0: off.")
@click.option("--seed-fallback/--no-seed-fallback", default=True, show_default=True,
              help="Mode auto: the fallback search starts with the states of the path the policy walked in its open "
                   "lists (the initial state stays open), so it goes on from the best of them.")
@click.option("--action-elimination/--no-action-elimination", default=True, show_default=True,
              help="Shorten the plan found by leaving out every action it does not need (greedy action "
                   "elimination; at most half the time left), before validating it.")
@click.option("--symmetry/--no-symmetry", default=True, show_default=True,
              help="One successor per class of symmetric actions (actions that differ by interchangeable objects, "
                   "such as Spanner's spanners): the value policy values one, the searches keep one. Exact, and "
                   "fewer states to value.")
@click.option("--plan-file", type=click.Path(dir_okay=False), help="Write the plan here instead of printing it.")
@click.option("--grounding-model", help="Mode ground: a goal-grounding model's name or ONNX file (default: the shipped "
                                        "one of the domain).")
@click.option("--no-static-filter", is_flag=True,
              help="Mode ground: let the model bind a variable even where a static goal atom (a colour), an "
                   "inequality or an invariant of the domain (one ball in two rooms) rules the object out.")
@click.option("--planner", type=click.Choice(PLANNERS), default="lama-first", show_default=True,
              help="Mode ground: who solves the ground problem (Fast Downward's LAMA-first, or gnnplan's auto mode "
                   "with the domain's model).")
@click.option("--binding-beam", type=click.IntRange(min=1), default=1, show_default=True,
              help="Mode ground: keep this many best partial bindings by the model's value at each step and bind "
                   "with the ground goal of least FF value (1: the greedy binding).")
@click.option("--binding-entailment/--no-binding-entailment", default=True, show_default=True,
              help="Mode ground: make each binding that adds nothing to the goal (another variable is bound to an "
                   "object that satisfies all this one asks) without the model; off: the paper's greedy binding.")
def solve(files, example, model, mode, fallback, timeout, memory_mb, device, max_steps, astray_factor, seed_fallback,
          action_elimination, symmetry, plan_file, grounding_model, no_static_filter, planner, binding_beam,
          binding_entailment):
    """Solve PROBLEM of DOMAIN with a learned value function; print the plan and a summary.

    Example: gnnplan solve domain.pddl p01.pddl --timeout 60
    """
    import time

    from up_gnnplan.limits import MemoryLimitReached, command_start

    start = command_start()  # the limit counts from the command's start, its imports included
    _EXIT_AT_ONCE["on"] = True
    from unified_planning.exceptions import UPUsageError

    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.plugins.engine import GnnplanEngine

    if example:
        files = _example_files(example)
    if len(files) != 2:
        _fail(click.UsageError("give DOMAIN and PROBLEM files (or --example NAME)"))
    if plan_file and not Path(plan_file).resolve().parent.is_dir():
        _fail(ValueError(f"--plan-file {plan_file}: the folder {Path(plan_file).resolve().parent} does not exist"))
    try:
        engine = GnnplanEngine(model=model, mode=mode, fallback=fallback, max_steps=max_steps,
                               astray_factor=astray_factor, seed_fallback=seed_fallback,
                               action_elimination=action_elimination, symmetry=symmetry,
                               memory_mb=memory_mb,
                               device=device, grounding_model=grounding_model, static_filter=not no_static_filter,
                               planner=planner, binding_beam=binding_beam, binding_entailment=binding_entailment)
    except UPUsageError as error:
        _fail(error)
    engine.error_on_failed_checks = False  # an unsupported problem becomes a status with our message
    name = Path(files[1]).name
    try:
        from up_gnnplan.limits import default_memory_mb

        limit_mb = default_memory_mb() if memory_mb is None else memory_mb
        problem = _load_within(files, timeout - (time.perf_counter() - start), limit_mb)
    except MemoryLimitReached as error:
        click.echo(f"{name}: memout after {time.perf_counter() - start:.2f} s (mode {mode}): {error}")
        sys.exit(EXIT_LIMIT)
    except GnnplanError as error:
        _fail(error)
    if problem is None:
        click.echo(f"{name}: timeout after {time.perf_counter() - start:.2f} s (mode {mode}): time limit of {timeout:g} s "
                   "reached while reading the PDDL files")
        sys.exit(EXIT_LIMIT)
    engine.clock_start = start
    result = engine.solve(problem, timeout=timeout)
    for log in result.log_messages:
        if log.level.name in ("ERROR", "WARNING"):
            click.echo(f"{log.level.name.lower()}: {log.message}", err=True)
    seconds = time.perf_counter() - start
    status = result.status.name.lower()
    if result.plan is None:
        last = result.log_messages[-1].message if result.log_messages else ""
        reason = f": {last}" if status in ("timeout", "memout") and last else ""
        click.echo(f"{name}: {status} after {seconds:.2f} s (mode {mode}){reason}")
        sys.exit(EXIT_INPUT_ERROR if status in ("unsupported_problem", "internal_error") else
                 EXIT_LIMIT if status in ("timeout", "memout") else EXIT_UNSOLVABLE)
    from unified_planning.io import PDDLWriter

    text = PDDLWriter(problem).get_plan(result.plan)
    metrics = result.metrics
    if plan_file:
        try:
            Path(plan_file).write_text(text)
        except OSError as error:  # the plan is not lost: it goes to standard output instead
            click.echo(text, nl=False)
            click.echo(f"error: --plan-file {plan_file}: cannot be written ({error.strerror}); the plan is printed "
                       "above", err=True)
    else:
        click.echo(text, nl=False)
    if mode == "ground":
        binding = metrics.get("binding")
        click.echo(f"{name}: {status}, {len(result.plan.actions)} actions, {seconds:.2f} s, "
                   + (f"binding {binding} ({metrics.get('groundings_tried')} tried, model "
                      f"{Path(metrics.get('grounding_model', '')).name}), " if binding else "no quantified variable, ")
                   + f"solved by {metrics.get('planner')}, plan validated")
        return
    click.echo(f"{name}: {status}, {len(result.plan.actions)} actions, cost {metrics.get('plan_cost')}, "
               f"{seconds:.2f} s, {metrics.get('expanded')} expanded, {metrics.get('evaluated')} evaluated, "
               f"model {Path(metrics.get('model', '')).name} on {metrics.get('provider')}, plan validated")


@main.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False), metavar="DOMAIN PROBLEM")
@click.option("--grounding-model", help="A goal-grounding model's name or ONNX file (default: the shipped one).")
@click.option("--no-static-filter", is_flag=True,
              help="Let the model bind a variable even where a static goal atom, an inequality or an invariant of "
                   "the domain (one ball in two rooms) rules it out.")
@click.option("--beam", type=click.IntRange(min=1), default=1, show_default=True,
              help="Keep the BEAM best partial bindings by the model's value at each step and take the ground goal "
                   "with the least FF value of the ground problem (1: the greedy binding).")
@click.option("--entailment/--no-entailment", default=True, show_default=True,
              help="Make each binding that adds nothing to the goal (another variable is bound to an object that "
                   "satisfies all this one asks) without the model; off: the paper's greedy binding.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the ground problem (PDDL) here.")
def ground(files, grounding_model, no_static_filter, beam, entailment, output):
    """Bind the existential goal of PROBLEM with a learned model; print the binding and the ground problem.

    Example: gnnplan ground domain.pddl p01.pddl -o p01-ground.pddl
    """
    if len(files) != 2:
        _fail(click.UsageError("give DOMAIN and PROBLEM files"))
    from unified_planning.io import PDDLWriter

    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.grounding.preprocess import ground_problem
    from up_gnnplan.problems.loading import load_pddl

    try:
        problem = load_pddl(*files)
        grounded = ground_problem(problem, grounding_model, static_filter=not no_static_filter, beam=beam,
                                  entailment=entailment)
    except GnnplanError as error:
        _fail(error)
    for step in grounded.steps:
        why = (f"V = {step.value:.3f}, best of {step.candidates} candidates" if step.candidates
               else "adds nothing to the goal: made without the model")
        click.echo(f"?{step.variable} = {step.obj}  ({why})", err=bool(output is None))
    text = PDDLWriter(grounded.problem).get_problem()
    if output:
        Path(output).write_text(text)
    else:
        click.echo(text, nl=False)
    summary = (f"binding {', '.join(f'?{v}={o}' for v, o in grounded.binding.items())} in {grounded.seconds:.2f} s "
               f"({grounded.evaluated} candidates valued)" if grounded.changed else "no quantified variable: unchanged")
    click.echo(f"{Path(files[1]).name}: {summary}" + (f"; ground problem written to {output}" if output else ""),
               err=output is None)


def _example_files(example: str) -> list[str]:
    """Return [domain, problem] of ``--example NAME`` (its largest test problem) or ``NAME/FILE``."""
    name, _, problem = example.partition("/")
    domain = Path(_bundled_example(name)[0])
    tests = sorted(domain.parent.glob("test-*.pddl")) or sorted(domain.parent.glob("p*.pddl"))
    chosen = domain.parent / problem if problem else tests[-1]
    if not chosen.is_file():
        _fail(ValueError(f"no bundled problem '{problem}' in {name}; there are: "
                         + ", ".join(p.name for p in sorted(domain.parent.glob('*.pddl')) if p != domain)))
    return [str(domain), str(chosen)]


def _load_within(files, seconds: float, memory_mb: int | None = None):
    """Return the UP problem of ``files``, or None if reading them takes more than ``seconds``;
    end the command as a memout if the process's resident memory passes ``memory_mb`` meanwhile.

    UP's PDDL reader cannot be interrupted, so it runs in a daemon thread; on a timeout the
    command ends and the thread with it.
    """
    import threading
    import time

    from up_gnnplan.limits import MemoryLimitReached, resident_mb

    from up_gnnplan.problems.loading import load_pddl

    outcome = {}

    def read():
        try:
            outcome["problem"] = load_pddl(*files)
        except BaseException as error:  # noqa: BLE001  (re-raised in the caller's thread)
            outcome["error"] = error

    reader = threading.Thread(target=read, name="gnnplan-read-pddl", daemon=True)
    reader.start()
    deadline = time.perf_counter() + seconds
    while reader.is_alive() and time.perf_counter() < deadline:
        reader.join(min(0.05, max(0.0, deadline - time.perf_counter())))
        if memory_mb and resident_mb() > memory_mb:  # UP's reader took 3.3 GB for a Sokoban medium task
            raise MemoryLimitReached(f"memory limit of {memory_mb} MB reached while reading the PDDL files "
                                     f"(resident memory {resident_mb():.0f} MB)")
    if reader.is_alive():
        return None
    if "error" in outcome:
        raise outcome["error"]
    return outcome["problem"]


@main.command()
@click.option("--markdown", is_flag=True, help="Print a markdown table (as in the README).")
@click.option("--check", is_flag=True,
              help="Load every shipped model in an onnxruntime session and say which execution provider runs it.")
@click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True, help="Device for --check.")
def models(markdown, check, device):
    """List the shipped models, what they were trained on, and their measured coverage."""
    from up_gnnplan.models_zoo import entries

    shipped = entries()
    if check:
        _check_models(shipped, device)
        return
    if not shipped:
        click.echo("no shipped models")
        return
    if markdown:
        click.echo("| model | domain | arch | training problems | minutes | states trained (per s) | validation problems "
                   "| validation | coverage when shipped | coverage now |")
        click.echo("|---|---|---|---:|---:|---:|---|---:|---|---|")
    for entry in shipped:
        record = entry.get("training", {})
        problems = len(record.get("problems") or [])
        validation = _problem_list(record.get("validation_problems") or []) or "held-out training problems"
        coverage = entry.get("coverage", "not measured")
        more = entry.get("more_coverage", {})  # larger test sets of the same model
        # ``coverage``: measured when the model shipped; ``standing``: the default mode with the engine of today's
        # standing comparison (benchmarks/standing.py report), for the models that mode picks.
        now = entry.get("standing")
        seen = (f"{record['states_trained']:,} ({record.get('train_states_per_second', 0):.0f})"
                if record.get("states_trained") else "?")
        head = entry.get("head", "value")
        optimal = (record.get("validation") or {}).get("best_action_optimal")
        error = (f"best action optimal in {100 * optimal:.0f}% of states" if optimal is not None
                 else f"MAE {record.get('validation_mae', '?')}")
        if markdown:
            click.echo(f"| {entry['name']} | {entry['domain']} | {entry['architecture']} ({head}) | {problems} | "
                       f"{record.get('minutes', '?')} | {seen} | {validation} | {error} | {coverage}"
                       + "".join(f" Also {name}: {text}" for name, text in more.items()) + f" | {now or ''} |")
        else:
            click.echo(f"{entry['name']}: {entry['architecture']} ({head} head) for domain '{entry['domain']}', trained "
                       f"{record.get('minutes', '?')} min on {problems} problems (seed {record.get('seed', '?')}); "
                       f"validation {error} on {validation}\n    coverage when shipped: {coverage}"
                       + "".join(f"\n    {name}: {text}" for name, text in more.items())
                       + (f"\n    coverage now: {now}" if now else ""))


def _problem_list(names: list[str], most: int = 6) -> str:
    """Name ``names`` briefly: goal variants ``P#k`` of one problem as one entry, at most ``most`` shown."""
    from collections import Counter

    variants = Counter(name.split("#")[0] for name in names)  # in the order of first appearance
    shown = [f"{stem} ({count} goal variants)" if count > 1 else stem for stem, count in list(variants.items())[:most]]
    if len(variants) > most:
        shown.append(f"... ({len(variants)} problems in all)")
    return ", ".join(shown)


def _check_models(shipped: list[dict], device: str) -> None:
    """Print the installed runtime and, per shipped model, the provider its session runs on (exit 2 on a failure)."""
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.models_zoo import zoo_dir
    from up_gnnplan.runtime import OnnxValueFunction
    from up_gnnplan.runtime.providers import (RuntimeSetupError, conflict_message, device_note, import_onnxruntime,
                                              installed_runtimes, providers_for)
    from up_gnnplan.states.signature import PredicateSignature

    try:
        ort = import_onnxruntime()
        providers_for(device)
    except GnnplanError as error:
        _fail(error)
    click.echo(f"onnxruntime {ort.__version__} ({', '.join(installed_runtimes()) or 'unknown distribution'}); "
               f"providers: {', '.join(ort.get_available_providers())}; device {device}")
    conflict = conflict_message()
    if conflict:
        click.echo(f"warning: {conflict}", err=True)
    noted = bool(conflict)
    failed = 0
    for entry in shipped:
        try:
            value_fn = OnnxValueFunction(zoo_dir() / entry["file"], device=device)
            value_fn.check_signature(PredicateSignature.from_json(entry["signature"]), "its index entry")
        except RuntimeSetupError as error:  # the device, not the model: the same for every model
            _fail(error)
        except GnnplanError as error:
            failed += 1
            click.echo(f"{entry['name']}: FAILED: {error}")
            continue
        note = device_note(device, value_fn.provider)
        if note and not noted:
            click.echo(f"warning: {note}", err=True)
            noted = True
        click.echo(f"{entry['name']}: ok, {value_fn.architecture} for '{value_fn.domain}' on {value_fn.provider}")
    if failed:
        sys.exit(EXIT_INPUT_ERROR)


@main.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True), metavar="[DOMAIN PROBLEM...]")
@click.option("--engine", "engines", multiple=True, required=True, metavar="SPEC",
              help="Repeatable: gnnplan[:policy|gbfs|auto], fast-downward (LAMA-first), or any UP OneshotPlanner name.")
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
@click.option("--memory-mb", type=click.IntRange(min=64), default=4096, show_default=True,
              help="Address-space limit of each task's process.")
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

    from up_gnnplan.compare import compare as run, file_problems, suite_problems
    from up_gnnplan.errors import GnnplanError

    files = list(files)
    suites = list(suites) + [f for f in files if Path(f).is_dir()]
    files = [f for f in files if not Path(f).is_dir()]
    model: dict = {}
    for item in models:
        domain, sep, path = item.partition("=")
        if sep and "/" not in domain:
            model[domain] = path
        else:
            model[None] = item
    if register and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would: modules of the current folder can be named
    try:
        problems = file_problems(files[0], files[1:]) if files else []
        if files and len(files) < 2:
            raise click.UsageError("give a DOMAIN file and at least one PROBLEM file")
        for suite in suites:
            problems += suite_problems(suite)
        for name in examples:
            bundled = _bundled_example(name)
            problems += file_problems(bundled[0], bundled[1:])
        if not problems:
            raise click.UsageError("give DOMAIN PROBLEM... files, --suite DIR or --example NAME")
        outcome = run(list(engines), problems, output, timeout=timeout, jobs=jobs, memory_mb=memory_mb, model=model,
                      resume=resume, baseline=baseline, grace=grace, plots=not no_plots, register=register,
                      engine_params=list(engine_params), executor=executor, address=address)
    except (ValueError, FileNotFoundError, click.UsageError, GnnplanError) as error:
        _fail(error)
    click.echo(outcome.summary, nl=False)
    click.echo(f"\n{len(outcome.records)} task(s); results and reports in {output}/: "
               + ", ".join(f.name for f in outcome.files))
    if outcome.faults:  # an engine that failed every task alike did not run: the command failed
        _fail("; ".join(outcome.faults))


class Minutes(click.ParamType):
    """A budget in minutes: a finite number above 0."""

    name = "MINUTES"

    def convert(self, value, param, ctx):
        return SECONDS.convert(value, param, ctx)  # the same rule as seconds: finite and above 0


@main.command()
@click.argument("domain", type=click.Path(dir_okay=False, exists=True))
@click.argument("problems", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="ONNX model to write.")
@click.option("--minutes", type=Minutes(), default=30.0, show_default=True,
              help="The whole budget: labelling, training, choosing and export, from start to the file written.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, help="Labelling processes at once.")
@click.option("--work-dir", type=click.Path(file_okay=False),
              help="Run folder; a stopped run continues from it.  [default: OUTPUT.learn next to the output]")
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds training.")
@click.option("--memory-mb", type=click.IntRange(min=64), default=None, help="Memory limit of each labelling process.")
def learn(domain, problems, output, minutes, jobs, work_dir, seed, memory_mb):
    """Learn a model of DOMAIN from PROBLEMS (files or folders): label, train, judge, export, in one budget.

    The largest problems are held back as the judge that chooses the model; the rest are labelled
    (smallest first, within the budget) and trained on. Run the same command to continue a
    stopped run.

    Example: gnnplan learn domain.pddl train/ -o mydomain.onnx --minutes 30
    """
    try:
        import onnx  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        _fail(RuntimeError("learning needs torch and onnx: pip install 'up-gnnplan[train,export]'"))

    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.learn import LearnOptions, learn as run
    from up_gnnplan.limits import command_start

    options = LearnOptions(minutes=minutes, jobs=jobs, work_dir=work_dir, seed=seed, memory_mb=memory_mb,
                           command="gnnplan learn " + " ".join(sys.argv[2:]),
                           started=command_start())
    try:
        run(domain, list(problems), output, options, say=lambda line: click.echo(line, err=True))
    except GnnplanError as error:
        _fail(error)
    except KeyboardInterrupt:
        click.echo(f"\nstopped; run the same command to continue", err=True)
        raise SystemExit(130) from None


# Commands whose limit counts up to the process's end set this: their process then ends at once
# after the output is flushed, instead of spending up to half a second tearing down pymimir's and
# onnxruntime's objects (measured after a 3 s solve of 400 blocks: 0.37-0.47 s).
_EXIT_AT_ONCE = {"on": False}


def entry():
    """The ``gnnplan`` program: :func:`main`, ended at once where the command asked for it."""
    import os

    from up_gnnplan.limits import run_as_program

    run_as_program()
    try:
        main(standalone_mode=True)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not _EXIT_AT_ONCE["on"]:
            raise
    if _EXIT_AT_ONCE["on"]:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()

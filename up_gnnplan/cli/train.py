"""``gnnplan train`` and ``gnnplan export``: a model trained on datasets, and written to ONNX."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from up_gnnplan.cli.common import (EXIT_INTERRUPTED, EXIT_LIMIT, SECONDS, Command, FiniteRange, fail, renamed,
                                   stopped_by_sigterm)
from up_gnnplan.models import ARCHITECTURES, HEADS, architectures_with, option_default  # the registry: no torch


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


@click.command(cls=Command)
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
@click.option("--unknown-successors", type=click.Choice(["non-optimal", "left-out"]), default="non-optimal",
              show_default=True,
              help="Logits heads: an action whose successor the labeller left without V* (its limits) counts as "
                   "non-optimal in the cross-entropy, or is left out of it.")
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
@click.option("--timeout", type=SECONDS, default=300.0, show_default=True,
              help="Seconds for the whole command, counted from its start: reading the datasets and "
                   "validation problems, the epochs with their evaluations and the judge of --validation-problem, "
                   "snapshots, the final evaluation and writing the checkpoint (with --state: over all sessions). "
                   "Epochs stop early enough for the final steps; with little time left, the final evaluation takes "
                   "fewer states and the record says so.")
@renamed("--max-seconds", "--timeout", "timeout", type=SECONDS)
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
                   "ones): most solved, then fewest steps, then validation error (see --judge-ties). Needs --validation-domain. On grounding "
                   "data (problems with existential goals): by the greedy binding, the ground goal solved by "
                   "LAMA-first, fewest plan steps in all.")
@click.option("--validation-domain", type=click.Path(dir_okay=False, exists=True),
              help="Domain file of the --validation-problem files.")
@click.option("--policy-steps", type=click.IntRange(min=1), default=150, show_default=True,
              help="Step limit of the greedy policy on each --validation-problem.")
@click.option("--judge-ties", type=click.Choice(["steps", "error", "error-unless-all"]), default="steps",
              show_default=True,
              help="Among epochs whose greedy policy solves as many --validation-problem files: the fewest steps win, "
                   "or the lowest validation error (with --validation-dataset, the error on those held-out problems), or "
                   "the lowest error unless they solve all of them, then the fewest steps (what gnnplan learn uses).")
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
          timeout, **options):
    """Train a value function on one or more DATASETS (files written by `gnnplan dataset`).

    Started by torchrun, the processes train together (DistributedDataParallel) and rank 0
    alone shows progress and writes the checkpoint.

    Example: gnnplan train blocks.npz -o blocks.pt --arch rgnn --timeout 300
    """

    from up_gnnplan.limits import command_start

    started = command_start()  # --timeout counts from here: the command's start, its imports included
    try:
        import torch  # noqa: F401
    except ImportError:
        fail(RuntimeError("training needs torch: pip install 'up-gnnplan[train]'"))
    from up_gnnplan.datasets import Dataset
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.training import TrainConfig, report
    from up_gnnplan.training.checkpoint import save_checkpoint
    from up_gnnplan.training.devices import autocast, resolve_device
    from up_gnnplan.training.distributed import process_rank
    from up_gnnplan.limits import LimitReached
    from up_gnnplan.training.loop import train as run

    try:  # refuse a device that cannot be had before loading anything
        autocast(resolve_device(options["device"]), options["amp"])
    except GnnplanError as error:
        fail(error)
    main_process = process_rank() == 0
    loss = options.pop("loss")
    try:
        minutes = report.snapshot_minutes(snapshot_minutes)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--snapshot-minutes") from None
    try:
        data = Dataset.load_all(datasets)
        validation = Dataset.load_all(validation_datasets, expect=data.signature)
        tasks = report.validation_tasks(validation_domain, validation_problems, data.signature)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    except GnnplanError as error:
        fail(error)
    from up_gnnplan.grounding.encoding import is_grounding_signature

    loss = loss or ("mse" if is_grounding_signature(data.signature) else "l1")
    config = TrainConfig(**options, max_seconds=timeout, loss=loss)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[info]}"),
                  TimeElapsedColumn(), disable=not (sys.stderr.isatty() and main_process), transient=True) as bar:
        task = bar.add_task("training", total=config.max_epochs, info="")

        def on_epoch(epoch, loss, val, best, judge=None):
            solved = "" if judge is None else f"  judge {judge['solved']}/{judge['tasks']}"
            bar.update(task, completed=epoch, info=f"loss {loss:.3f}  validation error {val:.3f}  best {best:.3f}{solved}")

        def describe(record):
            record["datasets"] = [str(p) for p in datasets]
            record["validation_datasets"] = list(validation_datasets)
            record["validation_problem_files"] = list(validation_problems)
            record["command"] = "gnnplan train " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else "gnnplan train"
            return record

        def on_snapshot(minutes, kind, model, encoding, record):
            path = report.snapshot_path(output, minutes, kind)
            save_checkpoint(path, model, encoding, config, describe(record), data.domain)
            bar.console.print(f"snapshot after {minutes:g} min ({record['states_trained']} states trained, "
                              f"{'best epoch so far' if kind == 'best' else 'last epoch'}): {path}")

        try:
            with stopped_by_sigterm():
                model, encoding, record = run(data, config, on_epoch, validation=validation, validation_tasks=tasks,
                                              state_path=state_path, snapshot_minutes=minutes,
                                              on_snapshot=on_snapshot, started=started)
        except LimitReached as error:
            fail(error, EXIT_LIMIT)
        except (GnnplanError, ValueError) as error:  # e.g. a head the architecture or the dataset cannot serve
            fail(error)
        except KeyboardInterrupt:
            if state_path and main_process:
                click.echo(f"\nstopped; the state of the last finished epoch is in {state_path}: run the same command "
                           "to continue", err=True)
            raise SystemExit(EXIT_INTERRUPTED) from None
    if not main_process:
        return  # rank 0 writes and reports
    path = save_checkpoint(output, model, encoding, config, describe(record), data.domain)
    click.echo(f"{path}: {config.architecture} ({config.head}) on '{data.domain}', {record['epochs']} epochs in "
               f"{record['seconds']} s, best epoch {record['best_epoch']}, {report.quality(record)}"
               + report.judged(record, tasks))
    for note in (record.get("time_limit_note"), (record.get("policy_validation") or {}).get("stopped_by_time_limit"),
                 record.get("non_finite_note")):
        if note:
            click.echo(f"note: {note}", err=True)


@click.command(cls=Command)
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
        fail(RuntimeError("exporting needs torch, onnx and an ONNX runtime: pip install 'up-gnnplan[export,cpu]'"))
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.exporters.reexport import compare_files, is_onnx_file, load_exported
    from up_gnnplan.training.checkpoint import load_checkpoint

    reexport = is_onnx_file(checkpoint)
    if reexport and Path(checkpoint).resolve() == Path(output).resolve():
        fail(click.UsageError("write the re-exported model to another file than the one it is read from"))
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
            notes.append(f"vs {Path(checkpoint).name}: largest difference (relative above 1) {difference:.2e}")
            if difference > 1e-4:
                path.unlink()
                raise GnnplanError(f"{path}: its values differ from {checkpoint}'s by {difference:.2e}; not kept")
    except GnnplanError as error:
        fail(error)
    if ship_name:
        from up_gnnplan.exporters.shipping import ship

        shipped = ship(path, ship_name, data, config)
        click.echo(f"shipped as '{ship_name}': {shipped}")
    note = f", {'; '.join(notes)}" if notes else ""
    click.echo(f"{path}: {config.architecture} for '{data['domain']}' ({path.stat().st_size / 1024:.0f} KiB){note}")

"""``gnnplan learn``: a model of a domain from its problems, in one time limit."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from up_gnnplan.cli.common import (EXIT_INTERRUPTED, MINUTES, Command, fail, memory_option, renamed,
                                   stopped_by_sigterm, timeout_option)
from up_gnnplan.learn.recipe import HEADS


@click.command(cls=Command)
@click.argument("domain", type=click.Path(dir_okay=False, exists=True))
@click.argument("problems", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="ONNX model to write.")
@timeout_option("Seconds for the whole run: labelling, training, choosing and export, from the start to the file "
                "written (over every session of a continued run).", default=1800.0)
@renamed("--minutes", "--timeout", "timeout", convert=lambda minutes: 60.0 * minutes, type=MINUTES)
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, help="Labelling processes at once.")
@click.option("--work-dir", type=click.Path(file_okay=False),
              help="Run folder; a stopped run continues from it.  [default: OUTPUT.learn next to the output]")
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds training.")
@click.option("--labels", type=click.Choice(["auto", "optimal", "satisficing"]), default="auto", show_default=True,
              help="Where A* with LM-cut finds no optimal plan of a training problem in its share of the time: "
                   "'auto' labels it by LAMA-first's plan in the rest of its share, at least 4 s (an upper bound on the "
                   "cost to go), and gives the later problems larger shares, "
                   "'optimal' skips it, 'satisficing' gives A* half the share and LAMA-first the other half.")
@click.option("--device", default="auto", show_default=True, metavar="auto|cpu|cuda|cuda:N",
              help="Torch device to train on; auto: CUDA when torch sees a GPU, else the CPU.")
@click.option("--batch-size", type=click.IntRange(min=1), default=None,
              help="Training states per step.  [default: 32 on a CPU, 256 on a GPU]")
@click.option("--head", type=click.Choice(HEADS), default=None,
              help="The model's heads: the action head alone, a value head beside it (mode auto's value policy and "
                   "GBFS on V), or a value head alone (modes policy and gbfs; a value model to keep beside an action "
                   "model of the domain).  [default: logits]")
@click.option("--hidden", type=click.IntRange(min=1), default=None,
              help="The network's features per object.  [default: 32]")
@click.option("--layers", type=click.IntRange(min=1), default=None,
              help="The network's message-passing layers (their weights shared). Fewer layers and features make each "
                   "policy step cheaper on large problems; the layers also bound how far along the state's atoms the "
                   "policy sees.  [default: 30]")
@click.option("--ema-epochs", type=click.FloatRange(min=0.0), default=None, metavar="EPOCHS",
              help="Weight averaging: each epoch is judged and kept as an exponential moving average of the weights "
                   "over about EPOCHS epochs; 0: none.  [default: 0]")
@click.option("--labels-from", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              metavar="RUN_FOLDER",
              help="Start from the labels of another run of the same problems (its folder, OUTPUT.learn): another "
                   "--head or --seed trained without labelling again; their labelling time counts against --timeout. "
                   "With --labels optimal, a run of --labels auto gives its optimal labels alone (those along "
                   "LAMA-first's plans left out).")
@click.option("--label-only", is_flag=True,
              help="Label, then stop: the same command without it trains, here or on another machine given the run "
                   "folder (label on many CPUs, train on a GPU).")
@memory_option("of each labelling process (its address space gets room for what it maps) [default: half the RAM, "
               "within what is free].")
def learn(domain, problems, output, timeout, jobs, work_dir, seed, labels, device, batch_size, head, hidden, layers,
          ema_epochs, labels_from, label_only, memory_mb):
    """Learn a model of DOMAIN from PROBLEMS (files or folders): label, train, judge, export, in one time limit.

    The largest problems are held back as the judge that chooses the model; the rest are labelled
    (smallest first, within the time limit) and trained on. Run the same command to continue a
    stopped run.

    Example: gnnplan learn domain.pddl train/ -o mydomain.onnx --timeout 1800
    """
    try:
        import onnx  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        fail("learning needs torch and onnx: pip install 'up-gnnplan[train,export]'")

    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.learn import LearnOptions, learn as run
    from up_gnnplan.limits import command_start

    argv = sys.argv[2:]
    if not any(a == "--labels" or a.startswith("--labels=") for a in argv):
        argv = argv + ["--labels", labels]  # the record names the labels, whatever the default becomes
    options = LearnOptions(minutes=timeout / 60.0, jobs=jobs, work_dir=work_dir, seed=seed, labels=labels,
                           memory_mb=memory_mb, device=device, batch_size=batch_size, label_only=label_only, head=head,
                           hidden=hidden, layers=layers, ema_epochs=ema_epochs, labels_from=labels_from,
                           command="gnnplan learn " + " ".join(argv), started=command_start())
    try:
        with stopped_by_sigterm():
            run(domain, list(problems), output, options, say=lambda line: click.echo(line, err=True))
    except GnnplanError as error:
        fail(error)
    except KeyboardInterrupt:
        click.echo("\nstopped; run the same command to continue", err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None

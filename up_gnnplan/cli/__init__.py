"""The ``gnnplan`` command line: a click group of thin commands, one module per group of commands.

====================  =============================================================================
module                commands
====================  =============================================================================
``cli.learn``         ``learn``: a model of a domain from its problems, in one time limit
``cli.data``          ``dataset`` (labelled states), ``generate`` (problems)
``cli.train``         ``train`` (a checkpoint from datasets), ``export`` (to ONNX)
``cli.solve``         ``solve`` (the engine on a problem), ``ground`` (an existential goal bound)
``cli.compare``       ``compare``: planners on the same problems, with reports
``cli.models``        ``models``: the shipped models
``cli.common``        what they share: exit codes, option types, the error line
====================  =============================================================================

Commands parse options, call the package, and print; heavy imports (UP's engines, pymimir,
torch, onnxruntime) happen inside the command that needs them, so ``gnnplan --help`` starts fast
and never imports torch. The same concept has one option name and one check everywhere:
``--timeout`` (seconds), ``--memory-mb`` (resident memory in MB), ``--device``; former names
still work, hidden, with a warning. Exit codes: see :mod:`up_gnnplan.cli.common` (and ``gnnplan
--help``).
"""

from __future__ import annotations

import sys
import warnings

import click

from up_gnnplan.cli.common import (EXIT_AT_ONCE, EXIT_INPUT_ERROR, EXIT_INTERRUPTED, EXIT_LIMIT,  # noqa: F401
                                   EXIT_OK, EXIT_UNSOLVABLE, SECONDS, FiniteRange, Group, Minutes, Seconds, fail,
                                   warning_line)
from up_gnnplan.cli.compare import compare
from up_gnnplan.cli.data import dataset, generate
from up_gnnplan.cli.learn import learn
from up_gnnplan.cli.models import models
from up_gnnplan.cli.solve import ground, solve
from up_gnnplan.cli.train import export, train



@click.group(cls=Group)
@click.version_option(package_name="up-gnnplan")
def main():
    """Learn general policies and heuristics for classical planning with relational GNNs."""
    warnings.formatwarning = warning_line


for command in (learn, dataset, generate, train, export, solve, ground, compare, models):
    main.add_command(command)


def entry():
    """The ``gnnplan`` program: :func:`main`, ended at once where the command asked for it."""
    import os

    from up_gnnplan.limits import run_as_program
    from up_gnnplan.processes import adopt_orphans, kill_descendants

    run_as_program()
    adopt_orphans()
    try:
        main(standalone_mode=True)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not EXIT_AT_ONCE["on"]:
            kill_descendants()
            raise
    kill_descendants()  # no search (Fast Downward in a session of its own) outlives the command
    if EXIT_AT_ONCE["on"]:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)

"""What every ``gnnplan`` command shares: exit codes, option types, the options named alike
everywhere, the error line, and the group that prints click's own errors in the same words.

Exit codes (the same for every command):

====  ==========================================================================================
code  meaning
====  ==========================================================================================
0     done: the plan found and validated, the file written
1     an unexpected failure (a bug: please report it with its traceback)
2     bad input: a usage error, a missing or malformed file, an unsupported PDDL feature, a
      model or dataset of another domain, a model or engine that cannot run
3     the problem is proven unsolvable, or the search gave up without a plan
4     the time or memory limit was reached before the work was done
130   interrupted (Ctrl-C); ``learn`` and ``train --state`` continue where they stopped
====  ==========================================================================================
"""

from __future__ import annotations

import math
import signal
import sys
from contextlib import contextmanager

import click
from click.core import ParameterSource

EXIT_OK = 0
EXIT_INPUT_ERROR = 2  # bad input: file, PDDL, unsupported feature, dataset of another domain
EXIT_UNSOLVABLE = 3  # the problem is proven unsolvable (or could not be solved)
EXIT_LIMIT = 4  # the time or memory limit was reached before a plan was found (and validated)
EXIT_INTERRUPTED = 130  # Ctrl-C, or SIGTERM where a command stops as Ctrl-C stops it (stopped_by_sigterm)

# Commands whose limit counts up to the process's end set this: their process then ends at once
# after the output is flushed, instead of spending up to half a second tearing down pymimir's and
# onnxruntime's objects (measured after a 3 s solve of 400 blocks: 0.37-0.47 s).
EXIT_AT_ONCE = {"on": False}

EXIT_CODES = {EXIT_OK: "done", 1: "an unexpected failure (a bug)",
              EXIT_INPUT_ERROR: "bad input (usage, files, PDDL, models, datasets)",
              EXIT_UNSOLVABLE: "proven unsolvable, or no plan found", EXIT_LIMIT: "time or memory limit reached",
              EXIT_INTERRUPTED: "interrupted"}


@contextmanager
def stopped_by_sigterm():
    """Within this block SIGTERM stops the command as Ctrl-C does (``KeyboardInterrupt``), so that a long run
    saves what it continues from: a scheduler's stop and ``kill`` send SIGTERM, and a job a shell started in the
    background ignores Ctrl-C's SIGINT."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave SIGTERM as it is
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def fail(error, code: int = EXIT_INPUT_ERROR):
    """Print ``error`` as the command's one ``error:`` line and end with ``code``."""
    click.echo(f"error: {error}", err=True)
    sys.exit(code)


def warning_line(message, category, filename, lineno, line=None):
    """Format Python warnings as one ``warning:`` line (the form of ``warnings.formatwarning``)."""
    return f"warning: {message}\n"


# -- option types: one validation per concept -------------------------------------------------------

class Seconds(click.ParamType):
    """A time limit: a finite number of seconds above 0 (one rule for every command)."""

    name = "SECONDS"

    def convert(self, value, param, ctx):
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds <= 0:
            self.fail(f"{value!r}: give a finite number of seconds above 0", param, ctx)
        return seconds


SECONDS = Seconds()


class Minutes(Seconds):
    """A budget in minutes: the same rule as seconds (finite and above 0)."""

    name = "MINUTES"


MINUTES = Minutes()


class FiniteRange(click.FloatRange):
    """A number within a range that is also finite (click's FloatRange lets nan through every bound)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class Megabytes(click.ParamType):
    """A memory limit: a whole number of MB of resident memory, 0 for none, else at least 64."""

    name = "MB"

    def convert(self, value, param, ctx):
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a whole number of MB", param, ctx)
        if number < 0 or 0 < number < 64:
            self.fail(f"{value!r}: give 0 (no limit) or at least 64 MB", param, ctx)
        return number


MEGABYTES = Megabytes()


def timeout_option(help: str, default: float | None = None):
    """The ``--timeout`` option: seconds, counted as ``help`` says."""
    return click.option("--timeout", type=SECONDS, default=default, show_default=default is not None, help=help)


def memory_option(help: str, default: int | None = None):
    """The ``--memory-mb`` option: a limit on resident memory in MB (0: none)."""
    return click.option("--memory-mb", "memory_mb", type=MEGABYTES, default=default,
                        show_default=default is not None, help=f"Limit on the resident memory in MB: {help}")


def device_option(help: str):
    """The ``--device`` option of the ONNX runtime: auto, cpu or cuda."""
    from up_gnnplan.runtime.providers import DEVICES

    return click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True, help=help)


# -- former option names ----------------------------------------------------------------------------

_RENAMED = "up_gnnplan.renamed"


def renamed(old: str, new: str, name: str, convert=None, **kwargs):
    """Keep ``old``, the former name of option ``new`` (parameter ``name``), working as a hidden alias
    that says it is deprecated; ``convert`` turns its value into the new option's (minutes to seconds)."""

    def remember(ctx, param, value):
        if value is not None:
            click.echo(f"warning: {old.split('/')[0]} is deprecated; use {new}", err=True)
            ctx.meta.setdefault(_RENAMED, {})[name] = (old, new, convert(value) if convert else value)
        return value

    dest = "renamed_" + old.split("/")[0].strip("-").replace("-", "_")
    return click.option(old, dest, hidden=True, expose_value=False, callback=remember, default=None, **kwargs)


class Command(click.Command):
    """A command whose renamed options still take their former names (see :func:`renamed`)."""

    def invoke(self, ctx):
        for name, (old, new, value) in ctx.meta.get(_RENAMED, {}).items():
            if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
                raise click.UsageError(f"give {new} or {old.split('/')[0]}, not both", ctx)
            ctx.params[name] = value
        return super().invoke(ctx)


class Group(click.Group):
    """The ``gnnplan`` group: its commands take renamed options, and every error, click's usage
    errors included, is one ``error:`` line (exit code 2 for usage errors, as click's)."""

    command_class = Command

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as error:
            if type(error).__name__ == "NoArgsIsHelpError":  # click 8.2+: no command given, so the help
                error.show()
                sys.exit(error.exit_code)
            if error.ctx is not None:
                hint = f"Try '{error.ctx.command_path} --help' for help."
                click.echo(f"{error.ctx.get_usage()}\n{hint}\n", err=True)
            fail(error.format_message(), error.exit_code)
        except click.ClickException as error:
            fail(error.format_message(), error.exit_code)
        except click.Abort:
            click.echo("\naborted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        sys.exit(code if isinstance(code, int) else EXIT_OK)

    def format_epilog(self, ctx, formatter):
        with formatter.section("Exit codes"):
            formatter.write_dl([(str(code), meaning) for code, meaning in EXIT_CODES.items()])
        super().format_epilog(ctx, formatter)


def bundled_example(name: str) -> list[str]:
    """Return [domain, problems...] of a bundled example domain; end the command if there is none."""
    from up_gnnplan.data import example_files

    try:
        return [str(path) for path in example_files(name)]
    except ValueError as error:
        fail(error)


def refuse_files_with_example(files, example) -> None:
    """Refuse positional files given with ``--example``: one of the two would be ignored."""
    if files and example:
        raise click.UsageError(f"give files or --example {example}, not both (got {' '.join(map(str, files))})")

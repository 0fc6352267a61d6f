"""``gnnplan models``: the shipped models, what each computes, and its coverage; ``--check`` loads them."""

from __future__ import annotations

import sys

import click

from up_gnnplan.cli.common import EXIT_INPUT_ERROR, Command, device_option, fail

COLUMNS = ("model", "domain", "computes", "coverage (gnnplan, per test set)")


@click.command(cls=Command)
@click.option("--markdown", is_flag=True, help="Print the table in markdown.")
@click.option("--details", is_flag=True, help="Also say how each model was trained and validated.")
@click.option("--check", is_flag=True,
              help="Load every shipped model in an onnxruntime session and say which execution provider runs it.")
@device_option("Device for --check.")
def models(markdown, details, check, device):
    """List the shipped models: the domain each is for, what it computes, and its measured coverage."""
    from up_gnnplan.exporters.shipping import catalogue, training_summary
    from up_gnnplan.models_zoo import entries

    shipped = entries()
    if check:
        _check_models(shipped, device)
        return
    if not shipped:
        click.echo("no shipped models")
        return
    rows = catalogue(shipped)
    if markdown:
        click.echo("| " + " | ".join(COLUMNS) + " |")
        click.echo("|" + "---|" * len(COLUMNS))
        for row in rows:
            click.echo("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(text) for text in column) for column in zip(COLUMNS, *rows)]
        for row in [COLUMNS, *rows]:
            click.echo("  ".join(text.ljust(width) for text, width in zip(row[:-1], widths)) + "  " + row[-1])
    if details:
        click.echo("")
        for entry in shipped:
            click.echo(f"{entry['name']}: {training_summary(entry)}")


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
        fail(error)
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
            fail(error)
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

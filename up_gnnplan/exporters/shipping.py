"""Shipping models with the package (developers): add an exported model to the shipped models,
edit their index, and list their records as ``gnnplan models`` and the README show them.

The runtime's side, finding a shipped model for a domain, is :mod:`up_gnnplan.models_zoo`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from up_gnnplan import __version__
from up_gnnplan import models_zoo as zoo  # by module, so that a test can point zoo.zoo_dir elsewhere
from up_gnnplan.models_zoo import ACTION_HEADS, heads_of


@contextmanager
def editing_index() -> Iterator[list[dict]]:
    """Yield the shipped models' entries to change in place (developers: benchmark scripts record
    figures in them); they are written back, sorted by name, when the block ends without error."""
    models = zoo.entries()
    yield models
    write_index(models)


def write_index(models: list[dict]) -> None:
    """Write ``models`` as the shipped models' index, sorted by name."""
    text = json.dumps({"models": sorted(models, key=lambda m: m["name"])}, indent=1)
    (zoo.zoo_dir() / "index.json").write_text(text + "\n")


def keep_value_model(name: str) -> None:
    """Rename the shipped value model ``name`` to ``name-value`` (developers: before an action model
    of the same domain ships as ``name``, so that modes policy and gbfs keep a model to run)."""
    entry = next((m for m in zoo.entries() if m["name"] == name), None)
    if entry is not None and heads_of(entry) not in ACTION_HEADS:
        keep_as(name, f"{name}-value")


def keep_as(name: str, kept: str) -> None:
    """Rename the shipped model ``name`` to ``kept`` (developers: before another model ships as
    ``name``; an older model named ``kept`` goes)."""
    models = zoo.entries()
    entry = next((m for m in models if m["name"] == name), None)
    if entry is None:
        return
    (zoo.zoo_dir() / entry["file"]).rename(zoo.zoo_dir() / f"{kept}.onnx")
    entry.update(name=kept, file=f"{kept}.onnx")
    entry.pop("standing", None)  # the standing comparison's figures belong to the model the default mode picks
    if heads_of(entry) not in ACTION_HEADS:
        entry["head"] = "value"
    write_index([m for m in models if m is entry or m["name"] != kept])


def ship(onnx_path: Path, name: str, checkpoint: dict, config) -> Path:
    """Copy an exported model into the shipped models and record how it was made (developers)."""
    import shutil

    from up_gnnplan.exporters.reexport import file_digest

    target = zoo.zoo_dir() / f"{name}.onnx"
    previous = next((m for m in zoo.entries() if m["name"] == name), None)
    source = checkpoint.get("source") or {"kind": "checkpoint"}
    # Exported again from the shipped file itself: the same weights, so its record stands.
    same_weights = (previous is not None and source["kind"] == "onnx" and (zoo.zoo_dir() / previous["file"]).is_file()
                    and file_digest(zoo.zoo_dir() / previous["file"]) == source["sha256"])
    shutil.copyfile(onnx_path, target)
    record = checkpoint["record"]
    validation = record.get("validation") or record.get("train") or {}
    entry = {
        "name": name,
        "file": target.name,
        "domain": checkpoint["domain"],
        "architecture": config.architecture,
        "head": config.head,
        "signature": checkpoint["encoding"]["signature"],
        "training": {
            "command": record.get("command"),
            "data": record.get("datasets"),
            "problems": record.get("problems"),
            "seed": config.seed,
            "minutes": round(record["seconds"] / 60, 1),
            "epochs": record.get("epochs"),
            "states_trained": record.get("steps", 0) * config.batch_size,  # optimisation steps x batch size
            "train_states_per_second": record.get("train_states_per_second"),
            "best_epoch": record.get("best_epoch"),
            "validation_problems": record.get("validation_problems"),
            "validation_mae": round(validation["mae"], 3) if "mae" in validation else None,  # None: an action head's
            "validation_max_error": round(validation["max_error"], 3) if "max_error" in validation else None,
            # Every figure of the validation (action heads: the share of states whose best-scored
            # action is optimal; value heads: MAE, max error, share within 0.5).
            "validation": {k: round(v, 4) if isinstance(v, float) else v for k, v in validation.items()},
            "machine": record.get("machine"),
            "torch": record.get("torch"),
        },
    }
    if source["kind"] == "onnx":
        entry["export"] = (f"exported again by up-gnnplan {__version__} from the weights of {source['file']} "
                           f"(sha256 {source['sha256']}, up-gnnplan {source['package_version']})")
        if same_weights or (previous and previous["training"] == entry["training"]):
            # The same weights: the record and the coverage measured with the earlier file stand, and where the
            # weights came from first.
            entry.update({k: previous[k] for k in ("training", "coverage", "more_coverage", "standing") if k in previous})
            if first := previous.get("first_export") or previous.get("export"):
                entry["first_export"] = first
    write_index([m for m in zoo.entries() if m["name"] != name] + [entry])
    return target


# -- the records, as `gnnplan models` lists them ------------------------------------------------

_HEADS = {"value": "value", "logits": "actions", "q": "actions (Q)", "both": "value, actions"}
# gnnplan's figure in a coverage text: "gnnplan:policy 17/30", "gnnplan (default mode) 30/30", "mode ground ... 10/10".
_OURS = re.compile(r"(?:gnnplan(?::[\w-]+)?(?: \(default mode\))?|mode ground \(static filter\)) (\d+/\d+)")
# Where one test set's text ends and the next begins.
_SETS = re.compile(r"(?<=\d)\. |; (?=[\w-]+ (?:optimal|lama|hard) set)|(?<=/) (?=[a-z])")


def heads_shown(entry: dict) -> str:
    """Say what the model computes: ``value``, ``actions``, or ``goal grounding`` (it values goal bindings)."""
    from up_gnnplan.grounding.encoding import is_grounding_signature
    from up_gnnplan.states.signature import PredicateSignature

    if is_grounding_signature(PredicateSignature.from_json(entry["signature"])):
        return "goal grounding"
    return _HEADS.get(heads_of(entry), heads_of(entry))


def _set_name(text: str) -> str:
    """Name a test set briefly: ``ipc2023-learning/blocksworld/testing/easy`` becomes ``blocksworld easy``."""
    head = re.split(r",|:| \(", text.strip())[0]
    parts = head.split("/")
    return f"{parts[1]} {parts[-1]}" if head.startswith("ipc2023-learning/") and len(parts) > 2 else head


def coverage_summary(entry: dict, most: int = 3) -> str:
    """Return gnnplan's coverage per test set in a few words (``blocksworld 30/30, blocksworld-large 10/10``):
    the standing comparison's where the entry has one, else the figures measured when it shipped."""
    standing = entry.get("standing") or ""
    figures = [f"{name} {figure}" for name, _, figure in re.findall(r"([\w.-]+) \((\d+) tasks\): (\d+/\d+)", standing)]
    if not figures:
        text = (entry.get("coverage") or "").split("Per-task results")[0]
        figures = [f"{_set_name(chunk)} {found.group(1)}" for chunk in _SETS.split(text)
                   if (found := _OURS.search(chunk))]
    if len(figures) > most:
        figures = figures[:most] + [f"{len(figures) - most} more sets"]
    return ", ".join(figures) or "not measured"


def problem_list(names: list[str], most: int = 6) -> str:
    """Name ``names`` briefly: goal variants ``P#k`` of one problem as one entry, at most ``most`` shown."""
    variants = Counter(name.split("#")[0] for name in names)  # in the order of first appearance
    shown = [f"{stem} ({count} goal variants)" if count > 1 else stem for stem, count in list(variants.items())[:most]]
    if len(variants) > most:
        shown.append(f"... ({len(variants)} problems in all)")
    return ", ".join(shown)


def catalogue(models: list[dict] | None = None) -> list[tuple[str, str, str, str]]:
    """Return a row per shipped model: (name, domain, heads, coverage summary)."""
    models = zoo.entries() if models is None else models
    return [(e["name"], e["domain"], heads_shown(e), coverage_summary(e)) for e in models]


def training_summary(entry: dict) -> str:
    """Say how ``entry``'s model was trained and validated, in a line."""
    record = entry.get("training", {})
    problems = len(record.get("problems") or [])
    validation = problem_list(record.get("validation_problems") or []) or "held-out training problems"
    optimal = (record.get("validation") or {}).get("best_action_optimal")
    error = (f"best action optimal in {100 * optimal:.0f}% of states" if optimal is not None
             else f"MAE {record.get('validation_mae', '?')}")
    return (f"{entry['architecture']}, trained {record.get('minutes', '?')} min on {problems} problems "
            f"(seed {record.get('seed', '?')}); validation {error} on {validation}")


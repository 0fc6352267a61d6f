"""The shipped pretrained ONNX models and how to find one for a domain.

``index.json`` lists each shipped file with its domain, predicate signature, architecture and
training record (command, data, seed, minutes, validation error); ``gnnplan models`` prints it.
A model is found for a problem by its predicate signature, so a renamed domain file still
finds its model, and a model is never applied to a domain it was not trained for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from up_gnnplan import __version__
from up_gnnplan.states.signature import PredicateSignature


def zoo_dir() -> Path:
    return Path(str(resources.files(__name__)))


def entries() -> list[dict]:
    """Return the index entries of the shipped models (empty when none ship)."""
    index = zoo_dir() / "index.json"
    if not index.is_file():
        return []
    return json.loads(index.read_text())["models"]


@contextmanager
def editing_index() -> Iterator[list[dict]]:
    """Yield the shipped models' entries to change in place (developers: benchmark scripts record
    figures in them); they are written back, sorted by name, when the block ends without error."""
    models = entries()
    yield models
    write_index(models)


def write_index(models: list[dict]) -> None:
    """Write ``models`` as the shipped models' index, sorted by name."""
    (zoo_dir() / "index.json").write_text(json.dumps({"models": sorted(models, key=lambda m: m["name"])}, indent=1)
                                          + "\n")


ACTION_HEADS = ("logits", "q", "both")  # heads that score actions ("both" also values states)
VALUE_HEADS = ("value", "both")


def heads_of(entry: dict) -> str:
    return entry.get("head") or "value"  # entries written before action heads existed are value models


def find_model(signature: PredicateSignature, need: str | None = None) -> Path | None:
    """Return the shipped model for ``signature``'s domain, or None.

    A domain may ship a value model and an action model. ``need`` is "value" (the searches of
    modes policy and gbfs), "actions" (action-policy, policy-best-first) or None (mode auto: the
    action model when there is one, as it takes a step in one pass). When no shipped model of the
    domain has the head needed, the domain's other model is returned, so that the engine's error
    names the head it lacks.
    """
    fitting = [e for e in entries() if PredicateSignature.from_json(e["signature"]) == signature]
    if not fitting:
        return None
    wanted = VALUE_HEADS if need == "value" else ACTION_HEADS
    best = next((e for e in fitting if heads_of(e) in wanted), fitting[0])
    return zoo_dir() / best["file"]


def no_model_message(signature: PredicateSignature) -> str:
    """Say that no shipped model fits ``signature``, how the closest one differs, and how to get one."""
    listed = ", ".join(f"{n}/{a}" for n, a in signature.predicates)
    message = f"no shipped model for this domain, whose predicates are {listed}"
    if any(n.startswith("type:") for n, _ in signature.predicates):
        message += " (type:T is true of the objects of type T)"
    mine = set(signature.predicates)
    closest, overlap = None, 0.0
    for entry in entries():
        theirs = set(PredicateSignature.from_json(entry["signature"]).predicates)
        score = len(mine & theirs) / len(mine | theirs)
        if score > overlap:
            closest, overlap = entry, score
    if closest is not None and overlap >= 0.3:
        model = PredicateSignature.from_json(closest["signature"])
        message += (f"; the closest shipped model, '{closest['name']}' (domain {closest['domain']}), differs: "
                    + signature.describe_difference(model).replace("the first", "the problem").replace(
                        "the second", "the model"))
    return (message + ". Train one with `gnnplan dataset`, `gnnplan train` and `gnnplan export`, then pass it "
            "with --model PATH (command line) or params={'model': PATH} (UP)")


def resolve(name_or_path: str) -> Path:
    """Return the file of a shipped model name (``blocksworld``) or of a path."""
    for entry in entries():
        if name_or_path in (entry["name"], entry["file"]):
            return zoo_dir() / entry["file"]
    return Path(name_or_path)


def keep_value_model(name: str) -> None:
    """Rename the shipped value model ``name`` to ``name-value`` (developers: before an action model
    of the same domain ships as ``name``, so that modes policy and gbfs keep a model to run)."""
    entry = next((m for m in entries() if m["name"] == name), None)
    if entry is not None and heads_of(entry) not in ACTION_HEADS:
        keep_as(name, f"{name}-value")


def keep_as(name: str, kept: str) -> None:
    """Rename the shipped model ``name`` to ``kept`` (developers: before another model ships as
    ``name``; an older model named ``kept`` goes)."""
    models = entries()
    entry = next((m for m in models if m["name"] == name), None)
    if entry is None:
        return
    (zoo_dir() / entry["file"]).rename(zoo_dir() / f"{kept}.onnx")
    entry.update(name=kept, file=f"{kept}.onnx")
    entry.pop("standing", None)  # the standing comparison's figures belong to the model the default mode picks
    if heads_of(entry) not in ACTION_HEADS:
        entry["head"] = "value"
    write_index([m for m in models if m is entry or m["name"] != kept])


def ship(onnx_path: Path, name: str, checkpoint: dict, config) -> Path:
    """Copy an exported model into the shipped models and record how it was made (developers)."""
    import shutil

    from up_gnnplan.exporters.reexport import file_digest

    target = zoo_dir() / f"{name}.onnx"
    previous = next((m for m in entries() if m["name"] == name), None)
    source = checkpoint.get("source") or {"kind": "checkpoint"}
    # Exported again from the shipped file itself: the same weights, so its record stands.
    same_weights = (previous is not None and source["kind"] == "onnx" and (zoo_dir() / previous["file"]).is_file()
                    and file_digest(zoo_dir() / previous["file"]) == source["sha256"])
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
            # The same weights: the record and the coverage measured with the earlier file stand.
            entry.update({k: previous[k] for k in ("training", "coverage", "more_coverage", "standing") if k in previous})
    write_index([m for m in entries() if m["name"] != name] + [entry])
    return target

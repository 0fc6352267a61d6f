"""The shipped pretrained ONNX models and how to find one for a domain.

``index.json`` lists each shipped file with its domain, predicate signature, architecture and
training record (command, data, seed, minutes, validation error); ``gnnplan models`` prints it.
A model is found for a problem by its predicate signature, so a renamed domain file still
finds its model, and a model is never applied to a domain it was not trained for.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from up_gnnplan.states.signature import PredicateSignature


def zoo_dir() -> Path:
    return Path(str(resources.files(__name__)))


def entries() -> list[dict]:
    """Return the index entries of the shipped models (empty when none ship)."""
    index = zoo_dir() / "index.json"
    if not index.is_file():
        return []
    return json.loads(index.read_text())["models"]


def find_model(signature: PredicateSignature) -> Path | None:
    """Return the shipped model for ``signature``'s domain, or None."""
    for entry in entries():
        if PredicateSignature.from_json(entry["signature"]) == signature:
            return zoo_dir() / entry["file"]
    return None


def resolve(name_or_path: str) -> Path:
    """Return the file of a shipped model name (``blocksworld``) or of a path."""
    for entry in entries():
        if name_or_path in (entry["name"], entry["file"]):
            return zoo_dir() / entry["file"]
    return Path(name_or_path)

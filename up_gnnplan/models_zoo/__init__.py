"""The shipped pretrained ONNX models and how to find one for a domain (the runtime lookup only).

``index.json`` lists each shipped file with its domain, predicate signature, architecture and
training record (command, data, seed, minutes, validation error); ``gnnplan models`` lists it.
A model is found for a problem by its predicate signature, so a renamed domain file still
finds its model, and a model is never applied to a domain it was not trained for. The tools
that add models and edit the index live with the exporters (:mod:`up_gnnplan.exporters.shipping`).
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


ACTION_HEADS = ("logits", "q", "both")  # heads that score actions ("both" also values states)
VALUE_HEADS = ("value", "both")


def heads_of(entry: dict) -> str:
    """Return what ``entry``'s model computes: "value", "logits", "q" or "both" (both heads)."""
    head = entry.get("head") or "value"  # entries written before action heads existed are value models
    return "both" if "+" in head else head  # logits+value, q+value: the two heads of one model


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
    # A value model of its own first for the value modes (where a domain ships one beside a model of
    # both heads, it is the one measured in those modes), then any model with the head needed.
    ranked = sorted(fitting, key=lambda e: (heads_of(e) not in wanted, need == "value" and heads_of(e) != "value"))
    best = ranked[0]
    return zoo_dir() / best["file"]


# How to get a model for a domain the shipped ones do not cover.
LEARN_HINT = ("Learn one from small problems of the domain with `gnnplan learn DOMAIN PROBLEMS... -o MODEL.onnx` "
              "(pip install 'up-gnnplan[train,export]'), then pass it with --model MODEL.onnx (command line) or "
              "params={'model': 'MODEL.onnx'} (UP)")


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
    return f"{message}. {LEARN_HINT}"


def resolve(name_or_path: str) -> Path:
    """Return the file of a shipped model name (``blocksworld``) or of a path."""
    for entry in entries():
        if name_or_path in (entry["name"], entry["file"]):
            return zoo_dir() / entry["file"]
    return Path(name_or_path)

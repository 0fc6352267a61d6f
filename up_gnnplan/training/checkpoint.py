"""Self-describing checkpoints: config, encoding, signature, record and weights in one file.

Checkpoints hold only tensors and plain Python values, so they load with
``torch.load(..., weights_only=True)``: no pickled code is ever executed. The weights are written
from the CPU and read onto the CPU (``map_location``), so a checkpoint trained on a GPU loads,
exports and runs on a machine without one.
"""

from __future__ import annotations

import re
import warnings
import zipfile
from pathlib import Path

from up_gnnplan.errors import GnnplanError

FORMAT = "up-gnnplan-checkpoint"
VERSION = 1


def build(config, signature, action_signature=None, types=None):
    """Return (encoding, model) for a training config and a domain's signatures.

    ``action_signature`` is needed by action heads, ``types`` (:class:`~up_gnnplan.states.types.DomainTypes`)
    by architectures whose modules follow the domain's types.
    """
    from up_gnnplan.encodings import make_encoding
    from up_gnnplan.models import get_architecture, head_parts, with_heads

    architecture = get_architecture(config.architecture)
    params = config.encoding_params()
    if architecture.needs_types:
        if types is None:
            raise ValueError(f"--arch {config.architecture} needs the domain's types, which this dataset does not record; "
                             "rebuild it with this version's `gnnplan dataset`")
        params["types"] = types.to_json()
    encoding = make_encoding(architecture.encoding, signature, **params)
    if architecture.builds_heads:
        if head_parts(config.head)[0] is not None and action_signature is None:
            raise ValueError(f"--head {config.head} needs the domain's action schemas (a dataset of format 2)")
        return encoding, architecture.build(encoding, head=config.head, actions=action_signature, **config.model_params())
    model = architecture.build(encoding, **config.model_params())
    return encoding, with_heads(model, config, action_signature)


def types_of(encoding_config: dict):
    """Return the DomainTypes recorded in an encoding's config, or None."""
    from up_gnnplan.states.types import DomainTypes

    return DomainTypes.from_json(encoding_config["types"]) if encoding_config.get("types") else None


def save_checkpoint(path, model, encoding, config, record: dict, domain: str) -> Path:
    """Write a checkpoint to ``path`` (the weights as CPU tensors, wherever ``model`` is)."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "format": FORMAT,
            "version": VERSION,
            "domain": domain,
            "config": config.to_dict(),
            "encoding": encoding.config(),
            "schema": encoding.schema(),
            "actions": model.actions.to_json() if hasattr(model, "actions") else None,
            "record": record,
            "state_dict": {name: tensor.cpu() for name, tensor in model.state_dict().items()},
        },
        path,
    )
    return path


def load_checkpoint(path):
    """Return (model, encoding, config, checkpoint dict) from ``path``, loaded with weights_only."""
    import torch

    from up_gnnplan.states.actions import ActionSignature
    from up_gnnplan.states.signature import PredicateSignature
    from up_gnnplan.training.config import TrainConfig

    path = Path(path)
    if not path.is_file():
        raise GnnplanError(f"{path}: no such checkpoint")
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols of files it then refuses
            warnings.simplefilter("ignore")
            data = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as error:  # torch raises many types for bad files
        raise GnnplanError(f"{path}: not a loadable checkpoint: {_why_unloadable(path, error)}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise GnnplanError(f"{path}: not an up-gnnplan checkpoint")
    if data.get("version") != VERSION:
        raise GnnplanError(f"{path}: checkpoint version {data.get('version')} is not supported (this is {VERSION})")
    missing = [key for key in ("domain", "config", "encoding", "record", "state_dict") if key not in data]
    if missing:
        raise GnnplanError(f"{path}: the checkpoint lacks {', '.join(missing)}; it was not written by gnnplan train "
                           "or was altered")
    try:
        config = TrainConfig.from_dict(data["config"])
        actions = ActionSignature.from_json(data["actions"]) if data.get("actions") else None
        encoding, model = build(config, PredicateSignature.from_json(data["encoding"]["signature"]), actions,
                                types_of(data["encoding"]))
        model.load_state_dict(data["state_dict"])
    except (KeyError, TypeError, ValueError, RuntimeError) as error:  # RuntimeError: torch's shape mismatches
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise GnnplanError(f"{path}: the checkpoint's config, encoding and weights do not fit together "
                           f"({type(error).__name__}: {first_line[:200]})") from None
    model.eval()
    return model, encoding, config, data


def _why_unloadable(path: Path, error: Exception) -> str:
    """Say what is wrong with a file that ``torch.load(weights_only=True)`` refused.

    Torch's own message advises loading with ``weights_only=False`` or allowing the refused class,
    which is what must never be done with a file one does not trust, so it is not passed on.
    """
    refused = re.search(r"GLOBAL ([\w.]+)", str(error))
    if refused:
        return (f"it holds {refused.group(1)}, which is neither a tensor nor a plain value; up-gnnplan refuses to "
                "unpickle such objects, since unpickling them can run code")
    with open(path, "rb") as file:
        start = file.read(4)
    if not start:
        return "the file is empty"
    if start == b"PK\x03\x04":  # torch's format is a zip archive
        if not zipfile.is_zipfile(path):
            return "a zip archive without its directory at the end: the file is truncated or damaged"
        return "a zip archive that torch cannot read as a checkpoint: damaged, or not a checkpoint"
    if start[:1] == b"\x80" and isinstance(error, EOFError):  # a pickle, as torch's legacy format
        return "a pickle cut short: the file is truncated"
    return "not a torch checkpoint (neither torch's zip format nor a pickle of tensors and plain values)"

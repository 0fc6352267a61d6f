"""A training run's state in one safetensors file, so that a stopped run continues without loss.

``gnnplan train --state FILE`` writes the file after every epoch: the current weights, Adam's
moments, the best epoch's weights and score, the weight average of ``--ema``, the learning-rate schedule, the random number
generators of the batch sampler and of torch, and the run's clock and curve. Run the same
command again and training continues from the last finished epoch (a stop mid-epoch loses that
epoch's steps, at most ``--epoch-states`` states); resumed, it draws the same batches and reaches
the same weights as a run that was never stopped. A larger ``--timeout``, ``--max-epochs`` or
``--patience`` extends a run that has ended.

The file holds tensors and a JSON header only (no pickle, nothing executed on load): about four
copies of the weights, around a megabyte for the R-GNN's default size, small enough to commit
beside a long training. The header names the config and two digests of the training and
validation data, and a state written for other data or another model is refused with the
differing fields. The exact digest covers the arrays as stored; the canonical one the same states
and values whatever their order and the order of the atoms in a state, which a dataset built again
in a later session may differ in (another PDDL writer, another pymimir: the same states, stored in
another order). A state whose data match only canonically is continued from with a note: the
run's batches then differ from an unstopped run's, its states and values do not.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from up_gnnplan.errors import GnnplanError

FORMAT = "up-gnnplan-training-state"
VERSION = 1
# Fields of the config that may change between a run and its continuation: the budget and where it runs.
BUDGET_FIELDS = frozenset({"max_seconds", "max_epochs", "patience", "settle_epochs", "threads", "device"})


def data_digest(dataset, validation=None) -> str:
    """A digest of what a run trains and selects on: problems, states, values and atoms, as stored."""
    return _digest(dataset, validation, _stored_arrays)


def canonical_digest(dataset, validation=None) -> str:
    """A digest of the same data as :func:`data_digest` that does not depend on the order of the
    states within a problem nor of the atoms within a state."""
    return _digest(dataset, validation, _sorted_states)


def _digest(dataset, validation, add) -> str:
    """The digest of the problem names of both datasets and of what ``add(digest, data)`` adds."""
    digest = hashlib.sha256()
    for data in (dataset, validation):
        if data is None:
            digest.update(b"none")
            continue
        digest.update("\n".join(p.name for p in data.problems).encode())
        add(digest, data)
    return digest.hexdigest()


def _stored_arrays(digest, data) -> None:
    for array in (data.state_problem, data.value, data.dead_end, data.fluent_ptr, data.fluent_pred, data.fluent_args):
        digest.update(np.ascontiguousarray(array).tobytes())


def _sorted_states(digest, data) -> None:
    """Each problem's states as sorted atoms with value and dead-end flag, in sorted order."""
    ptr, pred, args = data.fluent_ptr, data.fluent_pred, data.fluent_args
    for problem in range(len(data.problems)):
        rows = []
        for state in np.flatnonzero(data.state_problem == problem):
            atoms = np.column_stack([pred[ptr[state]:ptr[state + 1], None], args[ptr[state]:ptr[state + 1]]])
            atoms = atoms[np.lexsort(atoms.T[::-1])] if len(atoms) else atoms
            rows.append(np.ascontiguousarray(atoms, dtype=np.int64).tobytes()
                        + np.float64(data.value[state]).tobytes() + bool(data.dead_end[state]).to_bytes(1, "little"))
        for row in sorted(rows):
            digest.update(len(row).to_bytes(8, "little") + row)
        digest.update(b"|")


@dataclass
class Progress:
    """Where a run stands after an epoch: everything but the tensors."""

    epoch: int = 0
    steps: int = 0
    seconds: float = 0.0  # wall-clock of the run so far, over all its sessions
    train_seconds: float = 0.0  # of which in optimisation steps
    best_score: list = field(default_factory=lambda: [float("inf")])
    best_epoch: int = 0
    curve: list = field(default_factory=list)
    sampler_rng: dict = field(default_factory=dict)  # numpy bit generator state
    scheduler: dict | None = None
    param_groups: list = field(default_factory=list)  # Adam's hyperparameters per group (lr after halvings)
    sessions: list = field(default_factory=list)  # [first epoch, seconds at start] of every session
    snapshots: list = field(default_factory=list)  # training minutes already written as snapshots
    judged_in_part: list = field(default_factory=list)  # epochs whose judge the deadline of max_seconds stopped
    skipped_steps: int = 0  # optimisation steps not taken: their loss or gradient was not finite
    restarts: list = field(default_factory=list)  # epochs after which the best weights came back at half the rate
    settled: int = 0  # the epoch after which the judge had settled (TrainConfig.settle_epochs) and training stopped
    judge_walks: dict = field(default_factory=dict)  # epoch (a string) -> the judge's steps per problem (None: unsolved)


def save_state(path, config, digest: str, progress: Progress, model, best_weights, optimiser, torch_rng,
               average: dict | None = None, canonical: str | None = None) -> Path:
    """Write the run's state to ``path`` atomically (a stop while writing keeps the previous file);
    ``average``: the weight average of ``--ema``; ``canonical``: :func:`canonical_digest` of the data."""
    from safetensors.torch import save_file

    tensors = {f"model/{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    tensors.update({f"best/{k}": v.detach().cpu().contiguous() for k, v in best_weights.items()})
    tensors.update({f"average/{k}": v.detach().cpu().contiguous() for k, v in (average or {}).items()})
    adam = optimiser.state_dict()
    for index, slots in adam["state"].items():
        for key, value in slots.items():
            tensors[f"optimiser/{index}/{key}"] = value.detach().cpu().contiguous().reshape(value.shape)
    tensors["torch_rng"] = torch_rng
    progress.param_groups = adam["param_groups"]
    header = {"format": FORMAT, "version": str(VERSION), "config": json.dumps(config.to_dict()), "data": digest,
              "progress": json.dumps(progress.__dict__)}
    if canonical is not None:
        header["data_canonical"] = canonical
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    save_file(tensors, str(partial), metadata=header)
    os.replace(partial, path)
    return path


def load_state(path, config, digest: str, canonical: str | None = None, note=None):
    """Return (progress, tensors) of the run state in ``path``, after checking that it is this run's.

    ``canonical``: :func:`canonical_digest` of the data, accepted when the exact digest differs (the
    same states in another order); ``note(message)`` is then told so."""
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = Path(path)
    try:
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as handle:
            header = handle.metadata() or {}
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as error:
        reason = ("the file is empty" if path.is_file() and path.stat().st_size == 0 else
                  f"not a safetensors file, or one cut short or damaged ({str(error)[:200]})")
        raise GnnplanError(f"{path}: not a readable training state: {reason}") from None
    if header.get("format") != FORMAT:
        raise GnnplanError(f"{path}: not an up-gnnplan training state")
    if header.get("version") != str(VERSION):
        raise GnnplanError(f"{path}: training state version {header.get('version')} is not supported (this is {VERSION})")
    lacks = [f"header entry {key!r}" for key in ("config", "data", "progress") if key not in header]
    rng = tensors.get("torch_rng")
    if rng is None:
        lacks.append("tensor 'torch_rng'")
    if lacks:
        raise GnnplanError(f"{path}: damaged training state: it lacks {', '.join(lacks)}; remove the file to start anew")
    if rng.dtype != torch.uint8 or rng.dim() != 1:
        raise GnnplanError(f"{path}: damaged training state: its tensor 'torch_rng' ({rng.dtype}, shape "
                           f"{tuple(rng.shape)}) is not a random generator state; remove the file to start anew")
    # Through TrainConfig: a field added since the state was written takes its default there too.
    try:
        saved = type(config).from_dict(json.loads(header["config"])).to_dict()
        progress = Progress(**json.loads(header["progress"]))
    except (TypeError, ValueError, AttributeError) as error:
        raise GnnplanError(f"{path}: damaged training state: its header entries 'config' and 'progress' are not the "
                           f"JSON gnnplan train writes ({type(error).__name__}: {str(error)[:200]}); remove the file to "
                           "start anew") from None
    wanted = config.to_dict()
    differ = sorted(k for k in set(saved) | set(wanted) if k not in BUDGET_FIELDS and saved.get(k) != wanted.get(k))
    if differ:
        raise GnnplanError(f"{path}: written by a run with other settings: "
                           + ", ".join(f"{k} {saved.get(k)!r} there, {wanted.get(k)!r} here" for k in differ)
                           + " (remove the file to start anew, or give the same settings to continue)")
    if header.get("data") != digest:
        if canonical is None or header.get("data_canonical") != canonical:
            raise GnnplanError(f"{path}: written by a run on other training or validation data (the datasets' problems, "
                               "states or values differ); remove the file to start anew")
        if note is not None:
            note(f"{path}: the datasets hold the same states and values as when the state was written, stored in "
                 "another order (built again); training continues, with other batches than an unstopped run's")
    return progress, tensors


def restore(tensors, progress: Progress, model, optimiser) -> dict:
    """Put the saved weights and Adam's moments into ``model`` and ``optimiser``; return the best weights."""
    try:  # the settings matched (load_state), so only an altered or damaged file gets here
        model.load_state_dict({k[len("model/"):]: v for k, v in tensors.items() if k.startswith("model/")})
        state: dict = {}
        for key, value in tensors.items():
            if key.startswith("optimiser/"):
                _, index, slot = key.split("/")
                state.setdefault(int(index), {})[slot] = value
        optimiser.load_state_dict({"state": state, "param_groups": progress.param_groups})
    except (RuntimeError, ValueError, KeyError, TypeError) as error:
        first_line = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
        raise GnnplanError(f"the training state (--state) does not fit the model of its own settings: it was altered "
                           f"or damaged ({type(error).__name__}: {first_line}); remove the file to start anew") from None
    return {k[len("best/"):]: v for k, v in tensors.items() if k.startswith("best/")}

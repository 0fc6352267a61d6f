"""Where training runs: the torch device of ``--device``, and mixed precision on it.

``auto`` is the first CUDA device when torch sees one, else the CPU. A device that cannot be had
is refused with a message naming it and the devices that can, before any work is done.

Mixed precision (``--amp``) runs the forward pass and the loss under :func:`torch.autocast` with
bfloat16. bfloat16 has float32's exponent range, so the smooth maximum's ``-1e30`` floors and its
``exp`` stay finite and no gradient scaling is needed, which float16 would need; the weights,
the optimiser and the validation stay in float32.
"""

from __future__ import annotations

import contextlib

from up_gnnplan.errors import GnnplanError

DEVICES = "auto, cpu, cuda or cuda:N"  # what --device accepts, for messages


class DeviceError(GnnplanError):
    """The requested training device does not exist on this machine or is not a training device."""


def available_devices() -> list[str]:
    """Return the devices training can use here: ``cpu`` and one ``cuda:N`` per visible GPU."""
    import torch

    return ["cpu"] + [f"cuda:{n}" for n in range(torch.cuda.device_count() if torch.cuda.is_available() else 0)]


def resolve_device(name: str, local_rank: int = 0):
    """Return the :class:`torch.device` of ``name`` (auto, cpu, cuda, cuda:N), or raise :class:`DeviceError`.

    ``auto`` and ``cuda`` take GPU ``local_rank``, so that the processes torchrun starts on one
    machine each take their own GPU; ``cuda:N`` is taken as given.
    """
    import torch

    requested = name = (name or "auto").strip().lower()
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    per_process = name == "cuda" and local_rank > 0
    if name == "cuda":
        name = f"cuda:{local_rank}"
    try:
        device = torch.device(name)
    except RuntimeError:
        raise DeviceError(f"unknown device {name!r}; choose {DEVICES}") from None
    if device.type == "cpu":
        return torch.device("cpu")
    if device.type != "cuda":
        raise DeviceError(f"device {name!r} is not supported for training; choose {DEVICES}")
    available = available_devices()
    if f"cuda:{device.index}" not in available:
        why = ("this torch was built without CUDA" if torch.version.cuda is None
               else "torch sees no CUDA device" if not torch.cuda.is_available()
               else f"torch sees {len(available) - 1} CUDA device(s)")
        hint = ("; under torchrun each process of a machine takes its own GPU (LOCAL_RANK): start at most as many "
                "processes per machine as it has GPUs" if per_process and torch.cuda.is_available() else "")
        asked = repr(requested) if requested == name else f"{requested!r} ({name})"
        raise DeviceError(f"device {asked} is not available: {why} (torch {torch.__version__}); "
                          f"available: {', '.join(available)}{hint}")
    return device


def autocast(device, enabled: bool):
    """Return the mixed-precision context of a training step on ``device`` (bfloat16), or a no-op one."""
    import torch

    if not enabled:
        return contextlib.nullcontext()
    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise DeviceError(f"--amp needs bfloat16, which {torch.cuda.get_device_name(device)} does not support "
                          "(an Ampere or newer GPU does); train without --amp")
    return torch.autocast(device.type, dtype=torch.bfloat16)


def device_of(model):
    """Return the device of ``model``'s parameters (where its inputs must go)."""
    return next(model.parameters()).device

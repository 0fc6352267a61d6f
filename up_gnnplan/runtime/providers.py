"""Which onnxruntime is installed, and which execution provider a session runs on.

``onnxruntime`` (CPU) and ``onnxruntime-gpu`` (CUDA) are two wheels with one import name: with
both installed, whichever was installed last owns the files and the CUDA provider may
disappear. The package therefore depends on neither; the extras ``cpu`` and ``gpu`` pick
exactly one, and this module says clearly when none or both are installed.

A *device* is what a user chooses: ``auto`` (CUDA when onnxruntime offers it, else the CPU),
``cpu`` or ``cuda``. An explicit ``cuda`` that cannot be had is refused with the reason.
"""

from __future__ import annotations

from importlib import metadata

from up_gnnplan.errors import GnnplanError

DEVICES = ("auto", "cpu", "cuda")
CUDA, CPU = "CUDAExecutionProvider", "CPUExecutionProvider"
INSTALL_CPU = "pip install 'up-gnnplan[cpu]'"
INSTALL_GPU = "pip uninstall -y onnxruntime onnxruntime-gpu && pip install 'up-gnnplan[gpu]'"


class RuntimeSetupError(GnnplanError):
    """No onnxruntime, two conflicting ones, or a device that this installation cannot provide."""


def installed_runtimes() -> list[str]:
    """Return the onnxruntime distributions installed (``onnxruntime``, ``onnxruntime-gpu``, ...)."""
    found = []
    for name in ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml", "onnxruntime-openvino"):
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        found.append(name)
    return found


def import_onnxruntime():
    """Return the ``onnxruntime`` module, or raise :class:`RuntimeSetupError` saying how to install one."""
    try:
        import onnxruntime
    except ImportError as error:
        raise RuntimeSetupError(
            f"no ONNX runtime is installed ({error}); solving needs one: {INSTALL_CPU} on a CPU machine, "
            f"or {INSTALL_GPU} on a CUDA machine") from None
    return onnxruntime


def conflict_message() -> str | None:
    """Return a warning when the CPU and the GPU wheels are installed together, else None."""
    runtimes = installed_runtimes()
    if "onnxruntime" in runtimes and "onnxruntime-gpu" in runtimes:
        return ("both onnxruntime and onnxruntime-gpu are installed; they share one import name, so the CUDA "
                f"provider may be missing; keep one: {INSTALL_GPU}")
    return None


def providers_for(device: str) -> list[str]:
    """Return the execution providers to ask a session for on ``device`` (see the module docstring)."""
    if device not in DEVICES:
        raise RuntimeSetupError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")
    available = import_onnxruntime().get_available_providers()
    if device == "cpu":
        return [CPU]
    if CUDA in available:
        return [CUDA, CPU]
    if device == "cuda":
        reason = conflict_message() or (
            f"this onnxruntime offers {', '.join(available)} only; install the GPU runtime: {INSTALL_GPU}")
        raise RuntimeSetupError(f"device 'cuda' is not available: {reason}")
    return [CPU]


def check_session_device(session, device: str, path) -> str:
    """Return the provider ``session`` runs on; refuse a ``cuda`` session that fell back to the CPU."""
    used = session.get_providers()[0]
    if device == "cuda" and used != CUDA:
        raise RuntimeSetupError(
            f"{path}: device 'cuda' was asked for, but onnxruntime could not start {CUDA} (no GPU, or the "
            f"CUDA and cuDNN libraries onnxruntime-gpu needs are missing) and would run on {used}")
    return used

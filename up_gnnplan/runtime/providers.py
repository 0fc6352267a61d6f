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
    ort = import_onnxruntime()
    available = ort.get_available_providers()
    if device == "cpu":
        return [CPU]
    if CUDA in available:
        _preload_cuda(ort)
        # onnxruntime's own logger would print two coloured lines per session when CUDA cannot
        # start; check_session_device and the solve log say it once, in our words.
        ort.set_default_logger_severity(4)
        return [CUDA, CPU]
    if device == "cuda":
        reason = conflict_message() or (
            f"this onnxruntime offers {', '.join(available)} only; install the GPU runtime: {INSTALL_GPU}")
        raise RuntimeSetupError(f"device 'cuda' is not available: {reason}")
    return [CPU]


def _preload_cuda(ort) -> None:
    """Load CUDA and cuDNN from the NVIDIA pip packages the ``gpu`` extra installs (onnxruntime >= 1.21).

    Without it, onnxruntime-gpu finds them only on the system's library path. Its notes go to
    stdout, which may carry a plan, so they are silenced; a failure shows up when the session
    falls back to the CPU (:func:`check_session_device`).
    """
    import contextlib
    import io

    if hasattr(ort, "preload_dlls"):
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                ort.preload_dlls()
            except OSError:
                pass


CUDA_FAILED = (f"onnxruntime could not start {CUDA} (no GPU, a driver too old for the CUDA version of this "
               "onnxruntime-gpu, or missing CUDA and cuDNN libraries)")


def check_session_device(session, device: str, path) -> str:
    """Return the provider ``session`` runs on; refuse a ``cuda`` session that fell back to the CPU."""
    used = session.get_providers()[0]
    if device == "cuda" and used != CUDA:
        raise RuntimeSetupError(f"{path}: device 'cuda' was asked for, but {CUDA_FAILED}, and it would run on {used}")
    return used


def device_note(device: str, provider: str) -> str | None:
    """Return what a user with ``device`` should know about the provider a session got (None: nothing)."""
    if device == "cpu":
        return None
    conflict = conflict_message()
    if conflict:
        return conflict
    if provider != CUDA and CUDA in import_onnxruntime().get_available_providers():
        return f"{CUDA_FAILED}; running on {provider}"
    return None

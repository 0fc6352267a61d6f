"""Runtime (no torch): onnxruntime sessions behind a value-function interface."""

from up_gnnplan.runtime.value_function import ModelError, OnnxValueFunction, read_metadata

__all__ = ["ModelError", "OnnxValueFunction", "read_metadata"]

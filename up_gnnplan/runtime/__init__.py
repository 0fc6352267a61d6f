"""Runtime (no torch): onnxruntime sessions behind a value-function interface."""

from up_gnnplan.runtime.value_function import ModelError, OnnxValueFunction, load_value_function, read_metadata

__all__ = ["ModelError", "OnnxValueFunction", "load_value_function", "read_metadata"]

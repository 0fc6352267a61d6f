"""Exporters (torch): trained models to ONNX files that carry their own metadata."""

from up_gnnplan.exporters.onnx_export import OPSET, export_onnx

__all__ = ["OPSET", "export_onnx"]

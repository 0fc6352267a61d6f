"""Export a shipped R-GNN file again with fewer message-passing layers (same weights)."""
import sys
from up_gnnplan.exporters.reexport import load_exported
from up_gnnplan.exporters.onnx_export import export_onnx
src, layers, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
model, encoding, config, data = load_exported(src)
hits = [m for m in model.modules() if hasattr(m, "layers") and hasattr(m, "relation_mlps")]
for m in hits: m.layers = layers
print(type(model).__name__, len(hits))
export_onnx(model, encoding, out, domain=data["domain"], train_config=data["config"], training_record=data["record"], source=data["source"])

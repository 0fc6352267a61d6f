"""Put a trained model's weights into a file exported ahead of time from a model of the same config
(``gnnplan learn`` exports its network before training, on the clock, and fills it in at the end)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from up_gnnplan import model_format
from up_gnnplan.errors import GnnplanError
from up_gnnplan.exporters.parity import check_parity


def refill_onnx(graph, model, encoding, path, *, metadata: dict) -> Path | None:
    """Write ``model`` to ``path`` as the file ``graph``, exported earlier from a model of the same config and
    encoding, with ``model``'s weights in its initializers and the entries of ``metadata`` (``training_record``,
    ``train_config``) in its metadata; return None (leaving nothing at ``path``) where the result's values
    differ from ``model``'s own (:func:`~up_gnnplan.exporters.parity.check_parity`), or onnxruntime is not
    installed.

    Tracing and converting the 30 layers of an R-GNN takes seconds (2.4-7 s here, more the busier the machine);
    putting new weights into a file exported ahead of time takes a fraction of one, so that ``gnnplan learn``
    can export early, on the clock, and keep its budget when the machine is busy at the end.
    """
    import onnx

    proto = onnx.load(str(graph))
    fill_weights(proto, model, encoding)
    for entry in proto.metadata_props:
        key = entry.key[len(model_format.PREFIX):]
        if entry.key.startswith(model_format.PREFIX) and key in metadata:
            entry.value = json.dumps(metadata[key])
    path = Path(path)
    onnx.save(proto, str(path))
    try:
        check_parity(model, encoding, path)
    except (GnnplanError, ImportError):
        path.unlink(missing_ok=True)
        return None
    return path


def fill_weights(proto, model, encoding) -> int:
    """Put ``model``'s weights into the initializers of ``proto`` (a file exported from a model of the same config and
    encoding, loaded by ``onnx.load``) that have their name and shape; return how many were filled."""
    from onnx import numpy_helper

    traced = model.exported(encoding) if hasattr(model, "exported") else model  # named as export_onnx traces it
    weights = {name: value.detach().cpu().numpy() for name, value in traced.state_dict().items()}
    filled = 0
    for initializer in proto.graph.initializer:
        value = weights.get(initializer.name)
        if value is not None and tuple(value.shape) == tuple(initializer.dims):
            initializer.CopyFrom(numpy_helper.from_array(value.astype(np.float32, copy=False), initializer.name))
            filled += 1
    return filled

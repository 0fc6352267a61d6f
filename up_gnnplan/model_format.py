"""The metadata every up-gnnplan ONNX file carries, shared by the exporter and the runtime.

Keys live in the ONNX ``metadata_props`` under the ``up_gnnplan.`` prefix; JSON values. A
runtime refuses a file without them, of another format, or of a newer major version.
"""

from __future__ import annotations

FORMAT = "up-gnnplan-model"
VERSION = 1  # bump on incompatible changes to inputs or metadata
PREFIX = "up_gnnplan."
KEYS = ("format", "version", "architecture", "encoding", "schema", "domain", "train_config",
        "training_record", "package_version", "opset", "input_names")

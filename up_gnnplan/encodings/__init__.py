"""Encodings: states → named numpy arrays, one module per input representation.

``ENCODINGS`` maps a key to its class; later modules add themselves here.
"""

from up_gnnplan.encodings.base import Encoding, StateInput
from up_gnnplan.encodings.rgnn import RGNNEncoding

ENCODINGS: dict[str, type[Encoding]] = {"rgnn": RGNNEncoding}

try:  # encodings still being built by other issues register themselves when present
    from up_gnnplan.encodings.rgnn_t import RGNNTEncoding

    ENCODINGS["rgnn_t"] = RGNNTEncoding
except ImportError:  # pragma: no cover
    pass
try:
    from up_gnnplan.encodings.ploi import PloiEncoding

    ENCODINGS["ploi"] = PloiEncoding
except ImportError:  # pragma: no cover
    pass
from up_gnnplan.encodings.typed_policy import TypedPolicyEncoding  # noqa: E402

ENCODINGS["typed_policy"] = TypedPolicyEncoding


def make_encoding(name: str, signature, **params) -> Encoding:
    """Return the encoding ``name`` for ``signature``; unknown names list the known ones."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; choose one of {', '.join(sorted(ENCODINGS))}")
    return ENCODINGS[name](signature, **params)


__all__ = ["ENCODINGS", "Encoding", "StateInput", "make_encoding"]

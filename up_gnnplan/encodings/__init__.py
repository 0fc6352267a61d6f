"""Encodings: states → named numpy arrays, one module per input representation.

``ENCODINGS`` maps a key to its class. Every encoding module is imported here: one that fails
to import is an error, never a silently missing architecture.
"""

from up_gnnplan.encodings.base import Encoding, StateInput
from up_gnnplan.encodings.edge_transformer import EdgeTransformerEncoding
from up_gnnplan.encodings.muller import MullerEncoding
from up_gnnplan.encodings.ploi import PloiEncoding
from up_gnnplan.encodings.rgnn import RGNNEncoding
from up_gnnplan.encodings.rgnn_t import RGNNTEncoding
from up_gnnplan.encodings.typed_policy import TypedPolicyEncoding

ENCODINGS: dict[str, type[Encoding]] = {
    cls.name: cls for cls in (RGNNEncoding, RGNNTEncoding, PloiEncoding, TypedPolicyEncoding, MullerEncoding,
                          EdgeTransformerEncoding)
}


def make_encoding(name: str, signature, **params) -> Encoding:
    """Return the encoding ``name`` for ``signature``; unknown names list the known ones."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; choose one of {', '.join(sorted(ENCODINGS))}")
    return ENCODINGS[name](signature, **params)


__all__ = ["ENCODINGS", "Encoding", "StateInput", "make_encoding"]

"""Models (torch): one module per architecture, built from an encoding's schema.

``ARCHITECTURES`` maps each architecture key to its encoding key and model builder; the CLI's
choices and the parametrised tests come from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Architecture:
    """An architecture: which encoding feeds which model."""

    key: str
    encoding: str
    build: Callable  # (encoding, hidden, layers, aggregation, beta, share_weights) -> nn.Module
    description: str


def _relational(encoding, **params):
    from up_gnnplan.models.rgnn import RelationalGNN

    return RelationalGNN(encoding.relations, **params)


def _ploi(encoding, **params):
    from up_gnnplan.models.ploi import PloiGNN

    schema = encoding.schema()
    return PloiGNN(schema["node_features"], schema["edge_labels"], **params)


ARCHITECTURES: dict[str, Architecture] = {
    "rgnn": Architecture("rgnn", "rgnn", _relational, "R-GNN: objects exchange messages through atoms (Ståhlberg et al. 2024 §3.4)"),
    "rgnn_t": Architecture("rgnn_t", "rgnn_t", _relational, "R-GNN[t]: R-GNN over object pairs and compose atoms A_t(S) (§4)"),
    "ploi": Architecture("ploi", "ploi", _ploi, "PLOI graph: node features and labelled edges (Chen 2024 §4)"),
}


def get_architecture(key: str) -> Architecture:
    """Return the architecture ``key``; unknown keys list the known ones."""
    if key not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {key!r}; choose one of {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[key]

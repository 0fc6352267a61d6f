"""Models (torch): one module per architecture, built from an encoding's schema.

``ARCHITECTURES`` maps each architecture key to its encoding key, its model builder and the
training options the builder takes; the CLI's choices and option help, the training config's
arguments and the parametrised tests come from it. It imports no torch (builders import their
model module when called), so ``gnnplan --help`` can read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable


# The heads a model can have (``--head``): the value alone, an action head of one kind (see
# up_gnnplan.models.heads), or an action head and the value together.
HEADS = ("value", "logits", "q", "logits+value", "q+value")
ACTION_KINDS = ("logits", "q")


def head_parts(head: str) -> tuple[str | None, bool]:
    """Return (action kind or None, has a value head) of a ``--head`` choice."""
    if head not in HEADS:
        raise ValueError(f"unknown head {head!r}; choose one of {', '.join(HEADS)}")
    kind = head.split("+")[0]
    return (None if kind == "value" else kind), head == "value" or head.endswith("+value")


# The TrainConfig fields an R-GNN-like builder takes (the default of Architecture.options).
RELATIONAL_OPTIONS = ("hidden", "layers", "aggregation", "beta", "share_weights")


@dataclass(frozen=True)
class Architecture:
    """An architecture: which encoding feeds which model, and which training options reach them."""

    key: str
    encoding: str
    build: Callable  # (encoding, **{option: value for option in options}) -> nn.Module
    description: str
    action_heads: bool = False  # objects are nodes, so action decoders can read their arguments
    builds_heads: bool = False  # the builder makes the heads itself (gets head= and actions=)
    needs_types: bool = False  # the encoding gets the domain's types (up_gnnplan.states.types)
    options: tuple[str, ...] = RELATIONAL_OPTIONS  # TrainConfig fields passed to build, by name
    encoding_options: tuple[str, ...] = ()  # TrainConfig fields passed to the encoding besides goal_mode
    defaults: tuple[tuple[str, object], ...] = ()  # (option, value): this architecture's default of a training option
    #                                                  (a field of up_gnnplan.training.config.ARCHITECTURE_DEFAULTS)


def _relational(encoding, **params):
    from up_gnnplan.models.rgnn import RelationalGNN

    return RelationalGNN(encoding.relations, **params)


def _typed_policy(encoding, **params):
    from up_gnnplan.models.typed_policy import build_typed_policy

    return build_typed_policy(encoding, **params)


def _ploi(encoding, **params):
    from up_gnnplan.models.ploi import PloiGNN

    schema = encoding.schema()
    return PloiGNN(schema["node_features"], schema["edge_labels"], **params)


def _muller(layer, encoding, **params):
    from up_gnnplan.models.muller import MullerGNN

    schema = encoding.schema()
    return MullerGNN(layer, schema["node_features"], schema["edge_labels"], **params)


def _graph_transformer(local, encoding, **params):
    from up_gnnplan.models.gps import GraphTransformer

    schema = encoding.schema()
    return GraphTransformer(schema["node_features"], schema["edge_labels"], local=local, **params)


def _edge_transformer(encoding, **params):
    from up_gnnplan.models.edge_transformer import EdgeTransformer

    return EdgeTransformer(encoding.schema()["pair_features"], **params)


ARCHITECTURES: dict[str, Architecture] = {
    "rgnn": Architecture("rgnn", "rgnn", _relational, "R-GNN: objects exchange messages through atoms (Ståhlberg et al. 2024 §3.4)",
                         action_heads=True),
    "rgnn_t": Architecture("rgnn_t", "rgnn_t", _relational, "R-GNN[t]: R-GNN over object pairs and compose atoms A_t(S) (§4)",
                           encoding_options=("t",)),
    "ploi": Architecture("ploi", "ploi", _ploi, "PLOI graph: node features and labelled edges (Chen 2024 §4)",
                         encoding_options=("decompose_higher_arity",)),
    "typed_policy": Architecture("typed_policy", "typed_policy", _typed_policy,
                                 "typed domain-graph policy network: modules per type relation, action decoders (Zhang & Geißer)",
                                 action_heads=True, builds_heads=True, needs_types=True),
    "gcn": Architecture("gcn", "muller", partial(_muller, "gcn"),
                        "GCN on the graph of object, atom and goal-atom nodes (Müller et al. 2024)",
                        options=("hidden", "layers", "dropout"), defaults=(("layers", 4),)),
    "gatv2": Architecture("gatv2", "muller", partial(_muller, "gatv2"),
                          "GATv2 attention on the graph of object, atom and goal-atom nodes (Müller et al. 2024)",
                          options=("hidden", "layers", "dropout", "heads"), defaults=(("layers", 4),)),
    "gin": Architecture("gin", "muller", partial(_muller, "gin"),
                        "GIN with every layer's readout on the graph of object, atom and goal-atom nodes (Müller et al. 2024)",
                        options=("hidden", "layers", "dropout"), defaults=(("layers", 4),)),
    "performer": Architecture("performer", "muller", partial(_graph_transformer, False),
                              "Performer: linear (FAVOR+) attention among the nodes of each state's object-atom graph, "
                              "tokens with their labelled neighbours (Müller et al. 2024)",
                              options=("hidden", "layers", "dropout", "heads", "seed"), defaults=(("layers", 4),)),
    "gps": Architecture("gps", "muller", partial(_graph_transformer, True),
                        "GPS: GCN message passing beside Performer attention in every layer, on the object-atom graph "
                        "(Müller et al. 2024; Rampášek et al. 2022)",
                        options=("hidden", "layers", "dropout", "heads", "seed"), defaults=(("layers", 4),)),
    "edge_transformer": Architecture("edge_transformer", "edge_transformer", _edge_transformer,
                                     "Edge Transformer: object-pair embeddings, triangular attention, O(n^3) per layer, "
                                     "states of at most 128 objects (Ståhlberg et al. 2024 §6)",
                                     options=("hidden", "layers", "heads", "share_weights"), defaults=(("heads", 8),)),
}


def option_default(key: str, option: str, fallback):
    """Return architecture ``key``'s default for the training option ``option`` (``fallback``: TrainConfig's)."""
    return dict(get_architecture(key).defaults).get(option, fallback)


def architectures_with(option: str) -> list[str]:
    """Return the keys of the architectures that take the training option ``option`` (for help texts)."""
    return [key for key, architecture in ARCHITECTURES.items() if option in architecture.options + architecture.encoding_options]


def with_heads(model, config, action_signature):
    """Return ``model`` with the action head of ``config.head`` on it (the model itself for ``value``)."""
    kind, value = head_parts(config.head)
    architecture = get_architecture(config.architecture)
    if kind is None or architecture.builds_heads:
        return model
    if not architecture.action_heads:
        able = ", ".join(k for k, a in ARCHITECTURES.items() if a.action_heads)
        raise ValueError(f"--head {config.head}: architecture {config.architecture} has no action head (its nodes are "
                         f"not the objects); choose one of {able}")
    if action_signature is None:
        raise ValueError(f"--head {config.head} needs the domain's action schemas (a dataset of format 2)")
    from up_gnnplan.models.heads import RGNNWithHeads

    return RGNNWithHeads(model, action_signature, kind, value)


def get_architecture(key: str) -> Architecture:
    """Return the architecture ``key``; unknown keys list the known ones."""
    if key not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {key!r}; choose one of {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[key]

"""The packed input layout of exported R-GNN models: one padded tensor per arity, not per relation.

The per-relation layout (``rel_r`` [k_r, a_r]) exports one sub-graph per relation per layer;
for search, which evaluates a few small states at a time, onnxruntime then spends most of a
call dispatching thousands of small kernels, many of them on empty relations. The packed
layout stacks the relations of one arity ``a`` that have atoms in the batch into ``arity_a``
[R'_a, M, a] (``M`` = the largest atom count among them), padded with the index ``N`` of a
dummy node that the model appends and drops; ``active_a`` [R'_a] gives their positions in the
arity's weight stack (:class:`up_gnnplan.models.rgnn.RelationMLPs`, in the order of the
encoding's relation list). Each layer then runs one batched product per arity, and relations
without atoms (most goal copies, in most states) cost nothing.
"""

from __future__ import annotations

import numpy as np


def arity_groups(relations) -> list[tuple[int, list[int]]]:
    """Return ``[(arity, [relation ids of that arity]), ...]`` by increasing arity."""
    arities = [int(a) for _, a in relations]
    return [(a, [r for r, b in enumerate(arities) if b == a]) for a in sorted(set(arities))]


def packed_names(relations) -> list[str]:
    return [f"{kind}_{a}" for a, _ in arity_groups(relations) for kind in ("arity", "active")]


def packed_input_names(encoding) -> list[str]:
    """The inputs of a packed model: the encoding's inputs with the ``rel_r`` replaced by the packed ones."""
    return [n for n in encoding.input_names() if not n.startswith("rel_")] + packed_names(encoding.relations)


def pack(feed: dict[str, np.ndarray], relations) -> dict[str, np.ndarray]:
    """Turn the ``rel_r`` arrays of ``feed`` into ``arity_a`` and ``active_a`` arrays (others kept)."""
    num_nodes = len(feed["node_graph"])  # the index of the dummy node
    out = {k: v for k, v in feed.items() if not k.startswith("rel_")}
    for a, members in arity_groups(relations):
        active = [slot for slot, r in enumerate(members) if len(feed[f"rel_{r}"])] or [0]
        parts = [feed[f"rel_{members[slot]}"] for slot in active]
        packed = np.full((len(active), max(1, max(len(p) for p in parts)), a), num_nodes, dtype=np.int64)
        for i, part in enumerate(parts):
            packed[i, : len(part)] = part
        out[f"arity_{a}"] = packed
        out[f"active_{a}"] = np.array(active, dtype=np.int64)
    return out

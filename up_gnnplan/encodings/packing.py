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

Rows need not be whole relations: ``active_a`` may name a relation more than once, each row
holding the next ``M`` of its atoms. Padding every relation to the largest one wastes most of
the work where one relation dwarfs the others (Transport's static ``road``: batches of the
successors of a 39-object state had 117,395 padded atom rows for 27,207 atoms, see
``benchmarks/packing_rows.py`` in benchmarks/RESULTS.md); :func:`row_width`
picks ``M`` so that the padded atoms plus a per-row cost are smallest. The graph is the same
for any ``M``, so files exported before this change gain from it too.
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


# The cost of one row beyond its atoms, in atoms: the row's relation weights are gathered
# (two square matrices of width a*d) and it is one more small product in the batched MatMul.
ROW_COST = 8


def row_width(sizes: list[int]) -> int:
    """Return the atoms per row ``M`` that minimises ``padded atoms + ROW_COST * rows``.

    Candidates are the relation sizes themselves (the largest one is the layout without splits).
    """
    sizes = [k for k in sizes if k > 0]
    if not sizes:
        return 1
    best, best_cost = max(sizes), None
    for width in sorted(set(sizes), reverse=True):
        rows = sum(-(-k // width) for k in sizes)
        cost = rows * width + ROW_COST * rows
        if best_cost is None or cost < best_cost:
            best, best_cost = width, cost
    return best


def pack(feed: dict[str, np.ndarray], relations, split: bool = True) -> dict[str, np.ndarray]:
    """Turn the ``rel_r`` arrays of ``feed`` into ``arity_a`` and ``active_a`` arrays (others kept).

    ``split=False`` gives one row per relation (the layout before rows were split; benchmarks).
    """
    num_nodes = len(feed["node_graph"])  # the index of the dummy node
    out = {k: v for k, v in feed.items() if not k.startswith("rel_")}
    for a, members in arity_groups(relations):
        parts = [(slot, feed[f"rel_{r}"]) for slot, r in enumerate(members) if len(feed[f"rel_{r}"])]
        sizes = [len(part) for _, part in parts]
        width = row_width(sizes) if split else max(sizes, default=1)
        rows = [(slot, part[start:start + width]) for slot, part in parts for start in range(0, len(part), width)]
        rows = rows or [(0, np.zeros((0, a), dtype=np.int64))]  # no atoms of this arity: one padding row
        packed = np.full((len(rows), width, a), num_nodes, dtype=np.int64)
        for i, (_, chunk) in enumerate(rows):
            packed[i, : len(chunk)] = chunk
        out[f"arity_{a}"] = packed
        out[f"active_{a}"] = np.array([slot for slot, _ in rows], dtype=np.int64)
    return out

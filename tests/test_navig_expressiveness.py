"""Navig-xy (Ståhlberg, Bonet & Geffner 2024, §7): R-GNN[1] has the atoms over three objects that
the true grid distance needs, and learns it where the plain R-GNN cannot (issue 3).

The fast test checks the encoding of a generated 3×3 instance; the slow test (``--runslow``)
trains both architectures for about a minute each on tiny grids and compares their error on
unseen instances. ``benchmarks/navig_expressiveness.py`` is the full measurement.
"""

from __future__ import annotations

import numpy as np
import pytest

from up_gnnplan.datasets.build import BuildOptions, build_dataset
from up_gnnplan.datasets.generators import generate


def navig_dataset(out_dir, sizes, count, seed, blocked_ratio=0.25):
    """Generate ``count`` Navig-xy instances of each (width, height) and label every state with V*."""
    paths = []
    for width, height in sizes:
        paths += generate("navig-xy", out_dir, count=count, seed=seed, width=width, height=height,
                          blocked_ratio=blocked_ratio)
    return build_dataset(out_dir / "domain.pddl", paths, BuildOptions(method="expand"))


def test_navig_3x3_encodes_under_rgnn_t_with_compose_atoms(tmp_path):
    from up_gnnplan.encodings.rgnn import RGNNEncoding
    from up_gnnplan.encodings.rgnn_t import COMPOSE, RGNNTEncoding
    from up_gnnplan.training.data import state_inputs

    data = navig_dataset(tmp_path, [(3, 3)], count=2, seed=0)
    alive = np.flatnonzero(~data.dead_end)
    assert len(alive) >= 4 and data.value[alive].max() >= 1
    enc = RGNNTEncoding(data.signature, t=1)
    names = [name for name, _ in enc.relations]
    assert names[-1] == COMPOSE and enc.relations[-1] == (COMPOSE, 3)
    inputs = state_inputs(data, alive)
    batch = enc.encode(inputs)
    n = 6  # 3 x-coordinates + 3 y-coordinates
    assert len(batch["node_graph"]) == len(alive) * n * n
    assert len(batch["readout_nodes"]) == len(alive) * n
    compose = batch[f"rel_{len(enc.relations) - 1}"]
    assert compose.ndim == 2 and compose.shape[1] == 3 and len(compose) > 0
    assert compose.min() >= 0 and compose.max() < len(batch["node_graph"])

    # The paper's argument: a cell <x, y> reaches its neighbour <x', y> through the compose atom
    # (<x', x>, <x, y>, <x', y>). Check it in the first state, for every succ-x pair.
    first = enc.encode(inputs[:1])
    triples = {tuple(row) for row in first[f"rel_{len(enc.relations) - 1}"].tolist()}
    record = data.problems[data.state_problem[alive[0]]]
    obj = {name: i for i, name in enumerate(record.object_names)}
    pair = lambda a, b: obj[a] * n + obj[b]  # noqa: E731
    for x, nx in (("x1", "x2"), ("x2", "x3")):
        for y in ("y1", "y2", "y3"):
            assert (pair(nx, x), pair(x, y), pair(nx, y)) in triples
            assert (pair(x, nx), pair(nx, y), pair(x, y)) in triples

    # The plain R-GNN has no atom over three objects in this domain.
    plain = RGNNEncoding(data.signature)
    assert max(arity for _, arity in plain.relations) == 2


@pytest.mark.slow
def test_rgnn_t_learns_navig_distances_better_than_rgnn(tmp_path):
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.loop import predict, train

    train_data = navig_dataset(tmp_path / "train", TRAIN_SIZES, count=TRAIN_COUNT, seed=1)
    val_data = navig_dataset(tmp_path / "val", VAL_SIZES, count=VAL_COUNT, seed=2)
    val_idx = np.flatnonzero(~val_data.dead_end)
    mae = {}
    for arch in ("rgnn", "rgnn_t"):
        config = TrainConfig(architecture=arch, t=1, hidden=HIDDEN, layers=LAYERS, batch_size=BATCH, lr=LR,
                             max_epochs=100_000, max_seconds=SECONDS, patience=100_000, validation_fraction=0.0,
                             seed=0, threads=1)
        model, encoding, _ = train(train_data, config)
        mae[arch] = float(np.abs(predict(model, encoding, val_data, val_idx) - val_data.value[val_idx]).mean())
    assert mae["rgnn_t"] <= 0.5 * mae["rgnn"], mae

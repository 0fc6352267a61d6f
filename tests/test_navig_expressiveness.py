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
    pair = lambda a, b: obj[a] * n + obj[b]
    for x, nx in (("x1", "x2"), ("x2", "x3")):
        for y in ("y1", "y2", "y3"):
            assert (pair(nx, x), pair(x, y), pair(nx, y)) in triples
            assert (pair(x, nx), pair(nx, y), pair(x, y)) in triples

    # The plain R-GNN has no atom over three objects in this domain.
    plain = RGNNEncoding(data.signature)
    assert max(arity for _, arity in plain.relations) == 2


# Reduced version of benchmarks/navig_expressiveness.py: tiny grids, equal number of epochs (the
# same gradient steps for both architectures, so training is deterministic and R-GNN[1]'s ~5x
# higher cost per step does not count against it); about 50 s for rgnn_t and 10 s for rgnn here.
TRAIN_SIZES, TRAIN_COUNT = [(3, 3)], 25
VAL_SIZES, VAL_COUNT = [(3, 3), (3, 4), (4, 3)], 4
HIDDEN, LAYERS, BATCH, LR, EPOCHS = 16, 8, 16, 3e-3, 20


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "issue 3's claim is not reproduced at this scale: measured validation MAE 0.657 (rgnn_t) vs "
    "0.903 (rgnn) after 20 epochs, ratio 0.73 > 0.5; see benchmarks/RESULTS.md (Navig-xy section)"))
def test_rgnn_t_learns_navig_distances_better_than_rgnn(tmp_path):
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.loop import predict, train

    train_data = navig_dataset(tmp_path / "train", TRAIN_SIZES, count=TRAIN_COUNT, seed=1)
    val_data = navig_dataset(tmp_path / "val", VAL_SIZES, count=VAL_COUNT, seed=2)
    val_idx = np.flatnonzero(~val_data.dead_end)
    mae = {}
    for arch in ("rgnn", "rgnn_t"):
        config = TrainConfig(architecture=arch, t=1, hidden=HIDDEN, layers=LAYERS, batch_size=BATCH, lr=LR,
                             max_epochs=EPOCHS, max_seconds=600.0, patience=EPOCHS, validation_fraction=0.0,
                             seed=0, threads=1)
        model, encoding, record = train(train_data, config)
        assert record["epochs"] == EPOCHS  # the time cap is only a safety net
        mae[arch] = float(np.abs(predict(model, encoding, val_data, val_idx) - val_data.value[val_idx]).mean())
    print(f"validation MAE after {EPOCHS} epochs: {mae}")
    assert mae["rgnn_t"] <= 0.5 * mae["rgnn"], mae

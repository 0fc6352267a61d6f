"""Fixtures shared by the goal-grounding tests: the coloured Blocks files and one small grounding model."""

from __future__ import annotations

import pytest

from tests.grounding.cases import DOMAIN, GROUND, NO_BINDING, PROBLEMS, SHARED


@pytest.fixture(scope="package")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("colour-blocks")
    (folder / "domain.pddl").write_text(DOMAIN)
    for name, text in {**PROBLEMS, "ground": GROUND, "no-binding": NO_BINDING, "shared": SHARED}.items():
        (folder / f"{name}.pddl").write_text(text)
    return folder


@pytest.fixture(scope="package")
def model(files):
    """A small grounding model fit on goal variants of both problems (seconds), exported to ONNX."""
    pytest.importorskip("torch")
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.grounding.dataset import GroundingDataOptions, build_grounding_dataset
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.loop import train

    problems = [files / f"{name}.pddl" for name in PROBLEMS]
    data = build_grounding_dataset(files / "domain.pddl", problems, GroundingDataOptions(goals_per_problem=40,
                                                                                           states_per_goal=4))
    # An epoch limit, not a time limit, so that the model does not depend on the machine's speed
    # (the dataset does not either: it is sampled from a canonical state order).
    config = TrainConfig(hidden=32, layers=6, lr=3e-3, loss="mse", max_seconds=900, max_epochs=30, epoch_states=256,
                         validation_fraction=0.0, patience=200, seed=0)
    net, encoding, record = train(data, config)
    return export_onnx(net, encoding, files / "grounding.onnx", domain=data.domain, train_config=config.to_dict(),
                       training_record=record)

"""Ranking goal variants (``gnnplan dataset --grounding --shared-states``, ``--loss rank`` on
goal-grounding data): the same states under every variant, the cheaper binding of a state valued
lower, the binder's error as the best-epoch figure, and validation problems held out whole."""

from __future__ import annotations

import numpy as np
import pytest

from tests.grounding.cases import DOMAIN, PROBLEMS
from up_gnnplan.grounding.dataset import GroundingDataOptions, build_grounding_dataset, _key
from up_gnnplan.training.data import split

torch = pytest.importorskip("torch")

from up_gnnplan.training import TrainConfig  # noqa: E402
from up_gnnplan.training.loop import make_objective, predict, train  # noqa: E402
from up_gnnplan.training.ranking import VariantRankingObjective  # noqa: E402

VARIANTS, STATES = 8, 12


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("colour-blocks")
    (folder / "domain.pddl").write_text(DOMAIN)
    for name, text in PROBLEMS.items():
        (folder / f"{name}.pddl").write_text(text)
    return build_grounding_dataset(folder / "domain.pddl", [folder / "red-on-blue.pddl", folder / "tower.pddl"],
                                   GroundingDataOptions(goals_per_problem=VARIANTS, states_per_goal=STATES,
                                                        shared_states=True))


def config(**changes):
    base = dict(hidden=16, layers=4, max_epochs=30, max_seconds=60, epoch_states=0, batch_size=16, patience=30,
                validation_fraction=0.0, seed=0, loss="rank")
    return TrainConfig(**{**base, **changes})


def test_shared_states_label_the_same_states_under_every_variant(data):
    assert len(data.problems) == 2 * VARIANTS
    for p in range(len(data.problems)):
        rows = np.flatnonzero(data.state_problem == p)
        first_of_problem = np.flatnonzero(data.state_problem == p - p % VARIANTS)
        assert [_key(data.fluent_atoms(i)) for i in rows] == [_key(data.fluent_atoms(i)) for i in first_of_problem]
        assert data.value[rows[0]] == data.problems[p].stats["initial_value"]  # the initial state comes first
    # So every state of a problem file has one row per variant, and the variants differ in cost somewhere.
    group, members = VariantRankingObjective(config())._grouping(data)
    assert len(members) == 2 * len(rows) and all(len(m) == VARIANTS for m in members)
    assert any(np.ptp(data.value[m]) > 0 for m in members)


def test_goal_grounding_data_gets_the_variant_ranking_and_keeps_states_with_a_choice(data):
    objective = make_objective(config(), data)
    assert isinstance(objective, VariantRankingObjective)
    chosen = objective.select(data, np.arange(len(data)))
    group, members = objective._grouping(data)
    assert len(chosen) > 0
    for i in range(len(data)):
        assert (i in set(chosen.tolist())) == bool(np.ptp(data.value[members[group[i]]]) > 0)


@pytest.mark.slow  # trains to a threshold (12 s): with --runslow, to keep the default run within its ten minutes
def test_ranking_fits_which_binding_of_each_state_is_cheapest(data):
    model, encoding, record = train(data, config())
    assert record["error_name"] == "binding regret"
    assert record["train"]["best_variant_optimal"] >= 0.9, record["train"]
    assert record["train"]["variant_states"] == len(VariantRankingObjective(config())._grouping(data)[1])
    # An untrained model of the same shape gets some of those choices wrong.
    from up_gnnplan.training.checkpoint import build

    torch.manual_seed(0)
    encoding0, untrained = build(config(), data.signature, data.action_signature, data.types)
    objective0 = VariantRankingObjective(config())
    everything = np.arange(len(data))
    assert objective0.best_is_optimal(untrained, encoding0, data, objective0.select(data, everything)).mean() < 0.8
    # The best epoch's figure is the regret: V* of the chosen variant over the cheapest one's.
    regret = objective0.error(untrained, encoding0, data, everything)
    assert regret > 0.5 and objective0.error(model, encoding, data, everything) < regret
    # What the binder reads: at the initial state of each problem file the cheapest variant is valued lowest.
    objective = VariantRankingObjective(config())
    group, members = objective._grouping(data)
    for p in (0, VARIANTS):
        initial = members[group[np.flatnonzero(data.state_problem == p)[0]]]
        values = predict(model, encoding, data, initial)
        assert data.value[initial][int(np.argmin(values))] == data.value[initial].min()


def test_ranking_with_regression_reports_the_value_error_too(data):
    _, _, record = train(data, config(loss="mse+rank", max_epochs=2))
    assert {"best_variant_optimal", "binding_regret", "mae"} <= set(record["train"])


def test_validation_holds_out_every_variant_of_a_problem_file(data):
    train_rows, valid_rows, names = split(data, 0.5, np.random.default_rng(0))
    files = lambda rows: {data.problems[p].problem_file for p in np.unique(data.state_problem[rows])}  # noqa: E731
    assert len(files(valid_rows)) == 1 and files(train_rows).isdisjoint(files(valid_rows))
    assert len(names) == VARIANTS


def test_the_per_epoch_sample_keeps_every_variant_of_a_state(data):
    objective = VariantRankingObjective(config())
    group, members = objective._grouping(data)
    everything = np.arange(len(data))
    sample = objective.sample(data, everything, 50, np.random.default_rng(0))
    assert 0 < len(sample) <= 50 and len(sample) % VARIANTS == 0
    for g in np.unique(group[sample]):
        assert set(members[g].tolist()) <= set(sample.tolist())
    # Through the training loop: a validation sample smaller than the data still trains and reports.
    _, _, record = train(data, config(max_epochs=2, validation_states=40))
    assert record["error_name"] == "binding regret"

"""Every registered mode solves a tiny generated problem with the shipped models, and its plan validates.

The registry (:data:`up_gnnplan.search.modes.MODES`) drives this test, the engine's ``mode``
param, ``gnnplan solve --mode`` and ``compare``'s ``gnnplan:MODE`` specs: a mode added there is
run here.
"""

from __future__ import annotations

import importlib.util

import pytest
from unified_planning.engines import PlanGenerationResultStatus as Status

import up_gnnplan  # noqa: F401  (registers the engine)
from up_gnnplan.compare.runner import check_plan
from up_gnnplan.plugins.engine import GnnplanEngine
from up_gnnplan.plugins.params import PARAMS, check_params
from up_gnnplan.problems.loading import load_pddl
from up_gnnplan.search import SEARCHES
from up_gnnplan.search.modes import COMMON_OPTIONS, EITHER, MODES


def generated(tmp_path_factory, domain: str, **sizes):
    from up_gnnplan.datasets.generators import generate

    folder = tmp_path_factory.mktemp(domain)
    (problem,) = generate(domain, folder, count=1, seed=0, **sizes)
    return folder / "domain.pddl", problem


@pytest.fixture(scope="module")
def blocksworld(tmp_path_factory):
    """Five blocks of the IPC 2023 Blocksworld, whose domain ships a value and an action model."""
    return generated(tmp_path_factory, "blocksworld", blocks=5)


@pytest.fixture(scope="module")
def exists_blocks(tmp_path_factory):
    """A small Coloured Blocks problem with an existential goal, of the shipped grounding model's domain."""
    return generated(tmp_path_factory, "exists-blocks", blocks=6, colours=4, variables=2, neq=1)


def binds_goals(mode) -> bool:
    return mode.takes("grounding_model")


@pytest.mark.parametrize("name", list(MODES))
def test_every_mode_solves_a_tiny_problem_and_its_plan_validates(name, blocksworld, exists_blocks):
    mode = MODES[name]
    if binds_goals(mode) and importlib.util.find_spec("up_fast_downward") is None:
        pytest.skip("mode ground hands the ground problem to LAMA-first: needs up-fast-downward")
    problem = load_pddl(*(exists_blocks if binds_goals(mode) else blocksworld))
    result = GnnplanEngine(mode=name).solve(problem, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING, [m.message for m in result.log_messages]
    valid, note, cost = check_plan(problem, result.plan)
    assert valid, note
    assert float(result.metrics.get("plan_cost", cost)) == pytest.approx(cost)


def test_the_registry_names_real_searches_heads_and_params():
    for name, mode in MODES.items():
        assert mode.head in ("value", "actions", EITHER), name
        assert set(mode.searches) <= set(SEARCHES), name
        assert set(mode.options) <= set(PARAMS) and set(COMMON_OPTIONS) <= set(PARAMS), name
        assert all(part in MODES for part in mode.parts), name
        assert mode.help and mode.run is not None
    assert set(MODES["auto"].searches) == set(SEARCHES)  # auto is made of the search modes
    assert PARAMS["mode"].accepts == "one of " + ", ".join(MODES)  # the engine's choices


def test_a_param_the_mode_does_not_take_is_refused():
    from unified_planning.exceptions import UPUsageError

    check_params({"mode": "auto", "fallback": "model"})
    with pytest.raises(UPUsageError, match="mode 'gbfs' does not take param.*'fallback' \\(modes auto, ground only\\)"):
        check_params({"mode": "gbfs", "fallback": "model"})
    with pytest.raises(UPUsageError, match="'binding_beam'"):
        GnnplanEngine(mode="policy", binding_beam=2)


def test_the_command_line_offers_every_mode():
    from up_gnnplan.cli import main

    solve = {p.name: p for p in main.commands["solve"].params}
    assert list(solve["mode"].type.choices) == list(MODES)
    for name, mode in MODES.items():
        assert name in solve["mode"].help


def test_compare_accepts_every_mode_as_an_engine_spec():
    from up_gnnplan.compare import parse_engine

    for name in MODES:
        assert parse_engine(f"gnnplan:{name}").label == f"gnnplan:{name}"
    with pytest.raises(ValueError, match="auto, policy"):
        parse_engine("gnnplan:astar")

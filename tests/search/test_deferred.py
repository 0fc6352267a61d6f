"""Deferred evaluation in GBFS (engine param ``deferred``): a state is valued when it is expanded, its
children queued at its value and ordered by the action head where the model has one, so that an
expansion costs one forward pass instead of one per fresh successor; still complete."""

from __future__ import annotations

import numpy as np
import pytest
from unified_planning.engines import PlanGenerationResultStatus as UPStatus

from up_gnnplan.search import Status, dual_gbfs, gbfs
from search_cases import SOLVABLE, assert_valid_up_plan, task_of  # noqa: E402
from test_search import constant, perfect  # noqa: E402


@pytest.mark.parametrize("search", [gbfs, dual_gbfs])
@pytest.mark.parametrize("name", SOLVABLE)
def test_one_state_valued_per_expansion_and_a_valid_plan(name, search):
    task = task_of(name)
    value_fn, initial_value = perfect(name)
    before = len(value_fn.calls)
    result = search(task, value_fn, deferred=True)
    assert result.status is Status.SOLVED, result.message
    assert len(result.actions) >= initial_value
    calls = value_fn.calls[before:]
    assert set(calls) == {1} and len(calls) == result.expanded == result.evaluated
    assert_valid_up_plan(task, result)


@pytest.mark.parametrize("search", [gbfs, dual_gbfs])
def test_deferred_is_complete(search):
    assert search(task_of("bw-p04"), constant, deferred=True).status is Status.SOLVED
    unsolvable = search(task_of("oneway-unsolvable"), constant, deferred=True)
    assert unsolvable.status is Status.UNSOLVABLE and "explored" in unsolvable.message
    deadends = search(task_of("oneway-deadends"), lambda inputs: np.arange(len(inputs), 0, -1, dtype=float),
                      deferred=True)
    assert deadends.status is Status.SOLVED and len(deadends.actions) == 2


def test_a_model_with_both_heads_values_and_scores_in_one_pass(tmp_path):
    """The shipped Blocksworld model (IPC 2023 layout) has a value and an action head: one session call
    gives both, the same as the two calls apart; the search orders each state's children by the action
    head and values one state per expansion."""
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.encodings.actions import ActionInput
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.runtime import load_value_function
    from up_gnnplan.search import Inputs
    from up_gnnplan.problems import load_task
    from up_gnnplan.states.actions import ActionRows

    task = load_task(tmp_path / "domain.pddl", generate("blocksworld", tmp_path, count=1, seed=3, blocks=12)[0])
    model = load_value_function(find_model(task.signature, None), threads=1)
    assert model.has_value and model.has_actions
    state = task.initial_state()
    actions = state.generate_applicable_actions()
    state_input = Inputs(task)([state])[0]
    action_input = ActionInput(*ActionRows(task)(actions))
    value, scores = model.value_and_scores(state_input, action_input)
    assert value == pytest.approx(float(model([state_input])[0]), rel=1e-5)
    np.testing.assert_allclose(scores, model.scorer(state_input, action_input), rtol=1e-5, atol=1e-5)
    result = dual_gbfs(task, model, deferred=True)
    assert result.status is Status.SOLVED and result.evaluated == result.expanded
    assert_valid_up_plan(task, result)


def test_the_engine_defers_where_the_model_has_an_action_head(tmp_path):
    """``deferred=auto`` (the default): deferred with the shipped Blocksworld model (both heads: one state
    valued per expansion), eager with the value-only model of the bundled example; True/False force it;
    modes without GBFS refuse the param."""
    from unified_planning.exceptions import UPUsageError

    from up_gnnplan.data import example
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.plugins.engine import GnnplanEngine
    from up_gnnplan.problems import Task

    both = Task.from_files(tmp_path / "domain.pddl", generate("blocksworld", tmp_path, count=1, seed=3, blocks=12)[0])
    value_only = Task.from_files(example("blocksworld", "domain.pddl"), example("blocksworld", "p04.pddl"))

    def counts(task, **params):
        result = GnnplanEngine(mode="dual-gbfs", **params).solve_task(task, timeout=60)
        assert result.status == UPStatus.SOLVED_SATISFICING, [m.message for m in result.log_messages]
        return int(result.metrics["expanded"]), int(result.metrics["evaluated"])

    expanded, evaluated = counts(both)
    assert evaluated == expanded
    expanded, evaluated = counts(both, deferred=False)
    assert evaluated > expanded
    expanded, evaluated = counts(value_only)
    assert evaluated > expanded
    expanded, evaluated = counts(value_only, deferred="true")
    assert evaluated == expanded
    with pytest.raises(UPUsageError, match="'deferred'"):
        GnnplanEngine(mode="action-policy", deferred=True)

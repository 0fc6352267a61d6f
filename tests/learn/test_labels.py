"""The labeller's optimal plans: Fast Downward's A* with LM-cut run on the task's own PDDL, under
the default memory limit, its plan mapped to pymimir's ground actions (no UP problem built)."""

from __future__ import annotations

import importlib.util

import pytest

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.generators import generate
from up_gnnplan.learn.labels import fast_downward_plan
from up_gnnplan.problems import load_task
from up_gnnplan.states.successors import is_goal

needs_fd = pytest.mark.skipif(importlib.util.find_spec("up_fast_downward") is None,
                              reason="the labeller's plans come from Fast Downward: needs up-fast-downward")


@needs_fd
@pytest.mark.parametrize("balls", [3, 5])
def test_the_plan_is_optimal_and_read_without_ups_reader(tmp_path, balls):
    problem = generate("gripper", tmp_path, count=1, seed=balls, balls=balls)[0]
    task = load_task(tmp_path / "domain.pddl", problem)
    status, plan = fast_downward_plan(task, 30.0)
    assert status == "solved"
    assert len(plan) == expand(task).initial_value  # unit costs: V* of the initial state
    state = task.initial_state()
    for action in plan:
        state = action.apply(state)
    assert is_goal(task, state)
    assert task.from_files_only  # the plan was mapped on pymimir: UP's reader never ran


@needs_fd
def test_a_share_too_short_is_a_timeout_not_a_failure(tmp_path):
    problem = generate("gripper", tmp_path, count=1, seed=0, balls=40)[0]
    status, plan = fast_downward_plan(load_task(tmp_path / "domain.pddl", problem), 1.0)
    assert (status, plan) == ("timeout", None)


@needs_fd
def test_beyond_lm_cut_a_problem_is_labelled_by_lama_firsts_plan(tmp_path):
    """Gripper of 40 balls: no optimal plan in the share; LAMA-first's plan, in the rest of the share (labels
    ``auto``, learn's default), labels its states with its suffix costs (label satisficing-plan), and each plan
    state's plan action is an optimal target."""
    import numpy as np

    from up_gnnplan.datasets.store import LABELS, Dataset
    from up_gnnplan.learn.labels import label_one
    from up_gnnplan.training.config import TrainConfig
    from up_gnnplan.training.objectives import ActionObjective

    problem = generate("gripper", tmp_path, count=1, seed=0, balls=40)[0]
    output = tmp_path / "labels.npz"
    domain = str(tmp_path / "domain.pddl")
    summary = label_one(domain, str(problem), 5.0, 2000, str(output), "auto")
    assert summary["status"] == "satisficing-plan", summary
    assert summary["plan_length"] >= 119  # 40 balls: at least pick, move, drop each... (V* is 119)
    data = Dataset.load(output)
    assert data.problems[0].method == "satisficing-plan"
    assert set(data.label.tolist()) == {LABELS.index("satisficing-plan")}
    steps = data.steps[:summary["plan_length"] + 1]  # the plan's states first, in order
    assert steps.tolist() == list(range(summary["plan_length"], -1, -1))
    assert np.all(np.diff(data.value[:summary["plan_length"] + 1]) < 0)
    objective = ActionObjective(TrainConfig(head="logits"), "logits", False, data)
    kept = objective.select(data, np.arange(len(data.value)))
    assert len(kept) >= summary["plan_length"]  # every state before the goal has its plan action as a target

    refused = label_one(domain, str(problem), 4.0, 2000, str(tmp_path / "none.npz"), "optimal")
    assert refused["status"] == "too-large" and not (tmp_path / "none.npz").exists()
    # Once LM-cut has failed on several problems in a row, the labelling stage asks for LAMA-first at once.
    direct = label_one(domain, str(problem), 8.0, 2000, str(tmp_path / "direct.npz"), "lama-first")
    assert direct["status"] == "satisficing-plan" and direct["seconds"] < summary["seconds"], (direct, summary)


@needs_fd
@pytest.mark.parametrize("problem", ["p06.pddl"])
def test_where_lm_cut_refuses_conditional_effects_a_star_with_hmax_gives_the_optimal_plan(problem):
    """Briefcase moves what the case holds by a conditional effect under a forall: Fast Downward's LM-cut
    refuses it (exit code 34), and A* with h^max gives the plan, of the optimal length, in its place."""
    from pathlib import Path

    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.learn.labels import optimal_fallback
    from up_gnnplan.limits import Limits
    from up_gnnplan.search.lama import UnsupportedTask, fast_downward

    folder = Path(__file__).resolve().parents[1] / "fixtures" / "briefcase"
    task = load_task(folder / "domain.pddl", folder / problem)
    with pytest.raises(UnsupportedTask, match="A\\* with LM-cut does not support this task"):
        fast_downward(task, Limits(30.0), "seq-opt-lmcut")
    assert issubclass(UnsupportedTask, GnnplanError) and optimal_fallback(task) == "seq-opt-hmax"
    status, plan = fast_downward_plan(task, 30.0)
    assert status == "solved" and len(plan) == expand(task).initial_value
    state = task.initial_state()
    for action in plan:
        state = action.apply(state)
    assert is_goal(task, state)


@needs_fd
def test_one_translation_serves_a_star_and_lama_first(tmp_path):
    """The labeller translates a task once (Fast Downward's translator) and searches it by A* with LM-cut, then
    by LAMA-first: both plans replay to the goal, the optimal one of V* steps; Briefcase's conditional effects
    still fall back to A* with h^max on the translated task; stopping the translation removes its folder."""
    from pathlib import Path

    from up_gnnplan.learn.labels import translate

    problem = generate("gripper", tmp_path, count=1, seed=2, balls=4)[0]
    folder = Path(__file__).resolve().parents[1] / "fixtures" / "briefcase"
    for task in (load_task(tmp_path / "domain.pddl", problem), load_task(folder / "domain.pddl", folder / "p06.pddl")):
        status, translation = translate(task, 30.0)
        assert status == "translated"
        try:
            optimal = fast_downward_plan(task, 30.0, translation=translation)
            satisficing = fast_downward_plan(task, 30.0, alias="lama-first", translation=translation)
        finally:
            translation.stop()
        assert not Path(translation.folder.name).exists()
        for status, plan in (optimal, satisficing):
            assert status == "solved"
            state = task.initial_state()
            for action in plan:
                state = action.apply(state)
            assert is_goal(task, state)
        assert len(optimal[1]) == expand(task).initial_value <= len(satisficing[1])


@needs_fd
@pytest.mark.parametrize("seconds", [1.5, 3.0])  # too short to start it; killed at its limit
def test_a_translator_that_cannot_finish_in_the_share_is_a_timeout(tmp_path, seconds):
    from up_gnnplan.learn.labels import translate

    problem = generate("gripper", tmp_path, count=1, seed=0, balls=2000)[0]
    assert translate(load_task(tmp_path / "domain.pddl", problem), seconds) == ("timeout", None)


def test_successors_of_an_early_optimal_plan_stop_at_the_fair_share():
    from up_gnnplan.learn.labels import PLAN_SHARE, successor_end

    # a share grown to 80 s of a fair 10 s: a plan found after 2 s leaves the successors until the fair share's end
    assert successor_end(100.0, 102.0, 180.0, 10.0) == 110.0
    # a plan found late still leaves its successors the plan search's remainder of the fair share
    assert successor_end(100.0, 150.0, 180.0, 10.0) == 150.0 + (1.0 - PLAN_SHARE) * 10.0
    # never past the share's end, and the whole share without a fair one
    assert successor_end(100.0, 179.5, 180.0, 10.0) == 180.0
    assert successor_end(100.0, 102.0, 180.0, None) == 180.0


def test_the_share_of_labelling_time_that_optimal_plans_missed():
    import time
    from types import SimpleNamespace

    from up_gnnplan.learn.run import _missed_share

    run = SimpleNamespace(labels={
        "p1": {"status": "expanded", "seconds": 10.0},
        "p2": {"status": "optimal-plan", "seconds": 20.0},
        "p3": {"status": "satisficing-plan", "seconds": 30.0},
        "p4": {"status": "not-tried", "seconds": 0.0}})
    # 30 s of misses in 60 s spent and about 60 s left
    assert abs(_missed_share(run, time.perf_counter() + 60.0) - 0.25) < 0.01
    assert _missed_share(run, time.perf_counter() - 5.0) == 0.5  # the labelling time is over: what was spent
    assert _missed_share(SimpleNamespace(labels={}), time.perf_counter() - 1.0) == 0.0

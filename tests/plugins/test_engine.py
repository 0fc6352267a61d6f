"""The gnnplan UP engine: the OneshotPlanner contract, over UP's own example problems."""

import json

import onnx
import pytest
from unified_planning.engines import PlanGenerationResultStatus as Status
from unified_planning.io import PDDLReader
from unified_planning.shortcuts import OneshotPlanner
from unified_planning.test.examples import get_example_problems

import pddl_cases
import up_gnnplan  # noqa: F401  (registers the engine)
from up_gnnplan.data import example
from up_gnnplan.plugins.engine import GnnplanEngine

EXAMPLES = get_example_problems()
SUPPORTED = sorted(name for name, ex in EXAMPLES.items() if GnnplanEngine.supports(ex.problem.kind))
UNSUPPORTED = sorted(set(EXAMPLES) - set(SUPPORTED))


def untrained_model(problem, path, architecture="rgnn"):
    """Export an untrained (random-weight) model for ``problem``'s domain: GBFS stays complete."""
    return pddl_cases.untrained_model(problem, path, architecture=architecture)


@pytest.fixture(autouse=True)
def quiet_credits():
    from unified_planning.environment import get_environment

    get_environment().credits_stream = None


def test_engine_is_registered_by_import():
    with OneshotPlanner(name="gnnplan") as planner:
        assert planner.name == "gnnplan"


def test_supported_examples_exist_and_unsupported_are_refused():
    assert "basic" in SUPPORTED and "basic_exists" in SUPPORTED
    for name in UNSUPPORTED:
        assert not GnnplanEngine.supports(EXAMPLES[name].problem.kind), name


@pytest.mark.parametrize("name", SUPPORTED)
def test_solves_up_examples_with_gbfs_and_validates(name, tmp_path):
    problem = EXAMPLES[name].problem
    path = untrained_model(problem, tmp_path / "model.onnx")
    with OneshotPlanner(name="gnnplan", params={"model": str(path), "mode": "gbfs"}) as planner:
        result = planner.solve(problem, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING, [m.message for m in result.log_messages]
    assert float(result.metrics["engine_internal_time"]) > 0
    with problem.environment.factory.PlanValidator(problem_kind=problem.kind) as validator:
        if not any(g.is_exists() for g in problem.goals):  # UP's validator is very slow on exists-goals
            assert validator.validate(problem, result.plan).status.name == "VALID"


def test_domain_without_model_tells_user_to_train_one():
    problem = EXAMPLES["robot_loader"].problem
    with OneshotPlanner(name="gnnplan") as planner:
        result = planner.solve(problem)
    assert result.status == Status.UNSUPPORTED_PROBLEM
    message = " ".join(m.message for m in result.log_messages)
    assert "no shipped model" in message and "gnnplan learn DOMAIN PROBLEMS" in message and "--model" in message


@pytest.mark.filterwarnings("ignore:We cannot establish")
@pytest.mark.parametrize("name", UNSUPPORTED)
def test_unsupported_examples_get_a_status_and_a_message_not_a_crash(name):
    with OneshotPlanner(name="gnnplan") as planner:
        result = planner.solve(EXAMPLES[name].problem, timeout=10)
    assert result.status == Status.UNSUPPORTED_PROBLEM
    assert "unsupported" in result.log_messages[-1].message or "not a classical" in result.log_messages[-1].message


def test_disjunctive_and_universal_conditions_are_solved_among_ups_examples():
    conditions = {str(f) for name in SUPPORTED for f in EXAMPLES[name].problem.kind.features}
    assert {"DISJUNCTIVE_CONDITIONS", "UNIVERSAL_CONDITIONS"} <= conditions, sorted(conditions)
    assert "safe_road" in SUPPORTED  # its goal quantifies over every road: a derived predicate


def bundled_problem(problem="p04.pddl"):
    return PDDLReader().parse_problem(example("blocksworld"), example("blocksworld", problem))


def test_model_of_another_domain_is_refused(tmp_path):
    other = untrained_model(EXAMPLES["basic"].problem, tmp_path / "other.onnx")
    engine = GnnplanEngine(model=str(other))
    result = engine.solve(bundled_problem())
    assert result.status == Status.UNSUPPORTED_PROBLEM
    assert "predicates differ" in result.log_messages[-1].message


def test_corrupt_and_newer_models_are_refused_before_search(tmp_path):
    problem = bundled_problem()
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(b"not an onnx file")
    result = GnnplanEngine(model=str(corrupt)).solve(problem)
    assert result.status == Status.UNSUPPORTED_PROBLEM and "not a readable ONNX model" in result.log_messages[-1].message

    path = untrained_model(problem, tmp_path / "newer.onnx")
    proto = onnx.load(str(path))
    for prop in proto.metadata_props:
        if prop.key == "up_gnnplan.version":
            prop.value = json.dumps(999)
    onnx.save(proto, str(path))
    result = GnnplanEngine(model=str(path)).solve(problem)
    assert result.status == Status.UNSUPPORTED_PROBLEM and "newer" in result.log_messages[-1].message


@pytest.mark.parametrize("mode", ["policy", "gbfs", "dual-gbfs", "auto"])
def test_modes_and_timeout(mode, tmp_path):
    problem = bundled_problem()
    path = untrained_model(problem, tmp_path / "m.onnx")
    result = GnnplanEngine(model=str(path), mode=mode).solve(problem, timeout=60)
    if mode == "policy":  # an untrained policy may give up; it must say so honestly
        assert result.status in (Status.SOLVED_SATISFICING, Status.UNSOLVABLE_INCOMPLETELY)
    else:
        assert result.status == Status.SOLVED_SATISFICING
    result = GnnplanEngine(model=str(path), mode=mode).solve(problem, timeout=0)
    assert result.status in (Status.TIMEOUT, Status.SOLVED_SATISFICING)  # a zero budget may still finish step 0


@pytest.mark.parametrize("fallback, search",
                         [("model", "gbfs"), ("model+ff", "dual-gbfs"), ("model+lama", "dual-gbfs")])
def test_mode_auto_runs_the_chosen_fallback_after_the_policy_gives_up(fallback, search, tmp_path):
    problem = bundled_problem()
    path = untrained_model(problem, tmp_path / "m.onnx")
    result = GnnplanEngine(model=str(path), max_steps=1, fallback=fallback).solve(problem, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING
    searches = [m.message.split(":")[0] for m in result.log_messages if m.message.startswith(("policy:", search))]
    assert searches == ["policy", search]


def test_unknown_mode_is_a_usage_error():
    from unified_planning.exceptions import UPUsageError

    with pytest.raises(UPUsageError):
        GnnplanEngine(mode="astar")


def test_sessions_are_reused_across_solves_until_the_file_changes(tmp_path):
    import os

    from up_gnnplan.runtime import load_value_function

    problem = bundled_problem()
    path = untrained_model(problem, tmp_path / "m.onnx")
    first = load_value_function(path)
    assert load_value_function(path) is first
    assert GnnplanEngine(model=str(path), mode="gbfs").solve(problem, timeout=60).status == Status.SOLVED_SATISFICING
    assert load_value_function(path) is first
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert load_value_function(path) is not first


def test_astray_factor_bounds_the_policy_by_ffs_estimate():
    """With ``astray_factor`` the auto mode's policy gets FF's estimate of the initial state times the
    factor plus 50 steps (reported in the log), and solves Blocksworld p04 as without it. (The value model:
    a model whose ``learn`` judge trusted its policy records no limit, as the shipped ``blocks`` does.)"""
    from up_gnnplan.models_zoo import zoo_dir
    from up_gnnplan.problems.loading import load_pddl

    problem = load_pddl(example("blocksworld", "domain.pddl"), example("blocksworld", "p04.pddl"))
    model = str(zoo_dir() / "blocks-value.onnx")
    result = GnnplanEngine(astray_factor=1, model=model).solve(problem, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING
    limit = [m.message for m in result.log_messages if m.message.startswith("policy step limit")]
    assert len(limit) == 1 and "x FF's estimate" in limit[0], [m.message for m in result.log_messages]
    default = GnnplanEngine(model=model).solve(problem, timeout=60)  # 4 by default
    assert default.status == Status.SOLVED_SATISFICING
    assert any(m.message.startswith("policy step limit") and "4 x FF" in m.message for m in default.log_messages)
    off = GnnplanEngine(astray_factor=0, model=model).solve(problem, timeout=60)
    assert off.status == Status.SOLVED_SATISFICING
    assert not any(m.message.startswith("policy step limit") for m in off.log_messages)


def test_ff_is_built_once_for_the_step_limit_and_the_fallback(monkeypatch):
    """With ``astray_factor`` FF gives the policy its step limit and then guides the dual fallback:
    one heuristic, built once (grounding it is the costly part)."""
    from up_gnnplan.problems.loading import load_pddl
    from up_gnnplan.search import ff

    built = []
    original = ff.FFHeuristic.__init__

    def counted(self, task, limits=None):
        built.append(task)
        original(self, task, limits)

    monkeypatch.setattr(ff.FFHeuristic, "__init__", counted)
    problem = load_pddl(example("blocksworld", "domain.pddl"), example("blocksworld", "p04.pddl"))
    result = GnnplanEngine(astray_factor=1, max_steps=1).solve(problem, timeout=60)  # the policy gives up at once
    assert result.status == Status.SOLVED_SATISFICING
    messages = [m.message for m in result.log_messages]
    assert any(m.startswith("policy step limit 1 ") for m in messages), messages
    assert any(m.startswith("dual-") for m in messages), messages
    assert len(built) == 1


@pytest.mark.parametrize("seed_fallback", [True, False])
def test_seed_fallback_hands_the_policys_path_to_the_fallback(seed_fallback, tmp_path):
    problem = bundled_problem()
    path = untrained_model(problem, tmp_path / "m.onnx")
    result = GnnplanEngine(model=str(path), max_steps=2, astray_factor=0,
                           seed_fallback=seed_fallback).solve(problem, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING
    fallback = [m.message for m in result.log_messages if m.message.startswith("dual-gbfs")]
    assert len(fallback) == 1 and ("seeded with" in fallback[0]) is seed_fallback, fallback


def test_seed_fallback_must_be_a_flag():
    from unified_planning.exceptions import UPUsageError

    with pytest.raises(UPUsageError, match="seed_fallback"):
        GnnplanEngine(seed_fallback="maybe")


def test_action_elimination_shortens_the_plan_before_it_is_validated(tmp_path, monkeypatch):
    """A plan with a detour (GBFS's plan behind an action and the one undoing it): action
    elimination leaves the detour out, says so, and the shorter plan is the one validated and
    returned; without it the plan comes back as found."""
    from up_gnnplan.search import SEARCHES, gbfs

    def with_a_detour(task, value_fn, **kwargs):
        result = gbfs(task, value_fn, **kwargs)
        state = task.initial_state()
        for first in state.generate_applicable_actions():
            middle = first.apply(state)
            back = [b for b in middle.generate_applicable_actions() if b.apply(middle).get_index() == state.get_index()]
            if back:
                result.actions = [first, back[0], *result.actions]
                result.cost += 2
                return result
        raise AssertionError("no action to undo")

    monkeypatch.setitem(SEARCHES, "gbfs", with_a_detour)
    problem = bundled_problem()
    path = untrained_model(problem, tmp_path / "m.onnx")
    results = {flag: GnnplanEngine(model=str(path), mode="gbfs", action_elimination=flag).solve(problem, timeout=60)
               for flag in (True, False)}
    assert all(r.status == Status.SOLVED_SATISFICING for r in results.values())
    notes = [m.message for m in results[True].log_messages if m.message.startswith("action elimination")]
    assert len(notes) == 1 and "2 of" in notes[0], [m.message for m in results[True].log_messages]
    assert not any(m.message.startswith("action elimination") for m in results[False].log_messages)
    assert len(results[True].plan.actions) == len(results[False].plan.actions) - 2


def test_the_log_goes_to_the_output_stream_as_it_happens():
    import io

    from up_gnnplan.data import example
    from up_gnnplan.problems import load_pddl

    problem = load_pddl(example("blocksworld"), example("blocksworld", "p04.pddl"))
    stream = io.StringIO()
    with OneshotPlanner(name="gnnplan") as planner:
        result = planner.solve(problem, timeout=60, output_stream=stream)
    assert result.status == Status.SOLVED_SATISFICING
    lines = stream.getvalue().splitlines()
    assert len(lines) == len(result.log_messages) and all(line.startswith("[") for line in lines)
    assert [line.split("] ", 1)[1] for line in lines] == [f"{m.level.name.lower()}: {m.message}"
                                                         for m in result.log_messages]

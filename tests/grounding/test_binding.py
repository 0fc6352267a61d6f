"""A grounding model trained, exported and used: the binder, the preprocessor, mode ground and the CLI."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from unified_planning.engines import PlanGenerationResultStatus as PlanStatus

from tests.grounding.cases import PROBLEMS
from up_gnnplan.cli import main
from up_gnnplan.data import example
from up_gnnplan.grounding.goal import QuantifiedGoal, static_facts, static_fluents
from up_gnnplan.grounding.preprocess import check_witness, ground_problem, make_binder
from up_gnnplan.plugins.engine import GnnplanEngine
from up_gnnplan.problems.loading import load_pddl

torch = pytest.importorskip("torch")



def load(files, name):
    return load_pddl(files / "domain.pddl", files / f"{name}.pddl")


def test_the_model_ranks_the_binding_already_true_first(files, model):
    binder = make_binder(load(files, "red-on-blue"), str(model), static_filter=True)
    grounding = binder.greedy()
    assert grounding.binding == {"x1": "b", "x2": "d"}  # (on b d) holds in the initial state: cost 0
    assert binder.model_calls == 2  # one batched call per bound variable
    first = grounding.steps[0]
    assert first.candidates == 4  # the static filter keeps the red blocks for x1 and the blue ones for x2


def test_bindings_are_distinct_valid_and_greedy_first(files, model):
    prob = load(files, "tower")
    binder = make_binder(prob, str(model), static_filter=True)
    fluents = static_fluents(prob)
    facts = static_facts(prob, fluents)
    found = [g for _, g in zip(range(6), binder.bindings())]
    keys = [tuple(sorted(g.binding.items())) for g in found]
    assert len(set(keys)) == len(keys) == 4  # red x1 (a or b), blue x2, x3 (c, d in either order)
    assert all(not g.goal.violations(facts, fluents) for g in found)
    assert found[0].binding == binder.greedy().binding


def test_the_beam_puts_the_binding_already_true_first_by_ff(files, model):
    prob = load(files, "red-on-blue")
    binder = make_binder(prob, str(model), static_filter=True, beam=4)
    found = [g for _, g in zip(range(4), binder.bindings())]
    assert found[0].binding == {"x1": "b", "x2": "d"}  # (on b d) holds: FF 0, whatever the model says
    costs = [binder.relaxed[frozenset(g.binding.items())] for g in found]
    assert costs[0] == 0.0 and costs == sorted(costs)  # the beam's ground goals in the order of FF
    assert len({frozenset(g.binding.items()) for g in found}) == 4  # then depth-first, nothing twice
    assert binder.model_calls >= 2 and len(binder.relaxed) == 4  # one FF build per ground goal of the beam


def test_the_beam_yields_every_valid_binding_once_like_the_greedy_order(files, model):
    prob = load(files, "tower")
    greedy = [frozenset(g.binding.items()) for g in make_binder(prob, str(model), static_filter=True).bindings()]
    beam = [frozenset(g.binding.items()) for g in make_binder(prob, str(model), static_filter=True, beam=3).bindings()]
    assert sorted(map(sorted, beam)) == sorted(map(sorted, greedy)) and len(set(beam)) == len(beam) == 4


def test_the_beam_is_narrowed_to_the_greedy_binding_when_time_does_not_afford_it(files, model, monkeypatch):
    import up_gnnplan.grounding.bind as bind
    from up_gnnplan.limits import Limits

    prob = load(files, "tower")
    greedy = make_binder(prob, str(model), static_filter=True).greedy()
    monkeypatch.setattr(bind, "BEAM_SHARE", 0.0)  # no share of the time left for the beam's calls
    binder = make_binder(prob, str(model), static_filter=True, limits=Limits(60, memory_mb=0), beam=4)
    assert binder.greedy().binding == greedy.binding and not binder.relaxed  # no FF built: the greedy order
    assert "narrowed to the greedy binding" in binder.beam_note and binder.model_calls == 3  # root valued once
    monkeypatch.setattr(bind, "BEAM_SHARE", 1.0)
    wide = make_binder(prob, str(model), static_filter=True, limits=Limits(60, memory_mb=0), beam=4)
    wide.greedy()
    assert wide.relaxed and not wide.beam_note and not wide.beam_narrowed  # 60 s afford it


def test_ff_is_left_out_of_the_beam_where_building_it_could_break_the_time_limit(files, model, monkeypatch):
    import up_gnnplan.search.ff as ff

    prob = load(files, "red-on-blue")
    monkeypatch.setattr(ff, "MAX_INITIAL_ACTIONS", 0)  # as if grounding FF took seconds that cannot be interrupted
    binder = make_binder(prob, str(model), static_filter=True, beam=4)
    found = [frozenset(g.binding.items()) for g in binder.bindings()]
    assert not binder.relaxed and "FF left out of the beam" in binder.beam_note and not binder.beam_narrowed
    assert len(found) == len(set(found)) == 4  # the beam's ground goals in the model's order, then the rest


def test_without_the_static_filter_the_model_weighs_every_object(files, model):
    binder = make_binder(load(files, "red-on-blue"), str(model), static_filter=False)
    assert binder.greedy().steps[0].candidates == 8


def test_entailment_makes_the_bindings_that_add_nothing_without_the_model(files, model):
    plain = make_binder(load(files, "shared"), str(model), static_filter=True, entailment=False)  # the paper's
    plain.greedy()
    binder = make_binder(load(files, "shared"), str(model), static_filter=True)  # the default
    grounding = binder.greedy()
    weighed = [s for s in grounding.steps if s.candidates]
    made = [s for s in grounding.steps if not s.candidates]
    assert plain.model_calls == 3 and binder.model_calls == len(weighed) < 3 and len(grounding.binding) == 3
    # Made without the model: each to an object bound before it, which already satisfies all it asks.
    assert made and {s.obj for s in made} <= {s.obj for s in weighed}
    result = GnnplanEngine(mode="ground", grounding_model=str(model)).solve(
        load(files, "shared"), timeout=60)
    assert result.status == PlanStatus.SOLVED_SATISFICING, [m.message for m in result.log_messages]
    assert "(adds nothing)" in " ".join(m.message for m in result.log_messages)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("planner", ["lama-first"])
def test_mode_ground_solves_with_lama_and_checks_the_witness(files, model, name, planner):
    prob = load(files, name)
    engine = GnnplanEngine(mode="ground", grounding_model=str(model), planner=planner)
    result = engine.solve(prob, timeout=60)
    assert result.status == PlanStatus.SOLVED_SATISFICING, [m.message for m in result.log_messages]
    bound = {pair.split("=")[0] for pair in result.metrics["binding"].split()}
    assert bound == {f"?{v.name}" for v in QuantifiedGoal.of(prob).variables}
    assert result.metrics["groundings_tried"] == "1"


def test_mode_ground_without_fast_downward_says_how_to_get_it(files, model, monkeypatch):
    import up_gnnplan.grounding.solve as solve

    monkeypatch.setattr(solve, "fast_downward_installed", lambda: False)  # an install without the extra
    result = GnnplanEngine(mode="ground", grounding_model=str(model)).solve(load(files, "tower"), timeout=60)
    assert result.status == PlanStatus.UNSUPPORTED_PROBLEM
    assert "pip install 'up-gnnplan[fast-downward]'" in " ".join(m.message for m in result.log_messages)
    out = CliRunner().invoke(main, ["solve", str(files / "domain.pddl"), str(files / "tower.pddl"), "--mode", "ground",
                                    "--grounding-model", str(model)])
    assert "up-fast-downward, which is not installed" in out.output, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit), out.output  # a message, no traceback


def test_check_witness_rejects_a_plan_that_misses_the_goal(files, model):
    from unified_planning.plans import SequentialPlan

    prob = load(files, "tower")
    goal = QuantifiedGoal.of(prob)
    grounding = make_binder(prob, str(model), static_filter=True).greedy()
    assert "does not satisfy" in check_witness(prob, goal, grounding.goal, SequentialPlan([]))
    wrong = goal
    for variable in goal.variables:
        wrong = wrong.bind(variable, prob.object("c"))
    assert "breaks (not (= c c))" in check_witness(prob, goal, wrong, SequentialPlan([]))


def test_a_goal_without_variables_passes_through(files):
    prob = load(files, "ground")
    grounded = ground_problem(prob)  # no model needed: nothing to bind
    assert grounded.problem is prob and not grounded.changed
    result = GnnplanEngine(mode="ground").solve(prob, timeout=60)
    assert result.status == PlanStatus.SOLVED_SATISFICING, [m.message for m in result.log_messages]


def test_a_model_of_another_domain_is_refused(files):
    other = example("blocksworld").parent  # the bundled Blocksworld value model is not a grounding model
    result = GnnplanEngine(mode="ground", grounding_model="blocksworld").solve(load(files, "tower"), timeout=60)
    assert result.status == PlanStatus.UNSUPPORTED_PROBLEM
    assert "predicates differ" in result.log_messages[-1].message and other.is_dir()
    result = GnnplanEngine(mode="ground").solve(load(files, "tower"), timeout=60)
    assert "no shipped goal-grounding model" in result.log_messages[-1].message


def test_a_grounding_model_is_refused_as_a_value_function(files, model):
    result = GnnplanEngine(model=str(model)).solve(load(files, "tower"), timeout=60)
    assert result.status == PlanStatus.UNSUPPORTED_PROBLEM
    assert "a goal-grounding model" in result.log_messages[-1].message and "mode 'ground'" in result.log_messages[-1].message


def test_cli_ground_prints_the_binding_and_writes_the_ground_problem(files, model, tmp_path):
    out = tmp_path / "ground.pddl"
    result = CliRunner().invoke(main, ["ground", str(files / "domain.pddl"), str(files / "red-on-blue.pddl"),
                                       "--grounding-model", str(model), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "?x1 = b  (V = " in result.output and "?x2 = d  (V = " in result.output
    assert "?x1=b" in result.output.splitlines()[-1] and "?x2=d" in result.output.splitlines()[-1]
    assert "(on b d)" in out.read_text() and "exists" not in out.read_text()
    result = CliRunner().invoke(main, ["solve", str(files / "domain.pddl"), str(files / "tower.pddl"), "--mode", "ground",
                                       "--grounding-model", str(model), "--timeout", "60"])
    assert result.exit_code == 0, result.output
    assert "solved by lama-first, plan validated" in result.output
    result = CliRunner().invoke(main, ["ground", str(files / "domain.pddl"), str(files / "red-on-blue.pddl"),
                                       "--grounding-model", str(model), "--binding-beam", "3"])
    assert result.exit_code == 0, result.output
    assert "?x1=b" in result.output.splitlines()[-1] and "(on b d)" in result.output
    result = CliRunner().invoke(main, ["solve", str(files / "domain.pddl"), str(files / "tower.pddl"), "--mode", "ground",
                                       "--grounding-model", str(model), "--binding-beam", "3", "--timeout", "60"])
    assert result.exit_code == 0 and "solved by lama-first, plan validated" in result.output, result.output


def test_cli_dataset_grounding(files, tmp_path):
    out = tmp_path / "g.npz"
    result = CliRunner().invoke(main, ["dataset", str(files / "domain.pddl"), str(files / "tower.pddl"), "--grounding",
                                       "--goals-per-problem", "4", "--states-per-goal", "5", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "20 states from 4 problem(s)" in result.output

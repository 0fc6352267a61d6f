"""Conditional and universally quantified effects (``when``, ``forall`` in effects) are in the fragment:
both readers load them, pymimir applies them as UP's semantics say, and a domain of them is learnt and
solved end to end, every plan validated (on UP's simulator for a UP problem, on pymimir for files)."""

from __future__ import annotations

import shutil

import pytest

import up_gnnplan  # noqa: F401  (registers the engine)
from pddl_cases import fixture
from up_gnnplan.problems import Task, load_task

LIGHTS = fixture("lights", "p01.pddl")


def _fluents(state) -> set[str]:
    return {str(atom) for atom in state.get_atoms(ignore_static=True, ignore_derived=True)}


@pytest.mark.parametrize("domain, action, after", [
    ("when-domain.pddl", "(flip l1)", {"(on l1)"}),  # (when (not (on ?l)) (on ?l)) from a state where l1 is off
    ("forall-domain.pddl", "(all-on )", {"(on l1)", "(on l2)"}),  # (forall (?l - lamp) (on ?l))
])
def test_both_readers_load_and_apply_the_effects(domain, action, after):
    for task in (Task.from_files(fixture("lights", domain), LIGHTS), load_task(fixture("lights", domain), LIGHTS)):
        state = task.initial_state()
        applicable = {str(a): a for a in state.generate_applicable_actions()}
        assert action in applicable, sorted(applicable)
        assert _fluents(applicable[action].apply(state)) == after


def test_a_conditional_effect_whose_condition_fails_changes_nothing():
    task = Task.from_files(fixture("lights", "when-domain.pddl"), LIGHTS)
    state = task.initial_state()
    flip = {str(a): a for a in state.generate_applicable_actions()}["(flip l1)"]
    lit = flip.apply(state)
    again = {str(a): a for a in lit.generate_applicable_actions()}["(flip l1)"]
    assert _fluents(again.apply(lit)) == {"(on l1)"}  # already on: the condition (not (on l1)) fails


def test_the_engine_declares_the_effects_it_supports():
    from unified_planning.shortcuts import OneshotPlanner

    problem = load_task(fixture("briefcase", "domain.pddl"), fixture("briefcase", "p04.pddl")).up_problem
    assert {"CONDITIONAL_EFFECTS", "FORALL_EFFECTS"} <= {str(f) for f in problem.kind.features}
    with OneshotPlanner(problem_kind=problem.kind, name="gnnplan") as planner:
        assert planner.supports(problem.kind)


def test_mode_auto_solves_briefcase_from_files_and_through_up_with_plans_shortened_and_validated(tmp_path):
    """An untrained model on the largest training fixture (the FF half of the fallback finds the
    plan): the conditional effects go through the search, action elimination and both validations
    (pymimir for files, UP's simulator for UP)."""
    pytest.importorskip("torch")
    from click.testing import CliRunner
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner

    from pddl_cases import untrained_model
    from up_gnnplan.cli import main

    domain, large = fixture("briefcase", "domain.pddl"), fixture("briefcase", "p06.pddl")
    problem = load_task(domain, large).up_problem
    model = untrained_model(problem, tmp_path / "briefcase.onnx")
    solved = CliRunner().invoke(main, ["solve", "-v", str(domain), str(large), "--model", str(model),
                                       "--fallback", "model+ff", "--timeout", "60"])
    assert solved.exit_code == 0, solved.output
    assert "plan validated" in solved.stderr and "info: action elimination: " in solved.stderr
    with OneshotPlanner(name="gnnplan", params={"model": str(model), "fallback": "model+ff"}) as planner:
        result = planner.solve(problem, timeout=60)
    assert result.status is Status.SOLVED_SATISFICING, result.log_messages


@pytest.mark.slow
def test_briefcase_is_learnt_end_to_end_and_solves_a_larger_problem(tmp_path):
    """``gnnplan learn`` on six tiny Briefcaseworld problems (LM-cut does not take conditional effects,
    so the states are expanded whole), then mode auto on 10 locations and 8 portables, from files and
    through UP."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from click.testing import CliRunner
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner

    from up_gnnplan.cli import main

    train = tmp_path / "train"
    train.mkdir()
    for name in ["domain.pddl"] + [f"p0{i}.pddl" for i in range(1, 7)]:
        shutil.copy(fixture("briefcase", name), train / name)
    output = tmp_path / "briefcase.onnx"
    learnt = CliRunner().invoke(main, ["learn", str(train / "domain.pddl"), str(train), "-o", str(output),
                                       "--timeout", "15", "--device", "cpu"])
    assert learnt.exit_code == 0, learnt.output
    assert "full state space" in learnt.output

    domain, large = fixture("briefcase", "domain.pddl"), fixture("briefcase", "large.pddl")
    solved = CliRunner().invoke(main, ["solve", "-v", str(domain), str(large), "--model", str(output),
                                       "--timeout", "60"])
    assert solved.exit_code == 0, solved.output
    assert "plan validated" in solved.stderr
    assert "info: action elimination: " in solved.stderr  # the conditional effects simulated too
    problem = load_task(domain, large).up_problem
    with OneshotPlanner(name="gnnplan", params={"model": str(output)}) as planner:
        result = planner.solve(problem, timeout=60)
    assert result.status is Status.SOLVED_SATISFICING, result.log_messages


def test_predicates_changed_only_under_when_or_forall_are_not_static_for_the_size_estimate():
    from up_gnnplan.problems.files import size_facts
    from up_gnnplan.problems.size import estimate_ground_actions

    files = Task.from_files(fixture("briefcase", "domain.pddl"), fixture("briefcase", "p06.pddl"))
    facts = size_facts(files)
    assert "at" not in facts.static and "in" not in facts.static and "is-at" not in facts.static
    up = load_task(fixture("briefcase", "domain.pddl"), fixture("briefcase", "p06.pddl")).up_problem
    assert estimate_ground_actions(files) == estimate_ground_actions(up)  # the two readers agree


def test_a_shipped_model_with_the_predicates_but_not_the_actions_says_how_to_get_one(tmp_path):
    """Miconic's predicates with one ADL ``stop`` action (everyone boards or leaves at once): the shipped
    Miconic action model cannot score ``stop``, and the error says to learn a model."""
    import random

    from unified_planning.engines import PlanGenerationResultStatus as Status

    from up_gnnplan.datasets.generators.miconic import DOMAIN_PDDL, generate_problem
    from up_gnnplan.plugins.engine import GnnplanEngine

    start, end = DOMAIN_PDDL.index("  (:action board"), DOMAIN_PDDL.index("  (:action up")
    stop = """  (:action stop
    :parameters (?f - floor)
    :precondition (lift-at ?f)
    :effect (and (forall (?p - passenger) (when (and (boarded ?p) (destin ?p ?f)) (and (not (boarded ?p)) (served ?p))))
                 (forall (?p - passenger) (when (origin ?p ?f) (and (boarded ?p) (not (origin ?p ?f)))))))
"""
    domain, problem = tmp_path / "domain.pddl", tmp_path / "p.pddl"
    domain.write_text(DOMAIN_PDDL[:start].replace(":typing", ":typing :conditional-effects") + stop + DOMAIN_PDDL[end:])
    problem.write_text(generate_problem(random.Random(0), passengers=3, floors=4))
    result = GnnplanEngine().solve_task(Task.from_files(domain, problem), timeout=30)
    assert result.status is Status.UNSUPPORTED_PROBLEM
    message = result.log_messages[-1].message
    assert "only in the second: stop/1" in message and "has this domain's predicates but not its actions" in message
    assert "gnnplan learn DOMAIN PROBLEMS" in message

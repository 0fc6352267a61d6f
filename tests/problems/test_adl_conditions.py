"""Disjunctive and universal preconditions (``or``, ``imply``, ``forall``) are in the fragment.

pymimir compiles them into one action schema per disjunct and derived atoms; Fast Downward into split
operators and axioms, which LM-cut refuses, so the labeller's optimal plans come from blind A* there.
Both readers load them alike, pymimir applies them as UP's semantics say, a plan that breaks one is
not valid, and a domain of them is learnt and solved end to end (``switchboard``: a lamp lights from
its battery, or when every switch it is wired to is closed). In a goal, such a conjunct becomes a
derived predicate (``problems/goal_rules.py`` for files, the bridge for UP problems).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import up_gnnplan  # noqa: F401  (registers the engine)
from pddl_cases import fixture
from up_gnnplan.datasets.generators import generate
from up_gnnplan.problems import Task, load_task

SWITCHBOARD = fixture("switchboard", "domain.pddl")
needs_fd = pytest.mark.skipif(importlib.util.find_spec("up_fast_downward") is None,
                              reason="Fast Downward's plans: needs up-fast-downward")


def switchboard(folder: Path, lamps: int, switches: int, seed: int) -> Path:
    """Write a problem of the package's Switchboard generator (and its domain) into ``folder``."""
    return generate("switchboard", folder, count=1, seed=seed, lamps=lamps, switches=switches)[0]


def test_the_fixture_is_the_generators_domain():
    from up_gnnplan.datasets.generators import get_generator

    text = "\n".join(line for line in SWITCHBOARD.read_text().splitlines() if not line.startswith(";")) + "\n"
    assert text == get_generator("switchboard").domain_pddl


def _applicable(task, state) -> dict:
    actions = state.generate_applicable_actions()
    return dict(zip(task.plan_lines(actions), actions))


@pytest.mark.parametrize("precondition, axioms", [
    ("(forall (?y - thing) (p ?y))", True),
    ("(not (exists (?y - thing) (p ?y)))", True),  # universal: no ?y with (p ?y)
    ("(imply (exists (?y - thing) (p ?y)) (q ?x))", True),  # the premise is negated
    ("(exists (?y - thing) (p ?y))", False),
    ("(or (p ?x) (q ?x))", False),  # split into two operators
    ("(not (forall (?y - thing) (p ?y)))", False),  # existential: some ?y without (p ?y)
    ("(and (q ?x) (or (p ?x) (forall (?y - thing) (imply (p ?y) (q ?y)))))", True),
])
def test_the_conditions_fast_downward_compiles_into_axioms_are_found(precondition, axioms):
    from up_gnnplan.problems.syntax import pddl_code, read_domain, scan_fragment

    text = f"""(define (domain d) (:requirements :adl) (:types thing) (:predicates (p ?x - thing) (q ?x - thing))
  (:action a :parameters (?x - thing)
    :precondition {precondition}
    :effect (q ?x)))"""
    found = scan_fragment(read_domain(pddl_code(text), "d.pddl"))
    assert found.features == {}
    assert (found.axioms == 3) if axioms else found.axioms is None


def test_both_readers_apply_a_universal_precondition_inside_a_disjunction():
    problem = fixture("switchboard", "p01.pddl")
    for task in (Task.from_files(SWITCHBOARD, problem), load_task(SWITCHBOARD, problem)):
        state = task.initial_state()
        first = _applicable(task, state)
        # l1 on its battery; l2 not (s1 is open)
        assert sorted(first) == ["(close s1)", "(light l1)", "(open s2)"]
        closed = _applicable(task, first["(close s1)"].apply(state))
        assert "(light l2)" in closed  # s1 and s2 closed: every switch of l2
        assert "(light l2)" not in _applicable(task, closed["(open s2)"].apply(first["(close s1)"].apply(state)))
        # a plan names `light` once; pymimir has a schema per disjunct, and the one that applies is found
        assert task.ground_action(first["(close s1)"].apply(state), "light", ["l2"]) is not None
        assert task.ground_action(state, "LIGHT", ["L1"]) is not None
        assert task.ground_action(state, "light", ["l2"]) is None


@pytest.mark.parametrize("domain", ["or-pre-domain.pddl", "forall-pre-domain.pddl"])
def test_the_lights_fixtures_load_by_both_readers(domain):
    for task in (Task.from_files(fixture("lights", domain), fixture("lights", "p01.pddl")),
                 load_task(fixture("lights", domain), fixture("lights", "p01.pddl"))):
        assert len(task.initial_state().generate_applicable_actions()) == 2


def test_a_plan_that_breaks_a_universal_precondition_is_not_valid():
    """``(light l2)`` taken where both switches of l2 were closed, then applied after s2 was opened:
    pymimir's replay (files) and UP's simulator (a UP problem) both refuse it."""
    from up_gnnplan.plugins.validation import validate_plan

    problem = fixture("switchboard", "p01.pddl")
    for task in (Task.from_files(SWITCHBOARD, problem), load_task(SWITCHBOARD, problem)):
        state = task.initial_state()
        close = _applicable(task, state)["(close s1)"]
        light = _applicable(task, close.apply(state))["(light l2)"]
        opened = _applicable(task, close.apply(state))["(open s2)"]
        bad = [close, opened, light]
        plan = None if task.from_files_only else task.to_up_plan(bad)
        message = validate_plan(task, plan, bad)
        assert message is not None and message.startswith("step 3") and "light" in message, message
        good = [close, light, opened]
        good += [_applicable(task, good[-1].apply(good[-2].apply(close.apply(state))))[line]
                 for line in ["(open s1)"]]
        after = state
        for action in good:
            after = action.apply(after)
        good.append(_applicable(task, after)["(light l1)"])
        assert validate_plan(task, None if task.from_files_only else task.to_up_plan(good), good) is None


@needs_fd
def test_labels_come_from_blind_a_star_where_fast_downward_derives_axioms(tmp_path):
    """LM-cut refuses the axioms of a universal precondition; blind A*'s plan is optimal. A disjunction
    alone makes no axioms: LM-cut takes it."""
    from pddl_cases import assert_labelled_by_blind_a_star
    from up_gnnplan.learn.labels import optimal_fallback
    from up_gnnplan.limits import Limits
    from up_gnnplan.search.common import Status
    from up_gnnplan.search.lama import fast_downward

    assert_labelled_by_blind_a_star(SWITCHBOARD, switchboard(tmp_path, 4, 3, seed=1), tmp_path)

    lights = load_task(fixture("lights", "or-pre-domain.pddl"), fixture("lights", "p01.pddl"))
    assert optimal_fallback(lights) == "seq-opt-hmax"  # were LM-cut to refuse it
    assert fast_downward(lights, Limits(30.0), "seq-opt-lmcut").status is Status.SOLVED


@needs_fd
def test_mode_auto_solves_switchboard_from_files_and_through_up_with_lama_first_after_the_hand_off(tmp_path):
    """The time handed to LAMA-first at once (an untrained model): Fast Downward's translation has axioms,
    and its plan, mapped back onto pymimir's schema per disjunct, is validated on pymimir (files) and
    on UP's simulator (UP)."""
    pytest.importorskip("torch")
    from click.testing import CliRunner
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner

    from pddl_cases import untrained_model
    from up_gnnplan.cli import main

    large = switchboard(tmp_path, 20, 8, seed=100)
    problem = load_task(SWITCHBOARD, large).up_problem
    model = untrained_model(problem, tmp_path / "switchboard.onnx")
    solved = CliRunner().invoke(main, ["solve", "-v", str(SWITCHBOARD), str(large), "--model", str(model),
                                       "--handoff-share", "0", "--timeout", "60"])
    assert solved.exit_code == 0, solved.output
    assert "plan validated" in solved.stderr and "lama-first: solved" in solved.stderr, solved.stderr
    with OneshotPlanner(name="gnnplan", params={"model": str(model), "handoff_share": 0.0}) as planner:
        result = planner.solve(problem, timeout=60)
    assert result.status is Status.SOLVED_SATISFICING, result.log_messages
    assert any(m.message.startswith("lama-first: solved") for m in result.log_messages), result.log_messages


@pytest.mark.slow
@needs_fd
def test_switchboard_is_learnt_end_to_end_and_solves_a_larger_problem(tmp_path):
    """``gnnplan learn`` on ten small switchboard problems, then mode auto on 30 lamps and 12 switches,
    from files and through UP (every plan validated)."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from click.testing import CliRunner
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner

    from up_gnnplan.cli import main

    train = tmp_path / "train"
    for seed, (lamps, switches) in enumerate([(1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 2), (4, 3), (5, 3),
                                              (5, 4), (6, 4)]):
        switchboard(train, lamps, switches, seed)
    output = tmp_path / "switchboard.onnx"
    learnt = CliRunner().invoke(main, ["learn", str(SWITCHBOARD), str(train), "-o", str(output),
                                       "--timeout", "20", "--device", "cpu"])
    assert learnt.exit_code == 0, learnt.output
    assert "judge:" in learnt.output

    large = switchboard(tmp_path / "test", 30, 12, seed=100)
    solved = CliRunner().invoke(main, ["solve", "-v", str(SWITCHBOARD), str(large), "--model", str(output),
                                       "--timeout", "60"])
    assert solved.exit_code == 0, solved.output
    assert "plan validated" in solved.stderr
    with OneshotPlanner(name="gnnplan", params={"model": str(output)}) as planner:
        result = planner.solve(load_task(SWITCHBOARD, large).up_problem, timeout=60)
    assert result.status is Status.SOLVED_SATISFICING, result.log_messages


@needs_fd
def test_disjunctive_and_universal_goals_are_planned_for_from_files_and_through_up(tmp_path):
    """A goal ``(or (on l1) (on l2))``: a derived predicate (over the objects it names, from files; nullary,
    through UP), which the model cannot see (the log says so); ``(forall (?l - lamp) (on ?l))``: written out
    as its instances, literals the model sees, both ways. The same optimal plan length both ways and from
    Fast Downward, which reads the same compiled texts; mode auto's plan validated on each path."""
    pytest.importorskip("torch")
    from click.testing import CliRunner
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner

    from pddl_cases import untrained_model
    from up_gnnplan.cli import main
    from up_gnnplan.datasets.expansion import expand
    from up_gnnplan.learn.labels import fast_downward_plan
    from up_gnnplan.problems import load_pddl

    domain = fixture("lights", "switch-on-domain.pddl")
    model = None
    for name, length, atoms in (("or-goal-p01.pddl", 1, 0), ("forall-goal-p01.pddl", 2, 2)):
        problem = fixture("lights", name)
        files, up = Task.from_files(domain, problem), Task(load_pddl(domain, problem))
        assert expand(files).initial_value == expand(up).initial_value == length
        assert files.goal_literals() == up.goal_literals() and len(files.goal_literals()[0]) == atoms
        status, plan = fast_downward_plan(files, 30.0)
        assert status == "solved" and len(plan) == length
        model = model or untrained_model(load_pddl(domain, problem), tmp_path / "lights.onnx")
        solved = CliRunner().invoke(main, ["solve", "-v", str(domain), str(problem), "--model", str(model),
                                           "--handoff-share", "0", "--timeout", "60"])
        assert solved.exit_code == 0 and "plan validated" in solved.stderr, solved.output
        assert ("cannot see" in solved.stderr) == (atoms == 0)  # the note: the model gets no goal atoms of it
        with OneshotPlanner(name="gnnplan", params={"model": str(model)}) as planner:
            result = planner.solve(load_pddl(domain, problem), timeout=60)
        assert result.status is Status.SOLVED_SATISFICING, result.log_messages

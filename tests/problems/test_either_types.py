"""``(either ...)`` types of action and predicate parameters, read from files.

pymimir 0.13 grounds no action for an ``(either ...)`` action parameter and UP's reader does not parse
one, so such a parameter becomes its members' common type and a static predicate in the precondition
(``problems/either_types.py``). Fixture ``either``: boxes and crates can be picked up, barrels cannot.
"""

from __future__ import annotations

import importlib.util

import pytest

from pddl_cases import fixture
from up_gnnplan.datasets.expansion import expand
from up_gnnplan.problems import Task

DOMAIN, PROBLEM = fixture("either", "domain.pddl"), fixture("either", "p01.pddl")
needs_fd = pytest.mark.skipif(importlib.util.find_spec("up_fast_downward") is None,
                              reason="Fast Downward's plans: needs up-fast-downward")


def test_an_either_parameter_takes_its_members_and_nothing_else():
    task = Task.from_files(DOMAIN, PROBLEM)
    applicable = sorted(str(a) for a in task.initial_state().generate_applicable_actions())
    assert applicable == ["(move r0 r0)", "(move r0 r1)", "(move r0 r2)", "(pick b0 r0)", "(pick c0 r0)"]  # no x0
    # The model reads both parameters as the common type; the lines of the file hold (errors name them).
    assert task.types.actions["pick"] == ("item", "room") and task.types.predicates["near"] == ("item", "room")
    assert len(task.domain_text.splitlines()) == len(DOMAIN.read_text().splitlines())
    assert expand(task).initial_value == 11  # move, pick, move, drop: b0 and c0 to r1, b1 to r2, r1 cleaned


def test_the_union_predicate_holds_of_the_members_subtypes_and_constants(tmp_path):
    from up_gnnplan.problems.either_types import with_either_parameters

    domain = ("(define (domain d) (:requirements :typing) (:types a b - t c - a) (:constants k - c)"
              " (:action go :parameters (?x - (either a b) ?y - t) :precondition (and) :effect (and)))")
    rewritten, problem = with_either_parameters(domain, "(define (problem p) (:domain d) (:objects o - c q - b r - t)"
                                                " (:init) (:goal (and)))", {"a": "t", "b": "t", "c": "a", "t": "object"},
                                                [("k", "c"), ("o", "c"), ("q", "b"), ("r", "t")])
    assert "(:predicates (gnnplan-either-a-b ?x - t))" in rewritten and "?x - t ?y - t" in rewritten
    assert ":precondition (and (gnnplan-either-a-b ?x) (and))" in rewritten
    assert "(gnnplan-either-a-b k) (gnnplan-either-a-b o) (gnnplan-either-a-b q)" in problem and "-a-b r)" not in problem


@needs_fd
def test_plans_are_optimal_and_a_solve_is_validated(tmp_path):
    pytest.importorskip("torch")
    from click.testing import CliRunner

    from up_gnnplan.cli import main
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.learn.labels import fast_downward_plan
    from up_gnnplan.training import TrainConfig
    from up_gnnplan.training.checkpoint import build

    task = Task.from_files(DOMAIN, PROBLEM)
    status, plan = fast_downward_plan(task, 30.0)
    assert status == "solved" and len(plan) == 11
    config = TrainConfig(architecture="rgnn", hidden=8, layers=2)  # an untrained model: mode auto hands over
    encoding, model = build(config, task.signature)
    path = export_onnx(model, encoding, tmp_path / "mover.onnx", domain="mover", train_config=config.to_dict(),
                       training_record={})
    solved = CliRunner().invoke(main, ["solve", "-v", str(DOMAIN), str(PROBLEM), "--model", str(path),
                                       "--timeout", "60"])
    assert solved.exit_code == 0 and "plan validated" in solved.stderr, solved.output
    assert "(pick " in solved.stdout

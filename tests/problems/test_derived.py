"""Derived predicates (``:derived``) on every path that reads files with pymimir.

The model sees a state's derived atoms beside its fluent ones (``reaches``: a recursive rule); Fast
Downward derives them as axioms, so the labeller's optimal plans come from blind A*; a UP problem
cannot be built (UP's reader does not parse ``:derived``), so where one is needed the files are
refused by name. Fixture ``reach``: a node reaches another along open edges, a jump goes to any node
the current one reaches.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import up_gnnplan  # noqa: F401  (registers the engine)
from pddl_cases import fixture
from up_gnnplan.datasets.generators import generate
from up_gnnplan.errors import UnsupportedFeatureError
from up_gnnplan.problems import Task, load_pddl, load_task
from up_gnnplan.states.atoms import StateAtoms

REACH = fixture("reach", "domain.pddl")
needs_fd = pytest.mark.skipif(importlib.util.find_spec("up_fast_downward") is None,
                              reason="Fast Downward's plans: needs up-fast-downward")


def reach(folder: Path, nodes: int, seed: int) -> Path:
    """Write a problem of the package's Reach generator (and its domain) into ``folder``."""
    return generate("reach", folder, count=1, seed=seed, nodes=nodes)[0]


def test_the_fixture_is_the_generators_domain():
    from up_gnnplan.datasets.generators import get_generator

    text = "\n".join(line for line in REACH.read_text().splitlines() if not line.startswith(";")) + "\n"
    assert text == get_generator("reach").domain_pddl


def test_the_model_sees_derived_atoms_and_they_follow_the_state():
    task = load_task(REACH, fixture("reach", "p01.pddl"))
    atoms = StateAtoms(task)
    state = task.initial_state()
    assert "reaches(n2,n3)" in atoms.strings(state) and "reaches(n1,n3)" not in atoms.strings(state)
    actions = state.generate_applicable_actions()
    unlock = dict(zip(task.plan_lines(actions), actions))
    after = unlock["(unlock n1 n2)"].apply(state)
    assert {"reaches(n1,n2)", "reaches(n1,n3)", "reaches(n2,n3)"} <= set(atoms.strings(after))
    assert sorted(task.plan_lines(after.generate_applicable_actions())) == ["(jump n1 n2)", "(jump n1 n3)"]


def test_where_a_up_problem_is_needed_the_derived_predicates_are_refused_by_line():
    with pytest.raises(UnsupportedFeatureError, match=r"domain.pddl, line 8: .*derived predicates \(:derived\)"):
        load_pddl(REACH, fixture("reach", "p01.pddl"))


def test_a_derived_rule_with_two_disjunctions_is_split_right(tmp_path):
    """pymimir gets a conjunction of two disjunctions wrong in a rule as in a precondition (see
    test_normal_form): the rule reaches it in disjunctive normal form."""
    domain = tmp_path / "domain.pddl"
    domain.write_text("""(define (domain d) (:requirements :strips :typing :disjunctive-preconditions :derived-predicates)
  (:types thing) (:predicates (a ?x - thing) (b ?x - thing) (c ?x - thing) (d ?x - thing) (ok ?x - thing) (done ?x - thing))
  (:derived (ok ?x - thing) (and (or (a ?x) (b ?x)) (or (c ?x) (d ?x))))
  (:action go :parameters (?x - thing) :precondition (ok ?x) :effect (done ?x)))
""")
    problem = tmp_path / "p.pddl"
    problem.write_text("(define (problem p) (:domain d) (:objects t1 t2 t3 t4 - thing)\n"
                       " (:init (a t1) (d t1) (c t2) (b t3) (a t4) (c t4)) (:goal (done t1)))\n")
    task = Task.from_files(domain, problem)
    assert sorted(task.plan_lines(task.initial_state().generate_applicable_actions())) == ["(go t1)", "(go t4)"]


@needs_fd
def test_labels_come_from_blind_a_star_and_mode_auto_hands_over_to_lama_first(tmp_path):
    pytest.importorskip("torch")
    from click.testing import CliRunner

    from pddl_cases import assert_labelled_by_blind_a_star, untrained_model
    from up_gnnplan.cli import main

    assert_labelled_by_blind_a_star(REACH, reach(tmp_path, 7, seed=3), tmp_path)

    large = reach(tmp_path / "test", 40, seed=100)
    # An untrained model for the domain: a UP problem of it cannot be built, so it is made from a twin
    # domain without the rules (the same predicates and actions).
    twin = tmp_path / "twin.pddl"
    twin.write_text("\n".join(line for line in REACH.read_text().splitlines() if ":derived" not in line)
                    .replace(":derived-predicates", ""))
    model = untrained_model(load_pddl(twin, fixture("reach", "p01.pddl")), tmp_path / "reach.onnx")
    for extra in ([], ["--handoff-share", "0"]):
        solved = CliRunner().invoke(main, ["solve", "-v", str(REACH), str(large), "--model", str(model),
                                           "--timeout", "60", *extra])
        assert solved.exit_code == 0, solved.output
        assert "plan validated" in solved.stderr, solved.stderr
    assert "lama-first: solved" in solved.stderr, solved.stderr


@needs_fd
@pytest.mark.slow
def test_reach_is_learnt_end_to_end_and_solves_a_larger_problem(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from click.testing import CliRunner

    from up_gnnplan.cli import main

    train = tmp_path / "train"
    for seed, nodes in enumerate([2, 3, 3, 4, 4, 5, 5, 6, 6, 7]):
        reach(train, nodes, seed)
    output = tmp_path / "reach.onnx"
    learnt = CliRunner().invoke(main, ["learn", str(REACH), str(train), "-o", str(output), "--timeout", "20",
                                       "--device", "cpu"])
    assert learnt.exit_code == 0, learnt.output
    large = reach(tmp_path / "test", 40, seed=100)
    solved = CliRunner().invoke(main, ["solve", "-v", str(REACH), str(large), "--model", str(output),
                                       "--timeout", "60"])
    assert solved.exit_code == 0, solved.output
    assert "plan validated" in solved.stderr

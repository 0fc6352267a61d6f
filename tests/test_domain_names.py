"""A problem must name its domain file's domain: ``(:domain NAME)`` against ``(define (domain NAME)``."""

from __future__ import annotations

import pytest

from up_gnnplan.errors import ProblemLoadError
from up_gnnplan.problems.loading import check_domain_name, check_domain_names

DOMAIN = "; (define (domain commented-out))\n(define\n  (domain Blocksworld)\n  (:predicates (on ?x ?y)))\n"


def problem(name: str) -> str:
    return f"(define (problem p) ; (:domain commented-out)\n  (:domain {name})\n  (:objects a) (:init) (:goal (and)))\n"


def test_names_are_compared_without_case_and_comments_are_skipped():
    check_domain_name(DOMAIN, problem("BLOCKSWORLD"), "domain.pddl", "p.pddl")  # as the IPC rovers problems say Rover


def test_a_mismatch_names_both_files_the_line_and_both_names():
    with pytest.raises(ProblemLoadError) as caught:
        check_domain_name(DOMAIN, problem("blocks"), "domain.pddl", "p01.pddl")
    assert str(caught.value) == ("p01.pddl, line 2: the problem is for domain 'blocks', but domain.pddl "
                                 "defines 'Blocksworld'")


def test_a_file_without_the_declaration_is_left_to_the_parser():
    check_domain_name("(define (problem x))", problem("blocks"), "domain.pddl", "p.pddl")
    check_domain_name(DOMAIN, "(define (problem p) (:objects a))", "domain.pddl", "p.pddl")


def test_every_problem_of_a_list_is_checked(tmp_path):
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    files = [tmp_path / f"p{i}.pddl" for i in range(3)]
    for path, name in zip(files, ["blocksworld", "blocksworld", "gripper"]):
        path.write_text(problem(name))
    with pytest.raises(ProblemLoadError, match="p2.pddl, line 2: .*'gripper'"):
        check_domain_names(tmp_path / "domain.pddl", files)

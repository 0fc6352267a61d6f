"""Check the exists-* generators (Funkquist, Ståhlberg & Geffner 2024): coloured objects, quantified goals."""

from __future__ import annotations

import math
import os
import random
import re
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest
from click.testing import CliRunner

from up_gnnplan.cli import main
from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.generators import GENERATORS, generate
from up_gnnplan.datasets.generators.exists_common import COLOURS, can_bind
from up_gnnplan.problems import load_pddl, load_task

EXISTS = ["exists-blocks", "exists-blocks-c", "exists-gripper", "exists-delivery", "exists-visitall"]

# Small enough that the full state space takes well under a second.
SMALL = {
    "exists-blocks": {"blocks": 4, "variables": 3},
    "exists-blocks-c": {"blocks": 4, "variables": 2, "neq": 0},
    "exists-gripper": {"balls": 3, "rooms": 3, "variables": 2},
    "exists-delivery": {"width": 3, "height": 2, "packages": 2, "variables": 3},
    "exists-visitall": {"width": 3, "height": 2, "variables": 3},
}

COLOURED = re.compile(r"\((" + "|".join(COLOURS) + r") ([^\s()?]+)\)")


def sample(domain: str, seed: int = 0, **params) -> str:
    """Return one problem of ``domain`` with its default sizes overridden by ``params``."""
    return GENERATORS[domain].generate_problem(random.Random(seed), name="p", **params)


def sections(text: str) -> tuple[str, str, str]:
    """Return the :objects, :init and :goal parts of a problem."""
    objects, rest = text.split("(:objects", 1)[1].split("(:init", 1)
    init, goal = rest.split("(:goal", 1)
    return objects, init, goal


def goal_variables(text: str) -> list[str]:
    """Return the variables the goal's ``exists`` declares."""
    goal = sections(text)[2]
    assert goal.startswith(" (exists ("), "the whole goal is one existential formula"
    declared = re.match(r" \(exists \(([^)]*)\)", goal).group(1)
    return [word for word in declared.split() if word.startswith("?")]


def object_colours(text: str) -> dict[str, str]:
    """Return the colour of each coloured object in the initial state, checking it has only one."""
    painted = {}
    for colour, obj in COLOURED.findall(sections(text)[1]):
        assert obj not in painted, f"{obj} has two colours"
        painted[obj] = colour
    return painted


@pytest.mark.parametrize("domain", EXISTS)
def test_same_seed_same_files_and_different_seeds_differ(domain, tmp_path):
    first = generate(domain, tmp_path / "a", count=3, seed=7)
    again = generate(domain, tmp_path / "b", count=3, seed=7)
    other = generate(domain, tmp_path / "c", count=3, seed=8)
    assert [p.name for p in first] == [p.name for p in again]
    assert [p.read_text() for p in first] == [p.read_text() for p in again]
    body = lambda paths: [p.read_text().split("\n", 1)[1] for p in paths]
    assert body(first) != body(other)
    assert (tmp_path / "a" / "domain.pddl").read_text() == GENERATORS[domain].domain_pddl


def test_output_independent_of_hash_seed(tmp_path):
    script = ("import sys; from pathlib import Path; from up_gnnplan.datasets.generators import generate; "
              f"[print(p.read_text()) for d in {EXISTS!r} for p in generate(d, Path(sys.argv[1]) / d, count=2, seed=1)]")
    root = str(Path(__file__).resolve().parents[2])
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed,
               "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        result = subprocess.run([sys.executable, "-c", script, str(tmp_path / hash_seed)],
                                env=env, capture_output=True, text=True, check=True)
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("domain", EXISTS)
def test_every_domain_declares_the_six_colours_in_order_and_equality(domain):
    text = GENERATORS[domain].domain_pddl
    declared = re.findall(r"\((" + "|".join(COLOURS) + r") \?x\)", text)
    assert declared == list(COLOURS)
    requirements = re.search(r"\(:requirements ([^)]*)\)", text).group(1).split()
    assert {":equality", ":negative-preconditions", ":existential-preconditions"} <= set(requirements)


@pytest.mark.parametrize("domain", EXISTS)
@pytest.mark.parametrize("colours", [1, 2, 6])
def test_colours_are_the_first_ones_and_each_object_has_one(domain, colours):
    # Three distinct variables: with one colour, fewer would often hold initially.
    params = {"colours": colours, "variables": 3, "neq": 1}
    sizes = {"exists-blocks": {"blocks": 6}, "exists-blocks-c": {"blocks": 6}, "exists-gripper": {"balls": 6}}
    text = sample(domain, seed=colours, **params, **sizes.get(domain, {}))
    painted = object_colours(text)
    coloured = 6 if domain in sizes else 9
    assert len(painted) == coloured
    assert set(painted.values()) == set(COLOURS[:colours]), "every colour of the palette is used"
    goal_colours = set(COLOURED.findall(sections(text)[2]))
    assert {c for c, _ in goal_colours} <= set(COLOURS[:colours])


# A tower needs two variables (exists-blocks with one is among the bad parameters).
@pytest.mark.parametrize("domain, variables", [(d, v) for d in EXISTS for v in (1, 2, 4, 6)
                                               if (d, v) != ("exists-blocks", 1)])
@pytest.mark.parametrize("neq", [0, 1])
def test_goal_has_the_variables_their_colours_and_the_inequalities(domain, variables, neq):
    sizes = {"exists-blocks": {"blocks": 7}, "exists-blocks-c": {"blocks": 7}, "exists-gripper": {"balls": 7},
             "exists-delivery": {"packages": 6}, "exists-visitall": {}}[domain]
    text = sample(domain, seed=variables, variables=variables, neq=neq, **sizes)
    names = goal_variables(text)
    assert names == [f"?x{i}" for i in range(1, variables + 1)]
    goal = sections(text)[2]
    for name in names:
        assert len(re.findall(r"\((?:" + "|".join(COLOURS) + rf") \{name}\)", goal)) == 1, "one colour per variable"
    inequalities = re.findall(r"\(not \(= (\?x\d+) (\?x\d+)\)\)", goal)
    assert inequalities == (list(combinations(names, 2)) if neq else [])


def test_typed_domains_quantify_over_their_types():
    assert sample("exists-blocks").split("(:goal ")[1].startswith("(exists (?x1 ?x2)\n")
    assert sample("exists-gripper").split("(:goal ")[1].startswith("(exists (?x1 ?x2 - ball)\n")
    assert sample("exists-delivery").split("(:goal ")[1].startswith("(exists (?x1 ?x2 - cell)\n")
    assert sample("exists-visitall").split("(:goal ")[1].startswith("(exists (?x1 ?x2 - cell)\n")


@pytest.mark.parametrize("on_table", [0, 1])
def test_blocks_goal_is_a_tower_of_the_variables(on_table):
    text = sample("exists-blocks", blocks=6, variables=4, on_table=on_table)
    objects, init, goal = sections(text)
    assert objects.split() == ["b1", "b2", "b3", "b4", "b5", "b6)"]
    assert init.count("(ontable ") + init.count("(on ") == 6 and "(handempty)" in init
    assert re.findall(r"\(on (\?x\d) (\?x\d)\)", goal) == [("?x1", "?x2"), ("?x2", "?x3"), ("?x3", "?x4")]
    assert ("(ontable ?x4)" in goal) == bool(on_table)


def test_blocks_c_goal_clears_every_variable():
    goal = sections(sample("exists-blocks-c", blocks=6, variables=3))[2]
    assert re.findall(r"\(clear (\?x\d)\)", goal) == ["?x1", "?x2", "?x3"]
    assert "(on " not in goal


@pytest.mark.parametrize("seed", range(3))
def test_gripper_rooms_form_a_tree_and_goal_rooms_are_constants(seed):
    text = sample("exists-gripper", seed=seed, balls=5, rooms=5, variables=3)
    objects, init, goal = sections(text)
    assert "room1 room2 room3 room4 room5 - room" in objects and "ball1 ball2 ball3 ball4 ball5 - ball" in objects
    links = set(re.findall(r"\(connected (\w+) (\w+)\)", init))
    assert all((b, a) in links for a, b in links) and len(links) == 2 * 4, "a symmetric tree: 4 edges"
    reached, frontier = {"room1"}, ["room1"]
    while frontier:
        here = frontier.pop()
        for a, b in links:
            if a == here and b not in reached:
                reached.add(b)
                frontier.append(b)
    assert len(reached) == 5
    assert re.findall(r"\(at (\?x\d) room\d\)", goal) == ["?x1", "?x2", "?x3"]
    assert init.count("(at ball") == 5 and init.count("(at-robby ") == 1


@pytest.mark.parametrize("truck_goal", [0, 1])
def test_delivery_places_packages_and_optionally_the_truck(truck_goal):
    text = sample("exists-delivery", width=4, height=3, packages=3, variables=3, truck_goal=truck_goal)
    objects, init, goal = sections(text)
    assert len(objects.split("- cell")[0].split()) == 12 and "p1 p2 p3 - package" in objects
    located = re.findall(r"\(at (\w+) (\?x\d)\)", goal)
    assert [v for _, v in located] == ["?x1", "?x2", "?x3"]
    assert [o for o, _ in located].count("t1") == truck_goal
    assert len({o for o, _ in located if o != "t1"}) == 3 - truck_goal, "distinct packages"
    assert init.count("(adjacent ") == 2 * (3 * 3 + 4 * 2)


def test_visitall_start_cell_is_visited():
    init = sections(sample("exists-visitall", width=4, height=2))[1]
    (start,) = re.findall(r"\(at-robot ([^\s()]+)\)", init)
    assert re.findall(r"\(visited ([^\s()]+)\)", init) == [start]
    assert init.count("(connected ") == 2 * (3 * 2 + 4 * 1)


@pytest.mark.parametrize("domain", EXISTS)
@pytest.mark.parametrize("seed", range(3))
def test_small_instances_load_and_are_solvable_but_not_solved(domain, seed, tmp_path):
    (path,) = generate(domain, tmp_path, count=1, seed=seed, **SMALL[domain])
    task = load_task(tmp_path / "domain.pddl", path)
    assert task.has_existential_goal
    labelled = expand(task, max_states=5_000)
    assert 0 < labelled.initial_value < math.inf


@pytest.mark.parametrize("domain", EXISTS)
def test_fast_downward_finds_the_same_optimal_cost(domain, tmp_path):
    # Fast Downward compiles the quantified goal itself; pymimir gets our derived predicate.
    pytest.importorskip("up_fast_downward")
    from unified_planning.shortcuts import OneshotPlanner

    (path,) = generate(domain, tmp_path, count=1, seed=5, **SMALL[domain])
    problem = load_pddl(tmp_path / "domain.pddl", path)
    with OneshotPlanner(name="fast-downward-opt") as planner:
        result = planner.solve(problem, output_stream=None)
    assert result.plan is not None, result.status
    assert len(result.plan.actions) == expand(load_task(tmp_path / "domain.pddl", path)).initial_value


@pytest.mark.parametrize("domain", EXISTS)
def test_default_state_spaces_are_small(domain, tmp_path):
    (path,) = generate(domain, tmp_path, count=1, seed=0)
    assert len(expand(load_task(tmp_path / "domain.pddl", path), max_states=3_000)) <= 3_000


@pytest.mark.parametrize("domain, params, name", [
    ("exists-blocks", {"blocks": 1}, "blocks"),
    ("exists-blocks", {"variables": 1}, "variables"),
    ("exists-blocks", {"blocks": 3, "variables": 4}, "variables"),
    ("exists-blocks", {"on_table": 2}, "on_table"),
    ("exists-blocks-c", {"colours": 0}, "colours"),
    ("exists-blocks-c", {"colours": 7}, "colours"),
    ("exists-blocks-c", {"blocks": 2}, "colours"),
    ("exists-blocks-c", {"variables": 0}, "variables"),
    ("exists-blocks-c", {"blocks": 8, "variables": 7}, "variables"),
    ("exists-blocks-c", {"neq": 2}, "neq"),
    ("exists-gripper", {"rooms": 2}, "rooms"),
    ("exists-gripper", {"balls": 0}, "balls"),
    ("exists-gripper", {"balls": 3, "variables": 4}, "variables"),
    ("exists-gripper", {"variables": 2.0}, "variables"),
    ("exists-delivery", {"packages": 1, "variables": 3}, "variables"),
    ("exists-delivery", {"packages": 1, "variables": 2, "truck_goal": 0}, "variables"),
    ("exists-delivery", {"truck_goal": -1}, "truck_goal"),
    ("exists-delivery", {"width": 0}, "width"),
    ("exists-visitall", {"width": 1, "height": 1}, "cells"),
    ("exists-visitall", {"width": 2, "height": 1, "colours": 2, "variables": 3}, "variables"),
    ("exists-visitall", {"neq": True}, "neq"),
    ("exists-visitall", {"rooms": 3}, "rooms"),
])
def test_bad_parameters_raise_value_error_naming_them(domain, params, name, tmp_path):
    with pytest.raises(ValueError, match=name):
        generate(domain, tmp_path, count=1, seed=0, **params)
    assert not any(tmp_path.iterdir()), "nothing is written when parameters are bad"


def test_parameters_whose_every_goal_holds_initially_raise():
    # One colour and one variable: the visited start cell always satisfies the goal.
    with pytest.raises(ValueError, match="holds in the initial state"):
        sample("exists-visitall", colours=1, variables=1)


def test_can_bind_needs_distinct_objects_only_with_neq():
    assert can_bind([["a"], ["a"]], distinct=False)
    assert not can_bind([["a"], ["a"]], distinct=True)
    assert can_bind([["a", "b"], ["a"]], distinct=True), "an augmenting path moves ?x1 to b"
    assert not can_bind([["a"], []], distinct=False)


def test_cli_generates_with_size_parameters(tmp_path):
    result = CliRunner().invoke(main, ["generate", "exists-gripper", "-o", str(tmp_path), "--count", "2", "--seed", "3",
                                       "-p", "balls=5", "-p", "variables=3", "-p", "neq=0"])
    assert result.exit_code == 0, result.output
    paths = sorted(tmp_path.glob("p-*.pddl"))
    assert [p.name for p in paths] == ["p-b5r3c3v3n0-3-0.pddl", "p-b5r3c3v3n0-3-1.pddl"]
    assert goal_variables(paths[0].read_text()) == ["?x1", "?x2", "?x3"] and "(not (=" not in paths[0].read_text()

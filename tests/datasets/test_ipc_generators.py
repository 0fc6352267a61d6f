"""Check the generators of the IPC 2023 Learning Track domains that ship no generator of their own.

Ferry, Miconic, Spanner, Satellite, Rovers, Floortile and Sokoban: each generated problem loads,
is solvable (full expansion on a tiny size, Fast Downward on an IPC-sized one), is the same for
the same seed, grows with its size parameters, follows its layout, and finds the shipped model
of its domain. The IPC 2023 files are read only by the tests that compare with them, which skip
when the files are absent.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.generators import GENERATORS, floortile, generate, sokoban
from up_gnnplan.problems import load_task

DOMAINS = ["ferry", "miconic", "spanner", "satellite", "rovers", "floortile", "sokoban"]

# Small enough for a full expansion in well under a second.
TINY = {
    "ferry": {"cars": 2, "locations": 3},
    "miconic": {"passengers": 2, "floors": 3},
    "spanner": {"spanners": 3, "nuts": 2, "locations": 3},
    "satellite": {"satellites": 2, "instruments": 2, "modes": 1, "directions": 2},
    "rovers": {"rovers": 1, "waypoints": 2, "cameras": 1, "objectives": 1},
    "floortile": {"rows": 2, "columns": 2, "robots": 1},
    "sokoban": {"grid_size": 6, "boxes": 2},
}

# Sizes of the IPC 2023 testing/easy files, for Fast Downward.
IPC_SIZED = {
    "ferry": {"cars": 8, "locations": 9},
    "miconic": {"passengers": 5, "floors": 10},
    "spanner": {"spanners": 5, "nuts": 3, "locations": 7},
    "satellite": {"satellites": 5, "instruments": 8, "modes": 2, "directions": 6},
    "rovers": {"rovers": 3, "waypoints": 8, "cameras": 3, "objectives": 7},
    "floortile": {"rows": 3, "columns": 3, "robots": 1},
    "sokoban": {"grid_size": 8, "boxes": 2},
}

# The number of objects of a problem, from its size parameters.
OBJECTS = {
    "ferry": lambda p: p["cars"] + p["locations"],
    "miconic": lambda p: p["passengers"] + p["floors"],
    "spanner": lambda p: 1 + p["spanners"] + p["nuts"] + p["locations"] + 2,  # bob, shed and gate
    "satellite": lambda p: p["satellites"] + p["instruments"] + p["modes"] + p["directions"],
    "rovers": lambda p: 1 + 3 + 2 * p["rovers"] + p["waypoints"] + p["cameras"] + p["objectives"],
    "floortile": lambda p: (p["rows"] + 1) * p["columns"] + p["robots"] + 2,
    "sokoban": lambda p: p["grid_size"] ** 2 + p["boxes"],
}

# Three times the largest testing/easy size in every parameter that sets the size.
LARGE = {
    "ferry": {"cars": 60, "locations": 45},
    "miconic": {"passengers": 30, "floors": 60},
    "spanner": {"spanners": 30, "nuts": 15, "locations": 30},
    "satellite": {"satellites": 30, "instruments": 60, "modes": 3, "directions": 30},
    "rovers": {"rovers": 12, "waypoints": 30, "cameras": 12, "objectives": 30},
    "floortile": {"rows": 15, "columns": 12, "robots": 3},
    "sokoban": {"grid_size": 39, "boxes": 12},
}

# Next to the repository where a developer has the benchmark sets; a fresh install has not.
IPC = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "ipc2023-learning"


def write(tmp_path: Path, domain: str, seed: int, **params) -> tuple[Path, Path]:
    """Generate one problem into tmp_path and return (domain file, problem file)."""
    (problem,) = generate(domain, tmp_path, count=1, seed=seed, **params)
    return tmp_path / "domain.pddl", problem


def atoms(text: str, predicate: str) -> list[list[str]]:
    """Return the arguments of every ``(predicate ...)`` atom of a PDDL text."""
    return [m.split() for m in re.findall(rf"\({re.escape(predicate)} ([^()]*)\)", text)]


def init_and_goal(text: str) -> tuple[str, str]:
    """Return the :init and the :goal sections of a problem."""
    init, goal = text.split("(:goal")
    return init, goal


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("seed", range(2))
def test_tiny_problems_load_and_are_solvable_by_full_expansion(domain, seed, tmp_path):
    task = load_task(*write(tmp_path, domain, seed, **TINY[domain]))
    space = expand(task, max_states=20_000)
    assert math.isfinite(space.initial_value) and space.initial_value > 0, "solvable and not solved yet"


@pytest.mark.parametrize("seed", range(3))
def test_floortile_with_a_robot_per_column_is_solvable(seed, tmp_path):
    # The hardest case the size limit allows: no free cell on row 0 once the robots are down.
    task = load_task(*write(tmp_path, "floortile", seed, rows=1, columns=2, robots=2))
    assert math.isfinite(expand(task, max_states=20_000).initial_value)


@pytest.mark.parametrize("domain", DOMAINS)
def test_ipc_sized_problems_are_solved_by_fast_downward(domain, tmp_path):
    pytest.importorskip("up_fast_downward")
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner

    task = load_task(*write(tmp_path, domain, 0, **IPC_SIZED[domain]))
    with OneshotPlanner(name="fast-downward") as planner:
        result = planner.solve(task.up_problem, timeout=60)
    assert result.status in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY), result.status


@pytest.mark.parametrize("domain", DOMAINS)
def test_same_seed_same_files_and_different_seeds_differ(domain, tmp_path):
    first = generate(domain, tmp_path / "a", count=3, seed=7, **TINY[domain])
    again = generate(domain, tmp_path / "b", count=3, seed=7, **TINY[domain])
    other = generate(domain, tmp_path / "c", count=3, seed=8, **TINY[domain])
    assert [p.read_text() for p in first] == [p.read_text() for p in again]
    # Names carry the seed, so compare bodies without the (problem ...) line.
    assert [p.read_text().split("\n", 1)[1] for p in first] != [p.read_text().split("\n", 1)[1] for p in other]
    assert (tmp_path / "a" / "domain.pddl").read_text() == GENERATORS[domain].domain_pddl


def objects_of(text: str) -> list[str]:
    """Return the objects a problem declares (its ``:objects`` section without the types)."""
    tokens = text.split("(:objects")[1].split("(:init")[0].replace(")", " ").split()
    return [t for i, t in enumerate(tokens) if t != "-" and (i == 0 or tokens[i - 1] != "-")]


@pytest.mark.parametrize("domain", DOMAINS)
def test_objects_grow_with_the_size_parameters(domain):
    generator = GENERATORS[domain]
    for params in (TINY[domain], dict(generator.defaults), LARGE[domain]):
        objects = objects_of(generator.generate_problem(random.Random(1), **params))
        assert len(objects) == len(set(objects)) == OBJECTS[domain](params), params


@pytest.mark.parametrize("domain, model", [("ferry", "ferry"), ("miconic", "miconic"), ("spanner", "spanner"),
                                           ("satellite", "satellite"), ("rovers", "rovers"),
                                           ("floortile", "floortile"), ("sokoban", "sokoban")])
def test_generated_problems_find_the_shipped_models(domain, model, tmp_path):
    from up_gnnplan.models_zoo import find_model

    task = load_task(*write(tmp_path, domain, 0, **TINY[domain]))
    assert find_model(task.signature).stem == model


@pytest.mark.parametrize("domain", DOMAINS)
def test_same_predicates_and_actions_as_the_shipped_models_learnt_from_the_ipc_files(domain, tmp_path):
    """The shipped models record the predicates and action schemas of the IPC 2023 domain files they
    were trained on: the generated domain has the same (no IPC files needed)."""
    from up_gnnplan.models_zoo import entries, zoo_dir
    from up_gnnplan.runtime import load_value_function

    task = load_task(*write(tmp_path, domain, 0, **TINY[domain]))
    models = [load_value_function(zoo_dir() / e["file"]) for e in entries() if e["name"] in (domain, f"{domain}-value")]
    assert models and all(m.signature == task.signature for m in models)
    recorded = [m.actions for m in models if m.has_actions]
    assert all(actions == task.action_signature for actions in recorded)


@pytest.mark.parametrize("domain", DOMAINS)
def test_same_domain_as_the_ipc_files(domain, tmp_path):
    if not (IPC / domain / "domain.pddl").is_file():
        pytest.skip("the IPC 2023 Learning Track files are not here")
    ipc_problem = IPC / domain / "testing" / "easy" / "p01.pddl"
    domain_file, problem = write(tmp_path, domain, 0, **TINY[domain])
    ours = load_task(domain_file, problem)
    theirs = load_task(IPC / domain / "domain.pddl", ipc_problem)
    crossed = load_task(domain_file, ipc_problem)  # our domain reads their problems
    assert ours.signature == theirs.signature
    assert ours.action_signature == theirs.action_signature
    assert sorted(map(str, crossed.up_problem.actions)) == sorted(map(str, theirs.up_problem.actions))


@pytest.mark.parametrize("domain, params, name", [
    ("ferry", {"cars": 0}, "cars"),
    ("ferry", {"locations": 1}, "locations"),
    ("miconic", {"passengers": 1.5}, "passengers"),
    ("miconic", {"floors": 1}, "floors"),
    ("spanner", {"nuts": 0}, "nuts"),
    ("spanner", {"spanners": 2, "nuts": 3}, "spanners"),
    ("spanner", {"locations": 0}, "locations"),
    ("satellite", {"satellites": 3, "instruments": 2}, "instruments"),
    ("satellite", {"modes": 0}, "modes"),
    ("satellite", {"directions": True}, "directions"),
    ("rovers", {"waypoints": 1}, "waypoints"),
    ("rovers", {"cameras": 0}, "cameras"),
    ("rovers", {"objectives": 0}, "objectives"),
    ("rovers", {"rovers": 0}, "rovers"),
    ("floortile", {"columns": 2, "robots": 3}, "robots"),
    ("floortile", {"rows": 0}, "rows"),
    ("sokoban", {"grid_size": 4}, "grid_size"),
    ("sokoban", {"grid_size": 6, "boxes": 5}, "boxes"),
    ("sokoban", {"size": 6}, "size"),
])
def test_bad_parameters_name_the_parameter(domain, params, name, tmp_path):
    with pytest.raises(ValueError, match=name):
        generate(domain, tmp_path, count=1, seed=0, **params)
    assert not any(tmp_path.iterdir()), "nothing is written when parameters are bad"


def test_generate_help_lists_the_generators_and_their_parameters():
    from up_gnnplan.cli import main

    result = CliRunner().invoke(main, ["generate", "--help"])
    assert result.exit_code == 0, result.output
    help_text = " ".join(result.output.split())
    for domain in DOMAINS:
        defaults = ", ".join(f"{k}={v}" for k, v in GENERATORS[domain].defaults.items())
        assert f"{domain} {defaults}." in help_text, domain


def test_ferry_cars_and_miconic_passengers_move():
    text = GENERATORS["ferry"].generate_problem(random.Random(2), cars=30, locations=4)
    init, goal = init_and_goal(text)
    start, end = dict(atoms(init, "at")), dict(atoms(goal, "at"))
    assert len(start) == len(end) == 30 and all(start[c] != end[c] for c in start)
    assert len(atoms(init, "at-ferry")) == 1 and "(empty-ferry)" in init
    text = GENERATORS["miconic"].generate_problem(random.Random(2), passengers=30, floors=5)
    origin, destination = dict(atoms(text, "origin")), dict(atoms(text, "destin"))
    assert len(origin) == 30 and all(origin[p] != destination[p] for p in origin)
    assert len(atoms(text, "above")) == 5 * 4 // 2 and ["f1", "f5"] in atoms(text, "above")


def test_spanner_path_leads_from_shed_to_gate():
    text = GENERATORS["spanner"].generate_problem(random.Random(3), spanners=8, nuts=4, locations=5)
    links = atoms(text, "link")
    assert links == [["shed", "location1"]] + [[f"location{i}", f"location{i + 1}"] for i in range(1, 5)] + [
        ["location5", "gate"]]
    places = {thing: where for thing, where in atoms(text, "at")}
    assert places["bob"] == "shed" and all(places[f"nut{i}"] == "gate" for i in range(1, 5))
    assert all(re.fullmatch(r"location[1-5]", places[f"spanner{i}"]) for i in range(1, 9))


@pytest.mark.parametrize("seed", range(5))
def test_satellite_instruments_and_modes_cover_the_goal(seed):
    text = GENERATORS["satellite"].generate_problem(random.Random(seed), satellites=6, instruments=9, modes=3,
                                                    directions=5)
    init, goal = init_and_goal(text)
    owners = Counter(s for _, s in atoms(init, "on_board"))
    assert len(owners) == 6 and sum(owners.values()) == 9, "every satellite has an instrument"
    supported = {m for _, m in atoms(init, "supports")}
    assert supported == {"mod1", "mod2", "mod3"}
    images = atoms(goal, "have_image")
    assert images and len({tuple(i) for i in images}) == len(images)
    assert len(atoms(init, "calibration_target")) == 9 and len(atoms(init, "power_avail")) == 6


def components(nodes, edges) -> int:
    """Return the number of connected components of an undirected graph."""
    parent = {n: n for n in nodes}

    def root(n):
        while parent[n] != n:
            n = parent[n]
        return n

    for a, b in edges:
        parent[root(a)] = root(b)
    return len({root(n) for n in nodes})


@pytest.mark.parametrize("seed", range(5))
def test_rovers_maps_are_symmetric_connected_and_equipped(seed):
    text = GENERATORS["rovers"].generate_problem(random.Random(seed), rovers=3, waypoints=9, cameras=4,
                                                 objectives=5)
    init, goal = init_and_goal(text)
    points = [f"waypoint{i + 1}" for i in range(9)]
    visible = {tuple(v) for v in atoms(init, "visible")}
    assert all((b, a) in visible for a, b in visible) and components(points, visible) == 1
    for rover in ("rover1", "rover2", "rover3"):
        traverse = {(a, b) for r, a, b in atoms(init, "can_traverse") if r == rover}
        assert traverse <= visible and all((b, a) in traverse for a, b in traverse)
        assert components(points, traverse) == 1, f"{rover} reaches every waypoint"
    imagers = {r for (r,) in atoms(init, "equipped_for_imaging")}
    assert {r for _, r in atoms(init, "on_board")} <= imagers
    assert atoms(init, "equipped_for_soil_analysis") and atoms(init, "equipped_for_rock_analysis")
    assert {o for o, _ in atoms(init, "visible_from")} == {f"objective{i + 1}" for i in range(5)}
    soil = {w for (w,) in atoms(init, "at_soil_sample")}
    assert {w for (w,) in atoms(goal, "communicated_soil_data")} <= soil
    modes = {m for _, m in atoms(init, "supports")}
    assert {m for _, m in atoms(goal, "communicated_image_data")} <= modes
    assert goal.count("(communicated_") > 0


def test_floortile_goal_is_a_checkerboard_above_row_0():
    text = floortile.generate_problem(random.Random(4), rows=4, columns=3, robots=3)
    init, goal = init_and_goal(text)
    painted = atoms(goal, "painted")
    assert len(painted) == 4 * 3
    for tile, colour in painted:
        row, column = map(int, tile.split("_")[1:])
        assert row >= 1 and colour == ("white" if (row + column) % 2 == 0 else "black")
    robots = [tile for _, tile in atoms(init, "robot-at")]
    assert len(set(robots)) == 3 and not set(robots) & {t for (t,) in atoms(init, "clear")}
    assert len(atoms(init, "clear")) == 5 * 3 - 3
    assert ["tile_1_1", "tile_0_1"] in atoms(init, "up") and ["tile_0_2", "tile_0_1"] in atoms(init, "right")


@pytest.mark.parametrize("seed", range(5))
def test_sokoban_reverse_play_moves_boxes_inside_a_walled_grid(seed):
    rng = random.Random(seed)
    text = sokoban.generate_problem(rng, grid_size=9, boxes=3)
    init, goal = init_and_goal(text)
    start, end = dict(atoms(init, "at")), dict(atoms(goal, "at"))
    assert sorted(start) == sorted(end) == ["box1", "box2", "box3"]
    assert any(start[b] != end[b] for b in start), "not solved already"
    floor = {loc for (loc,) in atoms(init, "clear")} | set(start.values())
    assert all(not re.fullmatch(r"loc_(1|9)_\d|loc_\d_(1|9)", loc) for loc in floor), "the border is wall"
    (robot,) = [loc for (loc,) in atoms(init, "at-robot")]
    assert robot in floor and robot not in start.values()
    adjacent = atoms(init, "adjacent")
    assert all(a in floor and b in floor for a, b, _ in adjacent)
    opposite = {"up": "down", "down": "up", "left": "right", "right": "left"}
    assert {(b, a, opposite[d]) for a, b, d in adjacent} == {tuple(x) for x in adjacent}


def test_sokoban_reverse_play_pulls_boxes_only_as_pushes_undo():
    # One box in a corridor: a pull moves it onto the robot's cell as the robot steps away.
    region = {(1, c) for c in range(1, 6)}
    boxes, robot = sokoban.reverse_play(random.Random(0), region, [(1, 1)], (1, 2), steps=200)
    assert boxes[0] != (1, 1) and robot[1] > boxes[0][1], "the robot stays on the far side of the box"

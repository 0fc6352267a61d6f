"""Check the instance generators: Navig-xy, Visitall-xy, Vacuum, Blocksworld, Gripper, Logistics."""

from __future__ import annotations

import os
import math
import random
import subprocess
import sys
from pathlib import Path

import pymimir as pm
import pytest

from collections import Counter

from up_gnnplan.datasets.generators import GENERATORS, blocksworld, generate, gripper, logistics, navig_xy, vacuum

SMALL = {
    "navig-xy": {"width": 3, "height": 3, "blocked_ratio": 0.25},
    "visitall-xy": {"width": 2, "height": 3},
    "vacuum": {"locations": 6, "robots": 2, "extra_edges": 1, "map_fraction": 0.6},
    "blocksworld": {"blocks": 4},
    "blocks": {"blocks": 4},
    "gripper": {"balls": 3, "rooms": 3, "mixed": 1},
    "logistics": {"cities": 2, "city_size": 2, "packages": 2, "airplanes": 1},
    "childsnack": {"children": 2, "allergic_children": 1, "trays": 1, "sandwiches": 2},
    "transport": {"vehicles": 1, "packages": 2, "locations": 4, "max_capacity": 2},
}


def initial_label(domain_text: str, problem_text: str) -> pm.StateLabel:
    """Expand the full state space with pymimir and return the initial state's label."""
    problem = pm.Problem(pm.Domain(domain_text), problem_text)
    space = pm.StateSpaceSampler.new(problem, max_states=100_000)
    assert space is not None, "state space too large for the test"
    labels = [space.get_state_label(s) for s in space.get_states()]
    (label,) = [lab for lab in labels if lab.is_initial]
    return label


def read_all(paths: list[Path]) -> list[str]:
    """Return the text of each file."""
    return [p.read_text() for p in paths]


@pytest.mark.parametrize("domain", sorted(SMALL))
def test_same_seed_same_files_and_different_seeds_differ(domain, tmp_path):
    first = generate(domain, tmp_path / "a", count=3, seed=7, **SMALL[domain])
    again = generate(domain, tmp_path / "b", count=3, seed=7, **SMALL[domain])
    other = generate(domain, tmp_path / "c", count=3, seed=8, **SMALL[domain])
    assert [p.name for p in first] == [p.name for p in again]
    assert read_all(first) == read_all(again)
    # Names carry the seed, so compare bodies without the (problem ...) line.
    strip = lambda texts: [t.split("\n", 1)[1] for t in texts]  # noqa: E731
    assert strip(read_all(first)) != strip(read_all(other))
    assert (tmp_path / "a" / "domain.pddl").read_text() == GENERATORS[domain].domain_pddl


def test_output_independent_of_hash_seed(tmp_path):
    script = ("import sys; from pathlib import Path; "
              "from up_gnnplan.datasets.generators import generate; "
              "[print(p.read_text()) for d in ('navig-xy', 'visitall-xy', 'vacuum', 'blocks', 'blocksworld', 'gripper', 'logistics', "
              "'childsnack', 'transport', 'ferry', 'miconic', 'spanner', 'satellite', 'rovers', 'floortile', 'sokoban') "
              "for p in generate(d, Path(sys.argv[1]) / d, count=2, seed=1)]")
    root = str(Path(__file__).resolve().parents[2])
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed,
               "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        result = subprocess.run([sys.executable, "-c", script, str(tmp_path / hash_seed)],
                                env=env, capture_output=True, text=True, check=True)
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]


def test_file_names_and_returned_paths(tmp_path):
    paths = generate("navig-xy", tmp_path, count=2, seed=5, width=4, height=3)
    assert [p.name for p in paths] == ["p-4x3b20-5-0.pddl", "p-4x3b20-5-1.pddl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["domain.pddl"] + [p.name for p in paths]
    assert "(define (problem p-4x3b20-5-0)" in paths[0].read_text()


@pytest.mark.parametrize("domain", sorted(SMALL))
@pytest.mark.parametrize("seed", range(4))
def test_small_instances_parse_and_are_solvable(domain, seed):
    generator = GENERATORS[domain]
    text = generator.generate_problem(random.Random(seed), name="small", **SMALL[domain])
    label = initial_label(generator.domain_pddl, text)
    assert not label.is_dead_end
    assert not label.is_goal


@pytest.mark.parametrize("seed", range(6))
def test_navig_optimal_cost_equals_bfs_distance(seed):
    params = SMALL["navig-xy"]
    layout = navig_xy.sample_layout(random.Random(seed), **params)
    assert layout.blocked, "the test should exercise blocked cells"
    text = navig_xy.generate_problem(random.Random(seed), name="n", **params)
    assert text == navig_xy.render_problem(layout, "n")
    label = initial_label(navig_xy.DOMAIN_PDDL, text)
    assert label.cost_to_goal == layout.distance


@pytest.mark.parametrize("seed", range(6))
def test_vacuum_optimal_cost_is_nearest_robot_plus_clean(seed):
    params = SMALL["vacuum"]
    layout = vacuum.sample_layout(random.Random(seed), **params)
    reachable = [d for d in layout.distances() if d is not None]
    assert reachable, "some robot must reach the dirty location"
    assert layout.dirty not in layout.starts
    text = vacuum.render_problem(layout, "v")
    label = initial_label(vacuum.DOMAIN_PDDL, text)
    assert label.cost_to_goal == min(reachable) + 1


def test_vacuum_maps_are_symmetric_and_contain_starts():
    layout = vacuum.sample_layout(random.Random(3), locations=40, robots=6,
                                  extra_edges=3, map_fraction=0.3)
    text = vacuum.render_problem(layout, "v")
    for r, (edges, start) in enumerate(zip(layout.maps, layout.starts), start=1):
        assert any(start in edge for edge in edges)
        for a, b in edges:
            assert f"(adjacent r{r} l{a + 1} l{b + 1})" in text
            assert f"(adjacent r{r} l{b + 1} l{a + 1})" in text


@pytest.mark.parametrize("domain, params", [
    ("navig-xy", {"width": 0}),
    ("navig-xy", {"width": 1, "height": 1}),
    ("navig-xy", {"height": 2.5}),
    ("navig-xy", {"blocked_ratio": 1.0}),
    ("navig-xy", {"blocked_ratio": -0.1}),
    ("visitall-xy", {"width": -1}),
    ("visitall-xy", {"width": 1, "height": 1}),
    ("vacuum", {"locations": 1}),
    ("vacuum", {"robots": 0}),
    ("vacuum", {"extra_edges": -1}),
    ("vacuum", {"map_fraction": 0.0}),
    ("vacuum", {"map_fraction": 1.5}),
    ("vacuum", {"width": 3}),
    ("blocksworld", {"blocks": 1}),
    ("blocks", {"blocks": 1}),
    ("blocksworld", {"blocks": 3.0}),
    ("gripper", {"balls": 0}),
    ("gripper", {"rooms": 1}),
    ("gripper", {"mixed": 2}),
    ("gripper", {"typed": 2}),
    ("gripper", {"typed": True}),
    ("logistics", {"cities": 2, "airplanes": 0}),
    ("logistics", {"cities": 1, "city_size": 1}),
    ("logistics", {"packages": 0}),
    ("childsnack", {"children": 3, "sandwiches": 2}),
    ("childsnack", {"children": 2, "allergic_children": 3}),
    ("childsnack", {"trays": 0}),
    ("transport", {"locations": 1}),
    ("transport", {"max_capacity": 0}),
    ("transport", {"vehicles": 1.5}),
])
def test_bad_parameters_raise_value_error(domain, params, tmp_path):
    with pytest.raises(ValueError):
        generate(domain, tmp_path, count=1, seed=0, **params)
    assert not any(tmp_path.iterdir()), "nothing is written when parameters are bad"


def test_bad_count_seed_and_domain_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="count"):
        generate("vacuum", tmp_path, count=0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        generate("vacuum", tmp_path, count=1, seed="0")
    with pytest.raises(ValueError, match="navig-xy.*vacuum.*visitall-xy"):
        generate("no-such-domain", tmp_path, count=1, seed=0)


def test_unsolvable_navig_parameters_raise_after_retries(monkeypatch):
    # A nearly full 10x10 grid rarely leaves a path; three tries with seed 1 all fail.
    monkeypatch.setattr(navig_xy, "MAX_TRIES", 3)
    with pytest.raises(ValueError, match="lower blocked_ratio"):
        navig_xy.generate_problem(random.Random(1), width=10, height=10, blocked_ratio=0.9)


def test_blocksworld_configurations_are_uniform():
    # Three blocks have L(3,1) + L(3,2) + L(3,3) = 6 + 6 + 1 = 13 configurations.
    assert [blocksworld.lah(3, k) for k in (1, 2, 3)] == [6, 6, 1]
    rng = random.Random(0)
    counts = Counter(blocksworld.sample_towers(rng, 3) for _ in range(13_000))
    assert len(counts) == 13
    # Expected 1000 each; the standard deviation is about 30, so 880..1120 is a four-sigma band.
    assert all(880 <= n <= 1120 for n in counts.values()), counts


@pytest.mark.parametrize("seed", range(3))
def test_blocksworld_goal_is_a_complete_other_configuration(seed):
    text = blocksworld.generate_problem(random.Random(seed), blocks=5, name="b")
    init, goal = text.split("(:goal")
    for section in (init, goal):
        assert section.count("(on-table ") + section.count("(on ") == 5, "every block is on something"
        assert section.count("(clear ") == section.count("(on-table "), "one clear block per tower"
    label = initial_label(blocksworld.DOMAIN_PDDL, text)
    assert label.cost_to_goal > 0


@pytest.mark.parametrize("balls", [1, 2, 3, 4])
def test_gripper_ipc_layout_has_the_known_optimal_cost(balls):
    # Carry two balls per trip: 2 actions per ball, 2 moves per trip but the last.
    text = gripper.generate_problem(random.Random(0), balls=balls, name="g")
    assert text == gripper.generate_problem(random.Random(99), balls=balls, name="g"), "the seed plays no part"
    label = initial_label(gripper.DOMAIN_PDDL, text)
    assert label.cost_to_goal == 2 * balls + 2 * math.ceil(balls / 2) - 1


@pytest.mark.parametrize("mixed", [0, 1])
def test_gripper_typed_parses_and_has_the_bundled_example_signature(mixed, tmp_path):
    from up_gnnplan.data import example
    from up_gnnplan.problems import load_task

    (path,) = generate("gripper", tmp_path, count=1, seed=3, balls=3, rooms=3, mixed=mixed, typed=1)
    assert path.name == f"p-b3r3{'m' if mixed else ''}t-3-0.pddl"
    text = path.read_text()
    assert "- ball" in text and "(ball " not in text and "(room " not in text, "typed objects, no type predicates"
    label = initial_label(gripper.domain_text(1), text)
    assert not label.is_dead_end and not label.is_goal
    generated = load_task(tmp_path / "domain.pddl", path).signature
    bundled = load_task(example("gripper"), example("gripper", "p01.pddl")).signature
    assert generated == bundled, generated.describe_difference(bundled)
    assert {"type:room", "type:ball", "type:gripper"} <= set(generated.names)


def test_gripper_typed_0_is_the_untyped_ipc_output(tmp_path):
    default = generate("gripper", tmp_path / "a", count=2, seed=1, balls=3, mixed=1)
    explicit = generate("gripper", tmp_path / "b", count=2, seed=1, balls=3, mixed=1, typed=0)
    assert [p.name for p in default] == [p.name for p in explicit] == ["p-b3r2m-1-0.pddl", "p-b3r2m-1-1.pddl"]
    assert read_all(default) == read_all(explicit)
    assert (tmp_path / "b" / "domain.pddl").read_text() == gripper.DOMAIN_PDDL == gripper.domain_text(0)
    assert "(ball ball1)" in explicit[0].read_text()


@pytest.mark.parametrize("balls", [1, 2, 3])
def test_gripper_typed_ipc_layout_has_the_untyped_optimal_cost(balls):
    # Typing removes only the type predicates: the plans are the same.
    text = gripper.generate_problem(random.Random(0), balls=balls, typed=1, name="g")
    label = initial_label(gripper.domain_text(1), text)
    assert label.cost_to_goal == 2 * balls + 2 * math.ceil(balls / 2) - 1


def test_logistics_packages_move_and_cities_have_one_truck_and_an_airport():
    text = logistics.generate_problem(random.Random(4), cities=3, city_size=3, packages=6, airplanes=2, name="l")
    for c in range(3):
        assert f"(TRUCK t{c})" in text and f"(AIRPORT l{c}-0)" in text
    init, goal = text.split("(:goal")
    for i in range(6):
        (start,) = [line.strip() for line in init.splitlines() if line.strip().startswith(f"(at p{i} ")]
        assert start not in goal, f"package p{i} must go somewhere else"


def test_generated_problems_find_the_shipped_models(tmp_path):
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.problems import load_task

    for domain, extra, model in (("blocks", {}, "blocks"), ("blocksworld", {}, "blocksworld"), ("gripper", {}, "gripper"),
                                 ("gripper", {"typed": 1}, "gripper-typed"), ("logistics", {}, "logistics"),
                                 ("childsnack", {}, "childsnack"), ("transport", {}, "transport")):
        folder = tmp_path / model
        (path,) = generate(domain, folder, count=1, seed=0, **{**SMALL[domain], **extra})
        task = load_task(folder / "domain.pddl", path)
        assert find_model(task.signature).stem == model


def test_blocks_goal_is_one_tower_of_all_blocks():
    text = blocksworld.generate_blocks_problem(random.Random(2), blocks=6, name="t")
    goal = text.split("(:goal")[1]
    pairs = [line.strip()[4:-1].rstrip(")").split() for line in goal.splitlines() if line.strip().startswith("(on ")]
    assert len(pairs) == 5
    above = {top: below for top, below in pairs}
    assert len(set(above.values())) == 5, "every block but the top one has exactly one block on it"


def test_childsnack_follows_the_learning_track_layout():
    text = GENERATORS["childsnack"].generate_problem(random.Random(3), children=10, allergic_children=6, trays=3,
                                                     sandwiches=15)
    assert text.count("(allergic_gluten ") == 6 and text.count("(not_allergic_gluten ") == 4
    assert text.count("(no_gluten_bread ") == 6 and text.count("(no_gluten_content ") == 6
    assert text.count("(notexist ") == 15 and text.count("(at tray") == 3 and text.count("(waiting ") == 10


def test_transport_roads_are_symmetric_and_connected():
    import re

    text = GENERATORS["transport"].generate_problem(random.Random(1), vehicles=2, packages=3, locations=12)
    roads = set(re.findall(r"\(road (l\d+) (l\d+)\)", text))
    assert all((b, a) in roads for a, b in roads)
    reached, frontier = {"l1"}, ["l1"]
    while frontier:
        here = frontier.pop()
        for a, b in roads:
            if a == here and b not in reached:
                reached.add(b)
                frontier.append(b)
    assert len(reached) == 12

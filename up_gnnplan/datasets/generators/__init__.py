"""Generate seeded PDDL instances of any size, for training and for test sets larger than the public ones.

Navig-xy, Visitall-xy and Vacuum are the three domains of Ståhlberg, Bonet & Geffner (2024),
"Learning General Policies for Classical Planning Domains: Getting Beyond C2" (Sections 7-9),
whose domain files and generators are not published: each of these modules writes its own
domain from the paper's description and says what is faithful to the paper and what is our
choice. Blocks, Blocksworld, Childsnack, Gripper, Logistics and Transport write the classical
domains with the predicate signatures of IPC 2000 (Blocks), the IPC 2023 Learning Track
(Blocksworld, Childsnack, Transport) and IPC 1998 (Gripper, Logistics), so the shipped models of those domains solve the generated
problems. Ferry, Miconic, Spanner, Satellite, Rovers, Floortile and Sokoban write the other
IPC 2023 Learning Track domains, each the same domain as the Learning Track's file, with problems
described by the parameters the Learning Track's files name in their first line; each module
says what it reads off those files and what is our choice (Sokoban: reverse play from the goal,
so every problem is solvable).

The five exists-* generators write the domains of Funkquist, Ståhlberg & Geffner (2024),
"Learning to Ground Existentially Quantified Goals" (Section 9): Blocks, Blocks-C, Gripper,
Delivery and Visitall with coloured objects and goals quantified over coloured variables
(``exists_common`` holds what they share).

Usage::

    paths = generate("navig-xy", Path("data/navig"), count=10, seed=0, width=5, height=4)

writes ``domain.pddl`` and ``p-<size>-<seed>-<i>.pddl`` (i = 0..count-1) into the
directory. One ``random.Random(seed)`` drives the whole batch, so the same arguments give
byte-identical files, and a larger ``count`` only appends files.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from up_gnnplan.datasets.generators import (blocksworld, childsnack, exists_blocks, exists_delivery, exists_gripper,
                                            exists_visitall, ferry, floortile, gripper, logistics, miconic, navig_xy,
                                            reach, rovers, satellite, sokoban, spanner, switchboard, transport, vacuum,
                                            visitall_xy)

__all__ = ["GENERATORS", "Generator", "generate", "get_generator"]


@dataclass(frozen=True)
class Generator:
    """Bundle a domain's PDDL text, its problem sampler and its default size parameters."""

    name: str
    description: str
    domain_pddl: str
    generate_problem: Callable[..., str]
    defaults: Mapping[str, Any]
    # Turns the full size parameters into the <size> part of problem file names.
    size_label: Callable[[Mapping[str, Any]], str]
    # Returns the domain text for the full size parameters when it depends on them (Gripper's
    # typed=1 writes another domain); None: always domain_pddl.
    domain_for: Callable[[Mapping[str, Any]], str] | None = None

    def resolve(self, size_params: Mapping[str, Any]) -> dict[str, Any]:
        """Return the defaults overridden by size_params, rejecting unknown names."""
        unknown = sorted(set(size_params) - set(self.defaults))
        if unknown:
            raise ValueError(f"unknown size parameters for {self.name}: {unknown}; "
                             f"known: {sorted(self.defaults)}")
        return {**self.defaults, **size_params}


def _percent(value: float) -> int:
    """Return a ratio as a whole percentage for file names."""
    return round(100 * value)


def _goal_label(params: Mapping[str, Any]) -> str:
    """Return the colours, variables and neq parameters of an exists-* generator for file names."""
    return f"c{params['colours']}v{params['variables']}n{params['neq']}"


def _registered(module, description: str, defaults: dict, size_label, *, name: str | None = None,
                domain_pddl: str | None = None, generate_problem=None, domain_for=None) -> Generator:
    """Return the generator of ``module``: its DOMAIN_PDDL and generate_problem unless given; the name is
    the module's with dashes."""
    return Generator(name=name or module.__name__.rsplit(".", 1)[1].replace("_", "-"), description=description,
                     domain_pddl=domain_pddl or module.DOMAIN_PDDL,
                     generate_problem=generate_problem or module.generate_problem,
                     defaults=MappingProxyType(defaults), size_label=size_label, domain_for=domain_for)


GENERATORS: dict[str, Generator] = {g.name: g for g in (
    _registered(blocksworld,
                "IPC 2000 Blocks: uniformly random initial configuration, goal one random tower of all blocks.",
                {"blocks": 5},
                lambda p: f"t{p['blocks']}",
                name="blocks",
                domain_pddl=blocksworld.BLOCKS_DOMAIN_PDDL,
                generate_problem=blocksworld.generate_blocks_problem),
    _registered(blocksworld,
                "Rearrange towers of blocks: uniformly random initial and complete goal configurations.",
                {"blocks": 5},
                lambda p: f"b{p['blocks']}"),
    _registered(childsnack,
                "Serve sandwiches to children, gluten-free to the allergic ones (IPC 2023 Learning Track layout).",
                {"children": 10, "allergic_children": 6, "trays": 3, "sandwiches": 15, "tables": 3},
                lambda p: f"c{p['children']}a{p['allergic_children']}t{p['trays']}s{p['sandwiches']}"),
    _registered(gripper,
                "Carry balls between rooms with two grippers (mixed=0: the IPC 1998 layout; typed=1: the typed domain).",
                {"balls": 4, "rooms": 2, "mixed": 0, "typed": 0},
                lambda p: f"b{p['balls']}r{p['rooms']}" + ("m" if p["mixed"] else "") + ("t" if p["typed"] else ""),
                domain_for=lambda p: gripper.domain_text(p["typed"])),
    _registered(logistics,
                "Deliver packages by truck within cities and by airplane between airports.",
                {"cities": 2, "city_size": 2, "packages": 2, "airplanes": 1},
                lambda p: f"c{p['cities']}s{p['city_size']}p{p['packages']}a{p['airplanes']}"),
    _registered(transport,
                "Deliver packages with vehicles of limited capacity over a road network (IPC 2023 Learning Track layout).",
                {"vehicles": 3, "packages": 3, "locations": 6, "max_capacity": 2, "extra_roads": -1},
                lambda p: f"v{p['vehicles']}p{p['packages']}l{p['locations']}c{p['max_capacity']}"),
    _registered(switchboard,
                "Light lamps wired to switches (disjunctive and universal preconditions), then open every switch.",
                {"lamps": 4, "switches": 3},
                lambda p: f"l{p['lamps']}s{p['switches']}"),
    _registered(reach,
                "Open edges and jump to any node reached along open ones (a recursive derived predicate).",
                {"nodes": 6},
                lambda p: f"n{p['nodes']}"),
    _registered(ferry,
                "Carry cars one at a time between locations with a ferry (IPC 2023 Learning Track layout).",
                {"cars": 20, "locations": 15},
                lambda p: f"c{p['cars']}l{p['locations']}"),
    _registered(miconic,
                "Take passengers from their origin floors to their destinations by lift (IPC 2023 Learning Track layout).",
                {"passengers": 10, "floors": 20},
                lambda p: f"p{p['passengers']}f{p['floors']}"),
    _registered(spanner,
                "Walk a one-way path picking up spanners, then tighten the nuts at the gate (IPC 2023 Learning Track layout).",
                {"spanners": 10, "nuts": 5, "locations": 10},
                lambda p: f"s{p['spanners']}n{p['nuts']}l{p['locations']}"),
    _registered(satellite,
                "Point satellites and take images in given modes with calibrated instruments (IPC 2023 Learning Track layout).",
                {"satellites": 10, "instruments": 20, "modes": 3, "directions": 10},
                lambda p: f"s{p['satellites']}i{p['instruments']}m{p['modes']}d{p['directions']}"),
    _registered(rovers,
                "Collect soil, rock and image data with rovers and send it to the lander (IPC 2023 Learning Track layout).",
                {"rovers": 4, "waypoints": 10, "cameras": 4, "objectives": 10},
                lambda p: f"r{p['rovers']}w{p['waypoints']}c{p['cameras']}o{p['objectives']}"),
    _registered(floortile,
                "Paint a grid of tiles in a checkerboard with robots that cannot step on paint (IPC 2023 Learning Track layout).",
                {"rows": 5, "columns": 6, "robots": 3},
                lambda p: f"{p['rows']}x{p['columns']}r{p['robots']}"),
    _registered(sokoban,
                "Push boxes to their goal cells; made by reverse play, so always solvable (IPC 2023 Learning Track layout).",
                {"grid_size": 13, "boxes": 4},
                lambda p: f"g{p['grid_size']}b{p['boxes']}"),
    _registered(navig_xy,
                "Reach a goal cell in an x/y-coordinate grid with random blocked cells.",
                {"width": 6, "height": 4, "blocked_ratio": 0.2},
                lambda p: f"{p['width']}x{p['height']}b{_percent(p['blocked_ratio'])}"),
    _registered(visitall_xy,
                "Visit every cell of an obstacle-free x/y-coordinate grid.",
                {"width": 4, "height": 4},
                lambda p: f"{p['width']}x{p['height']}"),
    _registered(vacuum,
                "Send the nearest robot, each with its own map, to clean one location.",
                {"locations": 12, "robots": 3, "extra_edges": 2, "map_fraction": 0.6},
                lambda p: f"l{p['locations']}r{p['robots']}e{p['extra_edges']}m{_percent(p['map_fraction'])}"),
    _registered(exists_blocks,
                "Coloured Blocks: build a tower of blocks of given colours (existential goal).",
                {"blocks": 5, "colours": 3, "variables": 2, "neq": 1, "on_table": 0},
                lambda p: f"b{p['blocks']}{_goal_label(p)}" + ("t" if p["on_table"] else "")),
    _registered(exists_blocks,
                "Coloured Blocks: clear blocks of given colours (existential goal).",
                {"blocks": 5, "colours": 3, "variables": 2, "neq": 1},
                lambda p: f"b{p['blocks']}{_goal_label(p)}",
                name="exists-blocks-c",
                generate_problem=exists_blocks.generate_clear_problem),
    _registered(exists_gripper,
                "Carry balls of given colours to given rooms of a room tree (existential goal).",
                {"balls": 4, "rooms": 3, "colours": 3, "variables": 2, "neq": 1},
                lambda p: f"b{p['balls']}r{p['rooms']}{_goal_label(p)}"),
    _registered(exists_delivery,
                "Deliver packages, and park the truck, on grid cells of given colours (existential goal).",
                {"width": 3, "height": 3, "packages": 2, "colours": 3, "variables": 2, "neq": 1,
                                   "truck_goal": 1},
                lambda p: (f"{p['width']}x{p['height']}p{p['packages']}{_goal_label(p)}"
                              + ("t" if p["truck_goal"] else ""))),
    _registered(exists_visitall,
                "Visit grid cells of given colours (existential goal).",
                {"width": 3, "height": 3, "colours": 3, "variables": 2, "neq": 1},
                lambda p: f"{p['width']}x{p['height']}{_goal_label(p)}"),
)}


def get_generator(domain: str) -> Generator:
    """Return the registered generator of a domain, or raise ValueError naming the known ones."""
    try:
        return GENERATORS[domain]
    except KeyError:
        raise ValueError(f"unknown domain {domain!r}; known: {sorted(GENERATORS)}") from None


def generate(domain: str, out_dir: Path, *, count: int, seed: int,
             **size_params: Any) -> list[Path]:
    """Write domain.pddl and count seeded problems into out_dir; return the problem paths.

    Existing files with the same names are overwritten. All problems are generated before
    anything is written, so invalid parameters leave out_dir untouched.
    """
    generator = get_generator(domain)
    params = generator.resolve(size_params)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, got {seed!r}")

    rng = random.Random(seed)
    label = generator.size_label(params)
    problems = []
    for i in range(count):
        name = f"p-{label}-{seed}-{i}"
        problems.append((name, generator.generate_problem(rng, name=name, **params)))

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "domain.pddl").write_text(generator.domain_for(params) if generator.domain_for else generator.domain_pddl)
    paths = []
    for name, text in problems:
        path = out_dir / f"{name}.pddl"
        path.write_text(text)
        paths.append(path)
    return paths

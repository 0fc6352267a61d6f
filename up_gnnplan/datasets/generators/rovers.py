"""Generate Rovers instances in the layout of the IPC 2023 Learning Track.

The domain is the Learning Track's Rovers (domain ``rover``: typed, without the ``channel_free``
and ``available`` predicates of the IPC 2002 version), so the shipped ``rovers`` model applies
to these problems. A problem is described by the parameters the Learning Track's files name in
their first line (``rovers``, ``waypoints``, ``cameras``, ``objectives``). What follows is read
off the 123 files that carry those parameters, as the Learning Track does not publish its
generator's settings; the densities are our choice within the ranges seen there:

- ``visible`` is symmetric and connected: a random spanning tree of the waypoints plus every
  other pair with a probability drawn per problem from 0..1;
- every rover's ``can_traverse`` is symmetric, inside ``visible``, and reaches every waypoint: a
  random spanning tree of the visible graph plus every other visible pair with probability 1/2;
- each rover has its own store and is equipped for soil analysis, rock analysis and imaging,
  each with probability 2/3, and every kind of equipment is on some rover;
- every camera is on board a random imaging rover, has one random calibration target and
  supports a random non-empty set of the modes ``colour``, ``high_res``, ``low_res``; every mode
  is supported by some camera;
- every objective is visible from a random non-empty set of waypoints (of random size); each
  waypoint has a soil sample and a rock sample, each with probability 1/2; the lander and the
  rovers stand at random waypoints;
- the goal communicates the data of a random subset of the soil samples, of the rock samples,
  and of the (objective, mode) images, and is never empty.

Every problem is solvable and has no dead ends: every rover reaches every waypoint, each
waypoint sees another one (so some rover can talk to the lander), a full store can be emptied
anywhere, and samples once taken stay with their rover.

The testing/easy files stop at 4 rovers, 10 waypoints, 4 cameras and 10 objectives;
``rovers=12, waypoints=40, cameras=12, objectives=30`` is 3-4x that.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

MODES = ("colour", "high_res", "low_res")

DOMAIN_PDDL = """\
(define (domain rover)
  (:requirements :strips :typing)
  (:types rover waypoint store camera mode lander objective)
  (:predicates (at ?x - rover ?y - waypoint) (at_lander ?x - lander ?y - waypoint)
               (can_traverse ?r - rover ?x - waypoint ?y - waypoint) (equipped_for_soil_analysis ?r - rover)
               (equipped_for_rock_analysis ?r - rover) (equipped_for_imaging ?r - rover) (empty ?s - store)
               (have_rock_analysis ?r - rover ?w - waypoint) (have_soil_analysis ?r - rover ?w - waypoint)
               (full ?s - store) (calibrated ?c - camera ?r - rover) (supports ?c - camera ?m - mode)
               (visible ?w - waypoint ?p - waypoint) (have_image ?r - rover ?o - objective ?m - mode)
               (communicated_soil_data ?w - waypoint) (communicated_rock_data ?w - waypoint)
               (communicated_image_data ?o - objective ?m - mode) (at_soil_sample ?w - waypoint)
               (at_rock_sample ?w - waypoint) (visible_from ?o - objective ?w - waypoint)
               (store_of ?s - store ?r - rover) (calibration_target ?i - camera ?o - objective)
               (on_board ?i - camera ?r - rover))
  (:action navigate
    :parameters (?x - rover ?y - waypoint ?z - waypoint)
    :precondition (and (can_traverse ?x ?y ?z) (at ?x ?y) (visible ?y ?z))
    :effect (and (not (at ?x ?y)) (at ?x ?z)))
  (:action sample_soil
    :parameters (?x - rover ?s - store ?p - waypoint)
    :precondition (and (at ?x ?p) (at_soil_sample ?p) (equipped_for_soil_analysis ?x) (store_of ?s ?x) (empty ?s))
    :effect (and (not (empty ?s)) (full ?s) (have_soil_analysis ?x ?p) (not (at_soil_sample ?p))))
  (:action sample_rock
    :parameters (?x - rover ?s - store ?p - waypoint)
    :precondition (and (at ?x ?p) (at_rock_sample ?p) (equipped_for_rock_analysis ?x) (store_of ?s ?x) (empty ?s))
    :effect (and (not (empty ?s)) (full ?s) (have_rock_analysis ?x ?p) (not (at_rock_sample ?p))))
  (:action drop
    :parameters (?x - rover ?y - store)
    :precondition (and (store_of ?y ?x) (full ?y))
    :effect (and (not (full ?y)) (empty ?y)))
  (:action calibrate
    :parameters (?r - rover ?i - camera ?t - objective ?w - waypoint)
    :precondition (and (equipped_for_imaging ?r) (calibration_target ?i ?t) (at ?r ?w) (visible_from ?t ?w)
                       (on_board ?i ?r))
    :effect (and (calibrated ?i ?r)))
  (:action take_image
    :parameters (?r - rover ?p - waypoint ?o - objective ?i - camera ?m - mode)
    :precondition (and (calibrated ?i ?r) (on_board ?i ?r) (equipped_for_imaging ?r) (supports ?i ?m)
                       (visible_from ?o ?p) (at ?r ?p))
    :effect (and (have_image ?r ?o ?m) (not (calibrated ?i ?r))))
  (:action communicate_soil_data
    :parameters (?r - rover ?l - lander ?p - waypoint ?x - waypoint ?y - waypoint)
    :precondition (and (at ?r ?x) (at_lander ?l ?y) (have_soil_analysis ?r ?p) (visible ?x ?y))
    :effect (and (communicated_soil_data ?p)))
  (:action communicate_rock_data
    :parameters (?r - rover ?l - lander ?p - waypoint ?x - waypoint ?y - waypoint)
    :precondition (and (at ?r ?x) (at_lander ?l ?y) (have_rock_analysis ?r ?p) (visible ?x ?y))
    :effect (and (communicated_rock_data ?p)))
  (:action communicate_image_data
    :parameters (?r - rover ?l - lander ?o - objective ?m - mode ?x - waypoint ?y - waypoint)
    :precondition (and (at ?r ?x) (at_lander ?l ?y) (have_image ?r ?o ?m) (visible ?x ?y))
    :effect (and (communicated_image_data ?o ?m))))
"""


def _spanning_tree(rng: random.Random, nodes: list[str], edges: set[frozenset] | None) -> set[frozenset]:
    """Return the edges of a random spanning tree of ``nodes`` inside ``edges`` (None: all pairs).

    Grown from a random node by joining, one at a time, a random edge from the tree to a node
    outside it; ``edges`` must connect ``nodes``.
    """
    inside, tree = {rng.choice(nodes)}, set()
    while len(inside) < len(nodes):
        frontier = [(a, b) for a in sorted(inside) for b in nodes
                    if b not in inside and (edges is None or frozenset((a, b)) in edges)]
        a, b = rng.choice(frontier)
        inside.add(b)
        tree.add(frozenset((a, b)))
    return tree


def _pairs(edges: set[frozenset], order: list[str]) -> list[tuple[str, str]]:
    """Return both directions of each edge, in the order of ``order``."""
    rank = {w: i for i, w in enumerate(order)}
    ordered = sorted((sorted(e, key=rank.get) for e in edges), key=lambda e: (rank[e[0]], rank[e[1]]))
    return [(a, b) for a, b in ordered] + [(b, a) for a, b in ordered]


def _equipment(rng: random.Random, rovers: int) -> list[list[bool]]:
    """Return per rover whether it is equipped for soil, rock and imaging; each kind on some rover."""
    kit = [[rng.random() < 2 / 3 for _ in range(3)] for _ in range(rovers)]
    for kind in range(3):
        if not any(row[kind] for row in kit):
            kit[rng.randrange(rovers)][kind] = True
    return kit


def generate_problem(rng: random.Random, *, rovers: int = 4, waypoints: int = 10, cameras: int = 4,
                     objectives: int = 10, name: str = "rover") -> str:
    """Return the PDDL text of a Rovers problem (see the module docstring)."""
    require_int("rovers", rovers, 1)
    require_int("waypoints", waypoints, 2, why="a rover talks to the lander from another waypoint")
    require_int("cameras", cameras, 1)
    require_int("objectives", objectives, 1)
    bots = [f"rover{i + 1}" for i in range(rovers)]
    points = [f"waypoint{i + 1}" for i in range(waypoints)]
    lenses = [f"camera{i + 1}" for i in range(cameras)]
    targets = [f"objective{i + 1}" for i in range(objectives)]

    density = rng.random()
    visible = _spanning_tree(rng, points, None)
    visible |= {frozenset((a, b)) for i, a in enumerate(points) for b in points[i + 1:]
                if frozenset((a, b)) not in visible and rng.random() < density}
    traverse = []
    for _ in bots:
        tree = _spanning_tree(rng, points, visible)
        traverse.append(tree | {e for e in sorted(visible - tree, key=sorted) if rng.random() < 0.5})
    kit = _equipment(rng, rovers)
    imagers = [b for b, row in zip(bots, kit) if row[2]]
    owners = [rng.choice(imagers) for _ in lenses]
    supported = [set(rng.sample(MODES, rng.randint(1, len(MODES)))) for _ in lenses]
    for mode in MODES:
        if not any(mode in s for s in supported):
            rng.choice(supported).add(mode)
    seen_from = [rng.sample(points, rng.randint(1, waypoints)) for _ in targets]
    soil = [w for w in points if rng.random() < 0.5]
    rock = [w for w in points if rng.random() < 0.5]
    lander = rng.choice(points)

    init = [f"(at_lander general {lander})"] + [f"(at {b} {rng.choice(points)})" for b in bots]
    for predicate, kind in (("equipped_for_soil_analysis", 0), ("equipped_for_rock_analysis", 1),
                            ("equipped_for_imaging", 2)):
        init += [f"({predicate} {b})" for b, row in zip(bots, kit) if row[kind]]
    init += [f"(empty {b}store)" for b in bots] + [f"(store_of {b}store {b})" for b in bots]
    init += [f"(at_rock_sample {w})" for w in rock] + [f"(at_soil_sample {w})" for w in soil]
    init += [f"(visible {a} {b})" for a, b in _pairs(visible, points)]
    for b, edges in zip(bots, traverse):
        init += [f"(can_traverse {b} {x} {y})" for x, y in _pairs(edges, points)]
    for lens, owner, modes in zip(lenses, owners, supported):
        init += [f"(calibration_target {lens} {rng.choice(targets)})", f"(on_board {lens} {owner})"]
        init += [f"(supports {lens} {m})" for m in MODES if m in modes]
    init += [f"(visible_from {t} {w})" for t, where in zip(targets, seen_from) for w in where]

    images = [(t, m) for t in targets for m in MODES if any(m in s for s in supported)]
    while True:  # an empty goal is drawn rarely (only with few samples and images); draw again
        goal = ([f"(communicated_soil_data {w})" for w in rng.sample(soil, rng.randint(0, len(soil)))]
                + [f"(communicated_rock_data {w})" for w in rng.sample(rock, rng.randint(0, len(rock)))]
                + [f"(communicated_image_data {t} {m})" for t, m in rng.sample(images, rng.randint(0, len(images)))])
        if goal:
            break
    objects = ["general - lander", f"{' '.join(MODES)} - mode", f"{' '.join(bots)} - rover",
               f"{' '.join(f'{b}store' for b in bots)} - store", f"{' '.join(points)} - waypoint",
               f"{' '.join(lenses)} - camera", f"{' '.join(targets)} - objective"]
    return problem_text(name, "rover", objects, init, goal, object_lines=True)

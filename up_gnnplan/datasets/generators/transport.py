"""Generate Transport instances in the layout of the IPC 2023 Learning Track.

The domain is the Learning Track's Transport (typed: vehicles and packages are locatables,
capacities are ``size`` objects ``c0 .. cK`` chained by ``capacity-predecessor``; no action
costs), so the shipped ``transport`` model applies to these problems. A problem is described by
the parameters the Learning Track's files name in their first line (``vehicles``, ``packages``,
``locations``, ``max_capacity``). The road network is our choice, as the Learning Track's files
do not say how theirs were drawn: a random spanning tree of the locations plus
``extra_roads`` (default: half the locations) further random pairs, every road in both
directions, so every problem is solvable. Each vehicle has a random capacity from 1 to
``max_capacity`` and starts at a random location; each package starts at a random location and
must end at a random other one.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain transport)
  (:requirements :typing)
  (:types size location locatable - object
          vehicle package - locatable)
  (:predicates (road ?l1 ?l2 - location) (at ?x - locatable ?v - location) (in ?x - package ?v - vehicle)
               (capacity ?v - vehicle ?s1 - size) (capacity-predecessor ?s1 ?s2 - size))
  (:action drive
    :parameters (?v - vehicle ?l1 ?l2 - location)
    :precondition (and (at ?v ?l1) (road ?l1 ?l2))
    :effect (and (not (at ?v ?l1)) (at ?v ?l2)))
  (:action pick-up
    :parameters (?v - vehicle ?l - location ?p - package ?s1 ?s2 - size)
    :precondition (and (at ?v ?l) (at ?p ?l) (capacity-predecessor ?s1 ?s2) (capacity ?v ?s2))
    :effect (and (not (at ?p ?l)) (in ?p ?v) (capacity ?v ?s1) (not (capacity ?v ?s2))))
  (:action drop
    :parameters (?v - vehicle ?l - location ?p - package ?s1 ?s2 - size)
    :precondition (and (at ?v ?l) (in ?p ?v) (capacity-predecessor ?s1 ?s2) (capacity ?v ?s1))
    :effect (and (not (in ?p ?v)) (at ?p ?l) (capacity ?v ?s2) (not (capacity ?v ?s1)))))
"""


def generate_problem(rng: random.Random, *, vehicles: int = 3, packages: int = 3, locations: int = 6,
                     max_capacity: int = 2, extra_roads: int = -1, name: str = "transport") -> str:
    """Return the PDDL text of a Transport problem (see the module docstring); ``extra_roads=-1``: locations // 2."""
    for label, value, minimum in (("vehicles", vehicles, 1), ("packages", packages, 1), ("locations", locations, 2),
                                  ("max_capacity", max_capacity, 1), ("extra_roads", extra_roads, -1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{label} must be an int >= {minimum}, got {value!r}")
    places = [f"l{i + 1}" for i in range(locations)]
    order = rng.sample(places, len(places))
    roads = set()
    for i in range(1, len(order)):  # a random spanning tree: each location joins one placed before it
        a, b = order[i], order[rng.randrange(i)]
        roads |= {(a, b), (b, a)}
    pairs = [(a, b) for a in places for b in places if a < b and (a, b) not in roads]
    for a, b in rng.sample(pairs, min(len(pairs), locations // 2 if extra_roads < 0 else extra_roads)):
        roads |= {(a, b), (b, a)}
    trucks = [f"v{i + 1}" for i in range(vehicles)]
    parcels = [f"p{i + 1}" for i in range(packages)]
    sizes = [f"c{i}" for i in range(max_capacity + 1)]
    starts = [rng.choice(places) for _ in parcels]
    goals = [rng.choice([p for p in places if p != start]) for start in starts]
    init = ([f"(capacity {v} c{rng.randint(1, max_capacity)})" for v in trucks]
            + [f"(capacity-predecessor {a} {b})" for a, b in zip(sizes, sizes[1:])]
            + [f"(at {p} {s})" for p, s in zip(parcels, starts)]
            + [f"(at {v} {rng.choice(places)})" for v in trucks]
            + [f"(road {a} {b})" for a, b in sorted(roads)])
    objects = [f"{' '.join(trucks)} - vehicle", f"{' '.join(parcels)} - package", f"{' '.join(places)} - location",
               f"{' '.join(sizes)} - size"]
    return problem_text(name, "transport", objects, init, [f"(at {p} {g})" for p, g in zip(parcels, goals)],
                        object_lines=True)

"""Generate Logistics instances: trucks within cities, airplanes between airports, packages.

The domain is the STRIPS Logistics of IPC 1998 (domain ``logistics-strips``, objects untyped,
with the type predicates ``OBJ``, ``TRUCK``, ``LOCATION``, ``AIRPLANE``, ``CITY`` and
``AIRPORT``), so the shipped ``logistics`` model applies to these problems.

A problem has ``cities`` cities of ``city_size`` locations each; the first location of every
city is its airport. Every city has one truck, at a random location of its city; the
``airplanes`` airplanes start at random airports; each of the ``packages`` packages starts at
a random location and must end at a random other location (of any city). Object names follow
the generated learning splits: ``c0``, ``t0``, ``a0``, ``l0-0``, ``p0``. With more than one
city at least one airplane is required, so every problem is solvable.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain logistics-strips)
  (:requirements :strips)
  (:predicates (OBJ ?obj) (TRUCK ?truck) (LOCATION ?loc) (AIRPLANE ?airplane) (CITY ?city)
               (AIRPORT ?airport) (at ?obj ?loc) (in ?obj1 ?obj2) (in-city ?obj ?city))
  (:action LOAD-TRUCK
    :parameters (?obj ?truck ?loc)
    :precondition (and (OBJ ?obj) (TRUCK ?truck) (LOCATION ?loc) (at ?truck ?loc) (at ?obj ?loc))
    :effect (and (not (at ?obj ?loc)) (in ?obj ?truck)))
  (:action LOAD-AIRPLANE
    :parameters (?obj ?airplane ?loc)
    :precondition (and (OBJ ?obj) (AIRPLANE ?airplane) (LOCATION ?loc) (at ?obj ?loc) (at ?airplane ?loc))
    :effect (and (not (at ?obj ?loc)) (in ?obj ?airplane)))
  (:action UNLOAD-TRUCK
    :parameters (?obj ?truck ?loc)
    :precondition (and (OBJ ?obj) (TRUCK ?truck) (LOCATION ?loc) (at ?truck ?loc) (in ?obj ?truck))
    :effect (and (not (in ?obj ?truck)) (at ?obj ?loc)))
  (:action UNLOAD-AIRPLANE
    :parameters (?obj ?airplane ?loc)
    :precondition (and (OBJ ?obj) (AIRPLANE ?airplane) (LOCATION ?loc) (in ?obj ?airplane) (at ?airplane ?loc))
    :effect (and (not (in ?obj ?airplane)) (at ?obj ?loc)))
  (:action DRIVE-TRUCK
    :parameters (?truck ?loc-from ?loc-to ?city)
    :precondition (and (TRUCK ?truck) (LOCATION ?loc-from) (LOCATION ?loc-to) (CITY ?city)
                       (at ?truck ?loc-from) (in-city ?loc-from ?city) (in-city ?loc-to ?city))
    :effect (and (not (at ?truck ?loc-from)) (at ?truck ?loc-to)))
  (:action FLY-AIRPLANE
    :parameters (?airplane ?loc-from ?loc-to)
    :precondition (and (AIRPLANE ?airplane) (AIRPORT ?loc-from) (AIRPORT ?loc-to) (at ?airplane ?loc-from))
    :effect (and (not (at ?airplane ?loc-from)) (at ?airplane ?loc-to))))
"""


def generate_problem(rng: random.Random, *, cities: int = 2, city_size: int = 2, packages: int = 2,
                     airplanes: int = 1, name: str = "logistics") -> str:
    """Return the PDDL text of a random solvable Logistics problem."""
    for label, value, minimum in (("cities", cities, 1), ("city_size", city_size, 1),
                                  ("packages", packages, 1), ("airplanes", airplanes, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{label} must be an int >= {minimum}, got {value!r}")
    if cities > 1 and airplanes < 1:
        raise ValueError("with more than one city at least one airplane is needed (airplanes >= 1)")
    if cities * city_size < 2:
        raise ValueError("a package needs another location to go to: cities * city_size must be >= 2")
    locations = [[f"l{c}-{i}" for i in range(city_size)] for c in range(cities)]
    everywhere = [loc for city in locations for loc in city]
    init = [f"(AIRPLANE a{i})" for i in range(airplanes)] + [f"(CITY c{c})" for c in range(cities)]
    init += [f"(TRUCK t{c})" for c in range(cities)]
    for c, city in enumerate(locations):
        init += [atom for loc in city for atom in (f"(LOCATION {loc})", f"(in-city {loc} c{c})")]
        init.append(f"(AIRPORT {city[0]})")
    init += [f"(OBJ p{i})" for i in range(packages)]
    init += [f"(at t{c} {rng.choice(city)})" for c, city in enumerate(locations)]
    init += [f"(at a{i} {rng.choice(locations)[0]})" for i in range(airplanes)]
    goals = []
    for i in range(packages):
        start = rng.choice(everywhere)
        init.append(f"(at p{i} {start})")
        goals.append(f"(at p{i} {rng.choice([loc for loc in everywhere if loc != start])})")
    objects = ([f"a{i}" for i in range(airplanes)] + [f"c{c}" for c in range(cities)]
               + [f"t{c}" for c in range(cities)] + everywhere + [f"p{i}" for i in range(packages)])
    return problem_text(name, "logistics-strips", objects, init, goals)

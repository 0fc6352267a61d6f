"""Generate Ferry instances in the layout of the IPC 2023 Learning Track.

The domain is the Learning Track's Ferry (typed cars and locations; ``sail`` needs the ferry not
to be at its destination already), so the shipped ``ferry`` model applies to these problems. A
problem is described by the parameters the Learning Track's files name in their first line
(``cars``, ``locations``): as in those files, the ferry starts empty at a random location, every
car starts at a random location and must end at a random other one (no car of the 1,256 in the
Learning Track's files starts at its goal). Every problem is solvable: the ferry sails between
any two locations.

The testing/easy files stop at 20 cars and 15 locations; ``cars=100, locations=50`` is 5x that.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain ferry)
  (:requirements :typing :strips :negative-preconditions)
  (:types car location - object)
  (:predicates (at-ferry ?l - location) (at ?c - car ?l - location) (empty-ferry) (on ?c - car))
  (:action sail
    :parameters (?from - location ?to - location)
    :precondition (and (at-ferry ?from) (not (at-ferry ?to)))
    :effect (and (at-ferry ?to) (not (at-ferry ?from))))
  (:action board
    :parameters (?car - car ?loc - location)
    :precondition (and (at ?car ?loc) (at-ferry ?loc) (empty-ferry))
    :effect (and (on ?car) (not (at ?car ?loc)) (not (empty-ferry))))
  (:action debark
    :parameters (?car - car ?loc - location)
    :precondition (and (on ?car) (at-ferry ?loc))
    :effect (and (at ?car ?loc) (empty-ferry) (not (on ?car)))))
"""


def generate_problem(rng: random.Random, *, cars: int = 20, locations: int = 15, name: str = "ferry") -> str:
    """Return the PDDL text of a Ferry problem (see the module docstring)."""
    require_int("cars", cars, 1)
    require_int("locations", locations, 2, why="a car must end somewhere other than its start")
    places = [f"loc{i + 1}" for i in range(locations)]
    autos = [f"car{i + 1}" for i in range(cars)]
    ferry_at = rng.choice(places)
    starts = [rng.choice(places) for _ in autos]
    goals = [rng.choice([p for p in places if p != start]) for start in starts]
    objects = [f"{' '.join(autos)} - car", f"{' '.join(places)} - location"]
    init = ["(empty-ferry)", f"(at-ferry {ferry_at})"] + [f"(at {c} {s})" for c, s in zip(autos, starts)]
    return problem_text(name, "ferry", objects, init, [f"(at {c} {g})" for c, g in zip(autos, goals)],
                        object_lines=True)

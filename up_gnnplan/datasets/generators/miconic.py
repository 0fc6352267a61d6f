"""Generate Miconic instances in the layout of the IPC 2023 Learning Track.

The domain is the Learning Track's Miconic (typed passengers and floors; ``board`` deletes the
passenger's ``origin`` so a served passenger cannot board again), so the shipped ``miconic``
model applies to these problems. A problem is described by the parameters the Learning Track's
files name in their first line (``passengers``, ``floors``): as in those files, ``above`` orders
every pair of floors (``(above f1 f2)``: f2 is above f1), the lift starts at a random floor, and
every passenger has a random origin and a random other destination (none of the 652 passengers
in the Learning Track's files has origin = destination). Every problem is solvable.

The testing/easy files stop at 10 passengers and 20 floors; ``passengers=50, floors=60`` gives
problems of 110 objects.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain miconic)
  (:requirements :strips :typing)
  (:types passenger floor - object)
  (:predicates (origin ?person - passenger ?floor - floor) (destin ?person - passenger ?floor - floor)
               (above ?floor1 - floor ?floor2 - floor) (boarded ?person - passenger)
               (served ?person - passenger) (lift-at ?floor - floor))
  (:action board
    :parameters (?f - floor ?p - passenger)
    :precondition (and (lift-at ?f) (origin ?p ?f))
    :effect (and (boarded ?p) (not (origin ?p ?f))))
  (:action depart
    :parameters (?f - floor ?p - passenger)
    :precondition (and (lift-at ?f) (destin ?p ?f) (boarded ?p))
    :effect (and (not (boarded ?p)) (served ?p)))
  (:action up
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift-at ?f1) (above ?f1 ?f2))
    :effect (and (lift-at ?f2) (not (lift-at ?f1))))
  (:action down
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift-at ?f1) (above ?f2 ?f1))
    :effect (and (lift-at ?f2) (not (lift-at ?f1)))))
"""


def generate_problem(rng: random.Random, *, passengers: int = 10, floors: int = 20, name: str = "miconic") -> str:
    """Return the PDDL text of a Miconic problem (see the module docstring)."""
    require_int("passengers", passengers, 1)
    require_int("floors", floors, 2, why="a passenger's destination differs from the origin")
    levels = [f"f{i + 1}" for i in range(floors)]
    people = [f"p{i + 1}" for i in range(passengers)]
    init = [f"(lift-at {rng.choice(levels)})"]
    for person in people:
        origin, destination = rng.sample(levels, 2)
        init += [f"(origin {person} {origin})", f"(destin {person} {destination})"]
    init += [f"(above {low} {high})" for i, low in enumerate(levels) for high in levels[i + 1:]]
    objects = [f"{' '.join(people)} - passenger", f"{' '.join(levels)} - floor"]
    return problem_text(name, "miconic", objects, init, [f"(served {p})" for p in people], object_lines=True)

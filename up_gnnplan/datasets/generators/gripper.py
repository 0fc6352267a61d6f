"""Generate Gripper instances: a robot with two grippers carries balls between rooms.

With ``typed=0`` (the default) the domain is the STRIPS Gripper of IPC 1998 (domain
``gripper-strips``, objects untyped, with the type predicates ``room``, ``ball`` and
``gripper``), so the shipped ``gripper`` model applies to these problems. With ``typed=1`` it
is the typed Gripper of the bundled example (``up_gnnplan/data/gripper``, read from that file
so that the predicate signatures cannot drift apart: types ``room``, ``ball`` and ``gripper``,
no type predicates), so the shipped ``gripper-typed`` model applies to them. The two
signatures differ, so neither model accepts the other's problems.

With ``mixed=0`` (the default) a problem is the IPC 1998 layout: every ball and the robot
start in the first room and every ball must end in the last room; the seed plays no part.
With ``mixed=1`` every ball starts in a random room and must end in a random other room, and
the robot starts in a random room. ``rooms`` (default 2) is the number of rooms; the robot
moves between any two of them.
"""

from __future__ import annotations

import random
import re

from up_gnnplan.data import example
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain gripper-strips)
  (:requirements :strips)
  (:predicates (room ?r) (ball ?b) (gripper ?g) (at-robby ?r) (at ?b ?r) (free ?g) (carry ?b ?g))
  (:action move
    :parameters (?from ?to)
    :precondition (and (room ?from) (room ?to) (at-robby ?from))
    :effect (and (at-robby ?to) (not (at-robby ?from))))
  (:action pick
    :parameters (?b ?r ?g)
    :precondition (and (ball ?b) (room ?r) (gripper ?g) (at ?b ?r) (at-robby ?r) (free ?g))
    :effect (and (carry ?b ?g) (not (at ?b ?r)) (not (free ?g))))
  (:action drop
    :parameters (?b ?r ?g)
    :precondition (and (ball ?b) (room ?r) (gripper ?g) (carry ?b ?g) (at-robby ?r))
    :effect (and (at ?b ?r) (free ?g) (not (carry ?b ?g)))))
"""


# The bundled file without its comment lines: pymimir (0.13) rejects comments in a domain given
# as text, as the tests give it, though not in a domain file.
TYPED_DOMAIN_PDDL = "".join(line for line in example("gripper").read_text().splitlines(keepends=True)
                            if not line.lstrip().startswith(";"))
TYPED_DOMAIN_NAME = re.search(r"\(domain\s+([^\s()]+)\)", TYPED_DOMAIN_PDDL).group(1)


def _check_typed(typed) -> None:
    """Raise ValueError unless typed is 0 or 1."""
    if typed not in (0, 1) or isinstance(typed, bool):
        raise ValueError(f"typed must be 0 or 1, got {typed!r}")


def domain_text(typed: int = 0) -> str:
    """Return the domain that the problems of generate_problem with this ``typed`` are written for."""
    _check_typed(typed)
    return TYPED_DOMAIN_PDDL if typed else DOMAIN_PDDL


def generate_problem(rng: random.Random, *, balls: int = 4, rooms: int = 2, mixed: int = 0,
                     typed: int = 0, name: str = "gripper") -> str:
    """Return the PDDL text of a Gripper problem (see the module docstring for the layouts and domains)."""
    for label, value, minimum in (("balls", balls, 1), ("rooms", rooms, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{label} must be an int >= {minimum}, got {value!r}")
    if mixed not in (0, 1) or isinstance(mixed, bool):
        raise ValueError(f"mixed must be 0 or 1, got {mixed!r}")
    _check_typed(typed)
    room_names = [f"room{chr(ord('a') + i)}" if rooms <= 26 else f"room{i + 1}" for i in range(rooms)]
    ball_names = [f"ball{i + 1}" for i in range(balls)]
    if mixed:
        robot = rng.randrange(rooms)
        starts = [rng.randrange(rooms) for _ in ball_names]
        goals = [rng.choice([r for r in range(rooms) if r != s]) for s in starts]
    else:
        robot, starts, goals = 0, [0] * balls, [rooms - 1] * balls
    fluents = (["(free left)", "(free right)", f"(at-robby {room_names[robot]})"]
               + [f"(at {b} {room_names[s]})" for b, s in zip(ball_names, starts)])
    goal = [f"(at {b} {room_names[g]})" for b, g in zip(ball_names, goals)]
    if typed:
        objects = [f"{' '.join(room_names)} - room", f"{' '.join(ball_names)} - ball", "left right - gripper"]
        return problem_text(name, TYPED_DOMAIN_NAME, objects, fluents, goal)
    init = ([f"(room {r})" for r in room_names] + [f"(ball {b})" for b in ball_names]
            + ["(gripper left)", "(gripper right)"] + fluents)
    return problem_text(name, "gripper-strips", [*room_names, *ball_names, "left", "right"], init, goal)

"""Generate Gripper instances: a robot with two grippers carries balls between rooms.

The domain is the STRIPS Gripper of IPC 1998 (domain ``gripper-strips``, objects untyped,
with the type predicates ``room``, ``ball`` and ``gripper``), so the shipped ``gripper``
model applies to these problems.

With ``mixed=0`` (the default) a problem is the IPC 1998 layout: every ball and the robot
start in the first room and every ball must end in the last room; the seed plays no part.
With ``mixed=1`` every ball starts in a random room and must end in a random other room, and
the robot starts in a random room. ``rooms`` (default 2) is the number of rooms; the robot
moves between any two of them.
"""

from __future__ import annotations

import random

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


def generate_problem(rng: random.Random, *, balls: int = 4, rooms: int = 2, mixed: int = 0,
                     name: str = "gripper") -> str:
    """Return the PDDL text of a Gripper problem (see the module docstring for the layouts)."""
    for label, value, minimum in (("balls", balls, 1), ("rooms", rooms, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{label} must be an int >= {minimum}, got {value!r}")
    if mixed not in (0, 1) or isinstance(mixed, bool):
        raise ValueError(f"mixed must be 0 or 1, got {mixed!r}")
    room_names = [f"room{chr(ord('a') + i)}" if rooms <= 26 else f"room{i + 1}" for i in range(rooms)]
    ball_names = [f"ball{i + 1}" for i in range(balls)]
    if mixed:
        robot = rng.randrange(rooms)
        starts = [rng.randrange(rooms) for _ in ball_names]
        goals = [rng.choice([r for r in range(rooms) if r != s]) for s in starts]
    else:
        robot, starts, goals = 0, [0] * balls, [rooms - 1] * balls
    init = ([f"(room {r})" for r in room_names] + [f"(ball {b})" for b in ball_names]
            + ["(gripper left)", "(gripper right)", "(free left)", "(free right)",
               f"(at-robby {room_names[robot]})"]
            + [f"(at {b} {room_names[s]})" for b, s in zip(ball_names, starts)])
    goal = [f"(at {b} {room_names[g]})" for b, g in zip(ball_names, goals)]
    return problem_text(name, "gripper-strips", [*room_names, *ball_names, "left", "right"], init, goal)

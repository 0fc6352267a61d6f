"""Generate Gripper instances with coloured balls and existentially quantified goals.

Source: Funkquist, Ståhlberg & Geffner (2024), "Learning to Ground Existentially Quantified
Goals", Section 9.2 and Figure 2. The paper describes no generator; this module writes its own.

Faithful to the paper:
  * a robot with two grippers carries balls between a fixed number of rooms that are not all
    adjacent: ``move`` needs a static ``connected`` relation between the rooms;
  * every ball has one colour; the goal is ``at(xi, ROOM)`` for ball variables with colour
    atoms, the rooms being constants, as in Figure 2;
  * the paper trains on instances of 9 to 11 objects (Table 2); the defaults, 3 rooms, 2
    grippers and 4 balls (9 objects), give 1,215 states.

Our own choices:
  * the domain is typed (``room``, ``ball``, ``gripper``), so the variables are ``- ball``;
  * the room graph is a random tree (each room in a random order is connected to a random
    earlier one), so it is connected and, with at least 3 rooms, never complete;
  * the robot and the balls start in uniformly random rooms, grippers free; the witness is
    ``variables`` distinct random balls, each with a uniformly random goal room, which is
    always reachable.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from up_gnnplan.datasets.generators.exists_common import (
    COLOUR_PREDICATES,
    GOAL_REQUIREMENTS,
    can_bind,
    check_at_most,
    check_goal_parameters,
    check_int,
    colour_atoms,
    exists_goal,
    paint,
    sample_open,
    variable,
)
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_NAME = "exists-gripper"

DOMAIN_PDDL = f"""\
(define (domain {DOMAIN_NAME})
  (:requirements :strips :typing {GOAL_REQUIREMENTS})
  (:types room ball gripper)
  (:predicates
    (connected ?from ?to - room)
    (at-robby ?r - room)
    (at ?b - ball ?r - room)
    (free ?g - gripper)
    (carry ?b - ball ?g - gripper)
    {COLOUR_PREDICATES})
  (:action move
    :parameters (?from ?to - room)
    :precondition (and (at-robby ?from) (connected ?from ?to))
    :effect (and (at-robby ?to) (not (at-robby ?from))))
  (:action pick
    :parameters (?b - ball ?r - room ?g - gripper)
    :precondition (and (at ?b ?r) (at-robby ?r) (free ?g))
    :effect (and (carry ?b ?g) (not (at ?b ?r)) (not (free ?g))))
  (:action drop
    :parameters (?b - ball ?r - room ?g - gripper)
    :precondition (and (carry ?b ?g) (at-robby ?r))
    :effect (and (at ?b ?r) (free ?g) (not (carry ?b ?g)))))
"""


@dataclass(frozen=True)
class Layout:
    """Hold one sampled instance; rooms and balls are 0-based indices."""

    rooms: int
    edges: tuple[tuple[int, int], ...]  # undirected, each (a, b) with a < b, sorted
    robot: int
    ball_rooms: tuple[int, ...]
    painted: tuple[str, ...]
    witness: tuple[int, ...]  # the balls bound to ?x1, ?x2, ...
    goal_rooms: tuple[int, ...]  # the room each of them must end in


def random_tree(rng: random.Random, nodes: int) -> tuple[tuple[int, int], ...]:
    """Return the sorted edges of a random tree: each node in a random order joins a random earlier one."""
    order = list(range(nodes))
    rng.shuffle(order)
    edges = {tuple(sorted((node, rng.choice(order[:i])))) for i, node in enumerate(order) if i}
    return tuple(sorted(edges))


def sample_layout(rng: random.Random, balls: int, rooms: int, colours: int, variables: int) -> Layout:
    """Return a random room tree, start rooms, ball colours and a witness with goal rooms."""
    edges = random_tree(rng, rooms)
    robot = rng.randrange(rooms)
    ball_rooms = tuple(rng.randrange(rooms) for _ in range(balls))
    painted = tuple(paint(rng, balls, colours))
    witness = tuple(rng.sample(range(balls), variables))
    goal_rooms = tuple(rng.randrange(rooms) for _ in witness)
    return Layout(rooms, edges, robot, ball_rooms, painted, witness, goal_rooms)


def _holds_initially(layout: Layout, neq: int) -> bool:
    """Return whether balls of the goal's colours already lie in the goal's rooms."""
    candidates = [[b for b, room in enumerate(layout.ball_rooms)
                   if room == goal_room and layout.painted[b] == layout.painted[w]]
                  for w, goal_room in zip(layout.witness, layout.goal_rooms)]
    return can_bind(candidates, distinct=bool(neq))


def render_problem(layout: Layout, neq: int, name: str) -> str:
    """Return the problem text of a layout."""
    room_names = [f"room{i + 1}" for i in range(layout.rooms)]
    ball_names = [f"ball{i + 1}" for i in range(len(layout.ball_rooms))]
    init = [f"(connected {room_names[a]} {room_names[b]})" for edge in layout.edges for a, b in (edge, edge[::-1])]
    init += ["(free left)", "(free right)", f"(at-robby {room_names[layout.robot]})"]
    init += [f"(at {ball} {room_names[room]})" for ball, room in zip(ball_names, layout.ball_rooms)]
    init += [f"({colour} {ball})" for ball, colour in zip(ball_names, layout.painted)]
    body = colour_atoms([layout.painted[b] for b in layout.witness])
    body += [f"(at {variable(i)} {room_names[room]})" for i, room in enumerate(layout.goal_rooms)]
    objects = [f"{' '.join(room_names)} - room", f"{' '.join(ball_names)} - ball", "left right - gripper"]
    return problem_text(name, DOMAIN_NAME, objects, init, exists_goal(len(layout.witness), body, neq, "ball"),
                        object_lines=True)


def generate_problem(rng: random.Random, *, balls: int = 4, rooms: int = 3, colours: int = 3, variables: int = 2,
                     neq: int = 1, name: str = "exists-gripper") -> str:
    """Return a Gripper problem whose goal puts ``variables`` balls of given colours in given rooms."""
    check_int("balls", balls, 1)
    check_int("rooms", rooms, 3)
    check_goal_parameters(colours, variables, neq)
    check_at_most("variables", variables, balls, "balls")
    check_at_most("colours", colours, balls, "balls")
    layout = sample_open(lambda: sample_layout(rng, balls, rooms, colours, variables),
                         lambda sampled: _holds_initially(sampled, neq))
    return render_problem(layout, neq, name)

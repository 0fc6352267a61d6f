"""Generate Sokoban instances in the layout of the IPC 2023 Learning Track, solvable by construction.

The domain is the Learning Track's Sokoban (typed, the four directions as constants, one
``move`` and one ``push`` action; every box has its own goal cell), so the shipped ``sokoban``
model applies to these problems. A problem is described by the parameters the Learning Track's
files name in their first line (``grid_size``, ``boxes``): as in those files, the locations are
``loc_R_C`` for every cell of a ``grid_size`` x ``grid_size`` grid (walls included, as objects
without atoms), the border is wall, ``adjacent`` links neighbouring floor cells in both
directions (``down`` = the next row), every floor cell without a box is ``clear`` (the robot's
too), and floor makes up 40-100% of the inside, mostly in one connected region with a few
isolated cells.

The layout is our choice, as the Learning Track does not publish its generator's settings: a
random walk carves a connected floor region covering 50-85% of the inside (drawn per problem),
and every other inside cell becomes floor with probability 0.1. Boxes then start on distinct
random goal cells of the region and the robot on another cell of it, and the problem is found
by *reverse play*: the robot walks at random, and each time it steps away from a box behind
it, it may pull that box along (the inverse of a push). Each pull undoes a legal push, so the
reversed walk is a plan: every problem is solvable. Of the walk's states, the one with the most
boxes off their goals, and of those the one whose boxes lie farthest (in Manhattan distance)
from their goals, becomes the initial state.

The testing/easy files stop at ``grid_size=13, boxes=4``; ``grid_size=25, boxes=10`` is about 4x
the floor and 2.5x the boxes.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

MAX_TRIES = 50  # layouts drawn before giving up on parameters that leave the boxes no room

# (name, row step, column step), in the order the Learning Track's files list them.
DIRECTIONS = (("down", 1, 0), ("left", 0, -1), ("up", -1, 0), ("right", 0, 1))

DOMAIN_PDDL = """\
(define (domain sokoban)
  (:requirements :typing)
  (:types location direction box)
  (:constants down up left right - direction)
  (:predicates (at-robot ?l - location) (at ?o - box ?l - location)
               (adjacent ?l1 - location ?l2 - location ?d - direction) (clear ?l - location))
  (:action move
    :parameters (?from - location ?to - location ?dir - direction)
    :precondition (and (clear ?to) (at-robot ?from) (adjacent ?from ?to ?dir))
    :effect (and (at-robot ?to) (not (at-robot ?from))))
  (:action push
    :parameters (?rloc - location ?bloc - location ?floc - location ?dir - direction ?b - box)
    :precondition (and (at-robot ?rloc) (at ?b ?bloc) (clear ?floc) (adjacent ?rloc ?bloc ?dir)
                       (adjacent ?bloc ?floc ?dir))
    :effect (and (at-robot ?bloc) (at ?b ?floc) (clear ?bloc) (not (at-robot ?rloc)) (not (at ?b ?bloc))
                 (not (clear ?floc)))))
"""

Cell = tuple[int, int]


def carve(rng: random.Random, size: int) -> tuple[set[Cell], set[Cell]]:
    """Return (the connected region carved by a random walk, every floor cell) of a size x size grid."""
    inside = [(r, c) for r in range(1, size - 1) for c in range(1, size - 1)]
    target = max(2, round(rng.uniform(0.5, 0.85) * len(inside)))
    here = rng.choice(inside)
    region = {here}
    while len(region) < target:
        _, dr, dc = rng.choice(DIRECTIONS)
        step = (here[0] + dr, here[1] + dc)
        if 1 <= step[0] < size - 1 and 1 <= step[1] < size - 1:
            here = step
            region.add(here)
    return region, region | {cell for cell in inside if cell not in region and rng.random() < 0.1}


def reverse_play(rng: random.Random, region: set[Cell], goals: list[Cell], robot: Cell,
                 steps: int) -> tuple[list[Cell], Cell]:
    """Walk the robot ``steps`` times from the solved state, pulling boxes; return the farthest state.

    Returns (box cells, robot cell) of the state with the most boxes off their goals, and of
    those the one whose boxes are farthest in total from their goals; that state is the solved
    one itself when no box could be moved.
    """
    boxes = list(goals)
    at = {cell: i for i, cell in enumerate(boxes)}

    def score() -> tuple[int, int]:
        return (sum(b != g for b, g in zip(boxes, goals)),
                sum(abs(b[0] - g[0]) + abs(b[1] - g[1]) for b, g in zip(boxes, goals)))

    best, best_state = (0, 0), (list(boxes), robot)
    for _ in range(steps):
        _, dr, dc = rng.choice(DIRECTIONS)
        ahead, behind = (robot[0] + dr, robot[1] + dc), (robot[0] - dr, robot[1] - dc)
        if ahead not in region or ahead in at:
            continue
        if behind in at and rng.random() < 0.7:  # pull: the box behind follows onto the robot's cell
            i = at.pop(behind)
            boxes[i] = robot
            at[robot] = i
        robot = ahead
        now = score()
        if now > best:
            best, best_state = now, (list(boxes), robot)
    return best_state


def generate_problem(rng: random.Random, *, grid_size: int = 13, boxes: int = 4, name: str = "sokoban") -> str:
    """Return the PDDL text of a Sokoban problem (see the module docstring)."""
    require_int("grid_size", grid_size, 5)
    require_int("boxes", boxes, 1, (grid_size - 2) ** 2 // 4, why="room for the boxes to move")
    for _ in range(MAX_TRIES):
        region, floor = carve(rng, grid_size)
        cells = sorted(region)
        if len(cells) < boxes + 2:
            continue
        picked = rng.sample(cells, boxes + 1)
        goals, robot = picked[:boxes], picked[boxes]
        start, robot = reverse_play(rng, region, goals, robot, steps=100 * boxes * grid_size)
        if start != goals:
            break
    else:
        raise ValueError(f"no layout of grid_size={grid_size} let {boxes} boxes move in {MAX_TRIES} tries: "
                         "lower boxes or raise grid_size")
    return render(name, grid_size, floor, goals, start, robot)


def render(name: str, size: int, floor: set[Cell], goals: list[Cell], boxes: list[Cell], robot: Cell) -> str:
    """Return the PDDL text of a problem: box i must reach goals[i]."""
    def loc(cell: Cell) -> str:
        return f"loc_{cell[0] + 1}_{cell[1] + 1}"

    objects = [" ".join(loc((r, c)) for r in range(size) for c in range(size)) + " - location",
               " ".join(f"box{i + 1}" for i in range(len(boxes))) + " - box"]
    init = [f"(at-robot {loc(robot)})"] + [f"(at box{i + 1} {loc(b)})" for i, b in enumerate(boxes)]
    init += [f"(clear {loc(cell)})" for cell in sorted(floor) if cell not in boxes]
    for cell in sorted(floor):
        for direction, dr, dc in DIRECTIONS:
            other = (cell[0] + dr, cell[1] + dc)
            if other in floor:
                init.append(f"(adjacent {loc(cell)} {loc(other)} {direction})")
    goal = [f"(at box{i + 1} {loc(g)})" for i, g in enumerate(goals)]
    return problem_text(name, "sokoban", objects, init, goal, object_lines=True)

"""Generate Floortile instances in the layout of the IPC 2023 Learning Track.

The domain is the Learning Track's Floortile (typed; no action costs; movements named
``move_up`` ..., painting only up and down), so the shipped ``floortile`` model applies to these
problems. A problem is described by the parameters the Learning Track's files name in their
first line (``rows``, ``columns``, ``robots``): as in those files, the tiles are
``tile_R_C`` for rows 0..rows and columns 1..columns, every tile of rows 1..rows must be painted
in a checkerboard (white where R + C is even, black elsewhere), row 0 stays unpainted, and
every robot stands on a random tile (of any row) holding a random one of the two colours, both of
which are available.

A robot cannot stand on a painted tile nor paint the tile it stands on, so every robot ends on
row 0: more robots than columns leave no plan, and are rejected. With at most one robot per
column every problem is solvable (every Learning Track file has so): the robots paint the rows
from the top one down, each from the row below it, and keep to the unpainted rows underneath.

The testing/easy files stop at 24 tiles to paint with 3 robots (``rows=4, columns=6,
robots=3``), the training/easy ones at 30 (``rows=5, columns=6``, the defaults);
``rows=12, columns=10, robots=4`` is 4-5x that.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

COLOURS = ("white", "black")

DOMAIN_PDDL = """\
(define (domain floortile)
  (:requirements :typing)
  (:types robot tile color - object)
  (:predicates (robot-at ?r - robot ?x - tile) (up ?x - tile ?y - tile) (down ?x - tile ?y - tile)
               (right ?x - tile ?y - tile) (left ?x - tile ?y - tile) (clear ?x - tile)
               (painted ?x - tile ?c - color) (robot-has ?r - robot ?c - color) (available-color ?c - color)
               (free-color ?r - robot))
  (:action change_color
    :parameters (?r - robot ?c - color ?c2 - color)
    :precondition (and (robot-has ?r ?c) (available-color ?c2))
    :effect (and (not (robot-has ?r ?c)) (robot-has ?r ?c2)))
  (:action paint_up
    :parameters (?r - robot ?y - tile ?x - tile ?c - color)
    :precondition (and (robot-has ?r ?c) (robot-at ?r ?x) (up ?y ?x) (clear ?y))
    :effect (and (not (clear ?y)) (painted ?y ?c)))
  (:action paint_down
    :parameters (?r - robot ?y - tile ?x - tile ?c - color)
    :precondition (and (robot-has ?r ?c) (robot-at ?r ?x) (down ?y ?x) (clear ?y))
    :effect (and (not (clear ?y)) (painted ?y ?c)))
  (:action move_up
    :parameters (?r - robot ?x - tile ?y - tile)
    :precondition (and (robot-at ?r ?x) (up ?y ?x) (clear ?y))
    :effect (and (robot-at ?r ?y) (not (robot-at ?r ?x)) (clear ?x) (not (clear ?y))))
  (:action move_down
    :parameters (?r - robot ?x - tile ?y - tile)
    :precondition (and (robot-at ?r ?x) (down ?y ?x) (clear ?y))
    :effect (and (robot-at ?r ?y) (not (robot-at ?r ?x)) (clear ?x) (not (clear ?y))))
  (:action move_right
    :parameters (?r - robot ?x - tile ?y - tile)
    :precondition (and (robot-at ?r ?x) (right ?y ?x) (clear ?y))
    :effect (and (robot-at ?r ?y) (not (robot-at ?r ?x)) (clear ?x) (not (clear ?y))))
  (:action move_left
    :parameters (?r - robot ?x - tile ?y - tile)
    :precondition (and (robot-at ?r ?x) (left ?y ?x) (clear ?y))
    :effect (and (robot-at ?r ?y) (not (robot-at ?r ?x)) (clear ?x) (not (clear ?y)))))
"""


def generate_problem(rng: random.Random, *, rows: int = 5, columns: int = 6, robots: int = 3,
                     name: str = "floortile") -> str:
    """Return the PDDL text of a Floortile problem (see the module docstring)."""
    require_int("rows", rows, 1)
    require_int("columns", columns, 1)
    require_int("robots", robots, 1, columns, why="at most columns: every robot ends on the unpainted row 0")
    tile = [[f"tile_{r}_{c}" for c in range(1, columns + 1)] for r in range(rows + 1)]
    tiles = [t for row in tile for t in row]
    bots = [f"robot{i + 1}" for i in range(robots)]
    starts = rng.sample(tiles, robots)
    init = []
    for bot, start in zip(bots, starts):
        init += [f"(robot-at {bot} {start})", f"(robot-has {bot} {rng.choice(COLOURS)})"]
    init += [f"(available-color {c})" for c in COLOURS]
    init += [f"(clear {t})" for t in tiles if t not in starts]
    # (up y x): y is the tile above x; (right y x): y is the tile right of x.
    init += [f"(up {tile[r + 1][c]} {tile[r][c]})" for r in range(rows) for c in range(columns)]
    init += [f"(down {tile[r][c]} {tile[r + 1][c]})" for r in range(rows) for c in range(columns)]
    init += [f"(left {tile[r][c]} {tile[r][c + 1]})" for r in range(rows + 1) for c in range(columns - 1)]
    init += [f"(right {tile[r][c + 1]} {tile[r][c]})" for r in range(rows + 1) for c in range(columns - 1)]
    goal = [f"(painted {tile[r][c - 1]} {COLOURS[(r + c) % 2]})" for r in range(1, rows + 1)
            for c in range(1, columns + 1)]
    objects = [f"{' '.join(tiles)} - tile", f"{' '.join(bots)} - robot", f"{' '.join(COLOURS)} - color"]
    return problem_text(name, "floortile", objects, init, goal, object_lines=True)

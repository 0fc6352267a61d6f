"""Generate Visitall-xy instances: visit every cell of an obstacle-free grid.

Source: Ståhlberg, Bonet & Geffner (2024), "Learning General Policies for Classical
Planning Domains: Getting Beyond C2", Section 8 ("Visitall") and the Visitall-xy
discussion in Section 9. The paper publishes neither the domain file nor its generator.

Faithful to the paper:
  * the grid is described with coordinates as in Navig-xy: n + m objects of types
    ``xcoord`` and ``ycoord``, static ``succ-x``/``succ-y``, the dummy ``cell(x, y)`` and
    the robot position ``at(x, y)``; there are no obstacles;
  * the goal is to have visited every cell (``visited(x, y)`` for all cells). The paper
    trains on at most 21 cells and tests on more, up to 100 cells.

Our own choices:
  * four actions ``move-{right,left,up,down}`` that mark the target cell visited, in the
    style of the IPC Visitall domain;
  * the start cell is uniformly random and counts as visited in the initial state;
  * the default 4 x 4 grid is a training size; grids of a single cell are rejected
    because their goal holds initially.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.navig_xy import (
    cell_atom,
    check_grid_size,
    coordinate_facts,
    coordinate_objects,
)
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain visitall-xy)
  (:requirements :strips :typing)
  (:types xcoord ycoord)
  (:predicates
    (succ-x ?x1 - xcoord ?x2 - xcoord)
    (succ-y ?y1 - ycoord ?y2 - ycoord)
    (cell ?x - xcoord ?y - ycoord)
    (at ?x - xcoord ?y - ycoord)
    (visited ?x - xcoord ?y - ycoord))
  (:action move-right
    :parameters (?x ?nx - xcoord ?y - ycoord)
    :precondition (and (at ?x ?y) (succ-x ?x ?nx))
    :effect (and (not (at ?x ?y)) (at ?nx ?y) (visited ?nx ?y)))
  (:action move-left
    :parameters (?x ?nx - xcoord ?y - ycoord)
    :precondition (and (at ?x ?y) (succ-x ?nx ?x))
    :effect (and (not (at ?x ?y)) (at ?nx ?y) (visited ?nx ?y)))
  (:action move-up
    :parameters (?x - xcoord ?y ?ny - ycoord)
    :precondition (and (at ?x ?y) (succ-y ?y ?ny))
    :effect (and (not (at ?x ?y)) (at ?x ?ny) (visited ?x ?ny)))
  (:action move-down
    :parameters (?x - xcoord ?y ?ny - ycoord)
    :precondition (and (at ?x ?y) (succ-y ?ny ?y))
    :effect (and (not (at ?x ?y)) (at ?x ?ny) (visited ?x ?ny))))
"""


def generate_problem(rng: random.Random, *, width: int = 4, height: int = 4,
                     name: str = "visitall-xy") -> str:
    """Return the PDDL text of a Visitall-xy problem with a random start cell."""
    check_grid_size(width, height)
    cells = [(x, y) for x in range(1, width + 1) for y in range(1, height + 1)]
    start = rng.choice(cells)
    init = coordinate_facts(width, height)
    init += [cell_atom("at", start), cell_atom("visited", start)]
    goal = [cell_atom("visited", c) for c in cells]

    return problem_text(name, "visitall-xy", coordinate_objects(width, height), init, goal, object_lines=True)

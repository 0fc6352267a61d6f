"""Generate Visitall instances: visit cells of given colours in a grid of coloured cells.

Source: Funkquist, Ståhlberg & Geffner (2024), "Learning to Ground Existentially Quantified
Goals", Section 2 (Visit-1) and Section 9.4 with Figure 4. The paper describes no generator;
this module writes its own.

Faithful to the paper:
  * one object per cell, ``connected(x, y)`` between adjacent cells, ``at-robot(x)`` and
    ``visited(x)``; the robot moves up, down, left or right;
  * every cell has one colour; the goal is ``visited(xi)`` for cell variables with colour
    atoms, as in Figure 4;
  * the paper trains on 2 to 16 cells; the default 3 x 3 grid has at most 9 * 2^8 states.

Our own choices:
  * the domain is typed (``cell``), with one ``move`` action that marks the target visited,
    as in the IPC Visitall domain;
  * the start cell is uniformly random and is visited in the initial state;
  * the witness is ``variables`` distinct random cells; every cell can be reached.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.exists_common import (
    COLOUR_PREDICATES,
    GOAL_REQUIREMENTS,
    can_bind,
    check_at_most,
    check_goal_parameters,
    colour_atoms,
    exists_goal,
    grid_cells,
    grid_links,
    paint,
    sample_open,
    variable,
)
from up_gnnplan.datasets.generators.navig_xy import check_grid_size
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_NAME = "exists-visitall"

DOMAIN_PDDL = f"""\
(define (domain {DOMAIN_NAME})
  (:requirements :strips :typing {GOAL_REQUIREMENTS})
  (:types cell)
  (:predicates
    (connected ?from ?to - cell)
    (at-robot ?c - cell)
    (visited ?c - cell)
    {COLOUR_PREDICATES})
  (:action move
    :parameters (?from ?to - cell)
    :precondition (and (at-robot ?from) (connected ?from ?to))
    :effect (and (at-robot ?to) (not (at-robot ?from)) (visited ?to))))
"""

Sample = tuple[int, list[str], list[int]]  # start cell, colour per cell, witness cells


def generate_problem(rng: random.Random, *, width: int = 3, height: int = 3, colours: int = 3, variables: int = 2,
                     neq: int = 1, name: str = "exists-visitall") -> str:
    """Return a Visitall problem whose goal is to visit ``variables`` cells of given colours."""
    check_grid_size(width, height)
    check_goal_parameters(colours, variables, neq)
    check_at_most("variables", variables, width * height, "cells")
    check_at_most("colours", colours, width * height, "cells")
    cells = grid_cells(width, height)

    def sample() -> Sample:
        return rng.randrange(len(cells)), paint(rng, len(cells), colours), rng.sample(range(len(cells)), variables)

    def holds(sampled: Sample) -> bool:
        # Only the start cell is visited initially.
        start, painted, witness = sampled
        return can_bind([[start] if painted[start] == painted[w] else [] for w in witness], distinct=bool(neq))

    start, painted, witness = sample_open(sample, holds)
    init = grid_links("connected", width, height)
    init += [f"({colour} {cell})" for cell, colour in zip(cells, painted)]
    init += [f"(at-robot {cells[start]})", f"(visited {cells[start]})"]
    body = colour_atoms([painted[c] for c in witness]) + [f"(visited {variable(i)})" for i in range(variables)]
    return problem_text(name, DOMAIN_NAME, [f"{' '.join(cells)} - cell"], init,
                        exists_goal(variables, body, neq, "cell"), object_lines=True)

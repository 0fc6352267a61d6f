"""Generate Delivery instances: a truck distributes packages to cells of given colours.

Source: Funkquist, Ståhlberg & Geffner (2024), "Learning to Ground Existentially Quantified
Goals", Section 9.3 and Figure 3. The paper describes no generator; this module writes its own.

Faithful to the paper:
  * one truck, several packages and a grid of coloured cells with an adjacency relation;
  * the goal is ``at(PACKAGE, xi)`` for some packages (constants) and, optionally,
    ``at(TRUCK, xj)``; the variables are cells with colour atoms, as in Figure 3;
  * the paper trains on 6 to 25 objects; the default 3 x 3 grid with 2 packages (12 objects)
    has under 900 states.

Our own choices:
  * the domain is the Delivery of Ståhlberg, Bonet & Geffner (2022) written anew: types
    ``cell`` and ``locatable`` (``truck``, ``package``), ``adjacent``, ``at``, ``carrying``
    and ``empty`` (the truck carries one package at a time); actions ``move``,
    ``pick-package`` and ``drop-package``;
  * the truck and the packages start in uniformly random cells, the truck empty;
  * the witness is ``variables`` distinct random cells; with ``truck_goal = 1`` the last
    variable is the truck's cell, and the others are the cells of distinct random packages
    (listed in package order). Every placement of the packages and the truck is reachable.
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
    grid_cells,
    grid_links,
    paint,
    sample_open,
    variable,
)
from up_gnnplan.datasets.generators.navig_xy import check_grid_size
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_NAME = "exists-delivery"
TRUCK = "t1"

DOMAIN_PDDL = f"""\
(define (domain {DOMAIN_NAME})
  (:requirements :strips :typing {GOAL_REQUIREMENTS})
  (:types cell locatable - object truck package - locatable)
  (:predicates
    (adjacent ?from ?to - cell)
    (at ?x - locatable ?c - cell)
    (carrying ?t - truck ?p - package)
    (empty ?t - truck)
    {COLOUR_PREDICATES})
  (:action move
    :parameters (?t - truck ?from ?to - cell)
    :precondition (and (at ?t ?from) (adjacent ?from ?to))
    :effect (and (at ?t ?to) (not (at ?t ?from))))
  (:action pick-package
    :parameters (?t - truck ?p - package ?c - cell)
    :precondition (and (at ?t ?c) (at ?p ?c) (empty ?t))
    :effect (and (carrying ?t ?p) (not (at ?p ?c)) (not (empty ?t))))
  (:action drop-package
    :parameters (?t - truck ?p - package ?c - cell)
    :precondition (and (at ?t ?c) (carrying ?t ?p))
    :effect (and (at ?p ?c) (empty ?t) (not (carrying ?t ?p)))))
"""


@dataclass(frozen=True)
class Layout:
    """Hold one sampled instance; cells index ``grid_cells(width, height)``, packages are 0-based."""

    width: int
    height: int
    truck: int
    package_cells: tuple[int, ...]
    painted: tuple[str, ...]
    goal_packages: tuple[int, ...]  # the packages of ?x1, ?x2, ... (then the truck's, if truck_goal)
    witness: tuple[int, ...]  # the cell bound to each variable


def sample_layout(rng: random.Random, width: int, height: int, packages: int, colours: int, variables: int,
                  truck_goal: int) -> Layout:
    """Return random start cells, cell colours, goal packages and a witness of distinct cells."""
    cells = width * height
    truck = rng.randrange(cells)
    package_cells = tuple(rng.randrange(cells) for _ in range(packages))
    painted = tuple(paint(rng, cells, colours))
    goal_packages = tuple(sorted(rng.sample(range(packages), variables - truck_goal)))
    witness = tuple(rng.sample(range(cells), variables))
    return Layout(width, height, truck, package_cells, painted, goal_packages, witness)


def _holds_initially(layout: Layout, neq: int) -> bool:
    """Return whether the goal packages, and the truck, already stand on cells of the goal's colours."""
    where = [layout.package_cells[p] for p in layout.goal_packages]
    where += [layout.truck] * (len(layout.witness) - len(where))
    candidates = [[cell] if layout.painted[cell] == layout.painted[w] else [] for cell, w in zip(where, layout.witness)]
    return can_bind(candidates, distinct=bool(neq))


def render_problem(layout: Layout, neq: int, name: str) -> str:
    """Return the problem text of a layout."""
    cells = grid_cells(layout.width, layout.height)
    packages = [f"p{i + 1}" for i in range(len(layout.package_cells))]
    init = grid_links("adjacent", layout.width, layout.height)
    init += [f"({colour} {cell})" for cell, colour in zip(cells, layout.painted)]
    init += [f"(at {TRUCK} {cells[layout.truck]})", f"(empty {TRUCK})"]
    init += [f"(at {package} {cells[cell]})" for package, cell in zip(packages, layout.package_cells)]
    located = [packages[p] for p in layout.goal_packages]
    located += [TRUCK] * (len(layout.witness) - len(located))
    body = colour_atoms([layout.painted[cell] for cell in layout.witness])
    body += [f"(at {item} {variable(i)})" for i, item in enumerate(located)]
    objects = [f"{' '.join(cells)} - cell", f"{TRUCK} - truck", f"{' '.join(packages)} - package"]
    return problem_text(name, DOMAIN_NAME, objects, init, exists_goal(len(layout.witness), body, neq, "cell"),
                        object_lines=True)


def generate_problem(rng: random.Random, *, width: int = 3, height: int = 3, packages: int = 2, colours: int = 3,
                     variables: int = 2, neq: int = 1, truck_goal: int = 1, name: str = "exists-delivery") -> str:
    """Return a Delivery problem: bring packages, and the truck if ``truck_goal``, to cells of given colours."""
    check_grid_size(width, height)
    check_int("packages", packages, 1)
    check_goal_parameters(colours, variables, neq)
    check_int("truck_goal", truck_goal, 0, 1)
    check_at_most("variables", variables, width * height, "cells")
    check_at_most("variables", variables, packages + truck_goal, "packages plus truck_goal")
    check_at_most("colours", colours, width * height, "cells")
    layout = sample_open(lambda: sample_layout(rng, width, height, packages, colours, variables, truck_goal),
                         lambda sampled: _holds_initially(sampled, neq))
    return render_problem(layout, neq, name)

"""Generate Navig-xy instances: walk a robot to a goal cell in a grid with blocked cells.

Source: Ståhlberg, Bonet & Geffner (2024), "Learning General Policies for Classical
Planning Domains: Getting Beyond C2", Section 7 ("Grid Navigation with Obstacles",
Figure 1). The paper publishes neither the domain file nor its generator.

Faithful to the paper:
  * an n x m grid is represented by n + m coordinate objects X and Y (types ``xcoord``
    and ``ycoord``), not by one object per cell;
  * static successor relations ``succ-x`` and ``succ-y``, the binary ``at(x, y)`` for the
    robot (initial state and goal), ``blocked(x, y)`` and the dummy ``cell(x, y)`` that
    names every cell of the grid;
  * the goal is a single ``at(xg, yg)`` atom and every instance is solvable. The paper
    trains on n*m < 30 and tests on n*m <= 32; the defaults are a training size.

Our own choices:
  * four actions ``move-{right,left,up,down}``; a move needs the target cell not to be
    blocked, written as a negative precondition on the static ``blocked`` predicate;
  * start and goal are distinct uniformly random cells, and round(blocked_ratio * n*m)
    other cells are blocked uniformly at random; the layout is resampled until a BFS
    over the free cells reaches the goal. The paper remarks that its instances have
    "just one free path to the goal"; ours may have several.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from up_gnnplan.datasets.generators.pddl import problem_text

Cell = tuple[int, int]

# Resampling budget before a layout is declared infeasible for the given parameters.
MAX_TRIES = 1000

DOMAIN_PDDL = """\
(define (domain navig-xy)
  (:requirements :strips :typing :negative-preconditions)
  (:types xcoord ycoord)
  (:predicates
    (succ-x ?x1 - xcoord ?x2 - xcoord)
    (succ-y ?y1 - ycoord ?y2 - ycoord)
    (cell ?x - xcoord ?y - ycoord)
    (blocked ?x - xcoord ?y - ycoord)
    (at ?x - xcoord ?y - ycoord))
  (:action move-right
    :parameters (?x ?nx - xcoord ?y - ycoord)
    :precondition (and (at ?x ?y) (succ-x ?x ?nx) (not (blocked ?nx ?y)))
    :effect (and (not (at ?x ?y)) (at ?nx ?y)))
  (:action move-left
    :parameters (?x ?nx - xcoord ?y - ycoord)
    :precondition (and (at ?x ?y) (succ-x ?nx ?x) (not (blocked ?nx ?y)))
    :effect (and (not (at ?x ?y)) (at ?nx ?y)))
  (:action move-up
    :parameters (?x - xcoord ?y ?ny - ycoord)
    :precondition (and (at ?x ?y) (succ-y ?y ?ny) (not (blocked ?x ?ny)))
    :effect (and (not (at ?x ?y)) (at ?x ?ny)))
  (:action move-down
    :parameters (?x - xcoord ?y ?ny - ycoord)
    :precondition (and (at ?x ?y) (succ-y ?ny ?y) (not (blocked ?x ?ny)))
    :effect (and (not (at ?x ?y)) (at ?x ?ny))))
"""


@dataclass(frozen=True)
class Layout:
    """Hold one sampled grid: 1-based cells (x, y), blocked cells sorted, BFS distance."""

    width: int
    height: int
    start: Cell
    goal: Cell
    blocked: tuple[Cell, ...]
    distance: int


def check_grid_size(width: int, height: int) -> None:
    """Raise ValueError unless width and height are positive ints giving >= 2 cells."""
    for label, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{label} must be an int >= 1, got {value!r}")
    if width * height < 2:
        raise ValueError(f"the grid needs at least 2 cells, got {width}x{height}")


def coordinate_objects(width: int, height: int) -> list[str]:
    """Return the :objects lines declaring x1..xn and y1..ym."""
    xs = " ".join(f"x{i}" for i in range(1, width + 1))
    ys = " ".join(f"y{j}" for j in range(1, height + 1))
    return [f"{xs} - xcoord", f"{ys} - ycoord"]


def coordinate_facts(width: int, height: int) -> list[str]:
    """Return the static succ-x, succ-y and cell atoms of a width x height grid."""
    facts = [f"(succ-x x{i} x{i + 1})" for i in range(1, width)]
    facts += [f"(succ-y y{j} y{j + 1})" for j in range(1, height)]
    facts += [f"(cell x{i} y{j})" for i in range(1, width + 1) for j in range(1, height + 1)]
    return facts


def cell_atom(predicate: str, cell: Cell) -> str:
    """Return the atom ``(predicate xI yJ)`` for a 1-based cell."""
    return f"({predicate} x{cell[0]} y{cell[1]})"


def grid_distance(width: int, height: int, blocked: set[Cell] | tuple[Cell, ...],
                  start: Cell, goal: Cell) -> int | None:
    """Return the 4-neighbour BFS distance from start to goal, or None if unreachable."""
    blocked = set(blocked)
    frontier = deque([start])
    dist = {start: 0}
    while frontier:
        x, y = frontier.popleft()
        if (x, y) == goal:
            return dist[(x, y)]
        for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if (1 <= nxt[0] <= width and 1 <= nxt[1] <= height
                    and nxt not in blocked and nxt not in dist):
                dist[nxt] = dist[(x, y)] + 1
                frontier.append(nxt)
    return None


def sample_layout(rng: random.Random, *, width: int, height: int,
                  blocked_ratio: float) -> Layout:
    """Sample start, goal and blocked cells until the goal is reachable."""
    check_grid_size(width, height)
    if not isinstance(blocked_ratio, (int, float)) or not 0 <= blocked_ratio < 1:
        raise ValueError(f"blocked_ratio must be in [0, 1), got {blocked_ratio!r}")
    cells = [(x, y) for x in range(1, width + 1) for y in range(1, height + 1)]
    # Start and goal are never blocked, so at most len(cells) - 2 cells can be.
    num_blocked = min(round(blocked_ratio * len(cells)), len(cells) - 2)
    for _ in range(MAX_TRIES):
        start, goal = rng.sample(cells, 2)
        free = [c for c in cells if c != start and c != goal]
        blocked = tuple(sorted(rng.sample(free, num_blocked)))
        distance = grid_distance(width, height, blocked, start, goal)
        if distance is not None:
            return Layout(width, height, start, goal, blocked, distance)
    raise ValueError(
        f"no solvable {width}x{height} navig-xy layout with blocked_ratio={blocked_ratio} "
        f"in {MAX_TRIES} tries; lower blocked_ratio")


def render_problem(layout: Layout, name: str) -> str:
    """Return the problem PDDL text of a sampled layout."""
    objects = coordinate_objects(layout.width, layout.height)
    init = coordinate_facts(layout.width, layout.height)
    init += [cell_atom("blocked", c) for c in layout.blocked]
    init.append(cell_atom("at", layout.start))
    return problem_text(name, "navig-xy", objects, init, cell_atom("at", layout.goal), object_lines=True)


def generate_problem(rng: random.Random, *, width: int = 6, height: int = 4,
                     blocked_ratio: float = 0.2, name: str = "navig-xy") -> str:
    """Return the PDDL text of a random solvable Navig-xy problem."""
    layout = sample_layout(rng, width=width, height=height, blocked_ratio=blocked_ratio)
    return render_problem(layout, name)

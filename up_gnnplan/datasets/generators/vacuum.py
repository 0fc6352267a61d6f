"""Generate Vacuum instances: robots with private traversal maps must clean one location.

Source: Ståhlberg, Bonet & Geffner (2024), "Learning General Policies for Classical
Planning Domains: Getting Beyond C2", Section 8 ("Vacuum") and the Vacuum discussion in
Section 9. The paper publishes neither the domain file nor its generator.

Faithful to the paper:
  * the ternary ``adjacent(r, x, y)`` says that robot r can move from x to y, so every
    robot has its own traversal map and some robots can go between two locations while
    others cannot; ``at(r, x)`` is the robot position;
  * there is a single dirty location g, ``dirty(g)``, and the goal is ``clean(g)``; the
    optimal plan sends the robot nearest to g there and cleans, so the optimal cost is
    min over robots of (distance to g) + 1;
  * sizes: training uses 8-38 locations and 1-6 robots, test 40-93 locations and 6-10
    robots; the defaults are a training size.

Our own choices:
  * each robot's map covers a random subset of about ``map_fraction`` of the locations
    (always containing its start), is a random spanning tree of that subset plus
    ``extra_edges`` random extra edges, and is symmetric;
  * each map after the first shares a location with an earlier map and every location is
    in some map, so the union of the maps is connected. "In the middle" is read as: g is
    a centre (minimum eccentricity) of that union, preferring locations where no robot
    starts. Since g lies in some robot's connected map, that robot reaches g, so every
    instance is solvable; other robots may be unable to reach g;
  * robots may share a start location;
  * the cleaning action is named ``clean-location`` rather than ``clean``: Unified
    Planning's PDDL reader rejects an action named like the ``clean`` predicate.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from up_gnnplan.datasets.generators.pddl import problem_text

Edge = tuple[int, int]

DOMAIN_PDDL = """\
(define (domain vacuum)
  (:requirements :strips :typing)
  (:types robot location)
  (:predicates
    (adjacent ?r - robot ?from - location ?to - location)
    (at ?r - robot ?l - location)
    (dirty ?l - location)
    (clean ?l - location))
  (:action move
    :parameters (?r - robot ?from - location ?to - location)
    :precondition (and (at ?r ?from) (adjacent ?r ?from ?to))
    :effect (and (not (at ?r ?from)) (at ?r ?to)))
  (:action clean-location
    :parameters (?r - robot ?l - location)
    :precondition (and (at ?r ?l) (dirty ?l))
    :effect (and (not (dirty ?l)) (clean ?l))))
"""


@dataclass(frozen=True)
class VacuumLayout:
    """Hold one sampled instance: 0-based locations, per-robot undirected edges (a < b)."""

    locations: int
    starts: tuple[int, ...]
    maps: tuple[tuple[Edge, ...], ...]
    dirty: int

    def distances(self) -> tuple[int | None, ...]:
        """Return each robot's BFS distance to the dirty location (None if unreachable)."""
        return tuple(_bfs(self.locations, edges, start).get(self.dirty)
                     for edges, start in zip(self.maps, self.starts))


def _bfs(n: int, edges: tuple[Edge, ...] | list[Edge], source: int) -> dict[int, int]:
    """Return BFS distances from source over undirected edges on locations 0..n-1."""
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    dist = {source: 0}
    frontier = deque([source])
    while frontier:
        here = frontier.popleft()
        for there in neighbours[here]:
            if there not in dist:
                dist[there] = dist[here] + 1
                frontier.append(there)
    return dist


def _check_params(locations, robots, extra_edges, map_fraction) -> None:
    """Raise ValueError on a parameter outside its domain."""
    for label, value, minimum in (("locations", locations, 2), ("robots", robots, 1),
                                  ("extra_edges", extra_edges, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{label} must be an int >= {minimum}, got {value!r}")
    if not isinstance(map_fraction, (int, float)) or not 0 < map_fraction <= 1:
        raise ValueError(f"map_fraction must be in (0, 1], got {map_fraction!r}")


def _random_map(rng: random.Random, members: list[int], extra_edges: int) -> tuple[Edge, ...]:
    """Return a random spanning tree of members plus up to extra_edges other edges."""
    order = sorted(members)
    rng.shuffle(order)
    # Attaching each node to a random earlier one yields a connected tree.
    tree = {tuple(sorted((node, order[rng.randrange(i)])))
            for i, node in enumerate(order) if i > 0}
    spare = [(a, b) for a in sorted(members) for b in sorted(members)
             if a < b and (a, b) not in tree]
    extra = rng.sample(spare, min(extra_edges, len(spare)))
    return tuple(sorted(tree | set(extra)))


def sample_layout(rng: random.Random, *, locations: int, robots: int, extra_edges: int,
                  map_fraction: float) -> VacuumLayout:
    """Sample starts, traversal maps and a central dirty location reachable by some robot."""
    _check_params(locations, robots, extra_edges, map_fraction)
    starts = tuple(rng.randrange(locations) for _ in range(robots))
    size = min(locations, max(2, round(map_fraction * locations)))
    subsets: list[set[int]] = []
    covered: set[int] = set()
    for start in starts:
        members = {start}
        if covered and start not in covered:
            members.add(rng.choice(sorted(covered)))  # keeps the union of maps connected
        others = [loc for loc in range(locations) if loc not in members]
        members.update(rng.sample(others, max(0, size - len(members))))
        subsets.append(members)
        covered |= members
    for loc in range(locations):
        if loc not in covered:
            subsets[rng.randrange(robots)].add(loc)
    maps = tuple(_random_map(rng, sorted(m), extra_edges) for m in subsets)

    union = sorted({edge for edges in maps for edge in edges})
    eccentricity = {}
    for loc in range(locations):
        dist = _bfs(locations, union, loc)
        assert len(dist) == locations, "union of traversal maps must be connected"
        eccentricity[loc] = max(dist.values())
    candidates = [loc for loc in range(locations) if loc not in starts] or list(range(locations))
    best = min(eccentricity[loc] for loc in candidates)
    dirty = rng.choice([loc for loc in candidates if eccentricity[loc] == best])
    return VacuumLayout(locations, starts, maps, dirty)


def render_problem(layout: VacuumLayout, name: str) -> str:
    """Return the problem PDDL text of a sampled layout (objects r1.., l1..)."""
    robots = [f"r{i + 1}" for i in range(len(layout.starts))]
    locs = [f"l{i + 1}" for i in range(layout.locations)]
    init = [f"(at {r} {locs[s]})" for r, s in zip(robots, layout.starts)]
    for r, edges in zip(robots, layout.maps):
        for a, b in edges:
            init += [f"(adjacent {r} {locs[a]} {locs[b]})", f"(adjacent {r} {locs[b]} {locs[a]})"]
    init.append(f"(dirty {locs[layout.dirty]})")
    objects = [f"{' '.join(robots)} - robot", f"{' '.join(locs)} - location"]
    return problem_text(name, "vacuum", objects, init, f"(clean {locs[layout.dirty]})", object_lines=True)


def generate_problem(rng: random.Random, *, locations: int = 12, robots: int = 3,
                     extra_edges: int = 2, map_fraction: float = 0.6,
                     name: str = "vacuum") -> str:
    """Return the PDDL text of a random solvable Vacuum problem."""
    layout = sample_layout(rng, locations=locations, robots=robots,
                           extra_edges=extra_edges, map_fraction=map_fraction)
    return render_problem(layout, name)

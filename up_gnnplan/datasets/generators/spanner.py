"""Generate Spanner instances in the layout of the IPC 2023 Learning Track.

The domain is the Learning Track's Spanner (typed: a man, spanners and nuts are locatables), so
the shipped ``spanner`` model applies to these problems. A problem is described by the
parameters the Learning Track's files name in their first line (``spanners``, ``nuts``,
``locations``): as in those files, the man ``bob`` starts at the ``shed``, one-way links lead
from the shed through ``location1 .. locationN`` to the ``gate``, every spanner lies at a
random one of those N locations, and every nut is loose at the gate. A spanner tightens one nut
and cannot walk back, so the problem is solvable exactly when there are at least as many
spanners as nuts (true of every Learning Track file); fewer are rejected.

The testing/easy files stop at 10 spanners, 5 nuts and 10 locations; ``spanners=50, nuts=25,
locations=40`` is 4-5x that.
"""

from __future__ import annotations

import random
from itertools import pairwise

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain spanner)
  (:requirements :typing :strips)
  (:types location locatable - object
          man nut spanner - locatable)
  (:predicates (at ?m - locatable ?l - location) (carrying ?m - man ?s - spanner) (usable ?s - spanner)
               (link ?l1 - location ?l2 - location) (tightened ?n - nut) (loose ?n - nut))
  (:action walk
    :parameters (?start - location ?end - location ?m - man)
    :precondition (and (at ?m ?start) (link ?start ?end))
    :effect (and (not (at ?m ?start)) (at ?m ?end)))
  (:action pickup_spanner
    :parameters (?l - location ?s - spanner ?m - man)
    :precondition (and (at ?m ?l) (at ?s ?l))
    :effect (and (not (at ?s ?l)) (carrying ?m ?s)))
  (:action tighten_nut
    :parameters (?l - location ?s - spanner ?m - man ?n - nut)
    :precondition (and (at ?m ?l) (at ?n ?l) (carrying ?m ?s) (usable ?s) (loose ?n))
    :effect (and (not (loose ?n)) (not (usable ?s)) (tightened ?n))))
"""


def generate_problem(rng: random.Random, *, spanners: int = 10, nuts: int = 5, locations: int = 10,
                     name: str = "spanner") -> str:
    """Return the PDDL text of a Spanner problem (see the module docstring)."""
    require_int("nuts", nuts, 1)
    require_int("spanners", spanners, nuts, why="one spanner per nut at least, or no plan exists")
    require_int("locations", locations, 1)
    path = [f"location{i + 1}" for i in range(locations)]
    tools = [f"spanner{i + 1}" for i in range(spanners)]
    bolts = [f"nut{i + 1}" for i in range(nuts)]
    init = ["(at bob shed)"]
    for tool in tools:
        init += [f"(at {tool} {rng.choice(path)})", f"(usable {tool})"]
    for bolt in bolts:
        init += [f"(at {bolt} gate)", f"(loose {bolt})"]
    chain = ["shed"] + path + ["gate"]
    init += [f"(link {a} {b})" for a, b in pairwise(chain)]
    objects = ["bob - man", f"{' '.join(tools)} - spanner", f"{' '.join(bolts)} - nut",
               f"{' '.join(chain)} - location"]
    return problem_text(name, "spanner", objects, init, [f"(tightened {b})" for b in bolts], object_lines=True)

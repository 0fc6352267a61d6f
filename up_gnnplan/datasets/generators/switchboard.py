"""Generate Switchboard instances: disjunctive and universal preconditions, written here.

Lamps wired to switches: a lamp lights from its battery, or when every switch it is wired to is
closed (``(or (battery ?l) (forall (?s - switch) (imply (wired ?l ?s) (closed ?s))))``); the goal:
every lamp lit and every switch open. A third of the lamps (at random) have batteries, each lamp is
wired to 1-3 random switches, half the switches start closed. Every problem is solvable: close all
switches, light every lamp, open all switches. No public domain or model: a domain of the PDDL
features ``gnnplan learn`` takes beyond STRIPS, for its tests and ``benchmarks/learn_eval.py``.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain switchboard)
  (:requirements :strips :typing :negative-preconditions :disjunctive-preconditions :universal-preconditions)
  (:types lamp switch)
  (:predicates (lit ?l - lamp) (battery ?l - lamp) (wired ?l - lamp ?s - switch) (closed ?s - switch))
  (:action close
    :parameters (?s - switch)
    :precondition (not (closed ?s))
    :effect (closed ?s))
  (:action open
    :parameters (?s - switch)
    :precondition (closed ?s)
    :effect (not (closed ?s)))
  (:action light
    :parameters (?l - lamp)
    :precondition (and (not (lit ?l))
                       (or (battery ?l)
                           (forall (?s - switch) (imply (wired ?l ?s) (closed ?s)))))
    :effect (lit ?l)))
"""


def generate_problem(rng: random.Random, *, lamps: int = 4, switches: int = 3, name: str = "switchboard") -> str:
    """Return the PDDL text of a Switchboard problem (see the module docstring)."""
    require_int("lamps", lamps, 1)
    require_int("switches", switches, 1)
    lamp = [f"l{i}" for i in range(1, lamps + 1)]
    switch = [f"s{i}" for i in range(1, switches + 1)]
    init = [f"(battery {lamp_})" for lamp_ in lamp if rng.random() < 0.33]
    for lamp_ in lamp:
        init += [f"(wired {lamp_} {s})" for s in rng.sample(switch, rng.randint(1, min(3, switches)))]
    init += [f"(closed {s})" for s in switch if rng.random() < 0.5]
    goal = [f"(lit {lamp_})" for lamp_ in lamp] + [f"(not (closed {s}))" for s in switch]
    return problem_text(name, "switchboard", [f"{' '.join(lamp)} - lamp", f"{' '.join(switch)} - switch"], init, goal,
                        object_lines=True)

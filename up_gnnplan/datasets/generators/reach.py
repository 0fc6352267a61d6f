"""Generate Reach instances: derived predicates (a recursive rule), written here.

A node reaches another along open edges (``reaches``, derived: an open edge, or an open edge to a
node that reaches it); a jump goes from where one stands to any node it reaches, and an edge opens
only from where one stands. The graph is a line of nodes with a shortcut to the node after next now
and then (probability 0.3), each edge open with probability 1/2; one starts at the first node and
must visit the last. Every problem is solvable: open each edge on the way and jump along it. No
public domain or model: a domain of the PDDL features ``gnnplan learn`` takes beyond STRIPS, for its
tests and ``benchmarks/learn_eval.py``.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain reach)
  (:requirements :strips :typing :negative-preconditions :existential-preconditions :derived-predicates)
  (:types node)
  (:predicates (edge ?x ?y - node) (open ?x ?y - node) (reaches ?x ?y - node) (at ?x - node)
               (visited ?x - node))
  (:derived (reaches ?x ?y - node) (and (edge ?x ?y) (open ?x ?y)))
  (:derived (reaches ?x ?y - node) (exists (?z - node) (and (edge ?x ?z) (open ?x ?z) (reaches ?z ?y))))
  (:action unlock
    :parameters (?x ?y - node)
    :precondition (and (at ?x) (edge ?x ?y) (not (open ?x ?y)))
    :effect (open ?x ?y))
  (:action jump
    :parameters (?x ?y - node)
    :precondition (and (at ?x) (reaches ?x ?y))
    :effect (and (not (at ?x)) (at ?y) (visited ?y))))
"""


def generate_problem(rng: random.Random, *, nodes: int = 6, name: str = "reach") -> str:
    """Return the PDDL text of a Reach problem (see the module docstring)."""
    require_int("nodes", nodes, 2)
    names = [f"n{i}" for i in range(1, nodes + 1)]
    edges = list(zip(names, names[1:])) + [(names[i], names[i + 2]) for i in range(nodes - 2) if rng.random() < 0.3]
    init = ["(at n1)"] + [f"(edge {a} {b})" for a, b in edges] + [f"(open {a} {b})" for a, b in edges if rng.random() < 0.5]
    return problem_text(name, "reach", [f"{' '.join(names)} - node"], init, [f"(visited {names[-1]})"])

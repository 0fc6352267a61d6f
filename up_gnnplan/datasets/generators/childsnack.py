"""Generate Childsnack instances in the layout of the IPC 2023 Learning Track.

The domain is the Learning Track's Childsnack (typed, with the constant ``kitchen`` and
negative preconditions), so the shipped ``childsnack`` model applies to these problems. A
problem is described by the parameters the Learning Track's files name in their first line
(``children``, ``allergic_children``, ``trays``, ``sandwiches``): as in those files, there are
as many bread and content portions as children and exactly enough gluten-free ones for the
allergic children, every tray starts in the kitchen, no sandwich exists yet, and every child
waits at one of ``tables`` tables (3 in every Learning Track file) drawn at random. The
allergic children, the gluten-free portions and the tables are drawn with the seed.

The testing/easy files stop at 10 children (57 objects); ``children=40, trays=5,
sandwiches=60`` gives problems of 189 objects, with tens of thousands of successors in the
initial state.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain childsnack)
  (:requirements :typing :negative-preconditions)
  (:types child bread-portion content-portion sandwich tray place)
  (:constants kitchen - place)
  (:predicates (at_kitchen_bread ?b - bread-portion) (at_kitchen_content ?c - content-portion)
               (at_kitchen_sandwich ?s - sandwich) (no_gluten_bread ?b - bread-portion)
               (no_gluten_content ?c - content-portion) (ontray ?s - sandwich ?t - tray)
               (no_gluten_sandwich ?s - sandwich) (allergic_gluten ?c - child)
               (not_allergic_gluten ?c - child) (served ?c - child) (waiting ?c - child ?p - place)
               (at ?t - tray ?p - place) (notexist ?s - sandwich))
  (:action make_sandwich_no_gluten
    :parameters (?s - sandwich ?b - bread-portion ?c - content-portion)
    :precondition (and (at_kitchen_bread ?b) (at_kitchen_content ?c) (no_gluten_bread ?b)
                       (no_gluten_content ?c) (notexist ?s))
    :effect (and (not (at_kitchen_bread ?b)) (not (at_kitchen_content ?c)) (at_kitchen_sandwich ?s)
                 (no_gluten_sandwich ?s) (not (notexist ?s))))
  (:action make_sandwich
    :parameters (?s - sandwich ?b - bread-portion ?c - content-portion)
    :precondition (and (at_kitchen_bread ?b) (at_kitchen_content ?c) (notexist ?s))
    :effect (and (not (at_kitchen_bread ?b)) (not (at_kitchen_content ?c)) (at_kitchen_sandwich ?s)
                 (not (notexist ?s))))
  (:action put_on_tray
    :parameters (?s - sandwich ?t - tray)
    :precondition (and (at_kitchen_sandwich ?s) (at ?t kitchen))
    :effect (and (not (at_kitchen_sandwich ?s)) (ontray ?s ?t)))
  (:action serve_sandwich_no_gluten
    :parameters (?s - sandwich ?c - child ?t - tray ?p - place)
    :precondition (and (allergic_gluten ?c) (ontray ?s ?t) (waiting ?c ?p) (no_gluten_sandwich ?s) (at ?t ?p))
    :effect (and (not (ontray ?s ?t)) (served ?c)))
  (:action serve_sandwich
    :parameters (?s - sandwich ?c - child ?t - tray ?p - place)
    :precondition (and (not_allergic_gluten ?c) (waiting ?c ?p) (ontray ?s ?t) (at ?t ?p))
    :effect (and (not (ontray ?s ?t)) (served ?c)))
  (:action move_tray
    :parameters (?t - tray ?p1 ?p2 - place)
    :precondition (and (at ?t ?p1) (not (at ?t ?p2)))
    :effect (and (not (at ?t ?p1)) (at ?t ?p2))))
"""


def _check(label: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{label} must be an int >= {minimum}, got {value!r}")


def generate_problem(rng: random.Random, *, children: int = 10, allergic_children: int = 6, trays: int = 3,
                     sandwiches: int = 15, tables: int = 3, name: str = "childsnack") -> str:
    """Return the PDDL text of a Childsnack problem (see the module docstring)."""
    for label, value, minimum in (("children", children, 1), ("allergic_children", allergic_children, 0),
                                  ("trays", trays, 1), ("tables", tables, 1)):
        _check(label, value, minimum)
    _check("sandwiches", sandwiches, children)  # one sandwich per child at least, or no plan exists
    if allergic_children > children:
        raise ValueError(f"allergic_children ({allergic_children}) cannot exceed children ({children})")
    kids = [f"child{i + 1}" for i in range(children)]
    breads = [f"bread{i + 1}" for i in range(children)]
    contents = [f"content{i + 1}" for i in range(children)]
    allergic = set(rng.sample(kids, allergic_children))
    no_gluten_breads = rng.sample(breads, allergic_children)
    no_gluten_contents = rng.sample(contents, allergic_children)
    objects = [f"{' '.join(kids)} - child", f"{' '.join(f'tray{i + 1}' for i in range(trays))} - tray",
               f"{' '.join(f'sandw{i + 1}' for i in range(sandwiches))} - sandwich",
               f"{' '.join(breads)} - bread-portion", f"{' '.join(contents)} - content-portion",
               f"{' '.join(f'table{i + 1}' for i in range(tables))} - place"]
    init = ([f"(at tray{i + 1} kitchen)" for i in range(trays)]
            + [f"(at_kitchen_bread {b})" for b in breads] + [f"(at_kitchen_content {c})" for c in contents]
            + [f"({'allergic_gluten' if k in allergic else 'not_allergic_gluten'} {k})" for k in kids]
            + [f"(no_gluten_bread {b})" for b in no_gluten_breads]
            + [f"(no_gluten_content {c})" for c in no_gluten_contents]
            + [f"(waiting {k} table{rng.randrange(tables) + 1})" for k in kids]
            + [f"(notexist sandw{i + 1})" for i in range(sandwiches)])
    goal = [f"(served {k})" for k in kids]
    return problem_text(name, "childsnack", objects, init, goal, object_lines=True)

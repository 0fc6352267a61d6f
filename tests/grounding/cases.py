"""A coloured Blocks domain with existential goals, small enough to expand in milliseconds."""

DOMAIN = """(define (domain colour-blocks)
 (:requirements :strips :equality :negative-preconditions :existential-preconditions)
 (:predicates (on ?x ?y) (ontable ?x) (clear ?x) (handempty) (holding ?x) (red ?x) (blue ?x))
 (:action pick-up :parameters (?x) :precondition (and (clear ?x) (ontable ?x) (handempty))
  :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))
 (:action put-down :parameters (?x) :precondition (holding ?x)
  :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))
 (:action stack :parameters (?x ?y) :precondition (and (holding ?x) (clear ?y))
  :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))
 (:action unstack :parameters (?x ?y) :precondition (and (on ?x ?y) (clear ?x) (handempty))
  :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty)) (not (on ?x ?y)))))
"""


def problem(name: str, init: str, goal: str, objects: str = "a b c d") -> str:
    return f"(define (problem {name}) (:domain colour-blocks) (:objects {objects}) (:init {init}) (:goal {goal}))"


COLOURS = "(red a) (red b) (blue c) (blue d)"
TABLE = "(clear a) (clear b) (clear c) (clear d) (ontable a) (ontable b) (ontable c) (ontable d) (handempty)"
# A red block on a blue one; b is already on d, so the best binding is x1=b, x2=d (cost 0).
ON_RED_BLUE = problem(
    "red-on-blue", "(clear a) (clear b) (clear c) (on b d) (ontable a) (ontable c) (ontable d) (handempty) " + COLOURS,
    "(exists (?x1 ?x2) (and (red ?x1) (blue ?x2) (on ?x1 ?x2) (not (= ?x1 ?x2))))")
# A tower of two blue blocks under a red one, and a clear.
TOWER = problem("tower", TABLE + " " + COLOURS,
                "(and (clear a) (exists (?x1 ?x2 ?x3) (and (red ?x1) (blue ?x2) (blue ?x3) (on ?x1 ?x2) (on ?x2 ?x3) "
                "(not (= ?x1 ?x2)) (not (= ?x2 ?x3)) (not (= ?x1 ?x3)))))")
GROUND = problem("ground", TABLE + " " + COLOURS, "(and (on a c))")
# No block is both red and blue: no binding passes the static filter.
NO_BINDING = problem("no-binding", TABLE + " " + COLOURS, "(exists (?x1) (and (red ?x1) (blue ?x1)))")
# Two clear blue blocks, and a blue one: without an inequality, one clear blue block does for all three
# (c, clear from the start: cost 0); the model is not trained on it.
SHARED = problem("shared", "(clear a) (clear b) (clear c) (on b d) (ontable a) (ontable c) (ontable d) (handempty) "
                 + COLOURS, "(exists (?x1 ?x2 ?x3) (and (blue ?x1) (clear ?x1) (blue ?x2) (clear ?x2) (blue ?x3)))")
PROBLEMS = {"red-on-blue": ON_RED_BLUE, "tower": TOWER}

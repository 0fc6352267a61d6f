(define (domain fuelmove)
  (:requirements :strips :typing :numeric-fluents)
  (:types loc)
  (:predicates (at ?l - loc) (road ?a ?b - loc) (visited ?l - loc))
  (:functions (fuel))
  (:action move
    :parameters (?from ?to - loc)
    :precondition (and (at ?from) (road ?from ?to))
    :effect (and (at ?to) (not (at ?from)) (visited ?to) (increase (fuel) 1))))

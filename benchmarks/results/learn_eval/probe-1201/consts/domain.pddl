(define (domain homedelivery)
  (:requirements :strips :typing)
  (:types location package)
  (:constants home - location)
  (:predicates (robot-at ?l - location) (at ?p - package ?l - location)
               (holding ?p - package) (empty) (road ?a ?b - location)
               (delivered ?p - package))
  (:action move
    :parameters (?from ?to - location)
    :precondition (and (robot-at ?from) (road ?from ?to))
    :effect (and (robot-at ?to) (not (robot-at ?from))))
  (:action pick
    :parameters (?p - package ?l - location)
    :precondition (and (robot-at ?l) (at ?p ?l) (empty))
    :effect (and (holding ?p) (not (at ?p ?l)) (not (empty))))
  (:action drop-home
    :parameters (?p - package)
    :precondition (and (robot-at home) (holding ?p))
    :effect (and (delivered ?p) (at ?p home) (not (holding ?p)) (empty)))
  (:action go-home
    :parameters (?from - location)
    :precondition (and (robot-at ?from) (road ?from home))
    :effect (and (robot-at home) (not (robot-at ?from)))))

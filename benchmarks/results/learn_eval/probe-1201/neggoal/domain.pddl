(define (domain lamps)
  (:requirements :strips :typing :negative-preconditions)
  (:types pos lamp)
  (:predicates (robot-at ?p - pos) (adj ?a ?b - pos) (lamp-at ?l - lamp ?p - pos)
               (on ?l - lamp) (blocked ?p - pos))
  (:action move
    :parameters (?from ?to - pos)
    :precondition (and (robot-at ?from) (adj ?from ?to) (not (blocked ?to)))
    :effect (and (robot-at ?to) (not (robot-at ?from))))
  (:action switch-on
    :parameters (?l - lamp ?p - pos)
    :precondition (and (robot-at ?p) (lamp-at ?l ?p) (not (on ?l)))
    :effect (on ?l))
  (:action switch-off
    :parameters (?l - lamp ?p - pos)
    :precondition (and (robot-at ?p) (lamp-at ?l ?p) (on ?l))
    :effect (not (on ?l))))

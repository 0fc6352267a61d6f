(define (domain eqgripper)
  (:requirements :strips :typing :equality)
  (:types room ball)
  (:predicates (robot-at ?r - room) (at ?b - ball ?r - room) (carry ?b - ball) (free))
  (:action move
    :parameters (?from ?to - room)
    :precondition (and (robot-at ?from) (not (= ?from ?to)))
    :effect (and (robot-at ?to) (not (robot-at ?from))))
  (:action pick
    :parameters (?b - ball ?r - room)
    :precondition (and (at ?b ?r) (robot-at ?r) (free))
    :effect (and (carry ?b) (not (at ?b ?r)) (not (free))))
  (:action swap
    :parameters (?b1 ?b2 - ball ?r - room)
    :precondition (and (carry ?b1) (at ?b2 ?r) (robot-at ?r) (not (= ?b1 ?b2)))
    :effect (and (carry ?b2) (at ?b1 ?r) (not (carry ?b1)) (not (at ?b2 ?r))))
  (:action drop
    :parameters (?b - ball ?r - room)
    :precondition (and (carry ?b) (robot-at ?r))
    :effect (and (at ?b ?r) (free) (not (carry ?b)))))

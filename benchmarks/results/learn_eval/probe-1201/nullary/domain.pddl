(define (domain machine)
  (:requirements :strips :typing)
  (:types item)
  (:predicates (powered) (cool) (processed ?i - item) (packed ?i - item))
  (:action power-on
    :parameters ()
    :precondition (and)
    :effect (and (powered)))
  (:action cool-down
    :parameters ()
    :precondition (powered)
    :effect (cool))
  (:action process
    :parameters (?i - item)
    :precondition (and (powered) (cool))
    :effect (and (processed ?i) (not (cool))))
  (:action pack
    :parameters (?i - item)
    :precondition (processed ?i)
    :effect (packed ?i)))

(define (domain eitherlog)
  (:requirements :strips :typing)
  (:types locatable location - object
          vehicle cargo - locatable
          truck van - vehicle
          box crate - cargo)
  (:predicates (at ?x - locatable ?l - location) (in ?c - cargo ?v - vehicle)
               (road ?a ?b - location)
               (fragile ?c - (either box van)))
  (:action drive
    :parameters (?v - (either truck van) ?from ?to - location)
    :precondition (and (at ?v ?from) (road ?from ?to))
    :effect (and (at ?v ?to) (not (at ?v ?from))))
  (:action load
    :parameters (?c - cargo ?v - vehicle ?l - location)
    :precondition (and (at ?c ?l) (at ?v ?l))
    :effect (and (in ?c ?v) (not (at ?c ?l))))
  (:action load-fragile
    :parameters (?c - box ?v - van ?l - location)
    :precondition (and (at ?c ?l) (at ?v ?l) (fragile ?c))
    :effect (and (in ?c ?v) (not (at ?c ?l))))
  (:action unload
    :parameters (?c - (either box crate) ?v - vehicle ?l - location)
    :precondition (and (in ?c ?v) (at ?v ?l))
    :effect (and (at ?c ?l) (not (in ?c ?v)))))

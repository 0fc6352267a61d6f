"""Classic IPC domains written here, which no model, test or session of this project had seen: problems for
`gnnplan learn` as a user with a domain of their own would bring them (``benchmarks.learn_eval``).

- **DriverLog** (STRIPS): drivers walk a path network between road locations, board trucks, drive them along
  roads, which carry packages; goals place packages, some drivers and some trucks.
- **Zenotravel** (STRIPS): aircraft fly (one fuel level) or zoom (two) between cities, refuel a level at a time
  and carry people; goals place people and some aircraft.
- **Nomystery** (IPC 2011, STRIPS): a truck carries packages over a weighted road network on a fuel tank that
  cannot be refilled; fuel levels are objects, a drive's cost is ``(fuelcost COST FROM TO)`` and the tank's new
  level ``(sum AFTER COST BEFORE)``. A truck that wastes fuel can be left without a way to the goal (dead ends).
- **Parking** (IPC 2008, STRIPS with action costs): cars park on curbs, at most two to a curb, the second behind
  the first; a car moves only when nothing is behind it, to a free curb or behind a car at a curb. With ``2n - 2``
  cars on ``n`` curbs, as in the IPC's problems, two places are free; goals give every car's place.
- **Storage** (IPC 2006, STRIPS): hoists lift crates from a container's store areas through a transit area into
  the store areas of depots, each a grid, and move about the grids where nothing stands; goals put each crate in a
  depot. Its types test a reader: ``area`` is a subtype of both ``object`` and ``surface``, and ``in`` takes
  ``(either storearea crate)``.
- **Tyreworld** (IPC 1998's typed STRIPS): flat wheels are changed for the spares in the boot with the wrench, the
  jack and the pump (the domain's constants); thirteen action schemas, a jacked-up hub at a time.
- **TPP** (IPC 2006, STRIPS): trucks buy goods at markets, load them and unload them at the depot; the amounts on
  sale, ready to load, loaded and stored are level objects (``(next l0 l1)``); goals store each goods' demand.

Each problem is drawn from ``random.Random(seed)``: a connected road network (a random spanning tree and some
more links), a walking path node on every tree link (DriverLog), seven fuel levels (Zenotravel); Nomystery's
tank holds exactly the fuel that delivering the packages one at a time (the nearest one next) takes, so that every
problem is solvable and a plan that carries several at once needs less; a Storage depot has at least as many areas
as crates bound for it (filled from the far end, every problem is solvable). Training sizes go up to about 30 objects,
as the IPC 2023 Learning Track's do; the test problems have 2-5 times as many (Parking's 1.1-2x: LAMA-first solves
only the smallest in the minute; its ``scaled`` problems 2.6-5.3x; Storage's 1.2-3.4x: LAMA-first solved 6 crates
in 1.2 s, none of 8 in the minute).
"""

from __future__ import annotations

import random
from pathlib import Path

from up_gnnplan.datasets.generators.pddl import problem_text

DRIVERLOG_DOMAIN = """\
(define (domain driverlog)
  (:requirements :strips :typing)
  (:types location locatable - object
          driver truck obj - locatable)
  (:predicates (at ?x - locatable ?l - location) (in ?o - obj ?t - truck) (driving ?d - driver ?t - truck)
               (link ?x ?y - location) (path ?x ?y - location) (empty ?t - truck))
  (:action load-truck
    :parameters (?o - obj ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (at ?o ?l))
    :effect (and (not (at ?o ?l)) (in ?o ?t)))
  (:action unload-truck
    :parameters (?o - obj ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (in ?o ?t))
    :effect (and (not (in ?o ?t)) (at ?o ?l)))
  (:action board-truck
    :parameters (?d - driver ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (at ?d ?l) (empty ?t))
    :effect (and (not (at ?d ?l)) (driving ?d ?t) (not (empty ?t))))
  (:action disembark-truck
    :parameters (?d - driver ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (driving ?d ?t))
    :effect (and (not (driving ?d ?t)) (at ?d ?l) (empty ?t)))
  (:action drive-truck
    :parameters (?t - truck ?from ?to - location ?d - driver)
    :precondition (and (at ?t ?from) (driving ?d ?t) (link ?from ?to))
    :effect (and (not (at ?t ?from)) (at ?t ?to)))
  (:action walk
    :parameters (?d - driver ?from ?to - location)
    :precondition (and (at ?d ?from) (path ?from ?to))
    :effect (and (not (at ?d ?from)) (at ?d ?to))))
"""

ZENOTRAVEL_DOMAIN = """\
(define (domain zenotravel)
  (:requirements :strips :typing)
  (:types locatable city flevel - object
          aircraft person - locatable)
  (:predicates (at ?x - locatable ?c - city) (in ?p - person ?a - aircraft) (fuel-level ?a - aircraft ?l - flevel)
               (next ?l1 ?l2 - flevel))
  (:action board
    :parameters (?p - person ?a - aircraft ?c - city)
    :precondition (and (at ?p ?c) (at ?a ?c))
    :effect (and (not (at ?p ?c)) (in ?p ?a)))
  (:action debark
    :parameters (?p - person ?a - aircraft ?c - city)
    :precondition (and (in ?p ?a) (at ?a ?c))
    :effect (and (not (in ?p ?a)) (at ?p ?c)))
  (:action fly
    :parameters (?a - aircraft ?c1 ?c2 - city ?l1 ?l2 - flevel)
    :precondition (and (at ?a ?c1) (fuel-level ?a ?l1) (next ?l2 ?l1))
    :effect (and (not (at ?a ?c1)) (at ?a ?c2) (not (fuel-level ?a ?l1)) (fuel-level ?a ?l2)))
  (:action zoom
    :parameters (?a - aircraft ?c1 ?c2 - city ?l1 ?l2 ?l3 - flevel)
    :precondition (and (at ?a ?c1) (fuel-level ?a ?l1) (next ?l2 ?l1) (next ?l3 ?l2))
    :effect (and (not (at ?a ?c1)) (at ?a ?c2) (not (fuel-level ?a ?l1)) (fuel-level ?a ?l3)))
  (:action refuel
    :parameters (?a - aircraft ?c - city ?l ?l1 - flevel)
    :precondition (and (fuel-level ?a ?l) (next ?l ?l1) (at ?a ?c))
    :effect (and (fuel-level ?a ?l1) (not (fuel-level ?a ?l)))))
"""

NOMYSTERY_DOMAIN = """\
(define (domain nomystery)
  (:requirements :strips :typing)
  (:types location fuellevel locatable - object
          package truck - locatable)
  (:predicates (connected ?x ?y - location) (at ?o - locatable ?l - location) (in ?p - package ?t - truck)
               (fuel ?t - truck ?f - fuellevel) (fuelcost ?f - fuellevel ?x ?y - location)
               (sum ?a ?b ?c - fuellevel))
  (:action load
    :parameters (?p - package ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (at ?p ?l))
    :effect (and (not (at ?p ?l)) (in ?p ?t)))
  (:action unload
    :parameters (?p - package ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (in ?p ?t))
    :effect (and (not (in ?p ?t)) (at ?p ?l)))
  (:action drive
    :parameters (?t - truck ?from ?to - location ?after ?cost ?before - fuellevel)
    :precondition (and (at ?t ?from) (connected ?from ?to) (fuelcost ?cost ?from ?to) (fuel ?t ?before)
                       (sum ?after ?cost ?before))
    :effect (and (not (at ?t ?from)) (at ?t ?to) (not (fuel ?t ?before)) (fuel ?t ?after))))
"""

PARKING_DOMAIN = """\
(define (domain parking)
  (:requirements :strips :typing :action-costs)
  (:types car curb)
  (:predicates (at-curb ?car - car) (at-curb-num ?car - car ?curb - curb) (behind-car ?car ?front - car)
               (car-clear ?car - car) (curb-clear ?curb - curb))
  (:functions (total-cost) - number)
  (:action move-curb-to-curb
    :parameters (?car - car ?from ?to - curb)
    :precondition (and (car-clear ?car) (curb-clear ?to) (at-curb-num ?car ?from))
    :effect (and (not (curb-clear ?to)) (curb-clear ?from) (at-curb-num ?car ?to) (not (at-curb-num ?car ?from))
                 (increase (total-cost) 1)))
  (:action move-curb-to-car
    :parameters (?car - car ?from - curb ?to - car)
    :precondition (and (car-clear ?car) (car-clear ?to) (at-curb-num ?car ?from) (at-curb ?to))
    :effect (and (not (car-clear ?to)) (curb-clear ?from) (behind-car ?car ?to) (not (at-curb-num ?car ?from))
                 (not (at-curb ?car)) (increase (total-cost) 1)))
  (:action move-car-to-curb
    :parameters (?car - car ?from - car ?to - curb)
    :precondition (and (car-clear ?car) (curb-clear ?to) (behind-car ?car ?from))
    :effect (and (not (curb-clear ?to)) (car-clear ?from) (at-curb-num ?car ?to) (not (behind-car ?car ?from))
                 (at-curb ?car) (increase (total-cost) 1)))
  (:action move-car-to-car
    :parameters (?car - car ?from - car ?to - car)
    :precondition (and (car-clear ?car) (car-clear ?to) (behind-car ?car ?from) (at-curb ?to))
    :effect (and (not (car-clear ?to)) (car-clear ?from) (behind-car ?car ?to) (not (behind-car ?car ?from))
                 (increase (total-cost) 1))))
"""

STORAGE_DOMAIN = """\
(define (domain storage)
  (:requirements :typing)
  (:types hoist surface place area - object
          container depot - place
          storearea transitarea - area
          area crate - surface)
  (:predicates (clear ?s - storearea) (in ?x - (either storearea crate) ?p - place) (available ?h - hoist)
               (lifting ?h - hoist ?c - crate) (at ?h - hoist ?a - area) (on ?c - crate ?s - storearea)
               (connected ?a1 ?a2 - area))
  (:action lift
    :parameters (?h - hoist ?c - crate ?a1 - storearea ?a2 - area ?p - place)
    :precondition (and (connected ?a1 ?a2) (at ?h ?a2) (available ?h) (on ?c ?a1) (in ?a1 ?p))
    :effect (and (not (on ?c ?a1)) (clear ?a1) (not (available ?h)) (lifting ?h ?c) (not (in ?c ?p))))
  (:action drop
    :parameters (?h - hoist ?c - crate ?a1 - storearea ?a2 - area ?p - place)
    :precondition (and (connected ?a1 ?a2) (at ?h ?a2) (lifting ?h ?c) (clear ?a1) (in ?a1 ?p))
    :effect (and (not (lifting ?h ?c)) (available ?h) (not (clear ?a1)) (on ?c ?a1) (in ?c ?p)))
  (:action move
    :parameters (?h - hoist ?from ?to - storearea)
    :precondition (and (at ?h ?from) (clear ?to) (connected ?from ?to))
    :effect (and (not (at ?h ?from)) (at ?h ?to) (not (clear ?to)) (clear ?from)))
  (:action go-out
    :parameters (?h - hoist ?from - storearea ?to - transitarea)
    :precondition (and (at ?h ?from) (connected ?from ?to))
    :effect (and (not (at ?h ?from)) (at ?h ?to) (clear ?from)))
  (:action go-in
    :parameters (?h - hoist ?from - transitarea ?to - storearea)
    :precondition (and (at ?h ?from) (connected ?from ?to) (clear ?to))
    :effect (and (not (at ?h ?from)) (at ?h ?to) (not (clear ?to)))))
"""

TYREWORLD_DOMAIN = """\
(define (domain tyreworld)
  (:requirements :strips :typing)
  (:types obj - object
          tool wheel nut - obj
          container hub - object)
  (:constants wrench jack pump - tool)
  (:predicates (open ?x - container) (closed ?x - container) (have ?x - obj) (in ?x - obj ?y - container)
               (loose ?x - nut ?y - hub) (tight ?x - nut ?y - hub) (unlocked ?x - container) (on-ground ?x - hub)
               (not-on-ground ?x - hub) (inflated ?x - wheel) (not-inflated ?x - wheel) (fastened ?x - hub)
               (unfastened ?x - hub) (free ?x - hub) (on ?x - wheel ?y - hub) (intact ?x - wheel))
  (:action open
    :parameters (?x - container)
    :precondition (and (unlocked ?x) (closed ?x))
    :effect (and (open ?x) (not (closed ?x))))
  (:action close
    :parameters (?x - container)
    :precondition (open ?x)
    :effect (and (closed ?x) (not (open ?x))))
  (:action fetch
    :parameters (?x - obj ?y - container)
    :precondition (and (in ?x ?y) (open ?y))
    :effect (and (have ?x) (not (in ?x ?y))))
  (:action put-away
    :parameters (?x - obj ?y - container)
    :precondition (and (have ?x) (open ?y))
    :effect (and (in ?x ?y) (not (have ?x))))
  (:action loosen
    :parameters (?x - nut ?y - hub)
    :precondition (and (have wrench) (tight ?x ?y) (on-ground ?y))
    :effect (and (loose ?x ?y) (not (tight ?x ?y))))
  (:action tighten
    :parameters (?x - nut ?y - hub)
    :precondition (and (have wrench) (loose ?x ?y) (on-ground ?y))
    :effect (and (tight ?x ?y) (not (loose ?x ?y))))
  (:action jack-up
    :parameters (?y - hub)
    :precondition (and (on-ground ?y) (have jack))
    :effect (and (not-on-ground ?y) (not (on-ground ?y)) (not (have jack))))
  (:action jack-down
    :parameters (?x - hub)
    :precondition (not-on-ground ?x)
    :effect (and (on-ground ?x) (have jack) (not (not-on-ground ?x))))
  (:action undo
    :parameters (?x - nut ?y - hub)
    :precondition (and (not-on-ground ?y) (fastened ?y) (have wrench) (loose ?x ?y))
    :effect (and (have ?x) (unfastened ?y) (not (fastened ?y)) (not (loose ?x ?y))))
  (:action do-up
    :parameters (?x - nut ?y - hub)
    :precondition (and (have wrench) (unfastened ?y) (not-on-ground ?y) (have ?x))
    :effect (and (loose ?x ?y) (fastened ?y) (not (unfastened ?y)) (not (have ?x))))
  (:action remove-wheel
    :parameters (?x - wheel ?y - hub)
    :precondition (and (not-on-ground ?y) (on ?x ?y) (unfastened ?y))
    :effect (and (have ?x) (free ?y) (not (on ?x ?y))))
  (:action put-on-wheel
    :parameters (?x - wheel ?y - hub)
    :precondition (and (have ?x) (free ?y) (unfastened ?y) (not-on-ground ?y))
    :effect (and (on ?x ?y) (not (have ?x)) (not (free ?y))))
  (:action inflate
    :parameters (?x - wheel)
    :precondition (and (have pump) (not-inflated ?x) (intact ?x))
    :effect (and (inflated ?x) (not (not-inflated ?x)))))
"""

TPP_DOMAIN = """\
(define (domain tpp)
  (:requirements :strips :typing)
  (:types place locatable level - object
          depot market - place
          truck goods - locatable)
  (:predicates (loaded ?g - goods ?t - truck ?l - level) (ready-to-load ?g - goods ?m - market ?l - level)
               (stored ?g - goods ?l - level) (on-sale ?g - goods ?m - market ?l - level) (next ?l1 ?l2 - level)
               (at ?t - truck ?p - place) (connected ?p1 ?p2 - place))
  (:action drive
    :parameters (?t - truck ?from ?to - place)
    :precondition (and (at ?t ?from) (connected ?from ?to))
    :effect (and (not (at ?t ?from)) (at ?t ?to)))
  (:action buy
    :parameters (?t - truck ?g - goods ?m - market ?o1 ?o0 ?r0 ?r1 - level)
    :precondition (and (at ?t ?m) (on-sale ?g ?m ?o1) (next ?o0 ?o1) (ready-to-load ?g ?m ?r0) (next ?r0 ?r1))
    :effect (and (on-sale ?g ?m ?o0) (not (on-sale ?g ?m ?o1)) (ready-to-load ?g ?m ?r1)
                 (not (ready-to-load ?g ?m ?r0))))
  (:action load
    :parameters (?g - goods ?t - truck ?m - market ?r1 ?r0 ?c0 ?c1 - level)
    :precondition (and (at ?t ?m) (ready-to-load ?g ?m ?r1) (next ?r0 ?r1) (loaded ?g ?t ?c0) (next ?c0 ?c1))
    :effect (and (ready-to-load ?g ?m ?r0) (not (ready-to-load ?g ?m ?r1)) (loaded ?g ?t ?c1)
                 (not (loaded ?g ?t ?c0))))
  (:action unload
    :parameters (?g - goods ?t - truck ?d - depot ?c1 ?c0 ?s0 ?s1 - level)
    :precondition (and (at ?t ?d) (loaded ?g ?t ?c1) (next ?c0 ?c1) (stored ?g ?s0) (next ?s0 ?s1))
    :effect (and (loaded ?g ?t ?c0) (not (loaded ?g ?t ?c1)) (stored ?g ?s1) (not (stored ?g ?s0)))))
"""

DOMAINS = {"driverlog": DRIVERLOG_DOMAIN, "zenotravel": ZENOTRAVEL_DOMAIN, "nomystery": NOMYSTERY_DOMAIN,
           "parking": PARKING_DOMAIN, "storage": STORAGE_DOMAIN, "tyreworld": TYREWORLD_DOMAIN,
           "tpp": TPP_DOMAIN}
# (drivers, trucks, packages, road locations) and (aircraft, people, cities): 20 training problems of 9-32 objects,
# 10 test problems of 54-147 objects (2-5 times the largest training problem's).
SIZES = {
    "driverlog": {
        "train": [(1, 1, 2, 3), (1, 1, 3, 3), (1, 2, 2, 3), (2, 1, 3, 3), (2, 2, 3, 4), (1, 2, 4, 4), (2, 2, 4, 4),
                  (2, 2, 5, 4), (2, 2, 5, 5), (2, 3, 5, 5), (3, 2, 6, 5), (2, 2, 6, 6), (3, 3, 6, 6), (2, 3, 7, 6),
                  (3, 3, 7, 6), (3, 3, 8, 7), (3, 2, 8, 7), (3, 3, 9, 7), (4, 3, 9, 8), (3, 4, 10, 8)],
        "test": [(5, 5, 20, 15), (6, 5, 24, 16), (6, 6, 28, 18), (7, 6, 32, 20), (7, 7, 36, 22), (8, 7, 40, 24),
                 (8, 8, 45, 26), (9, 8, 50, 28), (10, 9, 55, 30), (10, 10, 60, 32)],
    },
    "zenotravel": {
        "train": [(1, 2, 3), (1, 3, 3), (1, 3, 4), (2, 3, 3), (1, 4, 4), (2, 4, 4), (2, 5, 4), (2, 5, 5), (2, 6, 5),
                  (3, 5, 5), (2, 7, 5), (3, 6, 6), (3, 7, 6), (2, 8, 6), (3, 8, 6), (3, 9, 7), (4, 8, 7), (3, 10, 7),
                  (4, 10, 8), (4, 12, 8)],
        "test": [(5, 30, 12), (6, 35, 14), (6, 40, 15), (7, 45, 16), (8, 50, 18), (8, 60, 20), (9, 70, 22),
                 (10, 80, 24), (11, 90, 26), (12, 100, 28)],
    },    # (packages, locations): 20 training problems of 11-35 objects (most of them fuel levels), 10 test ones of 63-156
    "nomystery": {
        "train": [(1, 3), (1, 4), (2, 3), (2, 4), (2, 4), (3, 4), (2, 5), (3, 5), (3, 5), (4, 5), (3, 6), (4, 6),
                  (4, 6), (5, 6), (4, 7), (5, 7), (5, 7), (6, 7), (5, 6), (4, 8)],
        "test": [(9, 9), (10, 10), (11, 11), (12, 12), (13, 12), (14, 13), (16, 14), (18, 15), (20, 16), (22, 18)],
    },
    # (curbs,), 2 * curbs - 2 cars: 20 training problems of 7-28 objects, 10 test ones of 31-58 (1.1-2x: LAMA-first
    # solved 11 curbs in 24-28 s and none of 12-20 in the minute)
    "parking": {
        "train": [(n,) for n in (3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 9, 9, 10, 10)],
        "test": [(n,) for n in range(11, 21)],
        "scaled": [(n,) for n in (25, 30, 35, 40, 50)],  # 73-148 objects: 2.6-5.3x
    },
    # (depots, grid rows, grid columns, crates, hoists): 20 training problems of 8-31 objects (1-6 crates), 10 test
    # ones of 38-106 (7-18 crates, 1.2-3.4x: LAMA-first solved 6 crates in 1.2 s and none of 8-22 in the minute)
    "storage": {
        "train": [(1, 1, 2, 1, 1), (1, 1, 2, 2, 1), (1, 2, 2, 2, 1), (1, 2, 2, 2, 2), (1, 2, 2, 3, 1),
                  (1, 2, 2, 3, 2), (1, 2, 3, 3, 1), (2, 1, 2, 3, 1), (1, 2, 3, 4, 1), (1, 2, 3, 4, 2),
                  (2, 2, 2, 3, 1), (2, 2, 2, 4, 2), (1, 3, 3, 4, 2), (1, 3, 3, 5, 1), (2, 2, 2, 5, 2),
                  (1, 3, 3, 5, 2), (2, 2, 3, 5, 2), (1, 3, 4, 6, 2), (2, 2, 3, 6, 2), (2, 2, 3, 6, 3)],
        "test": [(2, 3, 3, 7, 2), (2, 3, 3, 8, 3), (2, 3, 4, 9, 3), (2, 3, 4, 10, 3), (2, 4, 4, 10, 3),
                 (2, 4, 4, 12, 3), (3, 3, 4, 12, 3), (3, 4, 4, 14, 4), (3, 4, 5, 16, 4), (3, 4, 5, 18, 5)],
        # 10 more training problems of 2-3 depots and 2-3 hoists (14-29 objects), for `learn` beside ``train``: the
        # first model, of ``train`` alone (one or two depots), carried crates into the wrong depot on ``test``
        "more": [(2, 1, 2, 2, 2), (2, 2, 2, 2, 2), (3, 1, 2, 3, 2), (3, 1, 2, 3, 3), (2, 2, 2, 3, 3),
                 (3, 1, 3, 4, 2), (3, 2, 2, 4, 3), (2, 2, 3, 4, 3), (3, 2, 2, 5, 2), (3, 1, 3, 5, 3)],
    },
    # (hubs, flat tyres among them): 20 training problems of 8-32 objects (1-7 hubs; the three tools are the
    # domain's constants), 10 test ones of 59-152 (15-38 hubs, 1.8-4.8x)
    "tyreworld": {
        "train": [(1, 1), (2, 1), (2, 2), (3, 1), (3, 2), (3, 3), (4, 2), (4, 3), (4, 4), (5, 2), (5, 3), (5, 4),
                  (5, 5), (6, 3), (6, 4), (6, 5), (6, 6), (7, 4), (7, 6), (7, 7)],
        "test": [(15, 10), (16, 12), (18, 14), (20, 16), (22, 18), (25, 20), (28, 24), (31, 26), (34, 30), (38, 34)],
    },
    # (goods, markets, trucks, levels above 0): 20 training problems of 6-23 objects, 10 test ones of 43-86 (1.9-3.7x;
    # a truck, goods and market make (levels)^2 ground buy and load actions each)
    "tpp": {
        "train": [(1, 1, 1, 1), (1, 1, 1, 2), (2, 1, 1, 2), (1, 2, 1, 2), (2, 2, 1, 2), (2, 2, 1, 3), (3, 2, 1, 2),
                  (2, 3, 1, 3), (3, 2, 2, 3), (3, 3, 1, 3), (4, 2, 1, 3), (3, 3, 2, 4), (4, 3, 1, 4), (4, 3, 2, 4),
                  (5, 3, 1, 4), (5, 4, 2, 4), (6, 4, 1, 5), (6, 4, 2, 5), (7, 5, 2, 5), (8, 5, 2, 6)],
        "test": [(20, 12, 3, 6), (22, 13, 3, 6), (24, 14, 3, 7), (26, 15, 3, 7), (28, 16, 4, 7), (30, 18, 4, 8),
                 (33, 19, 4, 8), (36, 20, 4, 8), (40, 22, 5, 9), (45, 25, 5, 9)],
    },
}
FUEL_LEVELS = 7
MAX_ROAD_COST = 2  # Nomystery's roads cost 1 or 2 fuel levels


def _roads(rng: random.Random, count: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """A connected road network on ``count`` locations: (its spanning tree's links, the extra links), each once."""
    tree = [(rng.randrange(i), i) for i in range(1, count)]
    extra = set()
    for _ in range(count // 2 if count > 2 else 0):
        a, b = sorted(rng.sample(range(count), 2))
        if (a, b) not in tree:  # the tree's links are (smaller, larger) too
            extra.add((a, b))
    return tree, sorted(extra)


def driverlog_problem(name: str, drivers: int, trucks: int, packages: int, locations: int, seed: int) -> str:
    rng = random.Random(seed)
    tree, extra = _roads(rng, locations)
    roads = [f"s{i}" for i in range(locations)]
    paths = [f"p{a}-{b}" for a, b in tree]
    init = [f"(link s{a} s{b})" for a, b in tree + extra] + [f"(link s{b} s{a})" for a, b in tree + extra]
    for (a, b), p in zip(tree, paths):
        init += [f"(path s{a} {p})", f"(path {p} s{a})", f"(path s{b} {p})", f"(path {p} s{b})"]
    ds, ts, os_ = [f"driver{i}" for i in range(drivers)], [f"truck{i}" for i in range(trucks)], \
        [f"package{i}" for i in range(packages)]
    init += [f"(at {x} {rng.choice(roads)})" for x in ds + ts + os_] + [f"(empty {t})" for t in ts]
    goal = [f"(at {o} {rng.choice(roads)})" for o in os_]
    goal += [f"(at {x} {rng.choice(roads)})" for x in ds + ts if rng.random() < 0.5]
    objects = [f"{' '.join(roads + paths)} - location", f"{' '.join(ds)} - driver", f"{' '.join(ts)} - truck",
               f"{' '.join(os_)} - obj"]
    return problem_text(name, "driverlog", objects, init, goal, object_lines=True)


def zenotravel_problem(name: str, aircraft: int, people: int, cities: int, seed: int) -> str:
    rng = random.Random(seed)
    cs, ps, as_ = [f"city{i}" for i in range(cities)], [f"person{i}" for i in range(people)], \
        [f"plane{i}" for i in range(aircraft)]
    levels = [f"fl{i}" for i in range(FUEL_LEVELS)]
    init = [f"(next {levels[i]} {levels[i + 1]})" for i in range(FUEL_LEVELS - 1)]
    init += [f"(at {x} {rng.choice(cs)})" for x in ps + as_]
    init += [f"(fuel-level {a} {rng.choice(levels)})" for a in as_]
    goal = [f"(at {p} {rng.choice(cs)})" for p in ps] + [f"(at {a} {rng.choice(cs)})" for a in as_ if rng.random() < 0.5]
    objects = [f"{' '.join(cs)} - city", f"{' '.join(ps)} - person", f"{' '.join(as_)} - aircraft",
               f"{' '.join(levels)} - flevel"]
    return problem_text(name, "zenotravel", objects, init, goal, object_lines=True)


def _distances(costs: dict, count: int) -> list[list[int]]:
    """All-pairs shortest path costs (Floyd-Warshall) of the roads ``costs`` ({(a, b): cost}, both ways)."""
    far = 10 ** 9
    d = [[0 if i == j else costs.get((i, j), far) for j in range(count)] for i in range(count)]
    for k in range(count):
        for i in range(count):
            for j in range(count):
                d[i][j] = min(d[i][j], d[i][k] + d[k][j])
    return d


def nomystery_problem(name: str, packages: int, locations: int, seed: int) -> str:
    rng = random.Random(seed)
    tree, extra = _roads(rng, locations)
    costs = {}
    for a, b in tree + extra:
        costs[a, b] = costs[b, a] = rng.randint(1, MAX_ROAD_COST)
    d = _distances(costs, locations)
    truck = rng.randrange(locations)
    jobs = [tuple(rng.sample(range(locations), 2)) for _ in range(packages)]  # (origin, destination), distinct
    fuel, here, left = 0, truck, list(jobs)
    while left:  # one package at a time, the nearest origin next: the tank holds what that takes
        origin, goal = min(left, key=lambda job: d[here][job[0]])
        left.remove((origin, goal))
        fuel, here = fuel + d[here][origin] + d[origin][goal], goal
    levels = [f"f{i}" for i in range(fuel + 1)]
    ls, ps = [f"l{i}" for i in range(locations)], [f"package{i}" for i in range(packages)]
    init = [f"(connected {ls[a]} {ls[b]})" for a, b in sorted(costs)]
    init += [f"(fuelcost {levels[c]} {ls[a]} {ls[b]})" for (a, b), c in sorted(costs.items())]
    init += [f"(sum {levels[a]} {levels[c]} {levels[a + c]})" for c in sorted(set(costs.values()))
             for a in range(fuel + 1 - c)]
    init += [f"(at truck0 {ls[truck]})", f"(fuel truck0 {levels[fuel]})"]
    init += [f"(at {p} {ls[origin]})" for p, (origin, _) in zip(ps, jobs)]
    goal = [f"(at {p} {ls[destination]})" for p, (_, destination) in zip(ps, jobs)]
    objects = [f"{' '.join(ls)} - location", f"{' '.join(levels)} - fuellevel", "truck0 - truck",
               f"{' '.join(ps)} - package"]
    return problem_text(name, "nomystery", objects, init, goal, object_lines=True)


def _parked(rng: random.Random, cars: list[str], curbs: list[str]) -> dict[str, tuple[str, str | None]]:
    """A random parking of ``cars``: curb -> (the car at it, the car behind that one or None); free curbs left out."""
    places: dict[str, list[str]] = {}
    for car in rng.sample(cars, len(cars)):
        curb = rng.choice([c for c in curbs if len(places.get(c, [])) < 2])
        places.setdefault(curb, []).append(car)
    return {curb: (row[0], row[1] if len(row) > 1 else None) for curb, row in places.items()}


def parking_problem(name: str, curbs: int, seed: int) -> str:
    rng = random.Random(seed)
    cs, cars = [f"curb{i}" for i in range(curbs)], [f"car{i}" for i in range(2 * curbs - 2)]
    start, goal = _parked(rng, cars, cs), _parked(rng, cars, cs)
    init = [f"(curb-clear {c})" for c in cs if c not in start]
    for curb, (front, back) in start.items():
        init += [f"(at-curb {front})", f"(at-curb-num {front} {curb})"]
        init += [f"(behind-car {back} {front})", f"(car-clear {back})"] if back else [f"(car-clear {front})"]
    goals = []
    for curb, (front, back) in goal.items():
        goals += [f"(at-curb-num {front} {curb})"] + ([f"(behind-car {back} {front})"] if back else [])
    objects = [f"{' '.join(cs)} - curb", f"{' '.join(cars)} - car"]
    text = problem_text(name, "parking", objects, init + ["(= (total-cost) 0)"], goals, object_lines=True)
    return text.rstrip()[:-1] + "\n  (:metric minimize (total-cost)))\n"  # inside the define


def storage_problem(name: str, depots: int, rows: int, columns: int, crates: int, hoists: int, seed: int) -> str:
    rng = random.Random(seed)
    ds = [f"depot{d}" for d in range(depots)]
    grids = {d: [f"depot{d}-{r}-{c}" for r in range(1, rows + 1) for c in range(1, columns + 1)] for d in range(depots)}
    slots, cs = [f"container-0-{i}" for i in range(crates)], [f"crate{i}" for i in range(crates)]
    hs = [f"hoist{i}" for i in range(hoists)]
    init = [f"(in {slot} container0)" for slot in slots]
    init += [f"(on {c} {slot})" for c, slot in zip(cs, slots)] + [f"(in {c} container0)" for c in cs]
    init += [f"(connected {slot} loadarea)" for slot in slots] + [f"(connected loadarea {slot})" for slot in slots]
    for d, grid in grids.items():
        init += [f"(in {area} depot{d})" for area in grid]
        for r in range(1, rows + 1):
            for c in range(1, columns + 1):
                for r2, c2 in ((r + 1, c), (r, c + 1)):
                    if r2 <= rows and c2 <= columns:
                        a, b = f"depot{d}-{r}-{c}", f"depot{d}-{r2}-{c2}"
                        init += [f"(connected {a} {b})", f"(connected {b} {a})"]
        door = rng.choice([f"depot{d}-{r}-{c}" for r in range(1, rows + 1) for c in range(1, columns + 1)
                           if r == 1 or c == 1])  # an area of the first row or column
        init += [f"(connected loadarea {door})", f"(connected {door} loadarea)"]
    places = rng.sample([a for grid in grids.values() for a in grid], hoists)
    init += [f"(at {h} {a})" for h, a in zip(hs, places)] + [f"(available {h})" for h in hs]
    init += [f"(clear {a})" for grid in grids.values() for a in grid if a not in places]
    room = {d: len(grid) for d, grid in grids.items()}
    goal = []
    for c in cs:  # each crate to a depot with room left
        d = rng.choice([d for d in room if room[d] > 0])
        room[d] -= 1
        goal.append(f"(in {c} depot{d})")
    objects = [f"{' '.join(a for grid in grids.values() for a in grid)} {' '.join(slots)} - storearea",
               f"{' '.join(hs)} - hoist", f"{' '.join(cs)} - crate", "container0 - container",
               f"{' '.join(ds)} - depot", "loadarea - transitarea"]
    return problem_text(name, "storage", objects, init, goal, object_lines=True)


def tyreworld_problem(name: str, hubs: int, flats: int, seed: int) -> str:
    """``hubs`` hubs, each with its wheel on and its nut tight; ``flats`` of them (drawn) have a flat wheel, for
    which an intact, not inflated spare lies in the boot with the tools. The boot is closed or open (drawn). Goal:
    each flat wheel replaced by its spare, inflated and tight, the flat wheels, the tools in the boot, the boot closed."""
    rng = random.Random(seed)
    flat = sorted(rng.sample(range(hubs), flats))
    init = ["(unlocked boot)", "(open boot)" if rng.random() < 0.5 else "(closed boot)"]
    init += ["(in jack boot)", "(in pump boot)", "(in wrench boot)"]
    goal = ["(in jack boot)", "(in pump boot)", "(in wrench boot)", "(closed boot)"]
    for h in range(hubs):
        init += [f"(on w{h} h{h})", f"(on-ground h{h})", f"(tight n{h} h{h})", f"(fastened h{h})"]
        if h in flat:
            init += [f"(in r{h} boot)", f"(intact r{h})", f"(not-inflated r{h})"]
            goal += [f"(on r{h} h{h})", f"(inflated r{h})", f"(tight n{h} h{h})", f"(in w{h} boot)"]
        else:
            init += [f"(intact w{h})", f"(inflated w{h})"]
    wheels = [f"w{h}" for h in range(hubs)] + [f"r{h}" for h in flat]
    objects = [f"{' '.join(wheels)} - wheel", f"{' '.join(f'n{h}' for h in range(hubs))} - nut",
               f"{' '.join(f'h{h}' for h in range(hubs))} - hub", "boot - container"]
    return problem_text(name, "tyreworld", objects, init, goal, object_lines=True)


def tpp_problem(name: str, goods: int, markets: int, trucks: int, levels: int, seed: int) -> str:
    """Trucks start at the depot; each goods' demand (1 to ``levels`` units) is on sale at one to three markets, in
    all at least as much as the demand; a connected road network of the depot and the markets. Goal: each goods'
    demand stored at the depot."""
    rng = random.Random(seed)
    places = ["depot0"] + [f"market{m}" for m in range(markets)]
    tree, extra = _roads(rng, len(places))
    init = [f"(next level{k} level{k + 1})" for k in range(levels)]
    for a, b in tree + extra:
        init += [f"(connected {places[a]} {places[b]})", f"(connected {places[b]} {places[a]})"]
    init += [f"(at truck{t} depot0)" for t in range(trucks)]
    goal = []
    for g in range(goods):
        demand = rng.randint(1, levels)
        sellers = rng.sample(range(markets), min(markets, rng.randint(1, 3)))
        supply = {m: rng.randint(1, levels) for m in sellers}
        while sum(supply.values()) < demand:  # at least the demand on sale in all
            m = rng.choice(sellers)
            supply[m] = min(levels, supply[m] + 1)
        init.append(f"(stored goods{g} level0)")
        init += [f"(loaded goods{g} truck{t} level0)" for t in range(trucks)]
        init += [f"(ready-to-load goods{g} market{m} level0)" for m in range(markets)]
        init += [f"(on-sale goods{g} market{m} level{supply.get(m, 0)})" for m in range(markets)]
        goal.append(f"(stored goods{g} level{demand})")
    objects = ["depot0 - depot", f"{' '.join(places[1:])} - market", f"{' '.join(f'truck{t}' for t in range(trucks))} - truck",
               f"{' '.join(f'goods{g}' for g in range(goods))} - goods",
               f"{' '.join(f'level{k}' for k in range(levels + 1))} - level"]
    return problem_text(name, "tpp", objects, init, goal, object_lines=True)


WRITERS = {"driverlog": driverlog_problem, "zenotravel": zenotravel_problem, "nomystery": nomystery_problem,
           "parking": parking_problem, "storage": storage_problem, "tyreworld": tyreworld_problem,
           "tpp": tpp_problem}


# The first seed of each split (the others 100), and the prefix of its problems' names (the others "p").
FIRST_SEED = {"train": 1, "more": 300}
PREFIX = {"more": "m"}


def write(domain: str, split: str, folder: Path) -> list[Path]:
    """Write ``domain``'s ``split`` ("train": seeds 1, 2, ...; "more": 300, 301, ...; "test", "scaled": 100, 101, ...)
    and its domain file into ``folder``; return the problem files in size order."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "domain.pddl").write_text(DOMAINS[domain])
    paths = []
    for k, size in enumerate(SIZES[domain][split]):
        seed, name = FIRST_SEED.get(split, 100) + k, f"{PREFIX.get(split, 'p')}{k:02d}"
        path = folder / f"{name}-{'-'.join(map(str, size))}.pddl"
        path.write_text(WRITERS[domain](name, *size, seed=seed))
        paths.append(path)
    return paths

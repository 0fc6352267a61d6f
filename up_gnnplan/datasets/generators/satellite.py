"""Generate Satellite instances in the layout of the IPC 2023 Learning Track.

The domain is the Learning Track's Satellite (typed, with negative preconditions; no numeric
fluents), so the shipped ``satellite`` models apply to these problems. A problem is described by
the parameters the Learning Track's files name in their first line (``satellites``,
``instruments``, ``modes``, ``directions``). What follows is read off the 119 files that carry
those parameters, as the Learning Track does not publish its generator's settings:

- every satellite has one instrument on board and the others go to random satellites;
- every instrument supports a random non-empty set of modes, and every mode is supported by some
  instrument (true of every file);
- every instrument has a random calibration target; every satellite points at a random direction
  and has power available;
- the goal points a random number (0..satellites) of random satellites at random directions, and
  asks for a random number (1..directions x modes) of distinct images (direction, mode).

Every problem is solvable: a satellite turns to any direction, and switching an instrument off
gives the power back.

The testing/easy files stop at 10 satellites, 20 instruments, 3 modes and 10 directions;
``satellites=30, instruments=60, modes=5, directions=40`` is 3-4x that.
"""

from __future__ import annotations

import random

from up_gnnplan.datasets.generators.params import require_int
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain satellite)
  (:requirements :strips :typing :negative-preconditions)
  (:types satellite direction instrument mode)
  (:predicates (on_board ?i - instrument ?s - satellite) (supports ?i - instrument ?m - mode)
               (pointing ?s - satellite ?d - direction) (power_avail ?s - satellite) (power_on ?i - instrument)
               (calibrated ?i - instrument) (have_image ?d - direction ?m - mode)
               (calibration_target ?i - instrument ?d - direction))
  (:action turn_to
    :parameters (?s - satellite ?d_new - direction ?d_prev - direction)
    :precondition (and (pointing ?s ?d_prev) (not (pointing ?s ?d_new)))
    :effect (and (pointing ?s ?d_new) (not (pointing ?s ?d_prev))))
  (:action switch_on
    :parameters (?i - instrument ?s - satellite)
    :precondition (and (on_board ?i ?s) (power_avail ?s))
    :effect (and (power_on ?i) (not (calibrated ?i)) (not (power_avail ?s))))
  (:action switch_off
    :parameters (?i - instrument ?s - satellite)
    :precondition (and (on_board ?i ?s) (power_on ?i))
    :effect (and (not (power_on ?i)) (power_avail ?s)))
  (:action calibrate
    :parameters (?s - satellite ?i - instrument ?d - direction)
    :precondition (and (on_board ?i ?s) (calibration_target ?i ?d) (pointing ?s ?d) (power_on ?i))
    :effect (calibrated ?i))
  (:action take_image
    :parameters (?s - satellite ?d - direction ?i - instrument ?m - mode)
    :precondition (and (calibrated ?i) (on_board ?i ?s) (supports ?i ?m) (power_on ?i) (pointing ?s ?d))
    :effect (have_image ?d ?m)))
"""


def generate_problem(rng: random.Random, *, satellites: int = 10, instruments: int = 20, modes: int = 3,
                     directions: int = 10, name: str = "satellite") -> str:
    """Return the PDDL text of a Satellite problem (see the module docstring)."""
    require_int("satellites", satellites, 1)
    require_int("instruments", instruments, satellites, why="every satellite has an instrument")
    require_int("modes", modes, 1)
    require_int("directions", directions, 1)
    sats = [f"sat{i + 1}" for i in range(satellites)]
    tools = [f"ins{i + 1}" for i in range(instruments)]
    kinds = [f"mod{i + 1}" for i in range(modes)]
    dirs = [f"dir{i + 1}" for i in range(directions)]
    owners = sats + [rng.choice(sats) for _ in range(instruments - satellites)]
    rng.shuffle(owners)
    supported = [set(rng.sample(kinds, rng.randint(1, modes))) for _ in tools]
    for kind in kinds:
        if not any(kind in s for s in supported):
            rng.choice(supported).add(kind)
    init = ([f"(pointing {s} {rng.choice(dirs)})" for s in sats] + [f"(power_avail {s})" for s in sats]
            + [f"(calibration_target {i} {rng.choice(dirs)})" for i in tools]
            + [f"(on_board {i} {s})" for i, s in zip(tools, owners)]
            + [f"(supports {i} {m})" for i, s in zip(tools, supported) for m in kinds if m in s])
    pointed = sorted(rng.sample(range(satellites), rng.randint(0, satellites)))
    images = rng.sample([(d, m) for d in dirs for m in kinds], rng.randint(1, directions * modes))
    goal = ([f"(pointing {sats[i]} {rng.choice(dirs)})" for i in pointed]
            + [f"(have_image {d} {m})" for d, m in images])
    objects = [f"{' '.join(sats)} - satellite", f"{' '.join(tools)} - instrument", f"{' '.join(kinds)} - mode",
               f"{' '.join(dirs)} - direction"]
    return problem_text(name, "satellite", objects, init, goal, object_lines=True)

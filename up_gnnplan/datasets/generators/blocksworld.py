"""Generate Blocksworld instances with uniformly random initial and goal configurations.

The domain is the four-operator Blocksworld with the predicate names of the IPC 2023 Learning
Track (``on``, ``on-table``, ``clear``, ``holding``, ``arm-empty``), so the shipped
``blocksworld`` model applies to these problems; like the IPC 2023 instances, the goal is a
complete configuration (every ``on``, ``on-table`` and ``clear`` atom of it).

Sampling: a configuration of n labelled blocks is a set of towers, each an ordered list of
blocks. The number of configurations with k towers is the Lah number L(n, k) =
C(n - 1, k - 1) n! / k!. We draw k with probability proportional to L(n, k), then a uniformly
random permutation of the blocks cut at k - 1 distinct positions chosen uniformly among the
n - 1 gaps. Every set of k towers arises from exactly k! (permutation, cuts) pairs (one per
order of its towers), so the configuration is uniform over all configurations of n blocks.
The goal is drawn the same way, independently, and redrawn while it equals the initial one.

``generate_blocks_problem`` writes the IPC 2000 variant instead (domain ``BLOCKS``, predicates
``ontable`` and ``handempty``, for the shipped ``blocks`` model): as in the IPC 2000 problems,
the goal is one tower of all blocks in a uniformly random order, given by its ``on`` atoms only
(the Blocks-s setting).
"""

from __future__ import annotations

import math
import random

from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_PDDL = """\
(define (domain blocksworld)
  (:requirements :strips)
  (:predicates (clear ?x) (on-table ?x) (arm-empty) (holding ?x) (on ?x ?y))
  (:action pickup
    :parameters (?x)
    :precondition (and (clear ?x) (on-table ?x) (arm-empty))
    :effect (and (holding ?x) (not (clear ?x)) (not (on-table ?x)) (not (arm-empty))))
  (:action putdown
    :parameters (?x)
    :precondition (holding ?x)
    :effect (and (clear ?x) (arm-empty) (on-table ?x) (not (holding ?x))))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (clear ?y) (holding ?x))
    :effect (and (arm-empty) (clear ?x) (on ?x ?y) (not (clear ?y)) (not (holding ?x))))
  (:action unstack
    :parameters (?x ?y)
    :precondition (and (on ?x ?y) (clear ?x) (arm-empty))
    :effect (and (holding ?x) (clear ?y) (not (on ?x ?y)) (not (clear ?x)) (not (arm-empty)))))
"""

# The four operators of the IPC 2000 Blocks domain (also those of exists-blocks), closing the domain.
BLOCKS_ACTIONS = """\
  (:action pick-up
    :parameters (?x)
    :precondition (and (clear ?x) (ontable ?x) (handempty))
    :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))
  (:action put-down
    :parameters (?x)
    :precondition (holding ?x)
    :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (holding ?x) (clear ?y))
    :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))
  (:action unstack
    :parameters (?x ?y)
    :precondition (and (on ?x ?y) (clear ?x) (handempty))
    :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty)) (not (on ?x ?y)))))
"""

BLOCKS_DOMAIN_PDDL = """\
(define (domain BLOCKS)
  (:requirements :strips)
  (:predicates (on ?x ?y) (ontable ?x) (clear ?x) (handempty) (holding ?x))
""" + BLOCKS_ACTIONS

Towers = tuple[tuple[int, ...], ...]  # each tower bottom to top; blocks 0..n-1


def lah(n: int, k: int) -> int:
    """Return the number of ways to arrange n labelled blocks into k non-empty towers."""
    if n == 0:
        return 1 if k == 0 else 0
    if not 1 <= k <= n:
        return 0
    return math.comb(n - 1, k - 1) * math.factorial(n) // math.factorial(k)


def sample_towers(rng: random.Random, blocks: int) -> Towers:
    """Return a configuration drawn uniformly from all configurations of the blocks."""
    weights = [lah(blocks, k) for k in range(1, blocks + 1)]
    # Exact integer weights: random.choices would round them to floats.
    pick = rng.randrange(sum(weights))
    k = 1
    while pick >= weights[k - 1]:
        pick -= weights[k - 1]
        k += 1
    order = list(range(blocks))
    rng.shuffle(order)
    cuts = sorted(rng.sample(range(1, blocks), k - 1))
    bounds = [0, *cuts, blocks]
    towers = [tuple(order[a:b]) for a, b in zip(bounds, bounds[1:])]
    return tuple(sorted(towers))


def _atoms(towers: Towers, names: list[str], on_table: str = "on-table") -> list[str]:
    """Return the on / on-table / clear atoms of a configuration."""
    atoms = []
    for tower in towers:
        atoms.append(f"({on_table} {names[tower[0]]})")
        atoms += [f"(on {names[top]} {names[below]})" for below, top in zip(tower, tower[1:])]
        atoms.append(f"(clear {names[tower[-1]]})")
    return atoms


def render_problem(initial: Towers, goal: Towers, name: str) -> str:
    """Return the problem text: hand empty, initial configuration, complete goal configuration."""
    names = [f"b{i + 1}" for i in range(sum(len(t) for t in initial))]
    return problem_text(name, "blocksworld", names, ["(arm-empty)", *_atoms(initial, names)], _atoms(goal, names))


def _check(blocks) -> None:
    if isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 2:
        raise ValueError(f"blocks must be an int >= 2, got {blocks!r}")


def generate_problem(rng: random.Random, *, blocks: int = 5, name: str = "blocksworld") -> str:
    """Return the PDDL text of a random Blocksworld problem with the given number of blocks."""
    _check(blocks)
    initial = sample_towers(rng, blocks)
    goal = sample_towers(rng, blocks)
    while goal == initial:
        goal = sample_towers(rng, blocks)
    return render_problem(initial, goal, name)


def generate_blocks_problem(rng: random.Random, *, blocks: int = 5, name: str = "blocks") -> str:
    """Return an IPC 2000 style problem: random initial configuration, goal one random tower."""
    _check(blocks)
    initial = sample_towers(rng, blocks)
    tower = list(range(blocks))
    rng.shuffle(tower)
    while (tuple(tower),) == initial:
        rng.shuffle(tower)
    names = [f"b{i + 1}" for i in range(blocks)]
    goal = [f"(on {names[top]} {names[below]})" for below, top in zip(tower, tower[1:])]
    return problem_text(name, "BLOCKS", names, ["(handempty)", *_atoms(initial, names, on_table="ontable")], goal)

"""Generate Blocks and Blocks-C instances with existentially quantified goals over coloured blocks.

Source: Funkquist, Ståhlberg & Geffner (2024), "Learning to Ground Existentially Quantified
Goals", Section 9.1 and Figure 1. The paper publishes its data on Zenodo but describes no
generator; this module writes its own from the description.

Faithful to the paper:
  * the standard four-operator Blocksworld with a gripper (the IPC 2000 names ``pick-up``,
    ``put-down``, ``stack``, ``unstack``, ``on``, ``ontable``, ``clear``, ``handempty``,
    ``holding``; untyped) plus the colour predicates, one colour per block;
  * Blocks (``generate_problem``): the goal is a tower of variables, Figure 1's
    ``∃x1..xk: C1(x1) ∧ .. ∧ Ck(xk) ∧ on(x1, x2) ∧ .. ∧ on(xk-1, xk)``, x1 on top;
  * Blocks-C (``generate_clear_problem``): the goal is ``clear(xi)`` for coloured variables:
    uncover blocks of the given colours;
  * the paper trains on 2 to 7 blocks; the default of 5 blocks gives under 900 states.

Our own choices:
  * the initial configuration is uniformly random (``blocksworld.sample_towers``), hand empty;
  * the witness is ``variables`` distinct blocks in random order; a tower of distinct blocks and
    a set of clear blocks can always be reached. ``on_table = 1`` adds ``ontable(xk)``;
  * a tower needs at least two variables (with one, the goal would only name a colour).
"""

from __future__ import annotations

import itertools
import random

from up_gnnplan.datasets.generators.blocksworld import BLOCKS_ACTIONS, Towers, sample_towers
from up_gnnplan.datasets.generators.exists_common import (
    COLOUR_PREDICATES,
    GOAL_REQUIREMENTS,
    can_bind,
    check_at_most,
    check_goal_parameters,
    check_int,
    colour_atoms,
    exists_goal,
    paint,
    sample_open,
    variable,
)
from up_gnnplan.datasets.generators.pddl import problem_text

DOMAIN_NAME = "exists-blocks"

DOMAIN_PDDL = f"""\
(define (domain {DOMAIN_NAME})
  (:requirements :strips {GOAL_REQUIREMENTS})
  (:predicates (on ?x ?y) (ontable ?x) (clear ?x) (handempty) (holding ?x)
    {COLOUR_PREDICATES})
""" + BLOCKS_ACTIONS

Sample = tuple[Towers, list[str], list[int]]  # configuration, colour per block, witness blocks


def _check(blocks, colours, variables, neq, min_variables: int) -> None:
    check_int("blocks", blocks, 2)
    check_goal_parameters(colours, variables, neq, min_variables=min_variables)
    check_at_most("variables", variables, blocks, "blocks")
    check_at_most("colours", colours, blocks, "blocks")


def _sample(rng: random.Random, blocks: int, colours: int, variables: int) -> Sample:
    """Return a random configuration, the blocks' colours and a witness of distinct blocks."""
    return sample_towers(rng, blocks), paint(rng, blocks, colours), rng.sample(range(blocks), variables)


def _init(towers: Towers, painted: list[str], names: list[str]) -> list[str]:
    """Return the initial atoms: hand empty, the configuration, then the colours."""
    atoms = ["(handempty)"]
    for tower in towers:
        atoms.append(f"(ontable {names[tower[0]]})")
        atoms += [f"(on {names[top]} {names[below]})" for below, top in itertools.pairwise(tower)]
        atoms.append(f"(clear {names[tower[-1]]})")
    return atoms + [f"({colour} {name})" for name, colour in zip(names, painted)]


def _tower_exists(towers: Towers, painted: list[str], wanted: list[str], on_table: int) -> bool:
    """Return whether some blocks stacked top-down have the wanted colours (the bottom one on the table)."""
    for tower in towers:
        top_down = tower[::-1]
        for start in range(len(top_down) - len(wanted) + 1):
            segment = top_down[start:start + len(wanted)]
            if on_table and segment[-1] != tower[0]:
                continue
            if [painted[b] for b in segment] == wanted:
                return True
    return False


def generate_problem(rng: random.Random, *, blocks: int = 5, colours: int = 3, variables: int = 2,
                     neq: int = 1, on_table: int = 0, name: str = "exists-blocks") -> str:
    """Return a Blocks problem whose goal is a tower of ``variables`` coloured blocks, x1 on top."""
    _check(blocks, colours, variables, neq, min_variables=2)
    check_int("on_table", on_table, 0, 1)

    def holds(sample: Sample) -> bool:
        towers, painted, witness = sample
        return _tower_exists(towers, painted, [painted[b] for b in witness], on_table)

    towers, painted, witness = sample_open(lambda: _sample(rng, blocks, colours, variables), holds)
    body = colour_atoms([painted[b] for b in witness])
    body += [f"(on {variable(i)} {variable(i + 1)})" for i in range(variables - 1)]
    if on_table:
        body.append(f"(ontable {variable(variables - 1)})")
    names = [f"b{i + 1}" for i in range(blocks)]
    return problem_text(name, DOMAIN_NAME, names, _init(towers, painted, names), exists_goal(variables, body, neq))


def generate_clear_problem(rng: random.Random, *, blocks: int = 5, colours: int = 3, variables: int = 2,
                           neq: int = 1, name: str = "exists-blocks-c") -> str:
    """Return a Blocks-C problem whose goal is ``variables`` clear blocks of given colours."""
    _check(blocks, colours, variables, neq, min_variables=1)

    def holds(sample: Sample) -> bool:
        towers, painted, witness = sample
        clear = [tower[-1] for tower in towers]
        return can_bind([[b for b in clear if painted[b] == painted[w]] for w in witness], distinct=bool(neq))

    towers, painted, witness = sample_open(lambda: _sample(rng, blocks, colours, variables), holds)
    body = colour_atoms([painted[b] for b in witness]) + [f"(clear {variable(i)})" for i in range(variables)]
    names = [f"b{i + 1}" for i in range(blocks)]
    return problem_text(name, DOMAIN_NAME, names, _init(towers, painted, names), exists_goal(variables, body, neq))

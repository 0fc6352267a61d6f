"""Shared parts of the exists-* generators: colours, parameter checks and quantified goals.

Funkquist, Ståhlberg & Geffner (2024), "Learning to Ground Existentially Quantified Goals",
Section 8, explain why colours are a FIXED set of unary predicates that every domain declares
(a colour given as an object would need three variables to compare, beyond C2); Section 10
trains with 1 to 6 colours and 1 to 4 goal variables, and tests with up to 6 variables. Every
exists-* domain declares the six predicates of ``COLOURS`` in that order; our choice: an
instance with ``colours = k`` paints every one of its coloured objects with one of the first k
colours, each of them used at least once (so k may not exceed the number of those objects).

The goal is ``(exists (?x1 .. ?xk) (and colour atoms, relation atoms, inequalities))``, the
inequalities ``(not (= ?xi ?xj))`` for every pair when ``neq = 1`` (the paper's
"With xi != xj constraints" setting). Each generator builds it from a hidden witness: distinct
objects are picked first, their colours are read off and they are replaced by variables, so the
goal is satisfiable, and the generators only pick witnesses that can be reached. Our choice: a
goal that already holds in the initial state is sampled again (see ``sample_open``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from itertools import combinations
from typing import TypeVar

COLOURS = ("red", "green", "blue", "yellow", "orange", "purple")

# The predicate declarations of the colours, for the (:predicates ...) of every exists-* domain.
COLOUR_PREDICATES = " ".join(f"({colour} ?x)" for colour in COLOURS)

# Existential goals with (not (= ...)) need all three besides :strips.
GOAL_REQUIREMENTS = ":equality :negative-preconditions :existential-preconditions"

MAX_VARIABLES = 6

# Resampling budget before the parameters are declared to give only goals that hold initially.
MAX_TRIES = 1000

T = TypeVar("T")


def check_int(label: str, value, minimum: int, maximum: int | None = None) -> None:
    """Raise ValueError naming ``label`` unless value is an int in [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (
            maximum is not None and value > maximum):
        bounds = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise ValueError(f"{label} must be an int {bounds}, got {value!r}")


def check_goal_parameters(colours, variables, neq, *, min_variables: int = 1) -> None:
    """Raise ValueError unless colours is 1..6, variables is min_variables..6 and neq is 0 or 1."""
    check_int("colours", colours, 1, len(COLOURS))
    check_int("variables", variables, min_variables, MAX_VARIABLES)
    check_int("neq", neq, 0, 1)


def check_at_most(label: str, value: int, limit: int, what: str) -> None:
    """Raise ValueError naming ``label`` when value exceeds the number of objects it picks from."""
    if value > limit:
        raise ValueError(f"{label} must not exceed the number of {what} ({limit}), got {value}")


def paint(rng: random.Random, count: int, colours: int) -> list[str]:
    """Return one colour per object: each of the first ``colours`` colours at least once, the rest uniform.

    The caller checks ``count >= colours``.
    """
    palette = COLOURS[:colours]
    painted = list(palette) + [rng.choice(palette) for _ in range(count - colours)]
    rng.shuffle(painted)
    return painted


def variable(i: int) -> str:
    """Return the name of goal variable i (0-based): ``?x1``, ``?x2``, ..."""
    return f"?x{i + 1}"


def colour_atoms(colours: Sequence[str]) -> list[str]:
    """Return ``(colour ?xi)`` for the colour of each variable's witness, in variable order."""
    return [f"({colour} {variable(i)})" for i, colour in enumerate(colours)]


def exists_goal(variables: int, body: list[str], neq: int, type_name: str | None = None) -> str:
    """Return the goal formula over ?x1..?xk, one atom a line, ready for ``problem_text``."""
    names = [variable(i) for i in range(variables)]
    declared = " ".join(names) + (f" - {type_name}" if type_name else "")
    atoms = body + ([f"(not (= {a} {b}))" for a, b in combinations(names, 2)] if neq else [])
    return "\n".join([f"(exists ({declared})", "    (and", *(f"      {atom}" for atom in atoms)]) + "))"


def can_bind(candidates: Sequence[Sequence[Hashable]], distinct: bool) -> bool:
    """Return whether every variable can take one of its candidate objects, distinct ones if ``distinct``.

    With ``distinct`` this is a bipartite matching, found by augmenting paths.
    """
    if not distinct:
        return all(candidates)
    owner: dict[Hashable, int] = {}

    def place(i: int, seen: set) -> bool:
        for obj in candidates[i]:
            if obj not in seen:
                seen.add(obj)
                if obj not in owner or place(owner[obj], seen):
                    owner[obj] = i
                    return True
        return False

    return all(place(i, set()) for i in range(len(candidates)))


def sample_open(sample: Callable[[], T], holds_initially: Callable[[T], bool]) -> T:
    """Return the first sample whose goal does not already hold initially, trying MAX_TRIES times.

    Raises ValueError when every try holds initially: parameters such as one colour and one
    Visitall variable (the visited start cell always fits) give no other goals.
    """
    for _ in range(MAX_TRIES):
        instance = sample()
        if not holds_initially(instance):
            return instance
    raise ValueError(f"every goal sampled in {MAX_TRIES} tries holds in the initial state; "
                     "raise variables or colours, or use more objects")


def grid_cells(width: int, height: int) -> list[str]:
    """Return the cell names ``c<x>-<y>`` of a width x height grid (1-based, column by column)."""
    return [f"c{x}-{y}" for x in range(1, width + 1) for y in range(1, height + 1)]


def grid_links(predicate: str, width: int, height: int) -> list[str]:
    """Return ``(predicate a b)`` for every ordered pair of 4-neighbour cells."""
    atoms = []
    for x in range(1, width + 1):
        for y in range(1, height + 1):
            for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                if 1 <= nx <= width and 1 <= ny <= height:
                    atoms.append(f"({predicate} c{x}-{y} c{nx}-{ny})")
    return atoms

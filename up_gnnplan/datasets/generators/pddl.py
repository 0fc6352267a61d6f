"""The PDDL problem text that every generator of the package writes."""

from __future__ import annotations


def problem_text(name: str, domain: str, objects: list[str], init: list[str], goal: list[str] | str,
                 object_lines: bool = False) -> str:
    """Return a problem with one atom per line.

    ``objects`` go on one line, or one line each with ``object_lines`` (typed groups such as
    ``"x1 x2 - xcoord"``); ``goal`` is a list of atoms (a conjunction) or a single atom.
    """
    lines = [f"(define (problem {name})", f"  (:domain {domain})"]
    if object_lines:
        lines.append("  (:objects")
        lines += [f"    {line}" for line in objects]
        lines[-1] += ")"
    else:
        lines.append(f"  (:objects {' '.join(objects)})")
    lines.append("  (:init")
    lines += [f"    {atom}" for atom in init]
    lines[-1] += ")"
    if isinstance(goal, str):
        lines.append(f"  (:goal {goal}))")
    else:
        lines.append("  (:goal (and")
        lines += [f"    {atom}" for atom in goal]
        lines[-1] += ")))"
    return "\n".join(lines) + "\n"

"""The PDDL problem text that the Blocks(world), Gripper and Logistics generators write."""

from __future__ import annotations


def problem_text(name: str, domain: str, objects: list[str], init: list[str], goal: list[str]) -> str:
    """Return a problem with its objects on one line, one atom per line, and a conjunctive goal."""
    lines = [f"(define (problem {name})", f"  (:domain {domain})", f"  (:objects {' '.join(objects)})", "  (:init"]
    lines += [f"    {atom}" for atom in init]
    lines[-1] += ")"
    lines.append("  (:goal (and")
    lines += [f"    {atom}" for atom in goal]
    lines[-1] += ")))"
    return "\n".join(lines) + "\n"

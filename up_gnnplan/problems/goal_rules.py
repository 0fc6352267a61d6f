"""Goal conjuncts with disjunctions or universal quantifiers, compiled into derived predicates.

pymimir reads a goal of literals. A conjunct such as ``(forall (?p - passenger) (served ?p))`` or
``(or (at a x) (at b x))`` becomes a derived predicate ``gnnplan-goal-K`` whose rule is the
conjunct, with the problem's objects it names as parameters (typed as the problem declares them;
the domain's constants stay as they are), and the goal names it on those objects. The searches,
the goal test and Fast Downward (which reads the same texts) stay exact; the model cannot see such a
conjunct (it gives no goal atoms), as with existential goals. The problem's lines keep their numbers
(the conjunct is replaced on its first line); the domain gets the predicate on its ``:predicates``
line and the rules before its last parenthesis.
"""

from __future__ import annotations

import re

from up_gnnplan.errors import ProblemLoadError
from up_gnnplan.problems.normal_form import read_span, text_of

GOAL_PREDICATE = "gnnplan-goal-{}"
_LOGICAL = {"and", "or", "not", "imply", "exists", "forall", "="}
_GOAL = re.compile(r"\(\s*:goal\b")
_PREDICATES = re.compile(r"\(\s*:predicates\b")
_REQUIREMENTS = re.compile(r"\(\s*:requirements\b([^)]*)\)")


def compiles(node) -> bool:
    """Whether a goal conjunct (a span or a syntax node) is compiled here: not a literal and not existential."""
    head = node.head if isinstance(node, list) else None
    if head == "not" and len(node) == 2 and isinstance(node[1], list):
        return node[1].head in ("and", "or", "imply", "forall", "exists", "not")
    return head in ("or", "imply", "forall")


def _objects(node, found: list) -> None:
    """The object names (not variables) that ``node`` uses, in order of first use."""
    if not isinstance(node, list):
        return
    if node.head in ("exists", "forall"):
        _objects(node[2] if len(node) > 2 else None, found)
        return
    for item in node[1:]:
        if isinstance(item, list):
            _objects(item, found)
        elif not item.startswith("?") and item not in found:
            found.append(item)


def _renamed(node, names: dict) -> str:
    if not isinstance(node, list):
        return names.get(node, node)
    if node.head in ("exists", "forall") and len(node) > 2:
        return f"({node.head} {text_of(node[1])} {_renamed(node[2], names)})"
    return "(" + " ".join([node[0] if node.head else _renamed(node[0], names)]
                          + [_renamed(item, names) for item in node[1:]]) + ")"


def compile_goal(domain_code: str, problem_code: str, object_types: dict, constants: set,
                 problem_path) -> tuple[str, str, int]:
    """Return the domain and problem texts (lower case, comments blanked) with each compiled goal conjunct
    made a derived predicate, and the number of conjuncts compiled (0: the texts as given).

    ``object_types``: the problem's objects and their declared types; ``constants``: the domain's."""
    found = _GOAL.search(problem_code)
    if found is None:
        return domain_code, problem_code, 0
    goal = read_span(problem_code, found.start())
    if len(goal) < 2 or not isinstance(goal[1], list):
        return domain_code, problem_code, 0
    conjuncts = goal[1][1:] if goal[1].head == "and" else [goal[1]]
    pieces, last, declarations, rules = [], 0, [], []
    for conjunct in conjuncts:
        if not isinstance(conjunct, list) or not compiles(conjunct):
            continue
        line = problem_code.count("\n", 0, conjunct.start) + 1
        used: list = []
        _objects(conjunct, used)
        named = [o for o in used if o not in constants]
        unknown = [o for o in named if o not in object_types]
        if unknown:
            raise ProblemLoadError(f"{problem_path}, line {line}: the goal names '{unknown[0]}', which is neither an "
                                   "object of the problem nor a constant of the domain")
        k = len(rules)
        variables = {o: f"?gnnplan-o{i}" for i, o in enumerate(named)}
        parameters = " ".join(f"{variables[o]} - {object_types[o]}" for o in named)
        predicate = GOAL_PREDICATE.format(k)
        declarations.append(f"({predicate} {parameters})".replace(" )", ")"))
        rules.append(f"(:derived ({predicate} {parameters}) {_renamed(conjunct, variables)})".replace(" )", ")", 1))
        pieces += [problem_code[last:conjunct.start], f"({' '.join([predicate, *named])})",
                   "\n" * problem_code.count("\n", conjunct.start, conjunct.end)]
        last = conjunct.end
    if not rules:
        return domain_code, problem_code, 0
    problem_code = "".join(pieces) + problem_code[last:]
    predicates = _PREDICATES.search(domain_code)
    if predicates is None:
        raise ProblemLoadError(f"{problem_path}: the goal needs derived predicates, and the domain declares no "
                               ":predicates to add them to")
    domain_code = (domain_code[:predicates.end()] + " " + " ".join(declarations) + domain_code[predicates.end():])
    end = domain_code.rstrip().rfind(")")
    domain_code = domain_code[:end] + " " + " ".join(rules) + domain_code[end:]
    requirements = _REQUIREMENTS.search(domain_code)
    if requirements is not None:
        have = set(requirements.group(1).split())
        extra = [r for r in (":derived-predicates", ":adl") if r not in have]
        domain_code = domain_code[:requirements.end(1)] + " " + " ".join(extra) + domain_code[requirements.end(1):]
    return domain_code, problem_code, len(rules)

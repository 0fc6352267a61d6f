"""Goal conjuncts with disjunctions or universal quantifiers, compiled into derived predicates.

pymimir reads a goal of literals. A conjunct such as ``(forall (?p - passenger) (served ?p))`` or
``(or (at a x) (at b x))`` becomes a derived predicate ``gnnplan-goal-K`` whose rule is the
conjunct, with the problem's objects it names as parameters (typed as the problem declares them;
the domain's constants stay as they are), and the goal names it on those objects. The searches,
the goal test and Fast Downward (which reads the same texts) stay exact; the model cannot see such a
conjunct (it gives no goal atoms), as with existential goals. The problem's lines keep their numbers
(the conjunct is replaced on its first line); the domain gets the predicate on its ``:predicates``
line and the rules before its last parenthesis.

A universal conjunct over literals, ``(forall (?p - passenger) (served ?p))``, is instead written out
as its instances over the objects of the variables' types (at most :data:`MAX_INSTANCES`): the same
goal, as literals the model sees.
"""

from __future__ import annotations

import itertools
import re

from up_gnnplan.errors import ProblemLoadError
from up_gnnplan.problems.normal_form import read_span, text_of
from up_gnnplan.problems.syntax import typed_list

GOAL_PREDICATE = "gnnplan-goal-{}"


def hidden_note(count: int) -> str:
    """What a solve's log says of ``count`` goal conjuncts made derived predicates (files or UP alike)."""
    return (f"{count} goal conjunct(s) with or/imply/forall are derived predicates, which the model cannot see "
            "(they give it no goal atoms): the policy and the search are guided by the rest of the goal only")
_LOGICAL = {"and", "or", "not", "imply", "exists", "forall", "="}
_GOAL = re.compile(r"\(\s*:goal\b")
_PREDICATES = re.compile(r"\(\s*:predicates\b")
_REQUIREMENTS = re.compile(r"\(\s*:requirements\b([^)]*)\)")
# A universal goal conjunct over literals is written out as its instances where they are at most this many.
MAX_INSTANCES = 10_000


def _literal(node) -> bool:
    if isinstance(node, list) and node.head == "not" and len(node) == 2:
        node = node[1]
    return isinstance(node, list) and node.head not in _LOGICAL - {"="} and all(isinstance(i, str) for i in node)


def _instances(conjunct, objects_of, problem_path, line) -> list[str] | None:
    """The ground literals of ``(forall (VARIABLES) BODY)`` with BODY a literal or a conjunction of literals,
    over the objects of the variables' types; None where the conjunct is not of that form, has no
    instance, or more than :data:`MAX_INSTANCES`."""
    if conjunct.head != "forall" or len(conjunct) != 3 or not isinstance(conjunct[1], list):
        return None
    body = conjunct[2]
    literals = list(body[1:]) if isinstance(body, list) and body.head == "and" else [body]
    if not literals or not all(_literal(literal) for literal in literals):
        return None
    variables = typed_list(list(conjunct[1]), problem_path, line)
    domains = [objects_of(kind) for _, kind in variables]
    count = 1
    for objects in domains:
        count *= len(objects)
    if count == 0 or count * len(literals) > MAX_INSTANCES:
        return None
    names = [name for name, _ in variables]
    return [_renamed(literal, dict(zip(names, combination)))
            for combination in itertools.product(*domains) for literal in literals]


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


def compile_goal(domain_code: str, problem_code: str, object_types: dict, constants: dict, parents: dict,
                 problem_path) -> tuple[str, str, int]:
    """Return the domain and problem texts (lower case, comments blanked) with each compiled goal conjunct
    made a derived predicate or written out as its instances, and the number made derived predicates.

    ``object_types``: the problem's objects and their declared types; ``constants``: the domain's, the same;
    ``parents``: each type's parent type."""

    def objects_of(kind: str) -> list[str]:
        def within(declared: str) -> bool:
            while declared is not None:
                if declared == kind:
                    return True
                declared = parents.get(declared) if declared != "object" else None
            return kind == "object"
        return [name for table in (constants, object_types) for name, declared in table.items() if within(declared)]

    found = _GOAL.search(problem_code)
    if found is None:
        return domain_code, problem_code, 0
    goal = read_span(problem_code, found.start())
    if len(goal) < 2 or not isinstance(goal[1], list):
        return domain_code, problem_code, 0
    whole = goal[1].head != "and"
    conjuncts = [goal[1]] if whole else goal[1][1:]
    pieces, last, declarations, rules = [], 0, [], []
    for conjunct in conjuncts:
        if not isinstance(conjunct, list) or not compiles(conjunct):
            continue
        line = problem_code.count("\n", 0, conjunct.start) + 1
        instances = _instances(conjunct, objects_of, problem_path, line)
        if instances is not None:
            written = " ".join(instances)
            pieces += [problem_code[last:conjunct.start], f"(and {written})" if whole else written,
                       "\n" * problem_code.count("\n", conjunct.start, conjunct.end)]
            last = conjunct.end
            continue
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
    problem_code = "".join(pieces) + problem_code[last:]
    if not rules:
        return domain_code, problem_code, 0
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

"""Action parameters of an ``(either t1 t2 ...)`` type, made exact for pymimir.

pymimir 0.13 reads ``(:action pick :parameters (?i - (either box crate) ...) ...)`` without an error
but grounds no action for it (no object has the type it makes of the union), and UP's reader does
not parse it. PDDL has no type test in conditions, so the union becomes a static predicate:

- the parameter gets the most specific type every member descends from
  (:func:`~up_gnnplan.problems.syntax.common_type`: ``item`` for box and crate);
- the action's precondition gets ``(gnnplan-either-box-crate ?i)``, declared among the predicates;
- the problem's ``:init`` gets that atom for every object (and constant) whose type is a member or
  descends from one.

The actions, their names and arguments stay as written, so plans map back unchanged; line numbers
hold (insertions go onto existing lines). The model sees the predicate as a static one.
``(either ...)`` elsewhere (a predicate's parameters: read as the common type, pymimir gets those
right; types, constants and objects: UP's reader) is not rewritten here.
"""

from __future__ import annotations

import re

from up_gnnplan.problems.normal_form import read_span
from up_gnnplan.problems.syntax import ancestry, common_type

PREFIX = "gnnplan-either-"
_ACTION = re.compile(r"\(\s*:action\b")
_PARAMETERS = re.compile(r":parameters\b")
_PRECONDITION = re.compile(r":precondition\b")


def predicate_name(kinds) -> str:
    """The static predicate that stands for ``(either kinds...)``."""
    return PREFIX + "-".join(kinds)


def with_either_parameters(domain_code: str, problem_code: str, parents: dict,
                           objects: list[tuple[str, str]]) -> tuple[str, str]:
    """Return ``(domain_code, problem_code)`` with each ``(either ...)`` action parameter made exact as the module
    says; ``parents``: the domain's type hierarchy; ``objects``: ``(name, type)`` of the domain's constants and
    the problem's objects. Both codes are lower case with comments blanked, and every action has a
    precondition (:func:`~up_gnnplan.problems.syntax.with_preconditions`)."""
    if not re.search(r"\(\s*either\b", domain_code):
        return domain_code, problem_code
    edits, unions = [], {}  # edits: (start, end, text) on domain_code; unions: predicate -> member types
    for found in _ACTION.finditer(domain_code):
        action = read_span(domain_code, found.start())
        parameters = _PARAMETERS.search(domain_code, found.start(), action.end)
        if parameters is None:
            continue
        listed = read_span(domain_code, domain_code.index("(", parameters.end()))
        tests, pending, index = [], [], 0
        while index < len(listed):
            item = listed[index]
            if item != "-" or index + 1 >= len(listed):
                pending.append(item)
                index += 1
                continue
            either = listed[index + 1]
            if not isinstance(either, str) and either.head == "either" and len(either) > 1 \
                    and all(isinstance(k, str) for k in either[1:]):
                kinds = tuple(either[1:])
                unions[predicate_name(kinds)] = kinds
                newlines = "\n" * domain_code.count("\n", either.start, either.end)
                edits.append((either.start, either.end, common_type(list(kinds), parents) + newlines))
                tests += [f"({predicate_name(kinds)} {variable})" for variable in pending]
            pending, index = [], index + 2
        if not tests:
            continue
        precondition = _PRECONDITION.search(domain_code, parameters.end(), action.end)
        condition = read_span(domain_code, domain_code.index("(", precondition.end()))
        edits += [(condition.start, condition.start, f"(and {' '.join(tests)} "), (condition.end, condition.end, ")")]
    if not unions:
        return domain_code, problem_code
    declared = re.search(r"\(\s*:predicates\b", domain_code)
    declarations = " ".join(f"({name} ?x - {common_type(list(kinds), parents)})" for name, kinds in unions.items())
    if declared is not None:
        edits.append((declared.end(), declared.end(), " " + declarations))
    else:  # no :predicates section: one after the last of :requirements, :types and :constants
        anchor = max((read_span(domain_code, m.start()).end for m in
                      re.finditer(r"\(\s*:(requirements|types|constants)\b", domain_code)), default=None)
        anchor = anchor if anchor is not None else read_span(domain_code, domain_code.index("(", 1)).end
        edits.append((anchor, anchor, f" (:predicates {declarations})"))
    for start, end, text in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        domain_code = domain_code[:start] + text + domain_code[end:]
    return domain_code, _with_members(problem_code, unions, parents, objects)


def _with_members(problem_code: str, unions: dict, parents: dict, objects: list[tuple[str, str]]) -> str:
    """``problem_code`` with each union's predicate true of the objects whose type is a member or descends from one."""
    atoms = [f"({name} {obj})" for name, kinds in unions.items() for obj, kind in objects
             if set(ancestry(kind, parents)) & set(kinds)]
    found = re.search(r"\(\s*:init\b", problem_code)
    if found is None or not atoms:
        return problem_code
    return problem_code[:found.end()] + " " + " ".join(atoms) + problem_code[found.end():]

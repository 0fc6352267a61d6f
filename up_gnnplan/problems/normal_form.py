"""Disjunctions in a domain's conditions rewritten into disjunctive normal form before pymimir reads them.

pymimir 0.13 splits an action whose precondition has one disjunction into one schema per disjunct,
but a conjunction of two or more disjunctions comes out wrong: ``(and (or a b) (or c d))`` gave the
schemas ``c``, ``c d`` and ``d``, so actions were applicable where the precondition does not hold
(the same in a conditional effect's condition). A single disjunction of conjunctions comes out right.
So every precondition, ``when`` condition and ``:derived`` rule's condition that has an ``or`` or
``imply`` is rewritten here, on the text pymimir reads, into that form:

- negations are pushed onto atoms (``imply`` is ``or`` with the premise negated);
- ``exists`` distributes over ``or``, ``and`` over ``or``;
- ``forall`` becomes ``(not (exists ...))`` of the negated body's normal form, a literal of its
  conjunction (pymimir derives it, as it does any ``forall``).

The rewritten condition takes the original's first line and the original's line breaks follow it,
so pymimir's line numbers still point into the file; the requirements of what it writes (``exists``,
``not``) are declared where the domain does not (pymimir refuses an undeclared one). Conditions without ``or`` or ``imply`` are left
as written. Fast Downward reads the original text (its translator splits disjunctions correctly).
"""

from __future__ import annotations

import re
from pathlib import Path

from up_gnnplan.errors import ProblemLoadError

# At most this many conjunctions in one condition's normal form (it grows as the product of the
# disjunctions' sizes).
MAX_DISJUNCTS = 512

_TOKEN = re.compile(r"[()]|[^\s()]+")
_CONDITION = re.compile(r":precondition\b|\(\s*when\b|\(\s*:derived\b")


class _Span(list):
    """A parenthesised expression with the offsets of its ``(`` and after its ``)``."""

    def __init__(self, start: int):
        super().__init__()
        self.start, self.end = start, start

    @property
    def head(self):
        return self[0] if self and isinstance(self[0], str) else None


def read_span(code: str, start: int) -> _Span:
    """The expression opening at ``code[start]`` (balanced parentheses were checked before)."""
    stack: list[_Span] = []
    for token in _TOKEN.finditer(code, start):
        text = token.group()
        if text == "(":
            stack.append(_Span(token.start()))
        elif text == ")":
            node = stack.pop()
            node.end = token.end()
            if not stack:
                return node
            stack[-1].append(node)
        else:
            stack[-1].append(text)
    raise ValueError("unbalanced")


def text_of(node) -> str:
    return node if isinstance(node, str) else "(" + " ".join(text_of(item) for item in node) + ")"


def _has_disjunction(node) -> bool:
    return isinstance(node, list) and (node.head in ("or", "imply") or any(_has_disjunction(i) for i in node[1:]))


def _dnf(node, negated: bool, limit: int) -> list[list[str]]:
    """The condition ``node`` (negated if ``negated``) as conjunctions of literal texts (their disjunction)."""
    head = node.head if isinstance(node, list) else None
    if head == "not" and len(node) == 2:
        return _dnf(node[1], not negated, limit)
    if head == "imply" and len(node) == 3:  # (or (not A) B); negated: (and A (not B))
        if negated:
            return _product(_dnf(node[1], False, limit), _dnf(node[2], True, limit), limit)
        return _dnf(node[1], True, limit) + _dnf(node[2], False, limit)
    if head in ("and", "or"):
        conjunctive = (head == "and") != negated
        parts = [_dnf(item, negated, limit) for item in node[1:]]
        if not conjunctive:
            return [conjunction for part in parts for conjunction in part] or [["(or)"]]
        result = [[]]
        for part in parts:
            result = _product(result, part, limit)
        return result
    if head in ("exists", "forall") and len(node) == 3:
        variables = text_of(node[1])
        if (head == "exists") != negated:  # existential: distributes over the body's disjuncts
            return [[f"(exists {variables} {_conjunction(c)})"] for c in _dnf(node[2], negated, limit)]
        # universal: no ?x with the negated body
        return [[f"(not (exists {variables} {_disjunction(_dnf(node[2], not negated, limit))}))"]]
    literal = text_of(node)
    return [[f"(not {literal})" if negated else literal]]


def _product(left: list[list[str]], right: list[list[str]], limit: int) -> list[list[str]]:
    if len(left) * len(right) > limit:
        raise _TooLarge(len(left) * len(right))
    return [a + [b for b in c if b not in a] for a in left for c in right]


class _TooLarge(Exception):
    pass


def _conjunction(literals: list[str]) -> str:
    return literals[0] if len(literals) == 1 else "(and " + " ".join(literals) + ")"


def _disjunction(conjunctions: list[list[str]]) -> str:
    if len(conjunctions) == 1:
        return _conjunction(conjunctions[0])
    return "(or " + " ".join(_conjunction(c) for c in conjunctions) + ")"


def _normal(node, where: str) -> str:
    try:
        conjunctions = _dnf(node, False, MAX_DISJUNCTS)
    except _TooLarge as error:
        raise ProblemLoadError(f"{where}: the condition's disjunctions multiply out to {error.args[0]} or more "
                               f"alternatives, more than the {MAX_DISJUNCTS} up-gnnplan splits an action into") from None
    return _disjunction([["(and)"]] if conjunctions == [[]] else conjunctions)


def with_normal_conditions(code: str, path: Path | str) -> str:
    """Return the domain ``code`` (lower case, comments blanked) with every precondition, ``when``
    condition and derived predicate's condition that has an ``or`` or ``imply`` in disjunctive normal
    form, line numbers kept."""
    if not re.search(r"\(\s*(or|imply)\b", code):
        return code
    pieces, last = [], 0
    for found in _CONDITION.finditer(code):
        if found.start() < last:
            continue  # inside a condition rewritten already
        start = code.find("(", found.end())  # a precondition; (when CONDITION EFFECT): its first item
        if start >= 0 and found.group().endswith("derived"):  # (:derived (HEAD) CONDITION): its second
            start = code.find("(", read_span(code, start).end)
        if start < 0:
            break
        node = read_span(code, start)
        if not _has_disjunction(node):
            continue
        line = code.count("\n", 0, start) + 1
        rewritten = _normal(node, f"{path}, line {line}")
        pieces += [code[last:start], rewritten, "\n" * code.count("\n", start, node.end)]
        last = node.end
    return _with_requirements("".join(pieces) + code[last:])


# What the normal form may write, and the requirements pymimir asks of it (any of each set will do).
_NEEDS = {"(exists": (":existential-preconditions", ":quantified-preconditions", ":adl"),
          "(not": (":negative-preconditions", ":adl")}


def _with_requirements(code: str) -> str:
    """Declare what the normal form wrote (``forall`` became ``not exists``; ``imply`` a ``not``) where the
    domain's requirements do not cover it: pymimir refuses an undeclared one. Same line."""
    declared = re.search(r"\(\s*:requirements\b([^)]*)\)", code)
    if declared is None:
        return code
    have = set(declared.group(1).split())
    missing = [needs[0] for written, needs in _NEEDS.items() if written in code and not have & set(needs)]
    if not missing:
        return code
    return code[:declared.end(1)] + " " + " ".join(missing) + code[declared.end(1):]

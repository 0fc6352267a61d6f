"""Read what a task built from files needs of the PDDL text itself, without a full parser.

pymimir parses the files, but it compiles some of what it reads away: types become unary
predicates (so the type hierarchy is gone), and the variables of existential preconditions
become extra action parameters. What the models and the supported-fragment check need in the
terms the user wrote is read here instead: the whole domain file (a few KB, so a plain
s-expression reader is cheap), and of the problem file only its goal and metric sections (a
problem can be megabytes, and pymimir reads its objects and initial atoms).

Names are lower-cased, as UP's reader and PDDL do (PDDL names are case-insensitive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from up_gnnplan.errors import ProblemLoadError

ROOT = "object"
_COMMENT = re.compile(r";[^\n]*")
_TOKEN = re.compile(r"[()]|[^\s()]+")
_COMPARISONS = {"<", ">", "<=", ">="}
_NUMERIC_EFFECTS = {"increase": "numeric effects (increase)", "decrease": "numeric effects (decrease)",
                    "assign": "numeric effects", "scale-up": "numeric effects", "scale-down": "numeric effects"}
_NUMERIC = "numeric fluents (:numeric-fluents)"


def pddl_code(text: str) -> str:
    """Return ``text`` lower-cased with its ``;`` comments blanked: same lines and columns, so a
    parser's line numbers still point into the file (pymimir's reader of texts rejects comments)."""
    return _COMMENT.sub(lambda found: " " * len(found.group()), text).lower()


_ACTION = re.compile(r"\(\s*:action\b", re.IGNORECASE)
_EFFECT = re.compile(r":effect\b", re.IGNORECASE)
_PRECONDITION = re.compile(r":precondition\b", re.IGNORECASE)


def with_preconditions(code: str) -> str:
    """Return the domain ``code`` with ``:precondition (and)`` before the ``:effect`` of every action
    that has no precondition, on the same line (line numbers hold). PDDL allows such actions;
    pymimir 0.13 ends the process with a segmentation fault on them (UP's writer leaves the empty
    precondition out too)."""
    starts = [found.start() for found in _ACTION.finditer(code)]
    pieces, last = [], 0
    for start, end in zip(starts, starts[1:] + [len(code)]):
        effect = _EFFECT.search(code, start, end)
        if effect is None or _PRECONDITION.search(code, start, effect.start()):
            continue
        pieces += [code[last:effect.start()], ":precondition (and) "]
        last = effect.start()
    return "".join(pieces) + code[last:]


class Node(list):
    """A parenthesised expression: its items (tokens and nodes) and the line it opens on."""

    def __init__(self, items=(), line: int = 0):
        super().__init__(items)
        self.line = line

    @property
    def head(self) -> str | None:
        return self[0] if self and isinstance(self[0], str) else None


def expression_end(text: str, start: int) -> int:
    """Return the index just past the parenthesised expression that opens at ``text[start]``."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    raise ValueError(f"the '(' at {start} is never closed")


def read_node(code: str, start: int, path: Path | str) -> Node:
    """Return the expression that opens at ``code[start]`` (a ``(``); the parentheses are known to
    balance (:func:`~up_gnnplan.problems.loading.check_parentheses` ran first)."""
    line = code.count("\n", 0, start) + 1
    stack: list[Node] = []
    position = start
    for token in _TOKEN.finditer(code, start):
        line += code.count("\n", position, token.start())
        position = token.start()
        text = token.group()
        if text == "(":
            stack.append(Node(line=line))
        elif text == ")":
            node = stack.pop()
            if not stack:
                return node
            stack[-1].append(node)
        elif stack:
            stack[-1].append(text)
    raise ProblemLoadError(f"{path}: '(' opened on line {code.count(chr(10), 0, start) + 1} is never closed")


def typed_list(items, path, line, parents: dict | None = None) -> list[tuple[str, str]]:
    """Return ``[(name, type)]`` of a PDDL typed list (``a b - t c``: c is an ``object``).

    With ``parents`` (the domain's type hierarchy: parameters of predicates and actions), an ``(either t1 t2 ...)``
    type reads as the most specific type all of t1, t2, ... descend from: pymimir and Fast Downward read the
    file itself and keep the exact types, and what is read here (the model's inputs, the fragment) needs no more.
    Without, :class:`EitherType`: such a file goes to UP's reader.
    """
    out, pending, index = [], [], 0
    while index < len(items):
        item = items[index]
        if item == "-":
            if index + 1 >= len(items):
                raise ProblemLoadError(f"{path}, line {line}: '-' without a type")
            kind = items[index + 1]
            if not isinstance(kind, str) and parents is not None and kind.head == "either" and len(kind) > 1 \
                    and all(isinstance(k, str) for k in kind[1:]):
                kind = common_type(list(kind[1:]), parents)
            if not isinstance(kind, str):
                raise EitherType(f"{path}, line {line}: (either ...) types")
            out += [(name, kind) for name in pending]
            pending, index = [], index + 2
            continue
        if not isinstance(item, str):
            raise ProblemLoadError(f"{path}, line {getattr(item, 'line', line)}: a name expected, not '('")
        pending.append(item)
        index += 1
    return out + [(name, ROOT) for name in pending]


def ancestry(kind: str, parents: dict) -> list[str]:
    """``kind`` and the types it descends from, nearest first (``parents``: the domain's type hierarchy)."""
    seen = [kind]
    while seen[-1] in parents and parents[seen[-1]] not in seen:
        seen.append(parents[seen[-1]])
    return seen


def common_type(kinds: list[str], parents: dict) -> str:
    """The most specific type that every one of ``kinds`` is or descends from (``object`` at the least)."""
    shared = set(ancestry(kinds[0], parents)).intersection(*(ancestry(k, parents) for k in kinds[1:]))
    return next((k for k in ancestry(kinds[0], parents) if k in shared and k != ROOT), ROOT)


class EitherType(ProblemLoadError):
    """An ``(either ...)`` type, which the file path leaves to UP's reader."""


@dataclass
class ActionSyntax:
    """One action schema as written: its parameters (name, type), precondition and effect."""

    name: str
    parameters: list[tuple[str, str]]
    precondition: Node | None
    effect: Node | None
    line: int


@dataclass
class DomainSyntax:
    """What a domain file declares, in its own names (lower case)."""

    name: str
    requirements: list[str] = field(default_factory=list)
    parents: dict = field(default_factory=dict)  # every type but object -> its parent
    constants: list[tuple[str, str]] = field(default_factory=list)
    predicates: dict = field(default_factory=dict)  # name -> parameter types
    functions: dict = field(default_factory=dict)  # name -> parameter types
    actions: list[ActionSyntax] = field(default_factory=list)
    durative: list[tuple[str, int]] = field(default_factory=list)
    derived: list[tuple[str, Node, int]] = field(default_factory=list)  # (predicate, condition, line) per rule

    def constants_named(self) -> set[str]:
        """Return the constants some action schema names (UP's writer keeps only these in the domain)."""
        constants, named = {name for name, _ in self.constants}, set()

        def walk(node):
            for index, item in enumerate(node):
                if isinstance(item, Node):
                    walk(item)
                elif index > 0 and item in constants:  # not the head: a predicate may share a constant's name
                    named.add(item)

        for action in self.actions:
            walk([action.precondition or Node(), action.effect or Node()])
        return named


def read_domain(code: str, path: Path | str) -> DomainSyntax:
    """Return the declarations of the domain ``code`` (see :func:`pddl_code`)."""
    start = code.find("(")
    if start < 0:
        raise ProblemLoadError(f"{path}: no '(define (domain ...)' in the file")
    define = read_node(code, start, path)
    if define.head != "define" or len(define) < 2 or not isinstance(define[1], Node) or define[1].head != "domain" \
            or len(define[1]) < 2:
        raise ProblemLoadError(f"{path}, line {define.line}: expected '(define (domain NAME) ...)'")
    domain = DomainSyntax(str(define[1][1]))
    for section in define[2:]:
        if not isinstance(section, Node) or section.head is None:
            raise ProblemLoadError(f"{path}, line {define.line}: unexpected '{section}' in the domain")
        head, line = section.head, section.line
        if head == ":requirements":
            domain.requirements = [str(r) for r in section[1:]]
        elif head == ":types":
            for name, parent in typed_list(section[1:], path, line):
                if name != ROOT:
                    domain.parents[name] = parent
            for parent in list(domain.parents.values()):  # a parent declared only as one is a type too
                if parent != ROOT and parent not in domain.parents:
                    domain.parents[parent] = ROOT
        elif head == ":constants":
            domain.constants = typed_list(section[1:], path, line)
        elif head in (":predicates", ":functions"):
            table = domain.predicates if head == ":predicates" else domain.functions
            items = [item for item in section[1:] if item != "-" and isinstance(item, Node)]
            for item in items:
                if item.head is None:
                    raise ProblemLoadError(f"{path}, line {item.line}: a {head[1:-1]} name expected")
                table[item.head] = tuple(kind for _, kind in typed_list(item[1:], path, item.line, domain.parents))
        elif head == ":action":
            domain.actions.append(_action(section, path, domain.parents))
        elif head == ":durative-action":
            domain.durative.append((str(section[1]) if len(section) > 1 else "?", line))
        elif head == ":derived":
            if len(section) != 3 or not isinstance(section[1], Node) or section[1].head is None:
                raise ProblemLoadError(f"{path}, line {line}: expected '(:derived (PREDICATE ?x - type ...) CONDITION)'")
            domain.derived.append((section[1].head, section[2], line))
    return domain


def _action(section: Node, path, parents: dict) -> ActionSyntax:
    if len(section) < 2 or not isinstance(section[1], str):
        raise ProblemLoadError(f"{path}, line {section.line}: an action name expected")
    fields = {}
    for index in range(2, len(section) - 1, 2):
        fields[section[index]] = section[index + 1]
    parameters = fields.get(":parameters", Node())
    if not isinstance(parameters, Node):
        raise ProblemLoadError(f"{path}, line {section.line}: ':parameters' of '{section[1]}' needs a list")
    precondition, effect = fields.get(":precondition"), fields.get(":effect")
    return ActionSyntax(section[1], typed_list(parameters, path, parameters.line or section.line, parents),
                        precondition if isinstance(precondition, Node) else None,
                        effect if isinstance(effect, Node) else None, section.line)


# -- the problem: its goal and metric only -----------------------------------------------------------

_SECTION = re.compile(r"\(\s*(:goal|:metric|:constraints|:objects)\b")


@dataclass
class ProblemSyntax:
    """The goal and metric of a problem file: ``goal`` holds its literals as
    ``(positive, predicate, arguments)`` in the file's order."""

    goal: list[tuple[bool, str, tuple[str, ...]]] = field(default_factory=list)
    goal_line: int = 0
    goal_features: dict = field(default_factory=dict)  # feature -> line
    existential_goal: bool = False
    compiled_goal: list[int] = field(default_factory=list)  # lines of disjunctive or universal conjuncts
    objects: list[tuple[str, str]] = field(default_factory=list)  # the problem's objects and their types
    metric: Node | None = None
    constraints_line: int | None = None


def read_problem(code: str, path: Path | str) -> ProblemSyntax:
    """Return the goal, metric and typed objects of the problem ``code`` (see :func:`pddl_code`), found by
    a scan that reads no other section."""
    problem = ProblemSyntax()
    for found in _SECTION.finditer(code):
        node = read_node(code, found.start(), path)
        if found.group(1) == ":goal":
            problem.goal_line = node.line
            if len(node) > 1:
                _goal(node[1], problem, path)
        elif found.group(1) == ":metric":
            problem.metric = node
        elif found.group(1) == ":objects":
            try:
                problem.objects = typed_list(node[1:], path, node.line)
            except EitherType:
                problem.objects = []  # read by UP's reader (files.py)
        else:
            problem.constraints_line = node.line
    return problem


def _goal(node, problem: ProblemSyntax, path, positive: bool = True) -> None:
    if not isinstance(node, Node):
        raise ProblemLoadError(f"{path}, line {problem.goal_line}: unexpected '{node}' in the goal")
    head = node.head
    if head == "and" and positive:
        for item in node[1:]:
            _goal(item, problem, path)
    elif head == "not" and positive and len(node) == 2:
        _goal(node[1], problem, path, positive=False)
    elif head == "exists":
        problem.existential_goal = True
    elif head in ("or", "imply", "forall") or (head == "and" and not positive):
        problem.compiled_goal.append(node.line)  # a derived predicate (problems/goal_rules.py)
    elif head == "preference":
        problem.goal_features.setdefault("soft goals (oversubscription)", node.line)
    elif head in _COMPARISONS or (head == "=" and any(isinstance(a, Node) for a in node[1:])):
        problem.goal_features.setdefault(_NUMERIC, node.line)
    elif head is None or any(not isinstance(a, str) for a in node[1:]):
        raise ProblemLoadError(f"{path}, line {node.line}: malformed goal expression")
    else:
        problem.goal.append((positive, head, tuple(node[1:])))


# -- the supported fragment, checked on the text -------------------------------------------------------

@dataclass
class Costs:
    """The action costs of a domain: ``constant[a]`` (a number), or ``fluent[a]`` (a static function
    name); actions in neither cost 0 under a total-cost metric, or have a cost expression (``other``)."""

    constant: dict = field(default_factory=dict)
    fluent: dict = field(default_factory=dict)
    other: set = field(default_factory=set)


@dataclass
class Fragment:
    """What the fragment check found: the unsupported features (name -> line), the action costs,
    the numeric functions an effect changes, and where a condition makes Fast Downward derive axioms."""

    features: dict = field(default_factory=dict)
    costs: Costs = field(default_factory=Costs)
    modified: set = field(default_factory=set)
    numeric_used: set = field(default_factory=set)  # functions read outside action costs
    # The line of the first condition that Fast Downward's translator compiles into axioms (a universal
    # condition: ``forall``, or ``exists`` under a negation or an implication's premise), else None.
    axioms: int | None = None


PROBABILISTIC = "probabilistic effects (PPDDL's probabilistic: planning here is classical, each effect certain)"


def scan_fragment(domain: DomainSyntax) -> Fragment:
    """Return the features of ``domain`` outside the supported fragment (UP's names for them, as
    :func:`up_gnnplan.problems.fragment.check_supported` gives), and its action costs."""
    found = Fragment()
    for name, line in domain.durative:
        found.features.setdefault("durative actions (:durative-actions)", line)
    for _, condition, line in domain.derived:
        found.axioms = line if found.axioms is None else found.axioms
        _condition(condition, found)
    for action in domain.actions:
        if action.precondition is not None:
            _condition(action.precondition, found)
        if action.effect is not None:
            _effect(action.effect, action.name, found)
    return found


def _condition(node, found: Fragment, negated: bool = False) -> None:
    """Scan a precondition (or an effect's condition): ``negated`` where it lies under an odd number of
    negations (an implication's premise counts as one), where an ``exists`` quantifies universally."""
    if not isinstance(node, Node):
        return
    head = node.head
    if head in ("and", "or"):
        for item in node[1:]:
            _condition(item, found, negated)
    elif head == "not":
        for item in node[1:]:
            _condition(item, found, not negated)
    elif head == "imply":  # (imply A B) is (or (not A) B)
        for position, item in enumerate(node[1:]):
            _condition(item, found, negated != (position == 0))
    elif head in ("exists", "forall"):
        if (head == "forall") != negated and found.axioms is None:
            found.axioms = node.line
        for item in node[2:]:
            _condition(item, found, negated)
    elif head in _COMPARISONS or (head == "=" and any(isinstance(a, Node) for a in node[1:])):
        found.features.setdefault(_NUMERIC, node.line)
        found.numeric_used |= _function_names(node[1:])


def _function_names(items) -> set[str]:
    names = set()
    for item in items:
        if isinstance(item, Node):
            if item.head and item.head not in ("+", "-", "*", "/"):
                names.add(item.head)
            names |= _function_names(item[1:])
    return names


def _effect(node, action: str, found: Fragment) -> None:
    if not isinstance(node, Node):
        return
    head = node.head
    if head == "and":
        for item in node[1:]:
            _effect(item, action, found)
    elif head == "when":  # a conditional effect: its condition as a precondition's, its effect as any
        if len(node) > 1:
            _condition(node[1], found)
        for item in node[2:]:
            _effect(item, action, found)
    elif head == "forall":  # a universally quantified effect: (forall (?x - t) EFFECT)
        for item in node[2:]:
            _effect(item, action, found)
    elif head == "probabilistic":  # PPDDL (pddlgym's Tireworld, Exploding Blocks): not classical planning
        found.features.setdefault(PROBABILISTIC, node.line)
    elif head in _NUMERIC_EFFECTS:
        target = node[1] if len(node) > 1 else None
        value = node[2] if len(node) > 2 else None
        if head == "increase" and isinstance(target, Node) and target.head == "total-cost":
            _cost(value, action, found)
        else:
            found.features.setdefault(_NUMERIC_EFFECTS[head], node.line)
            if isinstance(target, Node) and target.head:
                found.modified.add(target.head)


def _cost(value, action: str, found: Fragment) -> None:
    costs = found.costs
    if isinstance(value, str):
        try:
            costs.constant[action] = costs.constant.get(action, 0.0) + float(value)
        except ValueError:
            costs.other.add(action)
    elif isinstance(value, Node) and value.head and value.head not in ("+", "-", "*", "/") \
            and all(isinstance(a, str) for a in value[1:]):
        costs.fluent[action] = value.head
    else:
        costs.other.add(action)
        found.numeric_used |= _function_names([value])


def problem_features(problem: ProblemSyntax) -> dict:
    """Return the features of the problem's goal, metric and constraints outside the fragment."""
    features = dict(problem.goal_features)
    if problem.constraints_line is not None:
        features.setdefault("trajectory constraints", problem.constraints_line)
    metric = problem.metric
    if metric is not None:
        direction = metric[1] if len(metric) > 1 else None
        target = metric[2] if len(metric) > 2 else None
        if isinstance(target, Node) and target.head == "total-time":
            features.setdefault("makespan metric", metric.line)
        elif direction != "minimize" or not (isinstance(target, Node) and list(target) == ["total-cost"]):
            features.setdefault("numeric metric (minimize/maximize an expression)", metric.line)
    return features


def has_cost_metric(problem: ProblemSyntax) -> bool:
    """Return whether the problem minimizes ``(total-cost)``."""
    metric = problem.metric
    return metric is not None and len(metric) > 2 and isinstance(metric[2], Node) and list(metric[2]) == ["total-cost"]

"""Read PDDL files straight into pymimir: a :class:`~up_gnnplan.problems.bridge.Task` without UP.

UP's PDDL reader took 430 s and 3.3 GB for a Sokoban task of 1,549 objects, and 52 s for a
Rovers one; pymimir, which the searches run on anyway, reads the same files in C++. The stages:

1. the checks every reader runs first (:func:`~up_gnnplan.problems.loading.read_checked`:
   parentheses, domain name, ``:derived``, the undeclared ``:typing`` quirk);
2. the domain's declarations and the problem's goal and metric, read from the text
   (:mod:`up_gnnplan.problems.syntax`), and the supported-fragment check on them;
3. pymimir parses both texts (comments blanked, names lower-cased as UP's reader does);
4. names, signatures, types and object ids come from those declarations and pymimir's objects,
   in the order UP's reader gives them, so models, datasets and plans are the same.

A problem with an existential goal (pymimir rejects ``(exists ...)`` goals) or ``(either ...)``
types of objects or constants is read with UP's reader and bridged as before; the task's :attr:`note`
says so. ``(either ...)`` parameters are read here (:mod:`~up_gnnplan.problems.either_types`).
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from pathlib import Path

from up_gnnplan.errors import ProblemLoadError
from up_gnnplan.states.actions import ActionSignature
from up_gnnplan.states.signature import TYPE_PREFIX, PredicateSignature
from up_gnnplan.states.types import ROOT, DomainTypes

# pymimir's wrapper takes a text of up to 255 characters for a file path if such a file exists.
_PATH_LENGTH = 256
_LINE = re.compile(r"^In (?:file .*, )?line (\d+):?\s*$")
_DEFINE_DOMAIN = re.compile(r"\(\s*define\s*\(\s*domain\s+[^\s()]+\s*\)")


def read_task(task, domain: str | Path, problem: str | Path, mode: str, check):
    """Fill ``task`` (a bare :class:`~up_gnnplan.problems.bridge.Task`) from the two files; return it."""
    import pymimir

    from up_gnnplan.problems.either_types import with_either_parameters
    from up_gnnplan.problems.fragment import check_cost_values, check_supported_text
    from up_gnnplan.problems.loading import read_checked
    from up_gnnplan.problems.goal_rules import compile_goal, hidden_note
    from up_gnnplan.problems.normal_form import with_normal_conditions
    from up_gnnplan.problems.syntax import EitherType, pddl_code, read_domain, read_problem, with_preconditions

    check = check or (lambda what: None)
    files = read_checked(domain, problem)
    where = files.source.describe()
    domain_code, problem_code = pddl_code(files.domain_text), pddl_code(files.problem_text)
    try:
        syntax = read_domain(domain_code, files.domain_path)
        goal = read_problem(problem_code, files.problem_path)
    except EitherType as reason:
        return _read_by_up(task, files, mode, check, f"{reason} are read by UP's reader")
    if goal.existential_goal:
        return _read_by_up(task, files, mode, check,
                           f"{files.problem_path}: the existential goal is read by UP's reader (pymimir rejects "
                           "(exists ...) goals, so it is compiled to a derived predicate)")
    fragment = check_supported_text(syntax, goal, (where, files.domain_path, files.problem_path))
    check("while building the task (after checking its PDDL fragment)")
    if files.assume_typing:
        domain_code = _declare(domain_code, [":typing"])
    domain_code = with_preconditions(domain_code)
    written = with_either_parameters(domain_code, problem_code, syntax.parents, list(syntax.constants) + goal.objects)
    if written[0] != domain_code:  # (either ...) action parameters: a static predicate each (either_types)
        domain_code, problem_code = written
        syntax = read_domain(domain_code, files.domain_path)
    compiled = 0
    if goal.compiled_goal:  # disjunctive or universal goal conjuncts: derived predicates (goal_rules)
        domain_code, problem_code, compiled = compile_goal(
            domain_code, problem_code, dict(goal.objects), dict(syntax.constants), syntax.parents, files.problem_path)
        goal = read_problem(problem_code, files.problem_path)  # universal conjuncts written out as literals
    mimir_code = with_normal_conditions(domain_code, files.domain_path)  # pymimir's disjunctions: see normal_form
    mimir_domain, added = _parse_domain(pymimir, mimir_code, files.domain_path)
    check("while building the task (after pymimir read the domain)")
    problem_code = _problem_for_pymimir(problem_code, files.problem_path, syntax.constants + goal.objects,
                                        (syntax.constants, files.domain_path))
    mimir_domain, mimir_problem, added = _parse_problem(pymimir, (mimir_code, problem_code), mimir_domain, added,
                                                        files, mode)
    if added:  # what the files use without declaring it: declared for Fast Downward's text too
        domain_code = _declare(domain_code, added)
    check("while building the task (after pymimir read the problem)")
    values = _static_values(mimir_problem)
    check_cost_values(values, fragment.costs, where)

    task._up_problem, task._files, task.source = None, files, files.source
    task.note, task.has_existential_goal = None, False
    if compiled:
        task.note = hidden_note(compiled)
    task.domain_text, task.problem_text = domain_code, problem_code
    task.mimir_domain, task.mimir_problem = mimir_domain, mimir_problem
    task.syntax, task._goal_syntax, task._costs, task._static_values = syntax, goal, fragment.costs, values
    entries = {(name, len(types)) for name, types in syntax.predicates.items()}
    entries |= {(TYPE_PREFIX + name, 1) for name in syntax.parents}
    task.signature = PredicateSignature(tuple(sorted(entries)))
    task.action_signature = ActionSignature(tuple(sorted((a.name, len(a.parameters)) for a in syntax.actions)))
    task.types = DomainTypes({ROOT: None, **syntax.parents}, dict(syntax.predicates),
                             {a.name: tuple(kind for _, kind in a.parameters) for a in syntax.actions})
    # UP's order: the domain's constants, then the problem's objects, each as the file lists them.
    objects = list(mimir_domain.get_constants()) + list(mimir_problem.get_objects())
    task._objects = None
    task.object_names = [o.get_name() for o in objects]
    task.object_types = [_declared_type(o) for o in objects]
    task._mimir_object_id = {o.get_index(): i for i, o in enumerate(objects)}
    task._mimir_predicate_id = _predicate_map(mimir_domain, task.signature, syntax)
    task._actions, task._size = {}, None
    task._goal = _goal_rows(goal, task, quantified=bool(compiled))
    return task


def _read_by_up(task, files, mode, check, note: str):
    """Fill ``task`` from UP's reader (what this module cannot hand to pymimir); say why in its note."""
    from up_gnnplan.problems.loading import load_pddl

    type(task).__init__(task, load_pddl(files.domain_path, files.problem_path), files.source, mode=mode, check=check)
    task._files, task.note = files, note
    return task


_DEFINE_PROBLEM = re.compile(r"\(\s*define\s*\(\s*problem\s+([^\s()]+)")


def _problem_for_pymimir(code: str, path: Path, objects: list[tuple[str, str]], constants=((), None)) -> str:
    """Return the problem ``code`` as pymimir takes it, or say what it would only call unreadable.

    A problem name that does not begin with a letter (pymimir refuses ``(problem 0)``, Fast Downward takes
    it; the name is used nowhere) is prefixed. A ``:goal`` before the ``:init`` (pddlgym's Elevator, Sokoban,
    Travel; pymimir and Fast Downward read no other order) is moved after it, with a warning. An object or
    constant so named is refused by name and line, as is an object the domain declares as a constant (``constants``:
    the domain's (name, type) pairs and its file), which pymimir would only call defined twice."""
    declared, domain_path = constants
    ours = {name.lower() for name, _ in declared}
    seen = set()
    for name, _ in objects:
        key = name.lower()
        if key in ours and key in seen:
            section = re.search(r"\(\s*:objects\b", code, re.IGNORECASE)
            start = section.end() if section else 0
            at = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE).search(code, start)
            line = code.count("\n", 0, at.start()) + 1 if at else 1
            raise ProblemLoadError(f"{path}, line {line}: '{name}' is a constant of the domain ({domain_path}, "
                                   ":constants) and is declared again among the problem's objects; remove it there")
        seen.add(key)
    for name, _ in objects:
        if not name[:1].isalpha():
            at = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", code)
            line = code.count("\n", 0, at.start()) + 1 if at else 1
            raise ProblemLoadError(f"{path}, line {line}: the object name '{name}' does not begin with a letter, "
                                   "as PDDL names must (pymimir cannot read it); rename it")
    init, goal = re.search(r"\(\s*:init\b", code), re.search(r"\(\s*:goal\b", code)
    if init and goal and goal.start() < init.start():
        code = _init_first(code, goal.start(), init.start(), path)
    named = _DEFINE_PROBLEM.search(code)
    if named and not named.group(1)[:1].isalpha():
        code = code[:named.start(1)] + "p-" + code[named.start(1):]
    return code


def _init_first(code: str, goal: int, init: int, path: Path) -> str:
    """``code`` with its ``(:goal ...)`` section (at ``goal``) moved after its ``(:init ...)`` section (at ``init``,
    later), the text between them kept; a warning once per file."""
    from up_gnnplan.problems.loading import PddlQuirkWarning
    from up_gnnplan.problems.syntax import expression_end

    goal_end, init_end = expression_end(code, goal), expression_end(code, init)  # the parentheses balance (checked)
    if (Path(path).resolve(), "goal-first") not in _WARNED_REQUIREMENTS:
        _WARNED_REQUIREMENTS.add((Path(path).resolve(), "goal-first"))
        warnings.warn(f"{path}: the (:goal ...) comes before the (:init ...); read in PDDL's order", PddlQuirkWarning,
                      stacklevel=5)
    return code[:goal] + code[init:init_end] + code[goal_end:init] + code[goal:goal_end] + code[init_end:]


def _padded(code: str) -> str:
    return code + " " * max(0, _PATH_LENGTH - len(code))


# pymimir's message for a construct whose requirement the domain does not declare.
_UNDECLARED = re.compile(r"Undefined requirement: (:[\w-]+)")
_WARNED_REQUIREMENTS: set = set()


def _parse_domain(pymimir, code: str, path: Path):
    """Return (pymimir's domain of ``code``, the requirements it needed that ``code`` does not declare).

    Fast Downward and UP's reader do not ask a domain to declare what it uses; pymimir refuses, say,
    ``(not (= ?a ?b))`` under ``:strips :equality`` alone ("Undefined requirement: :negative-preconditions").
    Each requirement it names is declared (on the same line) and the file read again, with a warning
    once per file; any other error names the file and line."""
    from up_gnnplan.problems.loading import PddlQuirkWarning

    added = []
    while True:
        try:
            domain = pymimir.Domain(_padded(_declare(code, added)))
            break
        except RuntimeError as error:
            found = _UNDECLARED.search(str(error))
            if found is None or found.group(1) in added or len(added) >= 8:
                return _parse(lambda: pymimir.Domain(_padded(_declare(code, added))), path), added  # raises: file, line
            added.append(found.group(1))
    quirks = [r for r in added if not (r == ":negative-preconditions" and _negates_only_equality(code))]
    if quirks and (Path(path).resolve(), tuple(added)) not in _WARNED_REQUIREMENTS:
        _WARNED_REQUIREMENTS.add((Path(path).resolve(), tuple(added)))
        warnings.warn(f"{path}: uses {', '.join(quirks)} without declaring {'it' if len(quirks) == 1 else 'them'}; "
                      f"read as if declared", PddlQuirkWarning, stacklevel=4)
    return domain, added


_NEGATED = re.compile(r"\(\s*not\s*\(\s*([^\s()]+)", re.IGNORECASE)
_PRECONDITION = re.compile(r":precondition\b", re.IGNORECASE)


def _negates_only_equality(code: str) -> bool:
    """Whether every negation in the preconditions of ``code`` is of an equality, ``(not (= ?a ?b))``: PDDL's
    ``:equality`` covers it (Fast Downward and VAL read it so), though pymimir asks for ``:negative-preconditions``
    too, so using it undeclared is no quirk to warn of. (A domain with derived predicates is not looked into.)"""
    if re.search(r"\(\s*:derived\b", code, re.IGNORECASE):
        return False
    from up_gnnplan.problems.syntax import expression_end

    heads = []
    for found in _PRECONDITION.finditer(code):
        start = code.find("(", found.end())
        if start >= 0:
            heads += _NEGATED.findall(code[start:expression_end(code, start)])
    return bool(heads) and all(head == "=" for head in heads)


def _parse_problem(pymimir, codes: tuple[str, str], mimir_domain, added: list[str], files, mode: str):
    """Return (pymimir's domain, pymimir's problem, the requirements declared for them) of the domain's and the
    problem's text ``codes``: where the problem uses what the domain does not declare (a negative goal literal
    under ``:strips :typing``: pddlgym's Glibdoors), it is declared in the domain, which is read again, with a
    warning once per file, as for the domain's own (:func:`_parse_domain`)."""
    from up_gnnplan.problems.loading import PddlQuirkWarning

    domain_code, problem_code = codes
    before = list(added)
    while True:
        try:
            problem = pymimir.Problem(mimir_domain, _padded(problem_code), mode=mode)
            break
        except RuntimeError as error:
            found = _UNDECLARED.search(str(error))
            if found is None or found.group(1) in added or len(added) >= 8:
                _parse(lambda: pymimir.Problem(mimir_domain, _padded(problem_code), mode=mode), files.problem_path)
                raise  # pragma: no cover (_parse raised with the file and line)
            added = added + [found.group(1)]
            mimir_domain = _parse(lambda: pymimir.Domain(_padded(_declare(domain_code, added))), files.domain_path)
    new = [requirement for requirement in added if requirement not in before]
    if new and (Path(files.problem_path).resolve(), tuple(new)) not in _WARNED_REQUIREMENTS:
        _WARNED_REQUIREMENTS.add((Path(files.problem_path).resolve(), tuple(new)))
        warnings.warn(f"{files.problem_path}: uses {', '.join(new)}, which {files.domain_path} does not declare; "
                      f"read as if declared", PddlQuirkWarning, stacklevel=4)
    return mimir_domain, problem, added


def _declare(code: str, requirements: list[str]) -> str:
    """``code`` with ``requirements`` declared, on the line of its ``(:requirements`` (or of its ``(define``)."""
    if not requirements:
        return code
    found = re.search(r"\(\s*:requirements\b", code)
    if found:
        return code[:found.end()] + " " + " ".join(requirements) + code[found.end():]
    found = _DEFINE_DOMAIN.search(code)
    return code if found is None else code[:found.end()] + f" (:requirements {' '.join(requirements)})" + code[found.end():]


def _parse(read, path: Path):
    """Return ``read()`` (a pymimir parse); turn its error into one naming the file and line."""
    try:
        return read()
    except RuntimeError as error:
        line, message = None, []
        for text in str(error).splitlines():
            found = _LINE.match(text.strip())
            if found:
                line = int(found.group(1))
                break  # what follows is the line quoted, with a marker under it
            if text.strip():
                message.append(text.strip())
        what = " ".join(message).rstrip(".:") or "pymimir cannot read it"
        raise ProblemLoadError(f"{path}, line {line}: {what}" if line else f"{path}: {what}") from None


def _declared_type(mimir_object) -> str:
    bases = mimir_object._advanced_object.get_bases()
    return bases[0].get_name() if len(bases) else ROOT


def _predicate_map(mimir_domain, signature, syntax) -> dict[tuple[str, int], int]:
    """Map (pymimir predicate kind, index) to our predicate id.

    pymimir adds a static predicate per type, named after it (and ``object``, ``number``), before
    the domain's own; a domain predicate may share a type's name, so the first static predicate
    of a type's name is the type's and is left out.
    """
    type_names = set(syntax.parents) | {ROOT, "number"}
    mapping, seen = {}, set()
    for kind, predicates in (
        ("static", mimir_domain.get_predicates(ignore_fluent=True, ignore_derived=True)),
        ("fluent", mimir_domain.get_predicates(ignore_static=True, ignore_derived=True)),
        ("derived", mimir_domain.get_predicates(ignore_static=True, ignore_fluent=True)),
    ):
        for predicate in predicates:
            name = predicate.get_name()
            if kind == "static" and name in type_names and name not in seen:
                seen.add(name)
                continue
            if name in syntax.predicates:
                mapping[(kind, predicate.get_index())] = signature.index[name]
    return mapping


def _goal_rows(goal, task, quantified: bool = False):
    from up_gnnplan.problems.goal_rules import GOAL_PREDICATE

    compiled = GOAL_PREDICATE.format("")
    object_id = {name: i for i, name in enumerate(task.object_names)}
    positive, negative = [], []
    for polarity, name, args in goal.goal:
        if name.startswith(compiled):
            continue  # a goal conjunct made a derived predicate (goal_rules): the model cannot see it
        (positive if polarity else negative).append((task.signature.index[name], [object_id[a] for a in args]))
    return positive, negative, quantified  # quantified: some conjunct is not given as atoms (symmetry stays off)


def _static_values(mimir_problem) -> list[tuple[str, tuple[str, ...], float]]:
    """Return the initial values of the static numeric functions as ``(name, arguments, value)``."""
    out = []
    for value in mimir_problem._advanced_problem.get_static_function_values():
        function = value.get_function()
        out.append((function.get_function_skeleton().get_name(), tuple(o.get_name() for o in function.get_objects()),
                    float(value.get_number())))
    return out


# -- what the task answers from the files (bound to Task by bridge.py) --------------------------------

def has_unit_costs(task) -> bool:
    """Return whether every action of the file task costs 1 (no total-cost metric, or all constant 1)."""
    from up_gnnplan.problems.syntax import has_cost_metric

    if not has_cost_metric(task._goal_syntax):
        return True
    costs = task._costs
    return all(costs.constant.get(a.name) == 1 and a.name not in costs.fluent and a.name not in costs.other
               for a in task.syntax.actions)


def min_action_cost(task) -> float:
    """Return a lower bound on the cost of any ground action of the file task (0 when none can be given)."""
    from up_gnnplan.problems.syntax import has_cost_metric

    if not has_cost_metric(task._goal_syntax):
        return 1.0
    costs, bounds = task._costs, []
    for action in task.syntax.actions:
        if action.name in costs.other:
            return 0.0
        if action.name in costs.fluent:
            name = costs.fluent[action.name]
            bounds.append(min((v for f, _, v in task._static_values if f == name), default=0.0))
        else:
            bounds.append(costs.constant.get(action.name, 0.0))
    return max(0.0, min(bounds, default=1.0))


def size_facts(task):
    """Return :class:`~up_gnnplan.problems.size.SizeFacts` of the file task: its schemas as written,
    the objects per type, and its true initial atoms per predicate (from pymimir)."""
    from up_gnnplan.problems.size import Schema, SizeFacts
    from up_gnnplan.problems.syntax import Node

    syntax = task.syntax
    changed: set[str] = set()

    def effects(node):
        if isinstance(node, Node):
            if node.head in ("and", "not"):
                for item in node[1:]:
                    effects(item)
            elif node.head in ("when", "forall"):  # (when CONDITION EFFECT), (forall (VARIABLES) EFFECT)
                for item in node[2:]:
                    effects(item)
            elif node.head in syntax.predicates:
                changed.add(node.head)

    def atoms(node):
        if isinstance(node, Node):
            if node.head == "and":
                for item in node[1:]:
                    yield from atoms(item)
            elif node.head in syntax.predicates:
                yield node.head, {a[1:] for a in node[1:] if isinstance(a, str) and a.startswith("?")}

    schemas = []
    for action in syntax.actions:
        effects(action.effect)
        parameters = [(name[1:] if name.startswith("?") else name, kind) for name, kind in action.parameters]
        schemas.append(Schema(parameters, list(atoms(action.precondition))))
    counts: Counter = Counter()
    for kind in task.object_types:
        while kind is not None:
            counts[kind] += 1
            kind = task.types.parents.get(kind, ROOT if kind != ROOT else None)
    true_atoms: Counter = Counter()
    names = task.signature.names
    for atom in task.mimir_problem.get_initial_atoms(ignore_derived=True):
        pid = task.predicate_id(atom)
        if pid is not None:
            true_atoms[names[pid]] += 1
    return SizeFacts(schemas, dict(counts), set(syntax.predicates) - changed, true_atoms)

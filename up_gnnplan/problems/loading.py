"""Read PDDL files into UP problems, with errors that name the file and the line.

:func:`read_checked` holds the checks every reader of PDDL files runs first (parentheses, the
domain's name, ``:derived``, the ``:typing`` quirk); :func:`load_pddl` then runs UP's reader, and
:meth:`~up_gnnplan.problems.bridge.Task.from_files` pymimir's.

UP's reader raises whatever its parser raises (pyparsing exceptions, ``SyntaxError``,
``KeyError`` for an unknown type); :func:`load_pddl` turns each into a
:class:`~up_gnnplan.errors.ProblemLoadError` that says which file and, where known, which line.
"""

from __future__ import annotations

import contextlib
import gc

import re
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

from up_gnnplan.errors import GnnplanError, ProblemLoadError, UnsupportedFeatureError


class PddlQuirkWarning(UserWarning):
    """A known deviation from the PDDL standard that we accept and repair."""


@dataclass(frozen=True)
class Source:
    """Where a problem came from, for messages and dataset provenance."""

    domain: Path | None = None
    problem: Path | None = None

    def describe(self) -> str:
        """Return a short human-readable name of the files (or ``<UP problem>``)."""
        if self.domain is None and self.problem is None:
            return "<UP problem>"
        return " / ".join(str(p) for p in (self.domain, self.problem) if p is not None)


_WARNED_DOMAINS: set[Path] = set()  # warn once per domain file, not once per problem
_COMMENT = re.compile(r";[^\n]*")
# A section of a domain or problem file, as "(:init": what belongs directly inside "(define".
_SECTION = re.compile(r"\s*(:[A-Za-z][\w-]*)")
# A typed list: "x y - block"; "(:functions (total-cost) - number)" types a function, not objects.
_TYPED_LIST = re.compile(r"\s-\s+(?!number\b)[A-Za-z]")
_LINE_IN_MESSAGE = re.compile(r"line:?\s*(\d+)")
# Constructs UP's PDDL reader cannot parse, found before it tries (it would blame another line). The
# files are read by pymimir on every path that does not need a UP problem: derived predicates are
# refused only where one is needed.
_UNPARSED = {re.compile(r"\(\s*:derived\b", re.IGNORECASE):
             "derived predicates (:derived) where a UP problem is needed (UP's reader cannot parse them)"}
# Where each problem read by load_pddl came from, by id (a UP Problem's hash walks all of it).
_SOURCES: dict[int, "Source"] = {}


def source_of(problem) -> "Source":
    """Return the files ``problem`` was read from by :func:`load_pddl` (``<UP problem>`` otherwise)."""
    return _SOURCES.get(id(problem)) or Source()


def _read(path: Path) -> str:
    if not path.is_file():
        raise ProblemLoadError(f"{path}: no such file")
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ProblemLoadError(f"{path}: cannot be read ({error})") from None


_TOKEN = re.compile(r"[()]|[^\s()]+")


def _declared_name(text: str, head: tuple[str, ...]) -> tuple[str, int] | None:
    """Return the name after the tokens ``head`` (compared in lower case) and its line, or None.

    A small tokenizer that skips ``;`` comments: it stops at the name, so a large problem costs
    little, and it needs no parser (any loader can call it first).
    """
    expected, window = list(head), []
    for line_number, line in enumerate(text.splitlines(), start=1):
        for token in _TOKEN.findall(line.split(";", 1)[0]):
            if window == expected:
                return (token, line_number) if token not in "()" else None
            window = (window + [token.lower()])[-len(head):]
    return None


def check_domain_name(domain_text: str, problem_text: str, domain_path: Path | str, problem_path: Path | str) -> None:
    """Raise if the problem's ``(:domain NAME)`` is not the domain's ``(define (domain NAME)``.

    PDDL names are case-insensitive (the IPC rovers problems say ``Rover`` of domain ``rover``).
    A file without either declaration is left to the parser, which names what is missing.
    """
    defined = _declared_name(domain_text, ("(", "define", "(", "domain"))
    wanted = _declared_name(problem_text, ("(", ":domain"))
    if defined is None or wanted is None or defined[0].lower() == wanted[0].lower():
        return
    raise ProblemLoadError(f"{problem_path}, line {wanted[1]}: the problem is for domain '{wanted[0]}', "
                           f"but {domain_path} defines '{defined[0]}'")


def check_domain_names(domain: str | Path, problems) -> None:
    """Raise at the first of ``problems`` (files) that is not for the domain of the file ``domain``.

    Called before long runs over many problems (datasets, comparisons), so that a wrong pair
    stops them before any work; :func:`load_pddl` checks each pair it reads as well.
    """
    domain_path = Path(domain)
    domain_text = _read(domain_path)
    for problem in problems:
        check_domain_name(domain_text, _read(Path(problem)), domain_path, problem)


def check_parentheses(text: str, path: Path | str) -> None:
    """Raise if the parentheses of ``text`` do not balance, naming the offending line.

    Where a ``(`` is never closed, the message names the section it was most likely left open in: a
    section such as ``(:goal`` or ``(:action`` belongs directly inside ``(define``, so one that opens
    deeper shows that the section before it lacks a ``)``.
    """
    stack: list[tuple[int, str | None]] = []  # (line, section keyword or None) of each open '('
    misplaced = None  # the first section opened inside another: (its line, keyword, the open section's)
    for line_number, line in enumerate(_COMMENT.sub("", text).splitlines(), start=1):
        for column, char in enumerate(line):
            if char == "(":
                section = _SECTION.match(line, column + 1)
                keyword = section.group(1).lower() if section else None
                if keyword and len(stack) > 1 and misplaced is None:
                    inside = next((entry for entry in reversed(stack) if entry[1]), None)
                    misplaced = (line_number, keyword, inside)
                stack.append((line_number, keyword))
            elif char == ")":
                if not stack:
                    raise ProblemLoadError(f"{path}, line {line_number}: ')' closes nothing")
                stack.pop()
    if stack:
        hint = ""
        if misplaced is not None:
            line_number, keyword, inside = misplaced
            within = f" inside ({inside[1]} opened on line {inside[0]}" if inside else " inside another section"
            hint = (f"; ({keyword} on line {line_number} opens{within}{')' if inside else ''}: "
                    f"a ')' is probably missing before line {line_number}")
        raise ProblemLoadError(
            f"{path}: '(' opened on line {stack[-1][0]} is never closed "
            f"({len(stack)} parenthes{'is' if len(stack) == 1 else 'es'} left open at the end of the file){hint}"
        )


def undeclared_typing(domain_text: str, problem_text: str) -> bool:
    """Return whether objects are typed although the domain does not declare ``:typing``.

    The IPC 2023 Blocksworld domain declares only ``:strips`` while its problems write
    ``b1 - object``; UP reads this, and the PDDL we hand to pymimir declares ``:typing``.
    """
    domain_code = _COMMENT.sub("", domain_text).lower()
    requirements = re.search(r"\(:requirements([^)]*)\)", domain_code)
    declared = requirements.group(1).split() if requirements else []
    if ":typing" in declared or ":adl" in declared:
        return False
    return bool(_TYPED_LIST.search(domain_code) or _TYPED_LIST.search(_COMMENT.sub("", problem_text)))


def _warn_undeclared_typing(domain_text: str, problem_text: str, domain_path: Path) -> bool:
    """Warn (once per domain file) when :func:`undeclared_typing` holds; return whether it does."""
    if not undeclared_typing(domain_text, problem_text):
        return False
    if domain_path.resolve() not in _WARNED_DOMAINS:
        _WARNED_DOMAINS.add(domain_path.resolve())
        warnings.warn(
            f"{domain_path}: types are used but ':typing' is not declared; assuming ':typing'",
            PddlQuirkWarning,
            stacklevel=4,
        )
    return True


def _refuse_unparsed(text: str, path: Path) -> None:
    """Raise :class:`UnsupportedFeatureError` for a construct UP's reader cannot parse, naming its line."""
    code = _COMMENT.sub("", text)
    for pattern, feature in _UNPARSED.items():
        found = pattern.search(code)
        if found:
            line = code.count("\n", 0, found.start()) + 1
            raise UnsupportedFeatureError([feature], f"{path}, line {line}")


def _translate(error: Exception, path: Path) -> ProblemLoadError:
    """Turn an exception from UP's PDDL reader into a message naming the file."""
    line = getattr(error, "lineno", None)
    message = str(error).strip() or type(error).__name__
    if line is None:
        found = _LINE_IN_MESSAGE.search(message)
        line = int(found.group(1)) if found else None
    if isinstance(error, KeyError):
        message = f"unknown name {message} (an undeclared type, object or predicate?)"
    elif message.startswith("Not able to handle:"):
        message = "unknown predicate or malformed expression: " + message[len("Not able to handle:") :].strip()
    where = f"{path}, line {line}" if line is not None else str(path)
    return ProblemLoadError(f"{where}: {message}")


@contextlib.contextmanager
def _no_garbage_collection():
    """Pause Python's cyclic garbage collector (as it was before, after): its full passes over the
    objects UP's reader makes took 30% of reading 488 blocks (0.70 s against 0.43 s), and while a
    pass runs it holds the interpreter's lock, so the command's watch over its limits waits."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class CheckedFiles:
    """Two PDDL files read and checked by :func:`read_checked`: their paths and texts, and whether
    ``:typing`` must be assumed (:func:`undeclared_typing`)."""

    domain_path: Path
    problem_path: Path
    domain_text: str
    problem_text: str
    assume_typing: bool

    @property
    def source(self) -> Source:
        return Source(self.domain_path, self.problem_path)


def read_checked(domain: str | Path, problem: str | Path) -> CheckedFiles:
    """Read ``domain`` and ``problem`` and run the checks every reader of PDDL files runs first:
    balanced parentheses, the problem's domain name, and the undeclared ``:typing`` quirk (a warning)."""
    domain_path, problem_path = Path(domain), Path(problem)
    domain_text, problem_text = _read(domain_path), _read(problem_path)
    check_parentheses(domain_text, domain_path)
    check_parentheses(problem_text, problem_path)
    check_domain_name(domain_text, problem_text, domain_path, problem_path)
    typing = _warn_undeclared_typing(domain_text, problem_text, domain_path)
    return CheckedFiles(domain_path, problem_path, domain_text, problem_text, typing)


def load_pddl(domain: str | Path, problem: str | Path):
    """Parse ``domain`` and ``problem`` into a UP ``Problem`` with UP's reader, checking both files first.

    UP's reader is slow on large problems (430 s and 3.3 GB for a Sokoban task of 1,549 objects):
    solving, datasets and learning read files with :meth:`~up_gnnplan.problems.bridge.Task.from_files`
    instead, which builds a UP problem only where a UP answer is asked for.
    """
    from unified_planning.io import PDDLReader

    checked = read_checked(domain, problem)
    _refuse_unparsed(checked.domain_text, checked.domain_path)
    domain_path, problem_path = checked.domain_path, checked.problem_path
    domain_text, problem_text = checked.domain_text, checked.problem_text
    # Parse the domain alone first, so that an error is blamed on the right file.
    try:
        PDDLReader().parse_problem_string(domain_text)
    except GnnplanError:
        raise
    except Exception as error:  # UP's parser raises many unrelated types
        raise _translate(error, domain_path) from None
    try:
        with _no_garbage_collection():  # UP's reader makes millions of objects and no cycles to collect
            up_problem = PDDLReader().parse_problem_string(domain_text, problem_text)
    except Exception as error:
        raise _translate(error, problem_path) from None
    _SOURCES[id(up_problem)] = Source(domain_path, problem_path)
    weakref.finalize(up_problem, _SOURCES.pop, id(up_problem), None)
    return up_problem

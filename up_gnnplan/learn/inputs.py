"""Gather and check the problems of a ``gnnplan learn`` run before any time is spent on them.

Every problem is loaded once (UP parse, supported-fragment check, pymimir task), so that a problem
of another domain, an unsupported PDDL feature or a broken file is refused at once, with its name,
and nothing is written. The problems come back ordered by their number of objects.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from up_gnnplan.errors import GnnplanError

_DOMAIN_NAME = re.compile(r"\(\s*define\s*\(\s*domain\s+([^\s)]+)", re.IGNORECASE)
_PROBLEM_DOMAIN = re.compile(r"\(\s*:domain\s+([^\s)]+)", re.IGNORECASE)
_COMMENT = re.compile(r";[^\n]*")


class LearnInputError(GnnplanError):
    """The problems given to ``gnnplan learn`` cannot be learnt from (the message says which and why)."""


@dataclass
class ProblemFile:
    """A checked training problem."""

    path: Path
    objects: int  # number of objects (the size problems are ordered and split by)
    name: str = ""  # what the run calls it (its labels file, its lines): the file's stem, unless two share one

    def __post_init__(self):
        self.name = self.name or self.path.stem


def _unique_names(files: list[Path]) -> dict[Path, str]:
    """Name each problem by its file's stem; problems of several folders that share a stem (``a/p01.pddl`` and
    ``b/p01.pddl``) by their folder's name too (``a-p01``, ``b-p01``), numbered where even that repeats."""
    stems = Counter(path.stem for path in files)
    names = {path: path.stem if stems[path.stem] == 1 else f"{path.parent.name}-{path.stem}" for path in files}
    counts, seen = Counter(names.values()), Counter()
    for path, name in names.items():
        if counts[name] > 1:
            seen[name] += 1
            names[path] = f"{name}-{seen[name]}"
    return names


def problem_files(domain: Path, given: list[str | Path]) -> list[Path]:
    """Return the PDDL problem files of ``given`` (files, or folders whose ``*.pddl`` files are read),
    leaving out the domain file itself; raise :class:`LearnInputError` when there are none."""
    files: list[Path] = []
    for entry in map(Path, given):
        if entry.is_dir():
            files += sorted(p for p in entry.glob("*.pddl") if p.resolve() != domain.resolve() and not _is_domain(p))
        elif entry.is_file():
            files.append(entry)
        else:
            raise LearnInputError(f"{entry}: no such file or folder")
    if not files:
        raise LearnInputError(f"no problem files in {', '.join(map(str, given)) or '(none given)'}")
    return list(dict.fromkeys(files))


def _is_domain(path: Path) -> bool:
    return bool(_DOMAIN_NAME.search(path.read_text(errors="replace")[:4000]))


def _same_problem_key(text: str) -> str:
    """The text of a problem file without its comments, its problem name, case and layout: two files with the same
    key are the same problem (a copy, or the same seed of a generator)."""
    code = " ".join(_COMMENT.sub("", text).lower().split())
    code = re.sub(r"\(\s*problem\s+[^\s)]+\s*\)", "(problem)", code, count=1)
    return re.sub(r"\s*([()])\s*", r"\1", code)


def without_copies(files: list[Path], say=None) -> list[Path]:
    """``files`` without the later ones that hold the same problem as an earlier one (:func:`_same_problem_key`):
    a copy among the training problems would be trained on twice, and where one copy became a judge problem the
    judge would score a problem the model was trained on. ``say(line)`` is told of each left out."""
    first: dict[str, Path] = {}
    kept = []
    for path in files:
        key = _same_problem_key(path.read_text(errors="replace"))
        if key in first:
            if say is not None:
                say(f"  {path.name}: the same problem as {first[key].name} (left out)")
            continue
        first[key] = path
        kept.append(path)
    return kept


def check_problems(domain: Path, files: list[Path], note=None, say=None) -> list[ProblemFile]:
    """Load every problem of ``files`` with ``domain``, copies of another left out (:func:`without_copies`, told to
    ``say``); return them ordered by object count.

    Raises :class:`LearnInputError` naming the problems of another domain (by their ``(:domain ...)``
    line) and passes on the loader's errors (unsupported feature, parse error) for the first bad file.
    """
    from up_gnnplan.problems import load_task

    text = domain.read_text(errors="replace")
    found = _DOMAIN_NAME.search(text)
    if found is None:
        raise LearnInputError(f"{domain}: not a PDDL domain file (no '(define (domain NAME)')")
    name = found.group(1).lower()
    foreign = []
    for path in files:
        said = _PROBLEM_DOMAIN.search(path.read_text(errors="replace"))
        if said is not None and said.group(1).lower() != name:
            foreign.append(f"{path.name} ({said.group(1)})")
    if foreign:
        raise LearnInputError(f"{len(foreign)} problem(s) are of another domain than '{name}' ({domain}): "
                              + ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else ""))
    files = without_copies(files, say)
    checked, signature, names = [], None, _unique_names(files)
    for path in files:
        task = load_task(domain, path)  # raises UnsupportedFeatureError / ProblemLoadError with the file's name
        if signature is None:
            signature = task.signature
        elif task.signature != signature:
            raise LearnInputError(f"{path}: its predicates differ from the other problems' "
                                  f"({task.signature.describe_difference(signature)})")
        checked.append(ProblemFile(path, task.num_objects, names[path]))
        if note is not None:
            note(len(checked), len(files))
    return sorted(checked, key=lambda p: (p.objects, p.name))


def judge_split(problems: list[ProblemFile]) -> tuple[list[ProblemFile], list[ProblemFile]]:
    """Return (training problems, judge problems): the largest fifth (1 to 3 problems) judges, and with ten or
    more problems the one in the middle of the sizes too.

    The judge problems are never labelled or trained on; the greedy policy solving them chooses
    the model (larger than the training problems, as the problems the model is for). The middle
    one gives the judge a problem that good epochs solve where the largest are out of every
    epoch's reach (Satellite: no epoch of a 15-minute run solved its three 10-satellite problems, so
    the judge could not tell the epochs apart). A single problem is trained on and there is no judge.
    """
    if len(problems) < 2:
        return problems, []
    count = min(3, max(1, len(problems) // 5))
    train, judges = problems[:-count], problems[-count:]
    if len(problems) >= 10:
        middle = train[len(problems) // 2]
        train, judges = [p for p in train if p is not middle], [middle, *judges]
    return train, judges

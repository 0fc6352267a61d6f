"""Run Fast Downward on a task under time and memory limits: every use of it in the package.

- LAMA-first (alias ``lama-first``): mode auto's ``model+lama`` fallback (:func:`lama_first`) and
  mode ground's planner for the ground problem (:func:`up_gnnplan.grounding.solve.lama_first`);
- A* with LM-cut (alias ``seq-opt-lmcut``): the optimal plans of ``gnnplan learn``'s labels
  (:func:`up_gnnplan.learn.labels.fast_downward_plan`); where LM-cut does not support the task
  (conditional effects), A* with h^max (blind A* with derived predicates).

It is the Fast Downward that ``up-fast-downward`` ships (its driver and aliases), run here as a
subprocess of its own rather than through that package's UP engines
(``OneshotPlanner(name="fast-downward")``), for three reasons:

- the memory limit: the UP engine takes no memory limit, so its planner could use the machine's
  memory whatever ``memory_mb`` says; Fast Downward's driver limits its translator and search
  (``--overall-memory-limit``, an address-space limit on each) to the memory still free under
  the solve's limit;
- the time limit: the process group is killed at the solve's deadline, less the time the plan's
  check needs (the UP engine polls once a second, after writing the PDDL again);
- the plan: it reads the PDDL the task already gave pymimir (no second write of a large problem)
  and maps the plan back to pymimir's ground actions, so the engine shortens and validates it
  exactly as it does a learned search's plan.

:func:`fast_downward` (and :func:`lama_first`) return a :class:`~up_gnnplan.search.common.SearchResult`
like every search.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from up_gnnplan.errors import GnnplanError, InternalError
from up_gnnplan.limits import LimitReached, Limits, MemoryLimitReached, TimeLimitReached, address_space_mb
from up_gnnplan.search.common import SearchResult, Status, stopped

NO_FAST_DOWNWARD = ("fallback 'model+lama' hands the time left to LAMA-first (Fast Downward through up-fast-downward), "
                    "which is not installed: pip install 'up-gnnplan[fast-downward]'")

# Fast Downward's exit codes (https://www.fast-downward.org/ExitCodes), the ones read here.
SUCCESS_CODES = (0, 1, 2, 3)  # a plan was found (1-3: then ran out of memory or time)
UNSOLVABLE_CODES = (10, 11)  # the translator or the search proved the task unsolvable
INCOMPLETE_CODES = (12, 13)  # the search exhausted its (incomplete) space
MEMORY_CODES = (20, 22, 24)
UNSUPPORTED_CODES = (34,)  # the search does not support the task (LM-cut and conditional effects)
TIME_CODES = (21, 23)
# A component that its CPU-time limit (RLIMIT_CPU) ended by SIGXCPU, as its driver passes it on:
# -24, or 232 as an unsigned byte.
CPU_LIMIT_CODES = (-signal.SIGXCPU, 256 - signal.SIGXCPU)
# A component killed outright (SIGKILL): by the hard CPU-time limit a second after the soft one where it
# did not stop at SIGXCPU (the translator on a Transport task of 522,000 estimated actions: "Planner time:
# 27.11s" under a limit of 27 s), else by the system, which kills for memory.
KILLED_CODES = (-signal.SIGKILL, 256 - signal.SIGKILL)
_PLANNER_TIME = re.compile(r"Planner time: ([\d.]+)s")

POLL_SECONDS = 0.02
# The share of the memory left that the hand-off's search from the walk's state takes where LAMA-first's search
# from the initial state runs beside it (:class:`BesideSearch`, started with a share of the memory left then).
RIVAL_MEMORY_SHARE = 0.5
# What a search from the initial state ran beside, in its result's words: the walk (started where the translator
# beside it ended), or the hand-off's search from the walk's state (started with it where a core is free).
BESIDE_THE_WALK, BESIDE_THE_WALKS_STATE = "beside the walk", "beside the search from the walk's state"
# Where a core is free, the hand-off's search from the initial state joins the one from the walk's state once this
# share of the time left has passed, and both then search to the deadline, the first plan the result. Half the plans
# from a walk's state come within 0.9 s of the hand-off (251 in benchmarks/results/: a quarter within 0.4 s, three
# quarters within 5.7 s), and they stay the walk's; the search from the initial state loses little: joining after a
# tenth, it ran out of time on learning-practice Barman p03 (32 s of search), which LAMA-first alone solves in 36 s.
JOIN_SHARE = 0.02
# Kept free of Fast Downward's memory: its driver (a Python process outside the limit it sets on
# its translator and search).
DRIVER_MB = 64
MIN_MB = 128  # less than this left under the limit: Fast Downward is not started
# Of the time left, kept back for reading the plan, shortening it and validating it: the engine's
# checks of a plan of a few hundred steps take well under a second.
RESERVE_SECONDS, RESERVE_SHARE, RESERVE_MAX = 0.5, 0.05, 5.0

# The aliases used here and how messages name them.
PLANNERS = {"lama-first": "LAMA-first", "seq-opt-lmcut": "A* with LM-cut", "seq-opt-hmax": "A* with h^max",
            "seq-opt-blind": "blind A*"}
# Planners that are not aliases of Fast Downward's driver: their search options, given after the files.
SEARCHES = {"seq-opt-hmax": ["--search", "astar(hmax())"], "seq-opt-blind": ["--search", "astar(blind())"]}


class UnsupportedTask(GnnplanError):
    """Fast Downward's search does not support the task (exit code 34: LM-cut on conditional effects)."""

_EXPANDED = re.compile(r"Expanded (\d+) state")
_EVALUATED = re.compile(r"Evaluated (\d+) state")


def fast_downward_installed() -> bool:
    """Return whether up-fast-downward, which ships LAMA-first, can be imported."""
    return importlib.util.find_spec("up_fast_downward") is not None


def driver(missing: str = NO_FAST_DOWNWARD) -> Path:
    """Return the path of the Fast Downward driver that up-fast-downward ships; refuse without it,
    with the message ``missing`` (what the caller cannot do without it)."""
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        raise GnnplanError(missing)
    path = Path(list(spec.submodule_search_locations)[0]) / "downward" / "fast-downward.py"
    if not path.is_file():
        raise GnnplanError(f"{missing} (up-fast-downward is there, but not its {path.name})")
    return path


def reserve(remaining: float) -> float:
    """Return the seconds of ``remaining`` kept back for the plan's check after Fast Downward."""
    return min(RESERVE_MAX, RESERVE_SECONDS + RESERVE_SHARE * remaining)


def lama_first(task, limits: Limits, start=None, **_ignored) -> SearchResult:
    """Run LAMA-first on ``task`` (from its state ``start``, else its initial state) with the time and memory left
    under ``limits``; return its plan as pymimir ground actions (status SOLVED), or why there is none."""
    return fast_downward(task, limits, "lama-first", start=start)


def up_result(found: SearchResult, plan, engine: str, metrics: dict | None = None):
    """Return UP's ``PlanGenerationResult`` of Fast Downward's ``found`` by ``engine``: ``plan`` (its actions as
    a UP or PDDL plan, built by the caller) when it solved the task, else its message, at level INFO where it
    ended as a search does (its time, a proof, an incomplete search's end) and ERROR otherwise (its memory)."""
    from unified_planning.engines import LogLevel, LogMessage, PlanGenerationResult

    from up_gnnplan.search.common import up_status

    metrics = {**(metrics or {}), "expanded": str(found.expanded), "evaluated": str(found.evaluated)}
    if found.status is Status.SOLVED:
        return PlanGenerationResult(up_status(found.status), plan, engine, {**metrics, "plan_cost": f"{found.cost:g}"})
    level = LogLevel.INFO if found.status in (Status.TIMEOUT, Status.UNSOLVABLE, Status.GAVE_UP) else LogLevel.ERROR
    return PlanGenerationResult(up_status(found.status), None, engine, metrics, [LogMessage(level, found.message)])


def fast_downward(task, limits: Limits, alias: str, missing: str = NO_FAST_DOWNWARD, start=None,
                  problem: str | None = None) -> SearchResult:
    """Run Fast Downward's ``alias`` (one of :data:`PLANNERS`) on ``task`` with the time and memory
    left under ``limits``; return its plan as pymimir ground actions (status SOLVED), or why there
    is none. ``start``: a state of the task to plan from instead of its initial state (the problem's
    file with the state's fluent atoms in its ``:init``, :func:`state_problem_text`); ``problem``: the
    problem's text to plan on instead (its plan replayed from ``start`` in ``task``). Without
    up-fast-downward, :class:`~up_gnnplan.errors.GnnplanError` with ``missing``."""
    name = PLANNERS[alias]
    began = time.perf_counter()
    try:
        limits.check(f"before handing the task to {name}")
        if problem is None:
            problem = task.problem_text if start is None else state_problem_text(task, start)
        command, folder = _command(task, limits, alias, name, missing, problem)
        try:
            result = _planned(task, limits, command, folder.name, name, start, began)
        finally:
            folder.cleanup()
        if result.status is Status.TIMEOUT and limits.deadline.seconds is not None:
            # Its own limit was the solve's time left: say it as every search says the solve's limit.
            result.message = (f"time limit of {limits.deadline.said} s reached while {name} searched (after "
                              f"{limits.deadline.elapsed():.2f} s; {result.message})")
        return result
    except LimitReached as error:
        return stopped(error, [], 0.0, 0, 0, limits)


def state_problem_text(task, state) -> str:
    """Return ``task``'s problem file with ``state`` as its initial state: the ``:init`` keeps the file's static
    atoms and numeric values, and its fluent atoms are the state's (in lower case, comments blanked)."""
    from up_gnnplan.problems.syntax import pddl_code

    code = pddl_code(task.problem_text)
    if re.search(r"\(\s*:init\b", code) is None:
        raise InternalError(f"internal error: no (:init ...) in the problem of {task.source.problem}")
    init = _section(code, "init")
    if init is None:
        raise InternalError(f"internal error: the (:init ...) of the problem of {task.source.problem} is not closed")
    fluent = {p.get_name().lower() for p in task.mimir_domain.get_predicates() if p.is_fluent()}
    kept = [item for item in _items(code[init[0] + 1:init[1]])  # static atoms, numeric values (= ...)
            if item[1:].split(None, 1)[0].strip("()") not in fluent]
    atoms = kept + [f"({' '.join(atom)})" for atom in _fluent_atoms(task, state)]
    return code[:init[0]] + "(:init\n  " + "\n  ".join(atoms) + ")" + code[init[1] + 1:]


def _section(code: str, keyword: str) -> tuple[int, int] | None:
    """The span ``(start, end)`` of the problem's top-level section ``(:keyword ...)`` in ``code``: ``code[start]`` is
    its opening parenthesis, ``code[end]`` the closing one; None where there is none."""
    found = re.search(r"\(\s*:" + keyword + r"\b", code)
    if found is None:
        return None
    depth = 0
    for index in range(found.start(), len(code)):
        depth += {"(": 1, ")": -1}.get(code[index], 0)
        if depth == 0:
            return found.start(), index
    return None


def _items(text: str) -> list[str]:
    """The parenthesised items of ``text`` at its top level, in order."""
    items, depth, begin = [], 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
            if depth == 1:
                begin = index
        elif char == ")":
            depth -= 1
            if depth == 0:
                items.append(text[begin:index + 1])
    return items


def reduced_problem_text(task, state) -> tuple[str, list[str]] | None:
    """Return ``task``'s problem file with ``state`` as its initial state and without its *done* objects, and their
    names; None where no object is done or the goal is not a conjunction of literals.

    An object is done where the goal names it, every goal literal that names it holds in ``state`` (a package
    delivered; a domain constant never is), every fluent atom of ``state`` that names it is one the goal asks for
    (the location the ferry is at stays, and a Blocksworld block that is clear), and each static atom that names
    it names only done objects (a location on a road to one that is not stays: the map stays whole). Their atoms,
    static or fluent, and goal literals are left out:
    a plan of the smaller task (fewer ground actions: the translator's time) applies to the whole task where the
    objects left out do not constrain the others, which the caller checks by replaying the plan from ``state`` and
    testing the whole goal. Where they do (a Blocksworld block left out on one that must move: that one is never
    clear), the smaller task is unsolvable, which Fast Downward's translator mostly proves at once."""
    from up_gnnplan.search.course import goal_literals

    if not goal_literals(task):  # numeric or quantified conditions in the goal
        return None
    literals = list(task.goal_condition.get_literals())
    code = state_problem_text(task, state)  # lower case, comments blanked
    objects = _section(code, "objects")
    if objects is None:
        return None
    tokens = code[objects[0]:objects[1]].split()[1:]  # after "(:objects"
    if any("(" in token or ")" in token for token in tokens):
        return None  # (either ...) types: not rewritten here
    named: dict[str, bool] = {}  # object named by a goal literal -> whether all of those hold
    for literal in literals:
        holds = literal.is_static() or state.literal_holds(literal)
        for term in literal.get_atom().get_terms():
            name = str(term).lower()
            named[name] = named.get(name, True) and holds
    declared = {token for i, token in enumerate(tokens) if token != "-" and (i == 0 or tokens[i - 1] != "-")}
    gone = {name for name, holds in named.items() if holds and name in declared}
    init = _section(code, "init")
    goal = _section(code, "goal")
    if init is None or goal is None or not objects[1] < init[0] < goal[0]:
        return None
    items = _items(code[init[0] + 1:init[1]])
    words = [item.replace("(", " ").replace(")", " ").split() for item in items]  # [predicate, object, ...]
    fluent = {predicate.get_name().lower() for predicate in task.mimir_domain.get_predicates() if predicate.is_fluent()}
    wanted = {tuple(_literal_text(literal).strip("()").split()) for literal in literals if literal.get_polarity()}
    # Not done: an object in a fluent atom the goal does not ask for (the location the ferry is at, a block clear)
    gone -= {name for atom in words if atom[0] in fluent and tuple(atom) not in wanted for name in atom[1:]}
    # ... or in a static atom with one that is not done (a location on a road: the map stays whole).
    static = [atom[1:] for atom in words if atom[0] not in fluent | {"="}]
    while True:
        tied = {name for args in static if not gone.issuperset(args) for name in args if name in gone}
        if not tied:
            break
        gone -= tied
    done = sorted(gone)
    if not done:
        return None
    kept, names = [], []  # the objects' declaration without the done ones ("a b - t c - u")
    for i, token in enumerate(tokens):
        if i > 0 and tokens[i - 1] == "-":
            if names:
                kept += names + ["-", token]
            names = []
        elif token != "-" and token not in gone:
            names.append(token)
    kept += names

    def mentions(item: str) -> bool:
        return bool(gone.intersection(item.replace("(", " ").replace(")", " ").split()))

    atoms = [item for item, atom in zip(items, words) if not gone.intersection(atom)]
    goals = [_literal_text(literal) for literal in literals]
    goals = [text if literal.get_polarity() else f"(not {text})" for literal, text in zip(literals, goals)
             if not mentions(text)]
    text = (code[:objects[0]] + "(:objects " + " ".join(kept) + ")" + code[objects[1] + 1:init[0]]
            + "(:init\n  " + "\n  ".join(atoms) + ")" + code[init[1] + 1:goal[0]]
            + "(:goal (and " + " ".join(goals) + "))" + code[goal[1] + 1:])
    return text, done


def done_objects(count: int) -> str:
    """``count`` done objects, in words."""
    return f"{count} done object{'' if count == 1 else 's'}"


def _literal_text(literal) -> str:
    """The atom of a pymimir goal literal as PDDL, in lower case: ``(at p1 l2)``."""
    atom = literal.get_atom()
    return "(" + " ".join([atom.get_predicate().get_name(), *(str(term) for term in atom.get_terms())]).lower() + ")"


def lama_first_reduced(task, limits: Limits, start, reduced: tuple[str, list[str]]) -> SearchResult:
    """Run LAMA-first from the state ``start`` of ``task`` on its problem without its done objects (``reduced``, from
    :func:`reduced_problem_text`); return its plan, replayed from ``start`` in the whole task, where that reaches the
    whole goal, else why there is none (status GAVE_UP, or UNSOLVABLE for the smaller task: the whole task may still
    be solvable)."""
    try:
        result = fast_downward(task, limits, "lama-first", start=start, problem=reduced[0])
    except InternalError as error:  # a step not applicable in the whole task
        return _not_applicable(error, len(reduced[1]))
    return _in_whole_task(task, start, result, len(reduced[1]))


def _not_applicable(error: InternalError, done: int) -> SearchResult:
    return SearchResult(Status.GAVE_UP, message=f"its plan without the {done_objects(done)} does not apply to the "
                                                f"whole task ({error})")


def _in_whole_task(task, start, result: SearchResult, done: int) -> SearchResult:
    """LAMA-first's ``result`` on the task without ``done`` done objects, its plan replayed from ``start``: the plan
    where it reaches the whole goal, else why there is none (GAVE_UP: the whole task may still be solvable)."""
    from up_gnnplan.states.successors import is_goal

    without = done_objects(done)
    if not result.solved:
        if result.status is Status.UNSOLVABLE:
            result.status = Status.GAVE_UP
            result.message = f"{PLANNERS['lama-first']} proved the task without the {without} unsolvable"
        return result
    state = start
    for action in result.actions:
        state = action.apply(state)
    if not is_goal(task, state):
        return SearchResult(Status.GAVE_UP, expanded=result.expanded, evaluated=result.evaluated,
                            seconds=result.seconds, message=f"its plan without the {without} does not reach the whole goal")
    return result


class _Search:
    """A Fast Downward search run beside the learned part in a process group of its own (``process``), whose
    ``result(limits)`` reads what it found."""

    def wait(self, limits: Limits) -> SearchResult:
        """Wait for the search within ``limits``; return its result, or the limit's result."""
        try:
            _wait(self.process, limits, self.name)
        except LimitReached as error:
            return stopped(error, [], 0.0, 0, 0, limits)
        return self.result(limits)

    def stop(self) -> None:
        if self.process.poll() is None:
            _kill(self.process)


class ReducedSearch(_Search):
    """LAMA-first, translator and search, on ``task`` without the done objects of ``start``, the state after ``step``
    steps of the policy's walk (``reduced``, from :func:`reduced_problem_text`), run in a process group of its own
    while the walk goes on (:class:`~up_gnnplan.search.course.Course` starts it where the walk goes on past its share
    and a core is free), within the time left under ``limits`` and ``memory_share`` of the memory left. Where it
    finds a plan first, the walk stops (the part's ``overtaken``), and the solve's plan is the walk's first ``step``
    steps and this plan, where it reaches the whole goal (:meth:`result`).

    Hard-lower Transport (172 packages, 120 locations): the whole task's translation takes over 120 s, the walk
    delivers 163 packages in 47 s of the minute, and from there the task without them takes 12.9 s."""

    def __init__(self, task, limits: Limits, start, step: int, reduced: tuple[str, list[str]], left: int,
                 memory_share: float):
        self.task, self.start, self.step, self.left = task, start, step, left  # left: goal literals, at ``start``
        self.done = len(reduced[1])
        self.name = PLANNERS["lama-first"]
        self.command, self.folder = _command(task, limits, "lama-first", self.name, NO_FAST_DOWNWARD, reduced[0],
                                             memory_share=memory_share)
        self.began = time.perf_counter()
        self.process = _start(self.command, self.folder.name)
        self.found: SearchResult | None = None  # its result, once read (:meth:`result`)
        self.used = False  # its plan, after the walk's steps, is the learned part's result

    def ended(self) -> bool:
        return self.process.poll() is not None

    def planned(self) -> bool:
        """Whether it has ended with a plan (of the smaller task), without waiting."""
        return (self.ended() and self.process.returncode in SUCCESS_CODES
                and (Path(self.folder.name) / "plan").is_file())

    def solved(self) -> bool:
        """Whether it has ended with a plan that reaches the whole goal from ``start``, without waiting."""
        return self.planned() and self.result(Limits(None, 0)).solved

    def overtaken(self, what: str) -> str:
        """Why the walk should stop at ``what`` (a limits check): this search found a plan that reaches the whole
        goal; empty while not."""
        return (f"{what}: {self.name}, on the task without the {done_objects(self.done)} of step {self.step} of the "
                "walk beside it, found a plan") if self.solved() else ""

    def result(self, limits: Limits) -> SearchResult:
        """Its result once it has ended (:meth:`ended`, or :meth:`wait`): the plan from ``start``, replayed in the
        whole task, where it reaches the whole goal; else why there is none."""
        if self.found is None:
            folder = Path(self.folder.name)
            try:
                result = _outcome(self.task, limits, self.command, self.process.returncode, folder / "log",
                                  folder / "plan", self.name, self.start, self.began)
                self.found = _in_whole_task(self.task, self.start, result, self.done)
            except InternalError as error:
                self.found = _not_applicable(error, self.done)
        return self.found

    def stop(self) -> None:
        super().stop()
        self.folder.cleanup()


class Translation:
    """LAMA-first's translation of ``task`` (Fast Downward's translator alone, which writes ``output.sas``), run
    in a process group of its own while the caller goes on: mode auto's policy walks on while it runs
    (:class:`~up_gnnplan.search.course.Course`), and the hand-off then searches the translated task
    (:func:`lama_first_from`); ``gnnplan learn``'s labels search it by A* with LM-cut, then by LAMA-first
    (:meth:`search`). Its time limit is the time left under ``limits`` when it starts, its memory limit
    ``memory_share`` of the memory left then. :meth:`stop` ends it and removes its folder."""

    def __init__(self, task, limits: Limits, memory_share: float = 1.0, missing: str = NO_FAST_DOWNWARD):
        self.task, self.name = task, PLANNERS["lama-first"]
        self.memory_share = memory_share
        self.command, self.folder = _command(task, limits, "lama-first", self.name, missing, translate=True,
                                             memory_share=memory_share)
        self.began = time.perf_counter()
        self.took: float | None = None  # seconds, once it ended
        self.process = _start(self.command, self.folder.name)
        self.beside: BesideSearch | None = None  # LAMA-first's search of it beside the walk (:meth:`search_beside`)
        self.dropped = False  # stopped beside the walk, which left the core to LAMA-first on a smaller task

    def poll(self) -> bool:
        """Return whether the translator has ended, without waiting."""
        if self.took is None and self.process.poll() is not None:
            self.took = time.perf_counter() - self.began
        return self.took is not None

    def wait(self, limits: Limits) -> tuple[int, str]:
        """Wait until the translator ends within ``limits`` (killed at the deadline, less the plan's reserve:
        :class:`TimeLimitReached`); return its exit code and log."""
        code = _wait(self.process, limits, f"{self.name}'s translator")
        self.poll()
        return code, (Path(self.folder.name) / "log").read_text(errors="replace")

    def translated(self, limits: Limits) -> SearchResult | None:
        """Wait for the translator within ``limits``; return None once ``output.sas`` is written, else why there
        is none as a result without a plan (its time, a proof that the task is unsolvable, its memory)."""
        began = time.perf_counter()
        try:
            code, log = self.wait(limits)
        except LimitReached as error:
            return stopped(error, [], 0.0, 0, 0, limits)
        if code == 0 and (Path(self.folder.name) / "output.sas").is_file():
            return None
        status, message = _failure(code, log, self.command, f"{self.name}'s translator")
        return SearchResult(status, seconds=time.perf_counter() - began, message=message)

    def search(self, limits: Limits, alias: str) -> SearchResult:
        """Run Fast Downward's ``alias`` (one of :data:`PLANNERS`) on the translated task within ``limits`` (after
        :meth:`translated` said it is there); its plan from the initial state."""
        return _search_sas(self.task, limits, self.folder.name, "output.sas", PLANNERS[alias], None, alias)

    def done(self) -> bool:
        """Whether the translator has ended and written ``output.sas``."""
        return self.poll() and self.process.returncode == 0 and (Path(self.folder.name) / "output.sas").is_file()

    def search_beside(self, limits: Limits, memory_share: float, where: str = "") -> BesideSearch:
        """Start LAMA-first's search of the translated task (:meth:`done`) from the initial state, in a process
        group of its own, within the time left under ``limits`` and ``memory_share`` of the memory left; ``where``:
        what it runs beside, in words (default: the walk)."""
        self.beside = BesideSearch(self, limits, memory_share, where)
        return self.beside

    def short_of_memory(self) -> bool:
        """Whether the translator has ended for want of memory, or was killed (its share of the memory beside the
        walk may have been too small: a translation with all the memory left may succeed)."""
        return self.poll() and self.process.returncode in MEMORY_CODES + KILLED_CODES

    def stop(self) -> None:
        if self.beside is not None:
            self.beside.stop()
        if self.process.poll() is None:
            _kill(self.process)
        self.folder.cleanup()


class BesideSearch(_Search):
    """LAMA-first's search of a :class:`Translation` from the task's initial state, run while mode auto's learned
    part goes on (:class:`~up_gnnplan.search.course.Course` starts it where the translator started with the walk
    has ended and a core is free): where it finds a plan first, the learned part stops and the plan is the solve's
    (the limits' ``overtaken`` asks :meth:`overtaken` at every check); where the learned part hands over first,
    the hand-off searches from the walk's state while this goes on, and then waits for it (:func:`lama_first_from`).

    Hard-lower Satellite (55 satellites): the translator takes 35 s and LAMA-first's search 5 more; the walk,
    judged on course, went on to the deadline without reaching the goal, and the search from the initial state,
    which alone would have solved the task, never ran."""

    PLAN, LOG = "plan-beside", "log-beside"

    def __init__(self, translation: Translation, limits: Limits, memory_share: float, where: str = ""):
        self.task, self.name, self.folder = translation.task, translation.name, translation.folder.name
        self.where = where or BESIDE_THE_WALK
        self.command = _search_command(limits, self.name, "output.sas", "lama-first", self.PLAN, memory_share)
        self.began = time.perf_counter()
        self.process = _start(self.command, self.folder, self.LOG)
        self.found: SearchResult | None = None  # its plan, once read (:meth:`result`)

    def planned(self) -> bool:
        """Whether the search has ended with a plan, without waiting."""
        return (self.process.poll() is not None and self.process.returncode in SUCCESS_CODES
                and (Path(self.folder) / self.PLAN).is_file())

    def overtaken(self, what: str) -> str:
        """Why the learned part should stop at ``what`` (a :class:`~up_gnnplan.limits.Limits` check): this search
        found a plan; empty while it has not."""
        return f"{what}: {self.name}, searching beside it, found a plan" if self.planned() else ""

    def result(self, limits: Limits) -> SearchResult:
        """The search's result once it has ended (:meth:`planned`, or :meth:`wait`): its plan from the initial
        state (kept in ``found``, and given again), or why there is none."""
        if self.found is not None:
            return self.found
        result = _outcome(self.task, limits, self.command, self.process.returncode, Path(self.folder) / self.LOG,
                          Path(self.folder) / self.PLAN, self.name, None, self.began)
        result.message = f"{result.message}, searched {self.where} from the initial state"
        if result.solved:
            self.found = result
        return result


class _Join:
    """LAMA-first's search of a :class:`Translation` from the initial state (:class:`BesideSearch`), started beside
    the hand-off's search from the walk's state once :data:`JOIN_SHARE` of the time left under ``limits`` has
    passed, with :data:`RIVAL_MEMORY_SHARE` of the memory left (:func:`lama_first_from`)."""

    def __init__(self, translation: Translation, limits: Limits):
        self.translation, self.limits = translation, limits
        remaining = limits.deadline.remaining()
        self.at = time.perf_counter() + (0.0 if remaining is None else JOIN_SHARE * remaining)

    def due(self) -> bool:
        return time.perf_counter() >= self.at

    def start(self) -> BesideSearch | None:
        """Start the search; None where it could not start (a limit reached, too little memory left)."""
        try:
            return self.translation.search_beside(self.limits, RIVAL_MEMORY_SHARE, BESIDE_THE_WALKS_STATE)
        except GnnplanError:
            return None


def lama_first_from(task, limits: Limits, start, share: float,
                    translation: Translation | None = None) -> tuple[SearchResult, bool]:
    """Run LAMA-first on ``task`` translated once: from its state ``start`` (None: none) in ``share`` of the time
    left after the translation, then, where it found no plan there, from the initial state with the rest. Return
    the result and whether its plan starts at ``start``. ``translation``: the task's :class:`Translation` started
    earlier (waited for here, and stopped), else one is run here. Where a core is free, the search from the initial
    state joins the one from ``start`` after :data:`JOIN_SHARE` of the time left (:class:`_Join`), and where one
    runs beside the walk already (:class:`BesideSearch`) the one from ``start`` runs beside it: both then search to
    the deadline with :data:`RIVAL_MEMORY_SHARE` of the memory each, and the first plan is the result. Elevators (a
    learning-practice domain, judge 1/4): the walk reached 49 of 57 goal literals left in 20.5 s, and LAMA-first, with
    half the 37.5 s left from there and half from the initial state, found none; alone it needs 43.8 s.

    The state is put into the translated task's initial state (:func:`start_sas`): every state a walk
    reaches is reachable from the initial state, so the translator's task holds all its facts and the
    actions from it. Medium Transport (44 packages, 40 locations): the translation takes 14 s, LAMA-first's
    search 24 s from the initial state and 2 s from a walk's state with 11 packages left."""
    from up_gnnplan.search.ff import free_core

    name = PLANNERS["lama-first"]
    began = time.perf_counter()
    try:
        limits.check(f"before handing the task to {name}")
        translation = translation or Translation(task, limits)
        try:
            code, log = translation.wait(limits)
            if translation.short_of_memory() and translation.memory_share < 1.0:
                # started beside the walk with a share of the memory (ended before the hand-off or while it waited):
                # again with all the memory left
                translation.stop()
                limits.check(f"before translating the task again for {name}")
                translation = Translation(task, limits)
                code, log = translation.wait(limits)
            folder = translation.folder.name
            translated = Path(folder) / "output.sas"
            if code != 0 or not translated.is_file():
                status, message = _failure(code, log, translation.command, f"{name}'s translator")
                if status is Status.TIMEOUT:  # its limit was the time the solve had left when it started
                    message = f"time limit of {limits.deadline.said} s reached: {message}"
                return SearchResult(status, seconds=time.perf_counter() - began, message=message), False
            beside = translation.beside
            if beside is not None and beside.planned():
                return beside.result(limits), False
            patched = None if start is None else start_sas(translated.read_text(), task, start)
            if patched is not None:
                (Path(folder) / "start.sas").write_text(patched)
                join = None if beside is not None or not free_core() else _Join(translation, limits)
                racing = beside is not None or join is not None  # the two searches each have all the time left
                part = limits.share(1.0 if racing else share)
                try:  # beside a search from the initial state, with the memory it left
                    result = _search_sas(task, part, folder, "start.sas", name, start, rival=beside,
                                         memory_share=RIVAL_MEMORY_SHARE if racing else 1.0, join=join)
                except InternalError:  # the search refused the patched task: from the initial state instead
                    result = SearchResult(Status.GAVE_UP)
                limits.absorb(part)
                beside = translation.beside
                if beside is not None and beside.planned():
                    return beside.result(limits), False
                if result.solved or limits.deadline.passed():
                    return result, True
            if beside is not None:  # it searches from the initial state already
                result = beside.wait(limits)
            else:
                result = _search_sas(task, limits, folder, "output.sas", name, None)
            result.message = "; ".join(filter(None, [
                None if patched is None else "none from the walk's state in its share", result.message]))
            return result, False
        finally:
            translation.stop()
    except LimitReached as error:
        return stopped(error, [], 0.0, 0, 0, limits), False


def _search_sas(task, limits: Limits, folder: str, sas: str, name: str, start, alias: str = "lama-first",
                rival: BesideSearch | None = None, memory_share: float = 1.0,
                join: _Join | None = None) -> SearchResult:
    """Run the search of Fast Downward's ``alias`` (LAMA-first's by default) on the translated task ``sas`` in
    ``folder`` within ``limits`` (``memory_share`` of the memory left); its plan is read from ``start`` (None: the
    initial state). It is stopped where ``rival``, a search beside it (or the one ``join`` starts), finds a plan first
    (a result without one)."""
    began = time.perf_counter()
    try:
        command = _search_command(limits, name, sas, alias, "plan", memory_share)
        (Path(folder) / "plan").unlink(missing_ok=True)
        return _planned(task, limits, command, folder, name, start, began, rival, join)
    except LimitReached as error:
        return stopped(error, [], 0.0, 0, 0, limits)


def _search_command(limits: Limits, name: str, sas: str, alias: str, plan: str, memory_share: float) -> list[str]:
    """Return the command line of the search of Fast Downward's ``alias`` on the translated task ``sas``, its plan
    into the file ``plan``, within the time left under ``limits`` and ``memory_share`` of the memory left."""
    options = SEARCHES.get(alias)
    return _driver_command(limits, name, NO_FAST_DOWNWARD, memory_share) + [
        "--plan-file", plan, *([] if options else ["--alias", alias]), sas, *(options or [])]


def _planned(task, limits: Limits, command: list[str], folder: str, name: str, start, began: float,
             rival: BesideSearch | None = None, join: _Join | None = None) -> SearchResult:
    """Run Fast Downward's ``command`` in ``folder``; return its plan (the file ``plan`` there, replayed from
    ``start``, None: the initial state) as a SOLVED result, or why there is none, with its counters; stopped
    (GAVE_UP) where ``rival`` (or the search ``join`` starts) found a plan first."""
    process = _start(command, folder)
    code = _wait(process, limits, name, rival, join)
    if code is None:
        return SearchResult(Status.GAVE_UP, seconds=time.perf_counter() - began,
                            message=f"stopped: {name} found a plan first")
    return _outcome(task, limits, command, code, Path(folder) / "log", Path(folder) / "plan", name, start, began)


def _outcome(task, limits: Limits, command: list[str], code: int, log_file: Path, plan_file: Path, name: str, start,
             began: float) -> SearchResult:
    """The result of Fast Downward's ``command``, ended with exit code ``code``: its plan (``plan_file``, replayed
    from ``start``) as a SOLVED result, or why there is none (read from ``log_file``), with its counters."""
    log = log_file.read_text(errors="replace")
    steps = _read_plan(plan_file) if code in SUCCESS_CODES and plan_file.is_file() else None
    counts = {key: int(found[-1]) if found else 0
              for key, found in (("expanded", _EXPANDED.findall(log)), ("evaluated", _EVALUATED.findall(log)))}
    if steps is not None:
        actions, cost = _ground(task, steps, limits, name, start)
        return SearchResult(Status.SOLVED, actions, cost, counts["expanded"], counts["evaluated"],
                            time.perf_counter() - began, f"{name}'s plan of {len(actions)} actions")
    status, message = _failure(code, log, command, name)
    return SearchResult(status, expanded=counts["expanded"], evaluated=counts["evaluated"],
                        seconds=time.perf_counter() - began, message=message)


def start_sas(translated: str, task, state) -> str | None:
    """Return Fast Downward's translated task ``translated`` (an ``output.sas`` text) with ``state`` of ``task`` as
    its initial state: each variable not derived by an axiom takes the value of the fact the state holds (else
    its negation, else "none of those"); None where some variable has no such value (a state the translator's
    task cannot hold)."""
    facts = {f"{predicate}({', '.join(args)})" for predicate, *args in _fluent_atoms(task, state)}
    values = []
    for block in re.findall(r"begin_variable\n(.*?)\nend_variable", translated, re.S):
        lines = block.split("\n")
        layer, count, names = int(lines[1]), int(lines[2]), lines[3:3 + int(lines[2])]
        if layer >= 0:  # derived: the search computes it
            values.append(None)
            continue
        value = next((k for k, fact in enumerate(names) if fact.startswith("Atom ") and fact[5:] in facts), None)
        if value is None:
            value = next((k for k, fact in enumerate(names) if fact == "<none of those>"
                          or (fact.startswith("NegatedAtom ") and fact[12:] not in facts)), None)
        if value is None or value >= count:
            return None
        values.append(value)
    begin, end = translated.find("begin_state\n"), translated.find("end_state")
    if begin < 0 or end < 0:
        return None
    old = translated[begin + len("begin_state\n"):end].split()
    if len(old) != len(values):
        return None
    new = [str(value if value is not None else default) for value, default in zip(values, old)]
    return translated[:begin] + "begin_state\n" + "\n".join(new) + "\n" + translated[end:]


def _fluent_atoms(task, state) -> list[list[str]]:
    """The fluent atoms of ``state`` as [predicate, object, ...] names, in lower case."""
    from pymimir import GroundAtom

    repositories = task.mimir_problem._advanced_problem.get_repositories()
    atoms = repositories.get_fluent_ground_atoms_from_indices(list(state._advanced_state.get_fluent_atoms()))
    return [str(GroundAtom(atom)).lower().strip("()").split() for atom in atoms]


def _command(task, limits: Limits, alias: str, name: str, missing: str, problem: str | None = None,
             translate: bool = False, memory_share: float = 1.0):
    """Return Fast Downward's command line on ``task``'s PDDL and the temporary folder it works in (with
    ``translate``, its translator alone, which writes ``output.sas`` there); ``memory_share``: of the memory left."""
    command = _driver_command(limits, name, missing, memory_share)
    folder = tempfile.TemporaryDirectory(prefix="gnnplan-lama-")
    (Path(folder.name) / "domain.pddl").write_text(task.domain_text)
    (Path(folder.name) / "problem.pddl").write_text(task.problem_text if problem is None else problem)
    if translate:
        return command + ["--translate", "domain.pddl", "problem.pddl"], folder
    options = SEARCHES.get(alias)
    command += ["--plan-file", "plan", *([] if options else ["--alias", alias]), "domain.pddl", "problem.pddl",
                *(options or [])]
    return command, folder


def _driver_command(limits: Limits, name: str, missing: str, memory_share: float = 1.0) -> list[str]:
    """Return the start of a Fast Downward command line: the driver, with the memory (``memory_share`` of it) and
    time left under ``limits``."""
    remaining = limits.deadline.remaining()
    command = [sys.executable, str(driver(missing))]
    space = address_space_mb()
    if limits.memory_mb or space is not None:
        # Its translator and search get an address-space limit each, which may not exceed this
        # process's own (an outer ``ulimit -v``): the driver would refuse to start them.
        headroom = limits.headroom_mb()
        left = min(x for x in (None if headroom is None else memory_share * headroom, space) if x is not None) - DRIVER_MB
        if left < MIN_MB:
            limit = f"memory limit of {limits.memory_mb} MB" if limits.memory_mb else f"address-space limit of {space} MB"
            raise MemoryLimitReached(f"{limit} reached before {name}: {max(0.0, left):.0f} MB would be left for it")
        command += ["--overall-memory-limit", f"{int(left)}M"]
    if remaining is not None:  # Fast Downward's own limit too, so that it ends on its own and says why
        seconds = remaining - reserve(remaining)
        if seconds < 1:
            raise TimeLimitReached(f"time limit of {limits.deadline.said} s reached before {name}: "
                                   f"{remaining:.2f} s left")
        command += ["--overall-time-limit", f"{int(seconds)}s"]
    return command


def _start(command: list[str], folder: str, log_name: str = "log") -> subprocess.Popen:
    """Start ``command`` in ``folder`` in a process group of its own, its output into the file ``log_name`` there."""
    with (Path(folder) / log_name).open("wb") as log:
        return subprocess.Popen(command, cwd=folder, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def _wait(process: subprocess.Popen, limits: Limits, name: str, rival: BesideSearch | None = None,
          join: _Join | None = None) -> int | None:
    """Wait until ``process`` ends; kill its group when the deadline of ``limits``, less the plan's reserve,
    passes (:class:`TimeLimitReached`: Fast Downward's own limit counts CPU seconds, which a loaded machine makes
    longer in wall-clock time) or this process is interrupted. Return its exit code; None where ``rival``, a
    search beside it (or the one ``join`` starts when its time comes), found a plan first (``process`` is then
    killed)."""
    remaining = limits.deadline.remaining()
    stop = None if remaining is None else time.perf_counter() + remaining - reserve(remaining)
    try:
        while process.poll() is None:
            if join is not None and join.due():
                rival, join = join.start() or rival, None
            if rival is not None and rival.planned():
                return None
            if stop is not None and time.perf_counter() > stop:
                _kill(process)
                raise TimeLimitReached(f"time limit of {limits.deadline.said} s reached while {name} "
                                       f"ran (after {limits.deadline.elapsed():.2f} s)")
            time.sleep(POLL_SECONDS)
    finally:
        if process.poll() is None:
            _kill(process)
    return process.returncode


def _kill(process: subprocess.Popen) -> None:
    """End ``process`` and its children (its translator or search): politely, then for certain.

    The group is killed even once the driver has ended: its translator or search may outlive it.
    """
    for sig, wait in ((signal.SIGTERM, 0.5), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            pass


def _read_plan(path: Path) -> list[tuple[str, list[str]]]:
    """Return the steps of a Fast Downward plan file: (action name, object names), in lower case."""
    steps = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(";"):
            name, *args = line.strip("()").lower().split()
            steps.append((name, args))
    return steps


def _ground(task, steps: list[tuple[str, list[str]]], limits: Limits, name: str, start=None) -> tuple[list, float]:
    """Return the pymimir ground actions of ``steps`` replayed from ``start`` (default: the initial state), and
    their cost."""
    state, actions, cost = task.initial_state() if start is None else start, [], 0.0
    for number, (action_name, args) in enumerate(steps, start=1):
        limits.check(f"while reading {name}'s plan (step {number} of {len(steps)})")
        action = task.ground_action(state, action_name, args)
        if action is None:
            raise InternalError(f"internal error: step {number} of {name}'s plan, ({action_name} {' '.join(args)}), "
                                f"is not applicable in the task")
        state, step_cost = action.apply(state, return_cost=True)
        actions.append(action)
        cost += step_cost
    return actions, cost


def _failure(code: int, log: str, command: list[str], name: str) -> tuple[Status, str]:
    """Return the status and message of a Fast Downward run that returned no plan."""
    limit = next((command[i + 1] for i, word in enumerate(command) if word == "--overall-memory-limit"), None)
    if code in UNSOLVABLE_CODES:
        return Status.UNSOLVABLE, f"{name} proved the task unsolvable"
    if code in INCOMPLETE_CODES:
        return Status.GAVE_UP, f"{name}'s search ended without a plan (it is incomplete)"
    if code in MEMORY_CODES:
        return Status.MEMOUT, (f"{name} ran out of memory (its limit {limit}B, what was left under the solve's "
                               f"memory limit)" if limit else f"{name} ran out of memory")
    if code in TIME_CODES or code in CPU_LIMIT_CODES:
        return Status.TIMEOUT, f"{name} ran out of time"
    if code in KILLED_CODES:
        seconds = next((float(command[i + 1].rstrip("s")) for i, word in enumerate(command)
                        if word == "--overall-time-limit"), None)
        took = [float(x) for x in _PLANNER_TIME.findall(log)]
        if seconds is not None and took and took[-1] >= seconds - 1:
            return Status.TIMEOUT, f"{name} ran out of time (killed at its time limit of {seconds:g} s)"
        return Status.MEMOUT, (f"{name} was killed by the system (SIGKILL) "
                               + (f"after {took[-1]:g} s, " if took else "") + "most likely for its memory")
    last = next((line for line in reversed(log.splitlines()) if line.strip()), "no output")
    if code in UNSUPPORTED_CODES:
        why = next((line.strip() for line in log.splitlines() if "support" in line.lower()), last)
        raise UnsupportedTask(f"{name} does not support this task: {why}")
    raise InternalError(f"internal error: {name} failed with exit code {code}: {last}")

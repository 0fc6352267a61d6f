"""The engine's modes: what each needs of the model, the options it takes, and how it runs.

A mode is one search of :data:`~up_gnnplan.search.SEARCHES` guided by the model head it needs,
a composition of such modes (``auto``: a policy, then a best-first search with the time left),
or ``ground``, which binds an existential goal and hands the ground problem to the planner it is
given. The CLI's ``--mode`` choices and help, the engine's ``mode`` param and its checks,
``compare``'s ``gnnplan:MODE`` specs and ``tests/search/test_modes.py`` read :data:`MODES`: a
mode added here is offered and tested everywhere.

Each mode's ``run(mode, job)`` returns an :class:`Outcome` or raises (a limit reached, a model
that does not fit); the engine turns either into a UP status in one function and validates
every plan before it returns it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

VALUE, ACTIONS, EITHER = "value", "actions", "either"  # the model head a mode needs (EITHER: what the model has)
# The engine params every mode takes; a mode's ``options`` are the others it takes.
COMMON_OPTIONS = ("model", "threads", "memory_mb", "device", "action_elimination")
# Mode auto after a policy that gave up: the model alone, alternated with FF, or alternated with FF
# until it stalls (HANDOFF_OPTIONS say when), then LAMA-first with the time left (search/lama.py).
FALLBACKS = ("model", "model+ff", "model+lama")
HANDOFF = "model+lama"
HANDOFF_OPTIONS = ("handoff_share", "handoff_stall", "on_course", "handoff_from_walk", "handoff_reduced", "keep_goals")
HANDOFF_SHARE = 0.5  # the learned part's share where neither the user nor the model (gnnplan learn) gives one
# With handoff_from_walk: LAMA-first from the furthest state of the policy's walk may take this share of the time
# left; where it finds no plan there, LAMA-first from the initial state gets the rest (where a core is free, the two
# run at once, each with all the time left).
FROM_WALK_SHARE = 0.5
# With handoff_reduced: where at least this share of the task's objects is done in the walk's furthest state (every
# goal literal naming them holds: search.lama.reduced_problem_text), LAMA-first first plans from that state on the task
# without them, in REDUCED_SHARE of the time left, unless the whole task's translation is done already.
REDUCED_MIN_SHARE, REDUCED_SHARE = 0.25, 0.5
# The policy's step limit where the user gives none (engine param max_steps) and FF gives no estimate.
MAX_STEPS = 1000
# The policy's FF-relative step limit (engine param astray_factor) where neither the user nor the model
# (gnnplan learn records 0 for a policy that solved all its judge problems) gives one.
ASTRAY_FACTOR = 4.0
PLANNERS = ("lama-first", "gnnplan")  # who solves mode ground's ground problem
GROUNDING_OPTIONS = ("grounding_model", "static_filter", "planner", "max_groundings", "binding_beam",
                     "binding_entailment")


@dataclass
class Job:
    """One solve as a mode sees it: the problem, the engine's checked params, the limits, and the
    engine's log and metrics (``say(level, text)``, level ``info``, ``warning`` or ``error``)."""

    problem: Any  # a UP problem, or a Task already built (read from files: Task.from_files)
    params: dict
    limits: Any  # up_gnnplan.limits.Limits
    say: Callable[[str, str], None]
    metrics: dict
    kind: Any = None  # the problem's UP kind, computed once by the engine
    solve: Callable | None = None  # (problem, seconds) -> UP result: the engine in mode auto (ground's planner gnnplan)


@dataclass
class Outcome:
    """How a mode ended: a search's ``task`` and ``result`` (the engine shortens and validates its
    plan), or mode ground's ``plan`` (a UP plan, checked against the quantified goal)."""

    status: Any  # a search Status, or the UP status of ground's planner
    task: Any = None
    result: Any = None
    plan: Any = None


@dataclass(frozen=True)
class Mode:
    """One way to solve: the model head it needs, the engine params it takes, and how it runs."""

    name: str
    head: str  # VALUE, ACTIONS, or EITHER: it uses what the model has
    options: tuple[str, ...]  # engine params it takes besides COMMON_OPTIONS
    help: str
    run: Callable[["Mode", Job], Outcome]
    parts: tuple[str, ...] = ()  # a composed mode: the modes it may run
    order: Callable[[Any, dict], list[str]] | None = None  # a composed mode: its parts to run for a model, in turn
    counts: str = "expansions"  # what its log counts: "steps" (a policy) or "expansions"

    @property
    def searches(self) -> tuple[str, ...]:
        """The searches of :data:`~up_gnnplan.search.SEARCHES` this mode may run."""
        if not self.parts:
            return (self.name,)
        return tuple(dict.fromkeys(s for part in self.parts for s in MODES[part].searches))

    def takes(self, param: str) -> bool:
        return param in COMMON_OPTIONS or param in self.options

    def execute(self, job: Job) -> Outcome:
        """Run this mode on ``job``."""
        return self.run(self, job)

    def plan(self, model, params: dict) -> list["Mode"]:
        """Return the search modes to run with ``model``, each after the previous gave up; raise
        :class:`~up_gnnplan.runtime.ModelError` when the model lacks the head this mode needs."""
        if self.order is not None:
            return [MODES[name] for name in self.order(model, params)]
        if self.head != EITHER and not (model.has_value if self.head == VALUE else model.has_actions):
            from up_gnnplan.runtime import ModelError

            other = ", ".join(m.name for m in MODES.values() if m.head not in (self.head, EITHER))
            head = "a value" if self.head == VALUE else "an action"
            raise ModelError(f"mode '{self.name}' needs a model with {head} head; {model.path.name} computes "
                             f"{' and '.join(model.outputs)} (use mode auto or {other})")
        return [self]


def modes_taking(param: str) -> list[str]:
    """Return the names of the modes that take engine param ``param``."""
    return [name for name, mode in MODES.items() if mode.takes(param)]


# -- how the search modes run ---------------------------------------------------------------------

def run_searches(mode: Mode, job: Job) -> Outcome:
    """Build the task, load the model, and run ``mode``'s searches in turn while each gives up; with
    the hand-off (fallback ``model+lama``), LAMA-first then gets the time left (:func:`_hand_off`)."""
    from up_gnnplan.search import Status

    handoff = _handoff(mode, job.params, job.say)
    task, model, searches = _task_and_model(mode, job)
    # With the hand-off, the learned part (the policy and the learned search) has its share of the
    # time left: a slow policy (Rovers: 0.3 s a step) would otherwise spend all of it.
    result, walk, translation, reduced = _learned_part(job, mode, searches, task, model, handoff)
    beside = None if translation is None or translation.beside is None else translation.beside.found
    found_by = "lama-first" if beside is not None and result is beside else "learned"
    if reduced is not None and reduced.used:
        found_by = "walk+lama-first"
    try:
        if handoff and result.status is Status.GAVE_UP:
            result, found_by = _hand_off(job, task, walk if job.params["handoff_from_walk"] else None, translation,
                                         reduced)
    finally:
        for work in (translation, reduced):
            if work is not None:
                work.stop()
    job.metrics.update(expanded=str(result.expanded), evaluated=str(result.evaluated))
    if result.solved:
        job.metrics["found_by"] = found_by
    return Outcome(result.status, task=task, result=result)


def _task_and_model(mode: Mode, job: Job):
    """Return the job's task (built within its limits), its model and ``mode``'s searches for it,
    saying which model runs where."""
    from up_gnnplan.problems import Task
    from up_gnnplan.runtime.providers import device_note

    params, limits = job.params, job.limits
    limits.check("before loading the task")
    task = job.problem if isinstance(job.problem, Task) else Task(job.problem, check=limits.check, kind=job.kind)
    if task.note:
        job.say("info", task.note)
    limits.check("after building the task")
    expect_first_generation(task, limits)
    model = load_model(task, params, mode.head, limits)
    searches = mode.plan(model, params)  # refuses a mode the model has no head for
    job.metrics.update(model=str(model.path), provider=model.provider)
    job.say("info", f"model {model.path.name} ({model.architecture} for domain '{model.domain}') on {model.provider}")
    note = device_note(params["device"], model.provider)
    if note:
        job.say("warning", note)
    if task.has_existential_goal:
        job.say("warning", EXISTENTIAL_GOAL_WARNING)
    return task, model, searches


def _learned_part(job: Job, mode: Mode, searches: list[Mode], task, model, handoff: bool):
    """:func:`_learned_searches`, LAMA-first's translation started while the policy walked and its last search on the
    task without the done objects of a state of the walk (None: none; the caller stops them); FF's trial beside the
    policy, if it still runs, is stopped when they end."""
    from up_gnnplan.search.ff import stop_trial

    translations, reductions = [], []
    try:
        result, walk = _learned_searches(job, mode, searches, task, model, handoff, translations, reductions)
    except BaseException:
        for work in translations + reductions:
            work.stop()
        raise
    finally:
        stop_trial(task)
    for work in reductions[:-1]:
        work.stop()
    translation = translations[0] if translations and not translations[0].dropped else None
    return result, walk, translation, (reductions[-1] if reductions else None)


def _learned_searches(job: Job, mode: Mode, searches: list[Mode], task, model, handoff: bool, translations: list,
                      reductions: list):
    """Run the learned ``searches`` in turn while each gives up; return the last one's result and the policy's
    (its walk: the first search, where it is a policy; else None). With
    the hand-off they have ``handoff_share`` of the time left (a policy on course to the goal when it
    is spent has it extended: ``on_course``, :mod:`up_gnnplan.search.course`; a policy too slow to reach
    the goal in time stops at once and the learned fallback is skipped; one going round in circles, or stalling
    near the goal, stops at once), and the fallback search gives up once it stalls (``handoff_stall``), or at once
    where its pace allows it fewer expansions than that in its share (:class:`~.common.Progress`).
    Where a policy walks with a course and FF takes long to ground, FF is grounded beside the walk
    (:func:`~up_gnnplan.search.ff.initial_estimate`): its estimate sets the step limit when it comes,
    and the fallback waits for the same trial. A walk on course but too slow for the time left walks on while
    LAMA-first's translator runs beside it (with ``handoff_from_walk``; the translation is appended to
    ``translations``), and the learned fallback is then skipped: LAMA-first searches from the walk's state.
    Where the translation would take long and a core is free, the translator starts with the walk
    (:func:`~up_gnnplan.search.course.translate_at_once`), and a walk that gives up beside it skips the
    learned fallback too, where the translation is done or estimated to end before the deadline. A walk that goes on
    past its share has LAMA-first plan beside it on the task without the done objects of its state, where a core is
    free (with ``handoff_reduced``; :meth:`~up_gnnplan.search.course.Course._reduce_beside`; appended to
    ``reductions``): where that finds a plan first, the walk stops and its steps to that state and the plan are the
    result."""
    return _LearnedPart(job, mode, task, model, handoff, translations, reductions).run(searches)


class _LearnedPart:
    """The state of :func:`_learned_searches`: the learned part's share of the limits (``part``), FF's step limit
    for the policy, and LAMA-first's translations beside it."""

    def __init__(self, job: Job, mode: Mode, task, model, handoff: bool, translations: list, reductions: list):
        from up_gnnplan.search import Inputs

        self.job, self.task, self.model, self.handoff, self.translations = job, task, model, handoff, translations
        self.reductions = reductions
        self.params, self.limits = job.params, job.limits
        self.inputs = Inputs(task)
        self.share = _handoff_share(self.params, model, job.say) if handoff else None
        self.part = self.limits.share(self.share) if handoff else self.limits
        self.estimate = self.trial = None  # FF's estimate of the initial state where the step limit took one, or its Trial
        self.courses = handoff and self.params["on_course"] and self.share > 0  # a policy walks with a Course
        self.factor = _astray_factor(self.params, model, job.say) if mode.takes("astray_factor") else 0.0

    def run(self, searches: list[Mode]):
        from up_gnnplan.search import SEARCHES, SearchResult, Status

        job, model, part = self.job, self.model, self.part
        result = walk = None
        for search in searches:
            if self.handoff and (part.deadline.passed() or self.share == 0):
                job.say("info", f"{search.name}: skipped (the learned part's share of the time is spent)")
                return result or SearchResult(Status.GAVE_UP), walk
            kwargs = self._kwargs(search, result)
            began = time.perf_counter()
            result = SEARCHES[search.name](self.task, model if search.head == VALUE else model.scorer, limits=part,
                                           inputs=self.inputs, **kwargs)
            reduced = None if result.solved else self._reduced_plan(search, result, began)
            if reduced is not None:  # LAMA-first on the task without the done objects of the walk's state, beside it
                return reduced, result
            beside = None if result.solved else _found_beside(self.translations)
            if beside is not None:  # LAMA-first's search beside it found a plan first
                return self._overtaken(search, result, began, beside), (
                    walk if walk is not None or search.counts != "steps" else result)
            self._settle(result)
            course = kwargs.get("course")
            if course is not None and course.note:
                job.say("info", f"{search.name}: {course.note}")
            # a walk that went on beside LAMA-first's translator: LAMA-first searches next
            if course is not None and course.beside and not result.solved and part.deadline.end is not None:
                part.deadline.extend_to(min(part.deadline.end, time.perf_counter()))
            _say_result(job, search.name, result, search.counts, began)
            if result.solved:
                job.metrics["search"] = search.name  # which learned search found the plan (found_by "learned")
            if walk is None and search.counts == "steps":
                walk = result
            if result.status is not Status.GAVE_UP or self._fallback_skipped(course, result):
                break
        return result, walk

    def _kwargs(self, search: Mode, result) -> dict:
        """The options of ``search``, the learned search after a policy's ``result`` (None: it is the first)."""
        from up_gnnplan.search.course import Course, translate_at_once

        params, task = self.params, self.task
        kwargs = {option: params[option] for option in search.options}
        if kwargs.get("deferred") == "auto":  # deferred where the action head orders a state's children
            kwargs["deferred"] = self.model.has_actions
        if "max_steps" in kwargs:  # the user's limit, else MAX_STEPS; with astray_factor, FF's may be lower
            kwargs["max_steps"] = params["max_steps"] or MAX_STEPS
            if self.factor:
                kwargs["max_steps"], self.estimate, self.trial = _astray_steps(
                    task, kwargs["max_steps"], self.factor, self.limits, self.job.say, self.courses)
        if result is not None and params.get("seed_fallback"):  # the policy gave up: go on from its path
            kwargs["seed"] = result
        if not self.handoff:
            return kwargs
        if result is not None:  # the learned fallback, until it stalls or its share is spent
            kwargs["stall"] = params["handoff_stall"]
        elif search.counts == "steps" and self.courses:
            beside = params["handoff_from_walk"]
            # beside FF's trial, the free core is the trial's: the course asks for it when the trial has ended
            at_once = translate_at_once(task, self.limits, core=self.trial is None) if beside else ""
            kwargs["course"] = Course(task, self.part, self.limits, steps=params["max_steps"] is None,
                                      value=self.model if self.model.has_value else None, inputs=self.inputs,
                                      estimate=self.estimate, trial=self.trial, factor=self.factor, say=self.job.say,
                                      translate=self._translate if beside else None, at_once=at_once,
                                      keep=params["keep_goals"],
                                      reduce=self._reduce if beside and params["handoff_reduced"] else None)
        return kwargs

    def _translate(self, memory_share: float):
        from up_gnnplan.search.lama import Translation

        self.translations.append(Translation(self.task, self.limits, memory_share))
        return self.translations[-1]

    def _reduce(self, state, step: int, left: int, memory_share: float):
        """Start LAMA-first on the task without the done objects of ``state``, after ``step`` steps of the walk with
        ``left`` goal literals left (:class:`~up_gnnplan.search.lama.ReducedSearch`, ``memory_share`` of the memory
        left); None where fewer than :data:`REDUCED_MIN_SHARE` of the objects are done."""
        from up_gnnplan.search.lama import ReducedSearch

        reduced = _reduced_text(self.task, state)
        if reduced is None:
            return None
        self.reductions.append(ReducedSearch(self.task, self.limits, state, step, reduced, left, memory_share))
        return self.reductions[-1]

    def _reduced_plan(self, search: Mode, result, began: float):
        """The walk's steps to the state of LAMA-first's search on the task without its done objects, beside the walk
        (:meth:`_reduce`), and that search's plan, where it found one first that reaches the whole goal; else None."""
        from up_gnnplan.search import Status
        from up_gnnplan.search.lama import done_objects

        reduced = self.reductions[-1] if self.reductions else None
        if reduced is None or search.counts != "steps" or not reduced.planned():
            return None
        found = reduced.result(self.limits)
        plan = _reduced_after_walk(self.task, result, reduced, found) if found.solved else None
        if plan is None:
            why = found.message if not found.solved else "its plan starts at a state the walk took back"
            self.job.say("info", f"lama-first: beside the walk, from its step {reduced.step}: {why}")
            return None
        if self.part is not self.limits:
            self.limits.absorb(self.part)
        result.status = Status.GAVE_UP
        _say_result(self.job, search.name, result, search.counts, began)
        _say_result(self.job, "lama-first", found, "expansions", reduced.began,
                    f"(beside the walk, from its step {reduced.step}, without its {done_objects(reduced.done)} of "
                    f"{self.task.num_objects})")
        return plan

    def _overtaken(self, search: Mode, result, began: float, beside):
        """``search`` stopped with ``result``: LAMA-first's search ``beside`` it found a plan first; return that."""
        from up_gnnplan.search import Status

        if self.part is not self.limits:
            self.limits.absorb(self.part)
        result.status = Status.GAVE_UP
        _say_result(self.job, search.name, result, search.counts, began)
        found = beside.result(self.limits)
        _say_result(self.job, "lama-first", found, "expansions", beside.began,
                    "(beside the learned part, from the initial state)")
        return found

    def _settle(self, result) -> None:
        """Fold the part's peak memory back; a search stopped by the part's share of the time, or of the memory
        beside LAMA-first's translator, gave up (the solve goes on)."""
        from up_gnnplan.search import Status

        part, limits = self.part, self.limits
        if part is limits:
            return
        limits.absorb(part)
        if result.status is Status.TIMEOUT and not limits.deadline.passed():
            result.status = Status.GAVE_UP
            result.message = "; ".join(filter(None, [
                f"the learned part's share of the time ({part.deadline.seconds:.1f} s) spent", result.note]))
        elif result.status is Status.MEMOUT and self.translations and part.memory_mb != limits.memory_mb:
            result.status = Status.GAVE_UP  # its share of the memory beside the translator: LAMA-first goes on
            result.message = f"{result.message} (the walk's share beside LAMA-first's translator)"

    def _fallback_skipped(self, course, result) -> bool:
        """Whether the learned fallback after a search that gave up with ``result`` (a walk with ``course``, or None)
        is skipped, said in the log: the walk was hopeless, or gave up beside LAMA-first's translation, done or
        estimated to end before the deadline, or the hand-off plans next on the task without the done objects of
        its furthest state where FF is left out of the fallback (:meth:`_reduced_next`)."""
        if course is not None and course.too_slow:  # hopeless: LAMA-first gets the rest
            self.job.say("info", "the learned fallback is skipped: the time left goes to LAMA-first")
            return True
        if course is not None and course.translation_in_time():
            # Such a translation starts only where translating takes long, where an expansion of the fallback
            # values every successor of a large state: of the 14 fallbacks run after such a walk in the tier runs
            # recorded under benchmarks/results/, none found a plan; on medium Transport one spent 15 s before
            # LAMA-first planned from the walk's state in 1 s.
            self.job.say("info", "the learned fallback is skipped: LAMA-first's translation, started beside the walk, "
                                 "is searched next (from the walk's state)")
            return True
        return course is not None and self._reduced_next(result)

    def _reduced_next(self, walk) -> bool:
        """Whether the hand-off after the policy's ``walk`` plans first on the task without the done objects of its
        furthest state (``handoff_reduced``: a quarter of the objects or more done there), where FF is left out of
        the learned fallback (said in the log): the fallback is then the model alone, an expansion valuing every
        successor of a large state. Hard-lower Transport (108 packages): the walk came to 3 of 108 goal literals
        left, the fallback without FF made 179 expansions in 5.1 s, and LAMA-first on the task without the 105
        delivered packages, which takes 4.1-4.5 s, had 3.7 s."""
        from up_gnnplan.limits import GENERATING, LimitReached
        from up_gnnplan.search.ff import left_out
        from up_gnnplan.search.lama import done_objects

        if not (self.params["handoff_reduced"] and self.params["handoff_from_walk"]):
            return False
        try:
            why = left_out(self.task, self.limits, self.limits.uninterruptible(GENERATING))
        except LimitReached:
            return False
        start = furthest_state(self.task, walk) if why else None
        reduced = _reduced_text(self.task, start[1]) if start is not None else None
        if reduced is None:
            return False
        self.job.say("info", f"the learned fallback is skipped ({why}): LAMA-first plans next from step {start[0]} "
                             f"of the walk on the task without its {done_objects(len(reduced[1]))} of "
                             f"{self.task.num_objects}")
        return True


def _found_beside(translations: list):
    """LAMA-first's search beside the learned part (:class:`~up_gnnplan.search.lama.BesideSearch`), where it has
    ended with a plan; else None."""
    return next((t.beside for t in translations if t.beside is not None and t.beside.planned()), None)


def _handoff_share(params: dict, model, say) -> float:
    """The learned part's share of the time with the hand-off: the ``handoff_share`` the user gave, else
    the model's (``gnnplan learn`` records one where its judge found the policy weak), else
    :data:`HANDOFF_SHARE`."""
    return _given_or_recorded("handoff_share", params, model, HANDOFF_SHARE, say,
                              lambda share: f"the learned part's share of the time {share:g}", "sets another")


def _astray_factor(params: dict, model, say) -> float:
    """The policy's FF-relative step limit factor: the ``astray_factor`` the user gave, else the model's
    (``gnnplan learn`` records 0, no such limit, where its greedy policy solved every judge problem),
    else :data:`ASTRAY_FACTOR`."""
    return _given_or_recorded("astray_factor", params, model, ASTRAY_FACTOR, say,
                              lambda factor: "policy step limit " + ("not tied to FF" if factor == 0
                                                                     else f"{factor:g} x FF"), "sets one")


def _given_or_recorded(name: str, params: dict, model, default: float, say, describe, sets: str) -> float:
    """Engine param ``name`` as the user gave it, else as the model's training record gives it (said in the
    log: ``describe(value)``, the model's reason, the option that ``sets`` another), else ``default``."""
    if params[name] is not None:
        return params[name]
    recorded = getattr(model, name, None)
    if recorded is None:
        return default
    why = getattr(model, f"{name}_why", "") or "gnnplan learn chose it"
    say("info", f"{describe(recorded)}, as {model.path.name} records ({why}; --{name.replace('_', '-')} {sets})")
    return recorded


def _hand_off(job: Job, task, walk=None, translation=None, reduced=None):
    """Hand the time left to LAMA-first (:mod:`up_gnnplan.search.lama`); return its result and who found the plan
    (``lama-first``, or ``walk+lama-first``).

    With the policy's ``walk`` (engine param ``handoff_from_walk``), LAMA-first first plans from the walk's
    furthest state (:func:`furthest_state`: fewest goal literals left, fewer than the initial state's) in
    :data:`FROM_WALK_SHARE` of the time left, and the plan is the walk's prefix up to it and LAMA-first's
    plan from there; where it finds none there, LAMA-first plans from the initial state with the rest (where a core
    is free, both at once, each with all the time left: :func:`~up_gnnplan.search.lama.lama_first_from`).
    Medium Transport (44 packages): a learnt model's walk delivered 33 packages, then went round in circles;
    LAMA-first from the initial state needs about 40 s of the minute, from the walk's furthest state a few.
    ``translation``: LAMA-first's translation started while the walk went on, searched here. With engine param
    ``handoff_reduced``, LAMA-first first plans from that state on the task without its done objects (:func:`_reduced`)
    unless the whole task's translation is done; ``reduced``: such a search started beside the walk
    (:class:`~up_gnnplan.search.lama.ReducedSearch`), waited for instead where it is not far behind
    (:func:`_await_reduced`)."""
    from up_gnnplan.search.lama import lama_first, lama_first_from

    start = furthest_state(task, walk) if walk is not None else None
    began = time.perf_counter()
    if start is None and translation is None:
        result = lama_first(task, job.limits)
        _say_result(job, "lama-first", result, "expansions", began, "(the time left handed over)")
        return result, "lama-first"
    steps, state, left, total, cost = start or (0, None, 0, 0, 0.0)
    waited = False
    if state is not None and reduced is not None and not reduced.used:
        plan, waited = _await_reduced(job, task, walk, reduced, left)
        if plan is not None:
            return plan, "walk+lama-first"
        began = time.perf_counter()
    if state is not None and job.params["handoff_reduced"] and not waited and not (
            translation is not None and translation.done()):
        result = _reduced(job, task, steps, state, left, total)
        if result is not None and result.solved:
            return _after_walk(walk, steps, cost, result), "walk+lama-first"
        began = time.perf_counter()
    result, from_walk = lama_first_from(task, job.limits, state, FROM_WALK_SHARE, translation)
    where = (f"from step {steps} of the policy's walk ({left} of {total} goal literals left)" if from_walk else
             "from the initial state")
    _say_result(job, "lama-first", result, "expansions", began, f"(the time left handed over; {where})")
    if not (result.solved and from_walk):
        return result, "lama-first"
    return _after_walk(walk, steps, cost, result), "walk+lama-first"


def _after_walk(walk, steps: int, cost: float, result):
    """The plan of the ``walk``'s first ``steps`` steps (of ``cost``), then ``result``'s from the state they reach."""
    from up_gnnplan.search import SearchResult, Status

    return SearchResult(Status.SOLVED, walk.actions[:steps] + result.actions, cost + result.cost, result.expanded,
                        result.evaluated, result.seconds, f"the policy's first {steps} steps, then {result.message}")


def _reduced_after_walk(task, walk, reduced, found):
    """The plan of the ``walk``'s steps to the state that LAMA-first's search ``reduced`` (a
    :class:`~up_gnnplan.search.lama.ReducedSearch` beside it) started from, then ``found``, its plan; None where the
    walk's path (without the steps it took back) does not pass that state."""
    index = reduced.start.get_index()
    state, cost = task.initial_state(), 0.0
    for steps in range(len(walk.actions) + 1):
        if state.get_index() == index:
            reduced.used = True
            return _after_walk(walk, steps, cost, found)
        if steps < len(walk.actions):
            state, step_cost = walk.actions[steps].apply(state, return_cost=True)
            cost += step_cost
    return None


def _await_reduced(job: Job, task, walk, reduced, left: int):
    """At the hand-off, LAMA-first's search ``reduced`` on the task without the done objects of a state of the
    ``walk``, started beside it: where it has a plan that reaches the whole goal, or runs still from a state with at
    most 1 / REDUCE_AGAIN of the ``left`` goal literals of the walk's furthest state, wait for it in
    :func:`_reduced_share` of the time left.
    Return (the walk's steps and its plan, or None), and whether it was waited for (the hand-off then goes on without
    planning on the smaller task again)."""
    from up_gnnplan.search import Status
    from up_gnnplan.search.course import REDUCE_AGAIN
    from up_gnnplan.search.lama import done_objects

    if not (reduced.solved() or (not reduced.ended() and REDUCE_AGAIN * reduced.left <= left)):
        return None, False
    part = job.limits.share(_reduced_share(task, job.limits))
    try:
        found = reduced.wait(part)
    finally:
        job.limits.absorb(part)
    plan = _reduced_after_walk(task, walk, reduced, found) if found.solved else None
    if found.solved and plan is None:  # (a walk that took the steps to its state back)
        found.status, found.message = Status.GAVE_UP, f"{found.message}, from a state the walk took back"
    if found.status is Status.TIMEOUT and not job.limits.deadline.passed():
        found.status = Status.GAVE_UP  # its share of the time spent: the hand-off goes on
    _say_result(job, "lama-first", found, "expansions", reduced.began,
                f"(started beside the walk, from its step {reduced.step} ({reduced.left} goal literals left), without "
                f"its {done_objects(reduced.done)} of {task.num_objects})")
    return plan, True


def _reduced_text(task, state) -> tuple[str, list[str]] | None:
    """``task``'s problem from ``state`` without its done objects
    (:func:`~up_gnnplan.search.lama.reduced_problem_text`), or None where fewer than :data:`REDUCED_MIN_SHARE` of the
    objects are done."""
    from up_gnnplan.search.lama import reduced_problem_text

    reduced = reduced_problem_text(task, state)
    return None if reduced is None or len(reduced[1]) < REDUCED_MIN_SHARE * task.num_objects else reduced


def _reduced_share(task, limits) -> float:
    """The share of the time left for LAMA-first on the task without its done objects: :data:`REDUCED_SHARE`, or all
    of it where LAMA-first's translation of the whole task, which the rest is for, could not end in it (estimated
    at over :data:`~up_gnnplan.search.course.LATE_FACTOR` times the time left). Hard-lower Transport (108 packages;
    the whole translation takes 89 s): with 11.8 s left, half of it was 1.5 s short of the smaller task's 4.4 s."""
    from up_gnnplan.search.course import LATE_FACTOR, translation_seconds

    remaining = limits.deadline.remaining()
    if remaining is None:
        return REDUCED_SHARE
    return 1.0 if translation_seconds(task) > LATE_FACTOR * remaining else REDUCED_SHARE


def _reduced(job: Job, task, steps: int, state, left: int, total: int):
    """LAMA-first from the walk's furthest ``state`` (after ``steps`` steps) on the task without its done objects
    (:func:`~up_gnnplan.search.lama.lama_first_reduced`), in :func:`_reduced_share` of the time left; None where too few
    objects are done (:data:`REDUCED_MIN_SHARE`). Hard-lower Transport (108 packages, 80 locations): the whole task's
    translation takes 89 s; from a walk's state with 3 packages to deliver, the task without the 105 delivered ones
    is translated and solved in 4.1-4.5 s."""
    from up_gnnplan.search import Status
    from up_gnnplan.search.lama import done_objects, lama_first_reduced

    reduced = _reduced_text(task, state)
    if reduced is None:
        return None
    began = time.perf_counter()
    part = job.limits.share(_reduced_share(task, job.limits))
    try:
        result = lama_first_reduced(task, part, state, reduced)
    finally:
        job.limits.absorb(part)
    if result.status is Status.TIMEOUT and not job.limits.deadline.passed():
        result.status = Status.GAVE_UP  # its share of the time spent: the hand-off goes on
    _say_result(job, "lama-first", result, "expansions", began,
                f"(the time left handed over; from step {steps} of the policy's walk ({left} of {total} goal literals "
                f"left), without its {done_objects(len(reduced[1]))} of {task.num_objects})")
    return result


def furthest_state(task, walk):
    """Return ``(steps, state, goal literals left, goal literals, cost of the steps)`` of the state of ``walk``
    (a policy's result, from the initial state) that satisfies the most goal literals, the first such
    state where several do; None where no state satisfies more than the initial state, or where the goal is
    not a conjunction of literals (quantified or numeric conditions)."""
    from up_gnnplan.search.course import goal_literals

    literals = goal_literals(task)
    if not walk.actions or not literals:
        return None

    def left(state) -> int:
        return sum(1 for literal in literals if not state.literal_holds(literal))

    state = task.initial_state()
    best = (0, state, left(state), 0.0)
    cost = 0.0
    for step, action in enumerate(walk.actions, start=1):
        state, step_cost = action.apply(state, return_cost=True)
        cost += step_cost
        count = left(state)
        if count < best[2]:
            best = (step, state, count, cost)
    if best[0] == 0:
        return None
    return best[0], best[1], best[2], len(literals), best[3]


def _say_result(job: Job, name: str, result, counts: str, began: float, note: str = "") -> None:
    """Log how a search ended (an error line if it ran out of memory)."""
    from up_gnnplan.search import Status

    level = "error" if result.status is Status.MEMOUT else "info"
    said = " ".join(filter(None, [f"{name}: {result.status.value} after {result.expanded} {counts} in "
                                  f"{time.perf_counter() - began:.1f} s", note]))
    job.say(level, f"{said}: {result.message}" if result.message else said)


def _handoff(mode: Mode, params: dict, say) -> bool:
    """Return whether this solve hands the time left to LAMA-first once the learned search stalls
    (fallback ``model+lama``); without up-fast-downward it says so once and the learned search
    goes on alone (fallback ``model+ff``)."""
    if not mode.takes("fallback") or params["fallback"] != HANDOFF:
        return False
    from up_gnnplan.search.lama import NO_FAST_DOWNWARD, fast_downward_installed

    if not fast_downward_installed():
        say("warning", f"{NO_FAST_DOWNWARD}; the learned search (model+ff) goes on alone")
        return False
    return True


def load_model(task, params: dict, head: str, limits):
    """Return the ONNX model for ``task``: the ``model`` param, or the shipped one with ``head``."""
    from up_gnnplan.grounding.encoding import is_grounding_signature
    from up_gnnplan.models_zoo import LEARN_HINT, find_model, no_model_message, resolve
    from up_gnnplan.runtime import ModelError, load_value_function

    path = resolve(params["model"]) if params["model"] else find_model(task.signature, None if head == EITHER else head)
    if path is None:
        raise ModelError(no_model_message(task.signature))
    limits.check("before loading the model")
    model = load_value_function(path, threads=params["threads"], device=params["device"])
    if is_grounding_signature(model.signature):
        raise ModelError(f"{path}: a goal-grounding model (it values bindings of existential goals, not states); "
                         f"use it with mode 'ground' and grounding_model={str(path)!r} (--grounding-model)")
    try:
        model.check_signature(task.signature, task.source.describe(), task.action_signature)
    except ModelError as error:
        if params["model"]:
            raise
        raise ModelError(f"{error}: the shipped model has this domain's predicates but not its actions. "
                         f"{LEARN_HINT}") from None
    return model


def _auto_order(model, params: dict) -> list[str]:
    """Mode auto's parts: the action policy where the model has an action head (one pass per step),
    else the value policy (or the value policy where ``gnnplan learn``'s judge chose it for a model of
    both heads: ``first_policy``); then GBFS on V, or policy-best-first for an action model, dual with FF
    unless the ``fallback`` param is ``model`` (``model+lama``: then LAMA-first, in :func:`run_searches`)."""
    first = getattr(model, "first_policy", "action-policy" if model.has_actions else "policy")
    second = "gbfs" if model.has_value else "policy-best-first"
    return [first, second if params["fallback"] == "model" else f"dual-{second}"]


def _astray_steps(task, most: int, factor: float, limits, say, beside: bool = False):
    """The policy's step limit with ``astray_factor``: that many times FF's estimate of the initial
    state's cost plus 50 steps, at most ``most`` (``most`` where FF is left out: too many
    actions to ground, or a dead end it cannot rank); the estimate (None where there is none); and,
    with ``beside``, the :class:`~up_gnnplan.search.ff.Trial` that grounds FF beside the policy where
    it takes long (the limit is then ``most`` until the trial reports: :meth:`Course.awaited`)."""
    from up_gnnplan.limits import GENERATING, LimitReached
    from up_gnnplan.search.ff import ASTRAY_FLOOR, astray_limit, initial_estimate

    try:
        estimate, trial, note = initial_estimate(task, limits, limits.uninterruptible(GENERATING), beside)
    except LimitReached:  # the policy's own first check says so
        return most, None, None
    if trial is not None:
        say("info", f"policy step limit {most} until FF, grounded beside the policy, gives its estimate")
        return most, None, trial
    if estimate is None:
        if note.startswith("FF left out"):
            say("info", f"policy step limit {most} (no FF estimate: {note})")
        return most, None, None
    steps = astray_limit(most, factor, estimate)
    say("info", f"policy step limit {steps} ({factor:g} x FF's estimate {estimate:g} of the initial state + "
                f"{ASTRAY_FLOOR})")
    return steps, estimate, None


# Generating the applicable actions of a state, per action: 11 µs on a quiet machine, 25 µs on a
# loaded one (130,575 Childsnack actions in 1.4 s and 3.3 s), and up to 1 KB each while they are held.
GENERATION_SECONDS_PER_ACTION = 25e-6
GENERATION_KB_PER_ACTION = 1.0


def expect_first_generation(task, limits) -> None:
    """Say before any search how long the initial state's action generation will take, or refuse it.

    That generation is one pymimir call that cannot be interrupted, and the first of its kind has
    no earlier run to go by; the estimate of the state's applicable actions stands in for one, so
    a state with millions of them (Childsnack, 100 children: 37 s and 1.9 GB) is refused by name
    instead of breaking the limits.
    """
    from up_gnnplan.limits import GENERATING, MemoryLimitReached
    from up_gnnplan.problems.size import estimate_initial_actions

    actions = estimate_initial_actions(task)
    memory_mb = actions * GENERATION_KB_PER_ACTION / 1024
    headroom = limits.headroom_mb()
    if headroom is not None and memory_mb > headroom:
        raise MemoryLimitReached(f"memory limit of {limits.memory_mb} MB reached before generating the actions of "
                                 f"the initial state: about {actions:,} of them would take about {memory_mb:,.0f} MB, "
                                 f"more than the {headroom:,.0f} MB left")
    limits.uninterruptible(GENERATING).expect(actions * GENERATION_SECONDS_PER_ACTION,
                                              f"estimated for its about {actions:,} applicable actions")


EXISTENTIAL_GOAL_WARNING = (
    "the goal has existentially quantified conjuncts, which the model cannot see (they give it no goal atoms): "
    "the policy and the search are guided by the rest of the goal only, so plans may be long or not found; "
    "mode 'ground' binds them with a learned goal-grounding model first (Funkquist et al. 2024)")


# -- how mode ground runs ---------------------------------------------------------------------------

def run_ground(mode: Mode, job: Job) -> Outcome:
    """Bind the goal, then solve the ground problem with the planner the ``planner`` param names."""
    from up_gnnplan.grounding.solve import planner, solve_by_grounding

    from up_gnnplan.problems import Task

    solve = planner(job.params["planner"], job.solve)  # refused here, before the binding's work
    problem = job.problem
    if isinstance(problem, Task):  # the binding works on the UP problem: read the files with UP's reader
        if problem.from_files_only:
            job.say("info", f"mode ground reads {problem.source.describe()} with UP's reader (the goal binding "
                            "works on the UP problem)")
        job.limits.check("before reading the problem with UP's reader")
        problem = problem.up_problem
    status, plan = solve_by_grounding(problem, job.params, solve, job.limits, job.say, job.metrics)
    return Outcome(status, plan=plan)


# -- the registry ---------------------------------------------------------------------------------

def _search(name: str, head: str, options: tuple[str, ...], help: str, counts: str = "expansions") -> Mode:
    return Mode(name, head, options, help, run_searches, counts=counts)


_SEARCH_MODES = [
    _search("policy", VALUE, ("max_steps", "symmetry"),
            "the greedy policy of V: the unvisited successor of lowest value", counts="steps"),
    _search("gbfs", VALUE, ("symmetry", "deferred"), "greedy best-first search on V with duplicate detection"),
    _search("dual-gbfs", VALUE, ("symmetry", "deferred"), "GBFS alternating between V and the FF heuristic"),
    _search("action-policy", ACTIONS, ("max_steps", "backtrack", "hide_done"),
            "the greedy policy of an action head: the best-scored action with an unvisited successor, going back "
            "along its path where there is none", counts="steps"),
    _search("policy-best-first", ACTIONS, ("symmetry",), "best-first search on the action head's log-probabilities"),
    _search("dual-policy-best-first", ACTIONS, ("symmetry",), "policy-best-first alternating with the FF heuristic"),
]
_AUTO_PARTS = ("action-policy", "policy", "dual-gbfs", "gbfs", "dual-policy-best-first", "policy-best-first")
_AUTO_OPTIONS = tuple(dict.fromkeys([o for m in _SEARCH_MODES for o in m.options]
                                    + ["fallback", *HANDOFF_OPTIONS, "astray_factor", "seed_fallback"]))

MODES: dict[str, Mode] = {
    "auto": Mode("auto", EITHER, _AUTO_OPTIONS,
                 "the action policy (the value policy for a value model), then, if it gave up, GBFS on V "
                 "(policy-best-first for an action model) with the time left (fallback model+lama: until it "
                 "stalls, then LAMA-first)", run_searches, parts=_AUTO_PARTS,
                 order=_auto_order),
    **{mode.name: mode for mode in _SEARCH_MODES},
    "ground": Mode("ground", EITHER, GROUNDING_OPTIONS + _AUTO_OPTIONS,
                   "bind the existential goal with a goal-grounding model, then solve the ground problem with the "
                   "planner (LAMA-first, or mode auto)", run_ground, parts=("auto",)),
}

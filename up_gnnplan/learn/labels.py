"""Label one training problem within its share of the budget: the job of ``gnnplan learn``'s labelling stage.

In order of cost:

1. expand the whole state space when it has at most ``max_states`` states, counted within
   :data:`EXPAND_SHARE` of the share (exact V* of every state, all transitions: the best labels);
2. otherwise take an optimal plan from Fast Downward (A* with LM-cut, the driver up-fast-downward ships)
   within the time left of the share: its states get exact V* for free. Measured against the
   ``gnnplan dataset`` labeller's A* with h^max on the learning-practice problems: the same on
   Goldminer (p30: 17.6 s against 28.0 s, p40: 5.5 s against 6.0 s), but Hiking p12 took 4.7 s
   against 29.4 s. Where LM-cut does not support the task (conditional effects: Fast Downward's exit
   code 34), Fast Downward's A* with h^max (blind A* where the domain derives predicates, which h^max
   may not bound from below) in the time left: on Briefcase of 7 objects and 5 locations it found the
   optimal plan in 12.7 s, where pymimir's A* with h^max found none in 54 s. Without Fast Downward
   (or when it fails otherwise) pymimir's A* is used;
3. the successors of the plan's states are labelled by a bounded optimal search each, one per class of
   symmetric successors (the same state up to renaming interchangeable objects, so the same V*)
   (:func:`~up_gnnplan.datasets.optimal.label_optimal`: an expansion limit and a small time limit,
   all within the share); those a limit stops are left out, never guessed (an action head's
   training counts their actions as non-optimal: :mod:`up_gnnplan.learn.recipe`).

4. where no optimal plan is found in time (``labels="auto"``, the default of ``gnnplan learn``, or
   ``"satisficing"``), LAMA-first's plan, shortened by action elimination, in the time left: its states
   get its suffix costs, an upper bound on V* (label ``satisficing-plan``), and its actions are their
   states' targets; no successor is searched. With ``auto`` A* with LM-cut keeps the share it has
   without them (:data:`PLAN_SHARE`), and LAMA-first has what is left, at least :data:`LAMA_SECONDS`
   (past the share if need be); with ``satisficing`` A* gets :data:`OPTIMAL_SHARE`.

Fast Downward translates the task once for both of its planners (:func:`translate`). A problem whose plan
is not found within its share is reported as ``too-large``; a proven unsolvable one as ``unsolvable``.
The job writes its dataset itself (to a temporary name, then renamed), so that a run that is stopped
keeps the problems it finished.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from up_gnnplan.errors import StateLimitExceeded, UnsolvableProblemError

# Counting the states to expand takes at most this share of the problem's time (at least a second): on pddlgym's
# Footwear (about 800,000 ground actions) counting 20,000 states took 5.9 s, more than its first shares.
EXPAND_SHARE = 0.3
# Successor searches: small limits, as their labels only refine the plan states' action targets.
SUCCESSOR_EXPANSIONS = 5_000
SUCCESSOR_SECONDS = 1.0
# They are searched from the plan's initial state on. Searched from the goal's end instead, and left out after 8 misses
# in a row, they found far more labels (Elevators and Hiking of 13 objects: 84 and 93 searches in a row found their
# plans from the goal's end, where the share ran out among the misses from the other end), but Hiking's models (30
# minutes, two seeds each) then solved 0/10 and 0/10 of its test set against 6/10 and 3/10
# (benchmarks/results/learn_eval/practice-1201/): near the goal every optimal action a target, further back only the
# plan's, which the action head reads as a difference between the states.
# The plan search gets at most this share of the problem's time; the rest is for its successors.
PLAN_SHARE = 0.8
# With satisficing labels, A* with LM-cut gets this share of the problem's time; LAMA-first the rest.
OPTIMAL_SHARE = 0.5
LABELS = ("auto", "optimal", "satisficing")  # what gnnplan learn --labels takes
# label_one's ``labels`` also takes "lama-first": straight to LAMA-first's plan where the space is too large to
# expand (the labelling stage asks for it once A* with LM-cut has failed on several problems in a row).
MODES = LABELS + ("lama-first",)


# With labels auto, LAMA-first gets at least this many seconds where A* with LM-cut found no plan, past the problem's
# share if need be: Fast Downward's limit is in whole seconds, after the reserve for the plan's check, and with 1 s
# it gives up at once (LAMA-first on Gripper of 40 balls: 0.3 s given 3 s; "out of time" after 0.1 s given 2.5 s).
# Leaving them to LAMA-first out of the share took small problems' optimal plans away.
LAMA_SECONDS = 4.0
NO_FAST_DOWNWARD = "no up-fast-downward"  # Fast Downward missing: pymimir's A* labels instead


def optimal_share(labels: str) -> float:
    """The share of a problem's time A* with LM-cut gets under ``labels``."""
    return OPTIMAL_SHARE if labels == "satisficing" else PLAN_SHARE


def fast_downward_plan(task, seconds: float, alias: str = "seq-opt-lmcut", translation=None):
    """Return (status, plan) from Fast Downward's ``alias`` (A* with LM-cut, or ``lama-first``) within
    ``seconds`` and the default memory limit (:func:`up_gnnplan.search.lama.fast_downward`: on the
    task's own PDDL, its plan mapped to pymimir's ground actions): status ``solved`` with the actions,
    ``unsolvable``, ``timeout``, or ``unavailable`` (no up-fast-downward, Fast Downward failed or ran
    out of memory). ``translation``: the task translated already (:func:`translate`), whose search alone then
    runs within ``seconds``."""
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.limits import Limits
    from up_gnnplan.search.lama import UnsupportedTask, fast_downward

    limits = Limits(max(1.0, seconds))

    def run(planner):
        return translation.search(limits, planner) if translation is not None else \
            fast_downward(task, limits, planner, missing=NO_FAST_DOWNWARD)

    try:
        try:
            result = run(alias)
        except UnsupportedTask:  # LM-cut and conditional effects: an admissible search that takes them, in the time left
            if alias != "seq-opt-lmcut":
                raise
            result = run(optimal_fallback(task))
    except GnnplanError:  # not installed, or an exit code that says Fast Downward failed: pymimir's A* instead
        return "unavailable", None
    return _outcome(result)


def translate(task, seconds: float):
    """Start Fast Downward's translator on ``task`` and wait for it within ``seconds``; return (status,
    translation): ``translated`` with the :class:`~up_gnnplan.search.lama.Translation` to search (the caller
    stops it), else ``unsolvable``, ``timeout`` or ``unavailable`` and None.

    A task is translated once for its A* with LM-cut and its LAMA-first: on pddlgym's Footwear (73-83
    objects, 60,000-105,000 operators) the translator takes 5-10 s, LAMA-first's search then under a
    second, and a second translation for LAMA-first had left every problem unlabelled but one."""
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.limits import Limits, TimeLimitReached
    from up_gnnplan.search.lama import Translation

    limits = Limits(max(1.0, seconds))
    try:
        translation = Translation(task, limits, missing=NO_FAST_DOWNWARD)
    except TimeLimitReached:  # too little time left to start it
        return "timeout", None
    except GnnplanError:
        return "unavailable", None
    try:
        failed = translation.translated(limits)
    except GnnplanError:  # an exit code that says the translator failed
        translation.stop()
        return "unavailable", None
    if failed is not None:
        translation.stop()
        return _outcome(failed)[0], None
    return "translated", translation


def _outcome(result) -> tuple:
    from up_gnnplan.search.common import Status

    if result.status is Status.SOLVED:
        return "solved", result.actions
    return {Status.UNSOLVABLE: "unsolvable", Status.TIMEOUT: "timeout"}.get(result.status, "unavailable"), None


def optimal_fallback(task) -> str:
    """Fast Downward's optimal planner for a task that LM-cut does not support: A* with h^max, or blind A*
    where Fast Downward's translation has axioms (Fast Downward's h^max takes them, but may then
    overestimate): the domain derives predicates, or a condition quantifies universally (``forall``,
    or ``exists`` under a negation), which the translator compiles into axioms."""
    from up_gnnplan.problems.syntax import pddl_code, read_domain, scan_fragment

    return "seq-opt-hmax" if scan_fragment(read_domain(pddl_code(task.domain_text), "<domain>")).axioms is None \
        else "seq-opt-blind"


def label_one(domain: str, problem: str, seconds: float, max_states: int, output: str, labels: str = "optimal",
              fair: float | None = None, phase=None) -> dict:
    """Label ``problem`` within ``seconds``; write its dataset to ``output`` (``.npz``) and return a summary.

    The summary: ``status`` (``expanded``, ``optimal-plan``, ``satisficing-plan``, ``too-large``,
    ``unsolvable``), ``states``, ``plan_length`` (steps of the initial state's labelled plan),
    ``seconds``, ``note``. ``labels``: ``auto`` or ``satisficing`` (LAMA-first's plan where A* finds none in
    time), ``optimal`` (no satisficing plans), or ``lama-first`` (no optimal plan tried). ``fair``: the
    problem's fair share of the labelling time, where ``seconds`` is more (the labelling stage grew it after
    a problem too large for its share): the extra time is for the plan's search, and the successors of an
    optimal plan found early stop at :func:`successor_end`.
    """
    if labels not in MODES:
        raise ValueError(f"unknown labels {labels!r}; choose one of {', '.join(MODES)}")
    from up_gnnplan.datasets.expansion import expand
    from up_gnnplan.limits import Limits, TimeLimitReached
    from up_gnnplan.problems import load_task

    start = time.perf_counter()
    deadline = start + seconds
    task = load_task(domain, problem)
    try:
        labelled, method = expand(task, max_states, limits=Limits(max(1.0, EXPAND_SHARE * seconds))), "expanded"
    except (StateLimitExceeded, TimeLimitReached):
        labelled = None
    if labelled is not None and labelled.initial_value == float("inf"):
        return _summary("unsolvable", start, note="no goal state is reachable from the initial state")
    if labelled is None:
        began = time.perf_counter()
        status, translation = translate(task, deadline - began)
        try:
            if status == "unsolvable":
                return _summary("unsolvable", start, note="proven unsolvable by Fast Downward's translator")
            if status == "timeout":
                return _summary("too-large", start, note=f"Fast Downward's translator did not finish within its "
                                                         f"share ({seconds:.0f} s)")
            labelled = _plan_labels(task, domain, problem, labels, (start, began, deadline), seconds, output,
                                    translation, fair)
        finally:
            if translation is not None:
                translation.stop()
        if isinstance(labelled, dict):  # a summary: labelled by LAMA-first's plan, or not at all
            return labelled
        method = "optimal-plan"
    return _write(task, domain, problem, labelled, method, start, output)


def successor_end(start: float, found: float, deadline: float, fair: float | None) -> float:
    """When the successor searches along an optimal plan found at ``found`` stop: at the end of the problem's fair
    share (``start + fair``), or :data:`PLAN_SHARE`'s remainder of it after ``found`` where that is later, never
    past ``deadline``. Without a fair share, at ``deadline``.

    The shares grow after a problem too large for its own, so that A* gets the time the next, larger problems
    need; the successors, which only refine the plan states' action targets, do not get it. Rovers (30 minutes,
    labels auto): where they got it, the successors of one problem's plan took up to 85 s (169 of them left out
    all the same), and 40 of 95 problems were labelled.
    """
    if fair is None:
        return deadline
    return min(deadline, max(start + fair, found + (1.0 - PLAN_SHARE) * fair))


def _plan_labels(task, domain, problem, labels: str, times: tuple, seconds: float, output: str, translation,
                 fair: float | None = None):
    """Label ``task`` along an optimal plan (return its labelled states) or LAMA-first's (return the summary of
    the dataset written), or return the summary of why not. ``times``: the clock values of the job's start,
    the translator's start and the share's end; ``translation``: the task translated (None: Fast Downward is
    not at hand, and pymimir's A* searches); ``fair``: as :func:`label_one` takes it."""
    from up_gnnplan.datasets.optimal import label_optimal

    start, began, deadline = times
    if labels == "lama-first":
        return _satisficing(task, domain, problem, start, deadline, seconds, output, translation)
    # A* gets its share of the time since the translator began, as when it translated the task itself.
    optimal_end = began + (deadline - began) * optimal_share(labels)
    status, plan = ("unavailable", None) if translation is None else \
        fast_downward_plan(task, optimal_end - time.perf_counter(), translation=translation)
    if status == "unsolvable":
        return _summary("unsolvable", start, note="proven unsolvable by Fast Downward")
    if status == "timeout" and labels != "optimal":
        if labels == "auto":
            deadline = max(deadline, time.perf_counter() + LAMA_SECONDS)
        return _satisficing(task, domain, problem, start, deadline, seconds, output, translation)
    if status == "timeout" or (status == "solved" and time.perf_counter() >= deadline):
        return _summary("too-large", start, note=f"no optimal plan within its share ({seconds:.0f} s)")
    if status == "solved":
        deadline = successor_end(start, time.perf_counter(), deadline, fair)
    try:
        return label_optimal(task, heuristic="hmax", plan=plan if status == "solved" else None,
                             plan_time_limit=max(0.1, (deadline - time.perf_counter()) * PLAN_SHARE),
                             successor_time_limit=SUCCESSOR_SECONDS,
                             successor_expansion_limit=SUCCESSOR_EXPANSIONS, deadline=deadline)
    except UnsolvableProblemError as error:
        proven = "proven unsolvable" in str(error)
        return _summary("unsolvable" if proven else "too-large", start,
                        note="proven unsolvable by A*" if proven else
                        f"no optimal plan within its share ({seconds:.0f} s)")


def _satisficing(task, domain, problem, start: float, deadline: float, seconds: float, output: str,
                 translation=None) -> dict:
    """Label ``task`` by LAMA-first's plan, shortened by action elimination, in the time left (see the module's
    step 4); ``too-large`` when no plan comes in time."""
    from up_gnnplan.datasets.optimal import label_optimal
    from up_gnnplan.search.elimination import eliminate_actions

    status, plan = fast_downward_plan(task, (deadline - time.perf_counter()) * PLAN_SHARE, alias="lama-first",
                                      translation=translation)
    if status == "unsolvable":
        return _summary("unsolvable", start, note="proven unsolvable by Fast Downward")
    if status != "solved" or time.perf_counter() >= deadline:
        return _summary("too-large", start, note=f"no plan within its share ({seconds:.0f} s), optimal or LAMA-first's")
    shortened = eliminate_actions(task, plan, deadline=deadline)
    labelled = label_optimal(task, plan=shortened.actions, satisficing=True, deadline=deadline)
    note = f"LAMA-first's plan, {shortened.removed} of {len(plan)} actions left out" if shortened.removed else \
        "LAMA-first's plan"
    return _write(task, domain, problem, labelled, "satisficing-plan", start, output, note)


def _write(task, domain, problem, labelled, method: str, start: float, output: str, note: str = "") -> dict:
    """Write ``labelled`` (the states of ``problem``) as a one-problem dataset to ``output``; return its summary."""
    from up_gnnplan import __version__
    from up_gnnplan.datasets.build import _domain_name
    from up_gnnplan.datasets.store import Dataset, ProblemRecord, file_sha256
    from up_gnnplan.states.atoms import StateAtoms

    atoms = StateAtoms(task)
    dataset = Dataset(_domain_name(domain), task.signature, package_version=__version__,
                      action_signature=task.action_signature, types=task.types)
    left_out = getattr(labelled, "left_out", {})
    record = ProblemRecord(
        name=Path(problem).stem, domain_file=str(domain), problem_file=str(problem),
        domain_sha256=file_sha256(Path(domain)), problem_sha256=file_sha256(Path(problem)),
        object_names=task.object_names, static=atoms.static, goal=atoms.goal, negative_goal=atoms.negative_goal,
        method=method,
        stats={"states": len(labelled), "dead_ends": int(labelled.dead_end.sum()),
               "initial_value": labelled.initial_value, "objects": task.num_objects,
               **{f"left_out_by_{limit}_limit": count for limit, count in left_out.items()}})
    dataset.add_problem(record, labelled.states, labelled.value, labelled.steps, labelled.dead_end, labelled.is_goal,
                        labelled.label, labelled.transitions)
    partial = Path(output).with_name(Path(output).stem + ".partial.npz")
    dataset.save(partial)
    os.replace(partial, output)
    steps = int(labelled.steps[labelled.initial]) if len(labelled) else 0
    if sum(left_out.values()):
        note = f"{sum(left_out.values())} successors left out by the limits"
    return _summary(method, start, states=len(labelled), plan_length=steps, note=note)


def _summary(status: str, start: float, states: int = 0, plan_length: int = 0, note: str = "") -> dict:
    return {"status": status, "states": states, "plan_length": plan_length,
            "seconds": round(time.perf_counter() - start, 2), "note": note}

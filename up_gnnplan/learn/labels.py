"""Label one training problem within its share of the budget: the job of ``gnnplan learn``'s labelling stage.

In order of cost:

1. expand the whole state space when it has at most ``max_states`` states (exact V* of every
   state, all transitions: the best labels);
2. otherwise take an optimal plan from Fast Downward (A* with LM-cut, the driver up-fast-downward ships)
   within the time left of the share: its states get exact V* for free. Measured against the
   ``gnnplan dataset`` labeller's A* with h^max on the learning-practice problems: the same on
   Goldminer (p30: 17.6 s against 28.0 s, p40: 5.5 s against 6.0 s), but Hiking p12 took 4.7 s
   against 29.4 s. Without Fast Downward (or when it refuses the task) pymimir's A* is used;
3. the successors of the plan's states are labelled by a bounded optimal search each
   (:func:`~up_gnnplan.datasets.optimal.label_optimal`: an expansion limit and a small time limit,
   all within the share); those a limit stops are left out, never guessed, so their actions are
   "unknown" to an action head rather than wrongly "not optimal".

A problem whose plan is not found within its share is reported as ``too-large``; a proven
unsolvable one as ``unsolvable``. The job writes its dataset itself (to a temporary name, then
renamed), so that a run that is stopped keeps the problems it finished.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from up_gnnplan.errors import StateLimitExceeded, UnsolvableProblemError

# Successor searches: small limits, as their labels only refine the plan states' action targets.
SUCCESSOR_EXPANSIONS = 5_000
SUCCESSOR_SECONDS = 1.0
# The plan search gets at most this share of the problem's time; the rest is for its successors.
PLAN_SHARE = 0.8


def fast_downward_plan(task, seconds: float):
    """Return (status, plan) from Fast Downward's A* with LM-cut within ``seconds`` and the default
    memory limit (:func:`up_gnnplan.search.lama.fast_downward`: on the task's own PDDL, its plan
    mapped to pymimir's ground actions): status ``solved`` with the actions, ``unsolvable``,
    ``timeout``, or ``unavailable`` (no up-fast-downward, Fast Downward failed or ran out of memory)."""
    from up_gnnplan.errors import GnnplanError
    from up_gnnplan.limits import Limits
    from up_gnnplan.search.common import Status
    from up_gnnplan.search.lama import fast_downward

    try:
        result = fast_downward(task, Limits(max(1.0, seconds)), "seq-opt-lmcut", missing="no up-fast-downward")
    except GnnplanError:  # not installed, or an exit code that says Fast Downward failed: pymimir's A* instead
        return "unavailable", None
    if result.status is Status.SOLVED:
        return "solved", result.actions
    return {Status.UNSOLVABLE: "unsolvable", Status.TIMEOUT: "timeout"}.get(result.status, "unavailable"), None


def label_one(domain: str, problem: str, seconds: float, max_states: int, output: str, phase=None) -> dict:
    """Label ``problem`` within ``seconds``; write its dataset to ``output`` (``.npz``) and return a summary.

    The summary: ``status`` (``expanded``, ``optimal-plan``, ``too-large``, ``unsolvable``),
    ``states``, ``plan_length`` (V* steps of the initial state), ``seconds``, ``note``.
    """
    from up_gnnplan import __version__
    from up_gnnplan.datasets.build import _domain_name
    from up_gnnplan.datasets.expansion import expand
    from up_gnnplan.datasets.optimal import label_optimal
    from up_gnnplan.datasets.store import Dataset, ProblemRecord, file_sha256
    from up_gnnplan.problems import load_task
    from up_gnnplan.states.atoms import StateAtoms

    start = time.perf_counter()
    deadline = start + seconds
    task = load_task(domain, problem)
    try:
        labelled, method = expand(task, max_states), "expanded"
    except StateLimitExceeded:
        labelled = None
    if labelled is not None and labelled.initial_value == float("inf"):
        return _summary("unsolvable", start, note="no goal state is reachable from the initial state")
    if labelled is None:
        left = deadline - time.perf_counter()
        status, plan = fast_downward_plan(task, left * PLAN_SHARE)
        if status == "unsolvable":
            return _summary("unsolvable", start, note="proven unsolvable by Fast Downward")
        if status == "timeout" or (status == "solved" and time.perf_counter() >= deadline):
            return _summary("too-large", start, note=f"no optimal plan within its share ({seconds:.0f} s)")
        try:
            labelled = label_optimal(task, heuristic="hmax", plan=plan if status == "solved" else None,
                                     plan_time_limit=max(0.1, (deadline - time.perf_counter()) * PLAN_SHARE),
                                     successor_time_limit=SUCCESSOR_SECONDS,
                                     successor_expansion_limit=SUCCESSOR_EXPANSIONS, deadline=deadline)
        except UnsolvableProblemError as error:
            proven = "proven unsolvable" in str(error)
            return _summary("unsolvable" if proven else "too-large", start,
                            note="proven unsolvable by A*" if proven else
                            f"no optimal plan within its share ({seconds:.0f} s)")
        method = "optimal-plan"
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
    note = f"{sum(left_out.values())} successors left out by the limits" if sum(left_out.values()) else ""
    return _summary(method, start, states=len(labelled), plan_length=steps, note=note)


def _summary(status: str, start: float, states: int = 0, plan_length: int = 0, note: str = "") -> dict:
    return {"status": status, "states": states, "plan_length": plan_length,
            "seconds": round(time.perf_counter() - start, 2), "note": note}

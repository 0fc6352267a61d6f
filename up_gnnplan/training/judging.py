"""How a training run scores an epoch: the validation error on its monitored states and, with
validation problems, the greedy policy's runs on them (the judge).

A lower score is better: ``(validation error,)``, or ``(-problems solved, steps, validation error)``
with validation problems, so that an epoch that solves more of them wins, then one with fewer steps
in total, then one with a lower validation error. With ``judge_ties="error"`` the epochs that solve
as many are compared by the validation error before the steps (:func:`score_key`): on Rovers and
Transport the greedy policy solved 1 of 4 judge problems in every epoch, the steps of that one run
chose an overfit epoch (13 of 16, a training loss of 0.001), and the action error on held-out
labelled problems chose one whose model solved twice as many test problems
(``benchmarks/results/learn_eval``). With ``judge_ties="error-unless-all"`` (``gnnplan learn``'s
since) the steps still decide among epochs that solve every judge problem (:func:`score_key`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from up_gnnplan.grounding.encoding import is_grounding_signature
from up_gnnplan.training.adapters import TorchActionScorer, TorchValueFunction

if TYPE_CHECKING:
    from up_gnnplan.training.run import TrainingRun


def epoch_score(run: TrainingRun, epoch: int) -> tuple:
    """Return the score of ``run.model`` after ``epoch`` (see the module docstring).

    The evaluation and the judge are timed on ``run.budget``, and the judge ends before the time the
    final steps need, and after ``config.judge_seconds`` where that is set; an epoch whose judge a time
    limit stopped is noted in ``run.progress``.
    """
    budget = run.budget
    # The first states of the fixed sample, as many as the time left lets the evaluation value (all, unless an
    # epoch's steps already took most of it: pddlgym's Maze, whose states of 1,200 objects take 0.6 s each),
    # valued in chunks until the time for the judge and the final steps is reached.
    monitor = run.monitor[:budget.evaluable_states(run.monitored(), run.final_states)]
    judge = budget.judge or run.config.judge_seconds
    until = budget.deadline.end - budget.final_reserve(run.final_states) - judge
    began = time.perf_counter()
    val_mae, valued = _monitored_error(run, monitor, until)
    budget.timed_evaluation(time.perf_counter() - began, valued)
    if not run.validation_tasks:
        return (val_mae,)
    limits = budget.judge_limits(run.final_states, run.config.judge_seconds)
    began = time.perf_counter()
    runtime = run.judge_runtime.runtime(run.model, run.encoding) if run.judge_runtime is not None else None
    walks = []
    solved, steps_total = policy_validation(run.model, run.encoding, run.validation_tasks, run.config.policy_steps, limits,
                                            runtime=runtime, walks=walks)
    if walks:
        run.progress.judge_walks[str(epoch)] = walks
    budget.judge = time.perf_counter() - began
    if limits.deadline.passed():
        run.progress.judged_in_part.append(epoch)
    return (-solved, steps_total, val_mae)


# States valued at once by an epoch's evaluation, between two looks at the clock: at most this many, and at
# most what EVAL_CHUNK_SECONDS values at the measured (or guessed) cost of a state.
EVAL_CHUNK, EVAL_CHUNK_SECONDS = 128, 2.0


def _monitored_error(run: TrainingRun, monitor, until: float) -> tuple[float, int]:
    """Return the objective's error on the states of ``monitor``, valued in chunks (:data:`EVAL_CHUNK`) in order
    until the clock passes ``until`` (at least :data:`~up_gnnplan.training.budget.MIN_EPOCH_STATES` of them), and
    how many were valued: the chunks' errors weighted by the states each counts (those the objective selects)."""
    from up_gnnplan.training.budget import MIN_EPOCH_STATES, timed_parts

    objective, data = run.objective, run.monitor_data
    total = counted = 0.0
    done = 0
    for chunk in timed_parts(monitor, run.budget.state_seconds(), EVAL_CHUNK, EVAL_CHUNK_SECONDS, until,
                             MIN_EPOCH_STATES):
        weight = len(objective.select(data, chunk))
        if weight:
            total += weight * objective.error(run.model, run.encoding, data, chunk)
            counted += weight
        done += len(chunk)
    if not counted:  # nothing the objective counts: its error of no states
        return objective.error(run.model, run.encoding, data, monitor[:done]), done
    return total / counted, done


def score_key(score: tuple, ties: str = "steps", judges: int = 0) -> tuple:
    """Return what epochs' scores (:func:`epoch_score`'s) are compared by: the score itself, or with ``ties``
    "error" the solved count, then the validation error, then the steps; with "error-unless-all" (``gnnplan
    learn``'s) the same, except among epochs that solve all ``judges`` judge problems, which the steps compare
    before the error. Hiking (learning-practice, 30 minutes): epochs 5-11 solved all four in 410-583 steps,
    epoch 12 in 813 with an action error of 0.027 on the held-out problems against 0.030-0.068, and the error
    chose epoch 12, whose model solved 2 of 10 test problems; on other labels, one training chosen both ways: 1 of
    10 by the steps, none by the error (``benchmarks/results/learn_eval/judge-ties/``)."""
    if len(score) == 3 and (ties == "error" or (ties == "error-unless-all" and -score[0] < judges)):
        return score[0], score[2], score[1]
    return tuple(score)


def settled(curve: list, judges: int, epochs: int) -> bool:
    """Whether the judge has settled: the last ``epochs`` rows of ``curve`` (:func:`~up_gnnplan.training.loop.train`'s
    ``[epoch, seconds, loss, validation error, solved, steps]``) each solved all ``judges`` judge problems, with
    no validation error and the same steps. No later epoch can then solve more or err less, and the steps of
    the judge's runs had stopped changing: ``gnnplan learn``'s Gripper and Vacuum runs chose their first epoch
    and trained 30 and 44 more that all scored the same. ``epochs`` 0: never."""
    if epochs <= 0 or judges <= 0 or len(curve) < epochs:
        return False
    last = curve[-epochs:]
    return all(len(row) == 6 and row[4] == judges and row[3] == 0 and row[5] == last[0][5] for row in last)


def policy_validation(model, encoding, tasks, max_steps: int, limits=None, value: bool = False,
                      runtime=None, walks: list | None = None) -> tuple[int, int]:
    """Run the greedy policy of ``model`` on each task; return (problems solved, steps taken in total).

    The policy is the action policy for models with an action head, the value policy otherwise (or
    with ``value``, for a model of both heads).
    A failed run counts ``max_steps`` steps, so fewer steps always means better. A grounding
    model's "policy" is the greedy binder: its ground goal is solved by LAMA-first and the plan's
    length counts as its steps (:func:`~up_gnnplan.grounding.judge.binding_validation`).
    ``limits`` (:class:`~up_gnnplan.limits.Limits`) stop the runs at their deadline: a run stopped
    or not started counts as failed.

    The action policy of a model on a GPU runs on a CPU copy: it values one state a step, and a
    call on the GPU is thousands of kernel launches (on an H100 beside Rovers' training, a judge
    took 45 s on the GPU against 19 s on one CPU thread). The value policy values a batch of
    successors a step and stays on the model's device. ``runtime``: an
    :class:`~up_gnnplan.runtime.OnnxValueFunction` of ``model``'s weights
    (:class:`~up_gnnplan.training.judge_runtime.RuntimeJudge`), which the policy then runs in instead.
    ``walks``: a list that gets each task's steps, in order (None for a task not solved; not for a grounding model).
    """
    from up_gnnplan.search import Status, action_policy_rollout, policy_rollout

    if is_grounding_signature(encoding.signature):
        from up_gnnplan.grounding.judge import binding_validation

        return binding_validation(TorchValueFunction(model, encoding), tasks, failed_cost=max_steps, limits=limits)
    solved = steps = 0
    if runtime is not None:
        scorer = runtime.scorer if runtime.has_actions and not value else None
        value_function = runtime
    else:
        scorer = TorchActionScorer(on_cpu(model), encoding) if hasattr(model, "actions") and not value else None
        value_function = TorchValueFunction(model, encoding)
    for task in tasks:
        if limits is not None and limits.deadline.passed():
            steps += max_steps
            if walks is not None:
                walks.append(None)
            continue
        if scorer is not None:
            result = action_policy_rollout(task, scorer, max_steps=max_steps, limits=limits)
        else:
            result = policy_rollout(task, value_function, max_steps=max_steps, limits=limits)
        ok = result.status is Status.SOLVED
        solved += ok
        steps += len(result.actions) if ok else max_steps
        if walks is not None:
            walks.append(len(result.actions) if ok else None)
    return solved, steps


def on_cpu(model):
    """Return ``model`` if it is on the CPU, else a copy of it there (the weights as they are now)."""
    import copy

    from up_gnnplan.training.devices import device_of

    if device_of(model).type == "cpu":
        return model
    return copy.deepcopy(model).to("cpu")

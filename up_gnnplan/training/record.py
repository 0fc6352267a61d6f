"""The record of a training run: its figures on the training and validation states, its curve, its judge,
its throughput and its sessions; and the snapshots of a run taken while it trains.

The final figures are taken on a seeded sample of the training states and on all validation
states, or on fewer of both when the time left by ``--timeout`` is short (the record then says so).
"""

from __future__ import annotations

import copy
import platform
import time

import numpy as np

from up_gnnplan.grounding.encoding import is_grounding_signature
from up_gnnplan.training.budget import MARGIN, MIN_STATES, SAFETY, timed_parts
from up_gnnplan.training.resume import Progress
from up_gnnplan.training.run import TRAIN_ERROR_STATES, Chosen, TrainingRun

PROBE_STATES = 16  # validation states timed before the final figures where the time left is short


def run_record(run: TrainingRun, model, chosen: Chosen, progress: Progress, reserve: float = 0.0) -> dict:
    """The record of ``run`` standing at ``progress`` with ``model`` holding the weights of ``chosen``; its figures
    are taken on as many states as the time left on ``run.budget``, less ``reserve``, allows."""
    config = run.config
    record = _figures(run, model, chosen, progress, reserve)
    record["curve"] = progress.curve  # [epoch, seconds, loss, validation error(, policy solved, policy steps)]
    record["error_name"] = run.objective.error_name
    if run.validation_tasks:
        solved, steps_total = -chosen.score[0], chosen.score[1]
        record["policy_validation"] = {"problems": [task.source.problem.stem if task.source.problem else task.up_problem.name
                                                    for task in run.validation_tasks], "solved": int(solved),
                                       "steps": int(steps_total), "step_limit": config.policy_steps}
        if progress.judge_walks.get(str(chosen.epoch)):
            record["policy_validation"]["walks"] = progress.judge_walks[str(chosen.epoch)]
        if is_grounding_signature(run.encoding.signature):
            record["policy_validation"].update(judge="greedy binding, then LAMA-first on the ground goal: problems "
                                               "solved, steps = total plan length (step_limit per unsolved one)")
        if chosen.epoch in progress.judged_in_part:
            record["policy_validation"]["stopped_by_time_limit"] = (
                f"{'its time limit' if config.judge_seconds else 'the deadline of --timeout'} stopped this epoch's "
                "judge: the problems it did not finish count as unsolved")
    if progress.settled:
        record["settled"] = {"epoch": progress.settled, "epochs": run.config.settle_epochs,
                             "why": f"the last {run.config.settle_epochs} epochs solved every judge problem, with no "
                                    "validation error and the same steps: training stopped before its time limit"}
    record["train_states_per_second"] = round(progress.steps * config.batch_size / max(progress.train_seconds, 1e-9), 1)
    record["states_trained"] = progress.steps * config.batch_size
    record["sessions"] = progress.sessions  # [first epoch, seconds at its start] of each session of the run
    if progress.skipped_steps:
        record["non_finite_note"] = (
            f"{progress.skipped_steps} optimisation step(s) were not taken: their gradient was not finite"
            + (f"; after epoch(s) {', '.join(map(str, progress.restarts))} most steps were, and training went on from "
               "the best epoch's weights at half the learning rate" if progress.restarts else ""))
    return record


def _figures(run: TrainingRun, model, chosen: Chosen, progress: Progress, reserve: float) -> dict:
    """The record's figures: errors on the final samples of the states, sizes, speed, the machine."""
    import torch

    config, dataset = run.config, run.dataset
    train_sample, val_sample, note = final_samples(run, reserve)
    # Valued in parts up to the deadline (less ``reserve`` and writing), the validation states first with the
    # training sample's expected time kept back: an estimate of a state's cost can be off by 2x.
    end = None if run.budget is None else run.budget.deadline.end - reserve - run.budget.write - MARGIN
    keep = 0.0 if run.budget is None else SAFETY * run.budget.state_seconds() * len(train_sample)
    validation, val_valued = _timed_metrics(run, model, run.val_data, val_sample, None if end is None else end - keep)
    train, train_valued = _timed_metrics(run, model, dataset, train_sample, end)
    if (val_valued, train_valued) != (len(val_sample), len(train_sample)):
        note = (f"the time left by --timeout {config.max_seconds:g} allowed the final figures on {val_valued} of "
                f"{len(run.val_idx)} validation states and {train_valued} of "
                f"{min(len(run.train_idx), TRAIN_ERROR_STATES)} training states")
    record = {
        "seconds": round(progress.seconds, 1),
        "epochs": progress.epoch,
        "steps": progress.steps,
        "best_epoch": chosen.epoch,
        "best_validation_mae": chosen.score[-1],
        "train": train,
        "train_error_states": int(train_valued),
        "validation": validation,
        "validation_error_states": int(val_valued),  # of validation_states: fewer when the time was short
        "train_states": int(len(run.train_idx)),
        "validation_states": int(len(run.val_idx)),
        "validation_problems": run.val_problems,
        "dead_ends_excluded": int(dataset.dead_end.sum()),
        "problems": [p.name for p in dataset.problems],
        "states_per_second_overall": round(progress.steps * config.batch_size / max(progress.seconds, 1e-9), 1),
        "torch": str(torch.__version__),
        "machine": f"{platform.machine()}, {config.threads} thread(s)",
    }
    if note:
        record["time_limit_note"] = note
    return record


# States valued at once by the final figures, between two looks at the clock: at most this many, and at most
# what FIGURES_PART_SECONDS values at the estimated cost of a state.
FIGURES_PART, FIGURES_PART_SECONDS = 512, 5.0


def _timed_metrics(run: TrainingRun, model, data, indices: np.ndarray, until: float | None) -> tuple[dict, int]:
    """Return the objective's figures on ``indices`` of ``data``, valued in parts until the clock passes ``until``
    (None: all; else at least :data:`~up_gnnplan.training.budget.MIN_STATES` of them), and how many were valued."""
    per_state = run.budget.state_seconds() if run.budget is not None else 0.0
    most = FIGURES_PART
    if getattr(run.objective, "sample", None) is not None:  # it compares states in groups: one part, groups whole
        most, per_state = max(len(indices), 1), 0.0
    parts = [(len(part), run.objective.metrics(model, run.encoding, data, part))
             for part in timed_parts(indices, per_state, most, FIGURES_PART_SECONDS, until, MIN_STATES)]
    done = sum(n for n, _ in parts)
    if len(parts) == 1:
        return parts[0][1], done
    return run.objective.merge_metrics(parts), done


def _sample(indices: np.ndarray, size: int, seed: int) -> np.ndarray:
    if len(indices) <= size:
        return indices
    return np.sort(np.random.default_rng(seed).choice(indices, size=size, replace=False))


def final_samples(run: TrainingRun, reserve: float) -> tuple[np.ndarray, np.ndarray, str | None]:
    """Return (training states, validation states, note) the final figures are taken on: a seeded sample of
    the training states (predicting every state of a large training set took minutes) and all validation
    states, or fewer of both, validation first, when the time left on ``run.budget`` (less ``reserve``) is
    short; the note says so (None when nothing was left out by the time). When it is short, the cost of a
    state is measured again on :data:`PROBE_STATES` validation states first (pddlgym's Maze: the epochs'
    evaluation said 0.23 s, the final figures took 0.56 s a state, and ran a learn run 170 s past its time)."""
    config, train_idx, val_idx = run.config, run.train_idx, run.val_idx
    train_sample = _sample(train_idx, TRAIN_ERROR_STATES, config.seed)
    affordable = run.budget.affordable_states(reserve) if run.budget is not None else None
    if affordable is None or affordable >= len(train_sample) + len(val_idx):
        return train_sample, val_idx, None
    if len(val_idx):  # short of time: what a state of the validation set costs, measured on a few of them
        probe = _sample(val_idx, PROBE_STATES, config.seed)
        began = time.perf_counter()
        run.objective.metrics(run.model, run.encoding, run.val_data, probe)
        run.budget.per_state = max(run.budget.state_seconds(), (time.perf_counter() - began) / len(probe))
        affordable = run.budget.affordable_states(reserve)
    wanted = min(len(val_idx), max(MIN_STATES, affordable - min(MIN_STATES, len(train_sample))))
    whole = getattr(run.objective, "sample", None)  # an objective that compares states keeps their groups whole
    val_sample = (whole(run.val_data, val_idx, wanted, np.random.default_rng(config.seed)) if whole is not None
                  and wanted < len(val_idx) else _sample(val_idx, wanted, config.seed))
    train_sample = _sample(train_sample, max(MIN_STATES, affordable - len(val_sample)), config.seed)
    note = (f"the time left by --timeout {config.max_seconds:g} allowed the final figures on {len(val_sample)} "
            f"of {len(val_idx)} validation states and {len(train_sample)} of {min(len(train_idx), TRAIN_ERROR_STATES)} "
            "training states")
    return train_sample, val_sample, note


def take_snapshots(run: TrainingRun, minutes: list, on_snapshot, score: tuple) -> None:
    """Call ``on_snapshot(minutes, kind, model, encoding, record)`` for each of ``minutes`` that the run's clock has
    passed since its last snapshot: "best" with the best weights so far, "last" with the weights of the epoch just
    finished (``score``: its score); the run's progress notes them taken."""
    progress = run.progress
    for due in minutes:
        if due not in progress.snapshots and progress.seconds >= 60 * due and on_snapshot is not None:
            last = Chosen(score, progress.epoch, run.model.state_dict())
            for kind, chosen in (("best", run.best), ("last", last)):
                model, record = snapshot(run, chosen)
                on_snapshot(due, kind, model, run.encoding, record)
            progress.snapshots.append(due)


def snapshot(run: TrainingRun, chosen: Chosen):
    """(model, record): a CPU copy of ``run.model`` with the weights of ``chosen``, and its record (taken on fewer
    states when the time left, less what the final record needs, is short)."""
    model = copy.deepcopy(run.model)
    model.load_state_dict(chosen.weights)
    model.cpu().eval()
    reserve = run.budget.final_reserve(run.final_states) if run.budget is not None else 0.0
    return model, run_record(run, model, chosen, copy.deepcopy(run.progress), reserve)

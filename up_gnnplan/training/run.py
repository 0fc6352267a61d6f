"""One training run as its parts share it: the data and their split, the model and its optimiser, the
budget, and where the run stands (its progress and its best epoch so far).

:func:`up_gnnplan.training.loop.train` fills a :class:`TrainingRun` while it sets up, and the
judge (:mod:`up_gnnplan.training.judging`) and the record (:mod:`up_gnnplan.training.record`)
read their inputs from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from up_gnnplan.training.budget import Budget
from up_gnnplan.training.config import TrainConfig
from up_gnnplan.training.distributed import ProcessGroup
from up_gnnplan.training.resume import Progress

TRAIN_ERROR_STATES = 5000  # the training error in the record is taken on at most this many states
EVAL_SHARE = 0.5  # with config.epoch_seconds, an epoch's evaluation values what this share of that time values


class Chosen(NamedTuple):
    """An epoch as a candidate for the run's model; compared as a tuple, by its score first."""

    score: tuple  # (validation error,), or (-problems solved, steps, validation error) with a judge; lower wins
    epoch: int
    weights: dict  # the model's state_dict


class Candidates:
    """The best epochs of a run other than by its own choice alone: at most ``most`` of them, each kept with its
    weights and its judge's walks, in the order of the run's comparison (:func:`~up_gnnplan.training.judging.score_key`).
    ``gnnplan learn`` gives one to :func:`~up_gnnplan.training.loop.train` where a search on larger problems is to
    choose among epochs that the greedy judge ranks closely (:mod:`up_gnnplan.learn.frontier_judge`). A run continued
    from its state file offers the epochs of this session only."""

    def __init__(self, most: int):
        self.most = most
        self.kept: list[tuple[tuple, Chosen, list | None]] = []  # (key, the epoch, its walks), best first

    def wants(self, key: tuple) -> bool:
        """Whether an epoch compared by ``key`` (lower wins) would be kept."""
        return len(self.kept) < self.most or key < self.kept[-1][0]

    def offer(self, chosen: Chosen, key: tuple, walks: list | None = None) -> None:
        """Keep ``chosen`` (compared by ``key``) if it is among the ``most`` best offered so far."""
        if not self.wants(key):
            return
        self.kept.append((key, chosen, walks))
        self.kept.sort(key=lambda entry: (entry[0], entry[1].epoch))
        del self.kept[self.most:]

    def epochs(self) -> list[int]:
        """The kept epochs, best first."""
        return [chosen.epoch for _, chosen, _ in self.kept]


@dataclass
class TrainingRun:
    """What the parts of one training run share (see the module docstring)."""

    config: TrainConfig
    group: ProcessGroup  # the processes training together (one, unless started by torchrun)
    dataset: Any  # the training dataset
    val_data: Any  # the dataset of the validation states: the validation dataset, else the training one
    train_idx: np.ndarray  # the states of dataset trained on
    val_idx: np.ndarray  # the validation states of val_data, which the final record values
    val_problems: list  # the names of the validation problems
    monitor_data: Any  # the dataset of monitor
    monitor: np.ndarray  # the fixed sample of states the validation error of every epoch is taken on
    validation_tasks: list | None  # the judge's problems (None: epochs are chosen by the validation error)
    objective: Any  # of up_gnnplan.training.objectives or .ranking
    encoding: Any
    model: Any  # on group.device until the run ends
    optimiser: Any
    schedule: Any  # the learning-rate schedule (ReduceLROnPlateau), or None
    rng: np.random.Generator  # the batch sampler's
    average: Any  # the WeightAverage of --ema, or None
    best: Chosen  # the best epoch so far
    progress: Progress = field(default_factory=Progress)
    budget: Budget | None = None  # set once the run's clock starts, after a stopped run's state is read
    start: float = 0.0  # the time.perf_counter() value the run's clock counts from (over all its sessions)
    judge_runtime: Any = None  # a RuntimeJudge (judge_runtime): the judge's policy in onnxruntime; None: in torch

    @property
    def final_states(self) -> int:
        """How many states the final record values, at most."""
        return min(len(self.train_idx), TRAIN_ERROR_STATES) + len(self.val_idx)

    def monitored(self) -> int:
        """How many of the monitored states an epoch's evaluation values: all of them, or, with
        ``config.epoch_seconds``, as many as :data:`EVAL_SHARE` of it values at the cost of a state (pddlgym's
        Maze: 426 states of 1,200 objects, 0.4-0.6 s each, would have been most of every epoch)."""
        from up_gnnplan.training.budget import MIN_EPOCH_STATES

        per_state = self.budget.state_seconds() if self.budget is not None else 0.0
        if not self.config.epoch_seconds or per_state <= 0:
            return len(self.monitor)
        return min(len(self.monitor), max(MIN_EPOCH_STATES, int(EVAL_SHARE * self.config.epoch_seconds / per_state)))

    def out_of_time(self) -> bool:
        """Whether one more step, its epoch's evaluation and the final steps no longer fit; rank 0's clock decides."""
        return self.group.from_main((not self.budget.room_for_epoch(self.monitored(), self.final_states),))[0]

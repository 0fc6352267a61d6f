"""Training data: dataset states as encoder inputs, a validation split, and a V*-covering sampler."""

from __future__ import annotations

import numpy as np

from up_gnnplan.encodings.base import StateInput


def state_inputs(dataset, indices) -> list[StateInput]:
    """Return the encoder inputs of the dataset states ``indices``."""
    out = []
    for i in indices:
        record = dataset.problems[dataset.state_problem[i]]
        out.append(StateInput(dataset.state_atoms(i), record.goal, len(record.object_names), record.negative_goal))
    return out


def split(dataset, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Return (train indices, validation indices, validation problem names); dead ends excluded.

    With two or more problems, whole problems are held out (at least one, never all), so the
    validation error measures generalisation to unseen instances; with one problem, states.
    """
    alive = np.flatnonzero(~dataset.dead_end)
    problems = len(dataset.problems)
    if fraction <= 0:
        return alive, alive[:0], []
    if problems >= 2:
        count = min(max(1, round(fraction * problems)), problems - 1)
        held = rng.choice(problems, size=count, replace=False)
        mask = np.isin(dataset.state_problem[alive], held)
        names = [dataset.problems[p].name for p in sorted(held)]
        return alive[~mask], alive[mask], names
    shuffled = rng.permutation(alive)
    count = max(1, round(fraction * len(alive))) if len(alive) > 1 else 0
    return shuffled[count:], shuffled[:count], []


class ValueCoveringSampler:
    """Draw batches that cover as many distinct V* values as possible (paper §5).

    Each batch picks distinct values uniformly (cycling when the batch is larger than the
    number of values), then one random state per picked value. An epoch is as many batches as
    it takes to draw as many states as there are training states, or ``epoch_states`` when
    that is smaller (states are drawn with replacement, so an epoch is only an evaluation round).
    """

    def __init__(self, indices: np.ndarray, values: np.ndarray, batch_size: int, rng: np.random.Generator,
                 epoch_states: int = 0):
        self.batch_size, self.rng = batch_size, rng
        keys = np.round(values[indices], 6)
        self.groups = [indices[keys == v] for v in np.unique(keys)]
        states = min(len(indices), epoch_states) if epoch_states > 0 else len(indices)
        self.batches_per_epoch = max(1, int(np.ceil(states / batch_size)))

    def epoch(self):
        """Yield the index arrays of one epoch's batches."""
        n = len(self.groups)
        for _ in range(self.batches_per_epoch):
            picks = np.concatenate([self.rng.permutation(n) for _ in range(-(-self.batch_size // n))])[: self.batch_size]
            yield np.array([self.groups[g][self.rng.integers(len(self.groups[g]))] for g in picks])

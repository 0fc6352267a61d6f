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
    Records of one problem file (the goal variants of goal-grounding data) are held out
    together, so no state of a validation problem is trained on under another goal.
    """
    alive = np.flatnonzero(~dataset.dead_end)
    problems = len(dataset.problems)
    if fraction <= 0:
        return alive, alive[:0], []
    files = [p.problem_file for p in dataset.problems]
    if len(set(files)) < problems and len(set(files)) >= 2:
        units = sorted(set(files), key=str)
        count = min(max(1, round(fraction * len(units))), len(units) - 1)
        held_files = {units[k] for k in rng.choice(len(units), size=count, replace=False).tolist()}
        held = np.array([k for k, f in enumerate(files) if f in held_files])
        mask = np.isin(dataset.state_problem[alive], held)
        names = [dataset.problems[p].name for p in held.tolist()]
        return alive[~mask], alive[mask], names
    if problems >= 2:
        count = min(max(1, round(fraction * problems)), problems - 1)
        held = rng.choice(problems, size=count, replace=False)
        mask = np.isin(dataset.state_problem[alive], held)
        names = [dataset.problems[p].name for p in sorted(held)]
        return alive[~mask], alive[mask], names
    shuffled = rng.permutation(alive)
    count = max(1, round(fraction * len(alive))) if len(alive) > 1 else 0
    return shuffled[count:], shuffled[:count], []


def curriculum_order(dataset, indices: np.ndarray) -> np.ndarray:
    """The size rank of each state of ``indices``: 0 for the states of the problem with the fewest
    objects, 1 for the next, ... (ties by name), the order in which a curriculum admits them."""
    problems = sorted(range(len(dataset.problems)),
                      key=lambda p: (len(dataset.problems[p].object_names), dataset.problems[p].name))
    rank = np.empty(len(problems), np.int64)
    rank[problems] = np.arange(len(problems))
    return rank[dataset.state_problem[indices]]


class ValueCoveringSampler:
    """Draw batches that cover as many distinct V* values as possible (paper §5).

    Each batch picks distinct values uniformly (cycling when the batch is larger than the
    number of values), then one random state per picked value. An epoch is as many batches as
    it takes to draw as many states as there are training states, or ``epoch_states`` when
    that is smaller (states are drawn with replacement, so an epoch is only an evaluation round).

    With a ``curriculum`` of C epochs and each state's size rank (:func:`curriculum_order`),
    epoch e draws only from the states of the smallest ceil(e / C x P) of the P training
    problems: the smallest problem first, all of them from epoch C on.
    """

    def __init__(self, indices: np.ndarray, values: np.ndarray, batch_size: int, rng: np.random.Generator,
                 epoch_states: int = 0, curriculum: int = 0, size_rank: np.ndarray | None = None):
        self.batch_size, self.rng = batch_size, rng
        self.indices, self.keys = indices, np.round(values[indices], 6)
        self.curriculum, self.size_rank = curriculum, size_rank
        if curriculum and size_rank is None:
            raise ValueError("a curriculum needs the states' size ranks")
        self.groups = self._groups(np.ones(len(indices), bool))
        self.admitted = len(np.unique(size_rank)) if size_rank is not None else 0
        states = min(len(indices), epoch_states) if epoch_states > 0 else len(indices)
        self.batches_per_epoch = max(1, int(np.ceil(states / batch_size)))

    def _groups(self, mask: np.ndarray) -> list[np.ndarray]:
        keys, indices = self.keys[mask], self.indices[mask]
        return [indices[keys == v] for v in np.unique(keys)]

    def admit(self, epoch: int) -> int:
        """Restrict the draws to the problems a curriculum admits in ``epoch`` (1-based); return their number."""
        if not self.curriculum:
            return self.admitted
        ranks = np.unique(self.size_rank)
        count = max(1, min(len(ranks), int(np.ceil(epoch / self.curriculum * len(ranks)))))
        if count != self.admitted:
            self.groups, self.admitted = self._groups(self.size_rank <= ranks[count - 1]), count
        return count

    def epoch(self, number: int | None = None):
        """Yield the index arrays of one epoch's batches (epoch ``number``, 1-based, for a curriculum)."""
        if number is not None:
            self.admit(number)
        n = len(self.groups)
        for _ in range(self.batches_per_epoch):
            picks = np.concatenate([self.rng.permutation(n) for _ in range(-(-self.batch_size // n))])[: self.batch_size]
            yield np.array([self.groups[g][self.rng.integers(len(self.groups[g]))] for g in picks])

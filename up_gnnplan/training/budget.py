"""The wall-clock budget of a training run (``gnnplan train --timeout``), held to the end of the command.

The budget counts from the start of the command (over all sessions, with ``--state``) and covers
all of it: reading the datasets, the epochs with their evaluations and the judge of the validation
problems, snapshots, the final record and writing the checkpoint. The loop measures how long each
kind of work takes (an optimisation step, valuing one state, a judge pass, writing a file) and
stops starting work that would not end before the deadline, keeping back the time the final
record and the checkpoint need; the final record is taken on as many states as the time left
allows, and says so when that is fewer than all.
"""

from __future__ import annotations

import time

from up_gnnplan.limits import Deadline, Limits

# Time for the small steps after the final record that are not measured: weights to the CPU,
# the summary line, the interpreter's exit.
MARGIN = 0.15
# The final record takes at most this share of the budget (a large validation set is sampled instead).
FINAL_SHARE = 0.1
# The final figures are taken on at least this many states, however little time is left.
MIN_STATES = 64
# Work is planned as taking this much longer than last time (a loaded machine varies).
SAFETY = 1.25
# An epoch's validation error is taken on at least this many of its states, however little time is left.
MIN_EPOCH_STATES = 16


def timed_parts(indices, per_state: float, most: int, seconds: float, until: float | None, least: int):
    """Yield ``indices`` in order in parts of at most ``most`` states, and at most what ``seconds`` values at
    ``per_state`` seconds a state (unmeasured: 0), until the clock passes ``until`` (None: never) once
    ``least`` states were yielded: an epoch's evaluation and the final figures, between two looks at the clock."""
    size = most if per_state <= 0 else max(1, min(most, int(seconds / per_state)))
    done = 0
    for begin in range(0, len(indices), size):
        yield indices[begin:begin + size]
        done += min(size, len(indices) - begin)
        if until is not None and done >= least and time.perf_counter() > until:
            return


class Budget:
    """The deadline of a training run and the measured cost of its units of work.

    Args:
        seconds: the budget (``max_seconds``).
        start: the ``time.perf_counter()`` value it counts from (the command's start, earlier
            sessions' seconds subtracted).
    """

    def __init__(self, seconds: float, start: float):
        self.seconds = seconds
        self.deadline = Deadline(seconds, start)
        self.step = 0.0  # seconds of one optimisation step (a moving average)
        self.per_state = None  # seconds to value one state in evaluation (None: not measured yet)
        self.guess = 0.0  # the same, guessed from the optimisation steps until it is measured
        self.judge = 0.0  # seconds of the last judge of the validation problems
        self.write = 0.05  # seconds to write the training state or the checkpoint (the longest seen)
        # How many times an epoch's evaluation of a state the final record's figures cost (the objective's
        # ``record_cost``: an action head's record values its states with the value head too).
        self.record_cost = 1.0

    def elapsed(self) -> float:
        return self.deadline.elapsed()

    def remaining(self) -> float:
        return self.deadline.remaining()

    def timed_step(self, seconds: float, batch_size: int) -> None:
        """Record an optimisation step of ``seconds``; until evaluation is measured, value a state as
        costing a training state's share of a step (a forward and backward pass: an over-estimate)."""
        self.step = seconds if self.step == 0 else 0.8 * self.step + 0.2 * seconds
        self.guess = self.step / max(batch_size, 1)

    def timed_evaluation(self, seconds: float, states: int) -> None:
        if states:
            self.per_state = seconds / states

    def timed_write(self, seconds: float) -> None:
        self.write = max(self.write, seconds)

    def state_seconds(self) -> float:
        """Seconds to value one state, measured or guessed."""
        return self.per_state if self.per_state is not None else self.guess

    def final_reserve(self, states: int) -> float:
        """Seconds to keep back for the final record on up to ``states`` states and the checkpoint."""
        record = min(SAFETY * self.state_seconds() * self.record_cost * states, FINAL_SHARE * self.seconds)
        return record + self.write + MARGIN

    def room_for_epoch(self, monitor: int, final_states: int) -> bool:
        """Whether one more step, the epoch's evaluation on ``monitor`` states, its judge and its training
        state, and the final steps fit in the time left."""
        epoch = self.step + self.state_seconds() * monitor + self.judge + self.write
        need = SAFETY * epoch + self.final_reserve(final_states)
        return self.remaining() > need

    def judge_limits(self, final_states: int, seconds: float = 0.0) -> Limits:
        """The limits of a judge pass: the run's deadline less what the final steps need, and at most ``seconds``
        (0: no such cap); no memory limit."""
        end = self.deadline.end - self.final_reserve(final_states)
        if seconds > 0:
            end = min(end, time.perf_counter() + seconds)
        return Limits(end - time.perf_counter(), memory_mb=0)

    def evaluable_states(self, states: int, final_states: int) -> int:
        """How many of an epoch's ``states`` to evaluate (at least :data:`MIN_EPOCH_STATES`): all of them, or as
        many as the time left, less the final steps and a judge as long as the last, lets it value."""
        per_state = SAFETY * self.state_seconds()
        if per_state <= 0:
            return states
        room = self.remaining() - self.final_reserve(final_states) - SAFETY * self.judge
        return min(states, max(MIN_EPOCH_STATES, int(room / per_state)))

    def affordable_states(self, reserve: float = 0.0) -> int | None:
        """How many states the time left (less ``reserve`` and writing) lets the final record value;
        None when unmeasured."""
        per_state = self.state_seconds() * self.record_cost
        if per_state <= 0:
            return None
        left = self.remaining() - reserve - self.write - MARGIN
        return max(MIN_STATES, int(left / per_state))

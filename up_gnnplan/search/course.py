"""Whether a policy is on course to the goal when its share of the time runs out (mode auto's hand-off).

With fallback ``model+lama``, the learned part has ``handoff_share`` of the time and LAMA-first the
rest. A policy that is still walking towards the goal when its share is spent would hand over a
task it was about to solve (medium Blocksworld, 146 blocks: 488 steps in 13.7 s on a quiet machine,
468 of them in the share at load 3-5, then LAMA-first timed out). :class:`Course` watches the
policy's progress, measured as the goal literals the state does not satisfy, and extends the
share where the pace of the recent steps reaches the goal within the time the whole solve has left:

- the window is the later half of the steps walked (at least :data:`MIN_STEPS`), so a policy that
  first unstacks and then builds is judged on its building;
- the forecast is the literals left over the literals achieved per step in the window, times the
  window's seconds per step, times :data:`SAFETY`; a window that achieved none is not on course;
- the share is extended to the forecast (never beyond the solve's deadline), and judged again when
  the extension runs out, so a policy that slows down hands over as before;
- the policy's step limit (4 x FF's estimate + 50, or 1000 where FF is left out) is extended the same
  way when the walk reaches it on course and its forecast time fits, but never a limit the user
  gave (engine param ``max_steps``).

Goals with quantified conjuncts (compiled into derived atoms) or numeric conditions have no literal
count; there the share is never extended. The user's time limit is the solve's deadline, which
nothing here moves.
"""

from __future__ import annotations

import math
import time

# Steps walked before the pace is trusted, and the share of the walk it is measured on (the later part).
MIN_STEPS = 8
WINDOW = 0.5
# The forecast's margin: the time for the literals left at the window's pace, times this.
SAFETY = 1.5
# Judged when the share has less than this many of the window's steps left.
AHEAD_STEPS = 2


class Course:
    """The progress of one policy walk, and the extensions of its share ``part`` of the ``whole`` solve's
    time (both :class:`~up_gnnplan.limits.Limits`; ``part`` from ``whole.share``)."""

    def __init__(self, task, part, whole, steps: bool = False):
        self.part, self.whole, self.steps = part, whole, steps
        condition = task.goal_condition
        literals = [literal for literal in condition.get_literals() if not literal.is_static()]
        self.literals = [] if condition.get_numerics() or any(literal.is_derived() for literal in literals) \
            else literals
        self.total = len(self.literals)
        self.history: list[tuple[int, float, int]] = []  # (step, clock, literals left)
        self.extensions: list[str] = []

    @property
    def usable(self) -> bool:
        return bool(self.literals)

    def left(self, state) -> int:
        """Return how many of the goal's (non-static) literals ``state`` does not satisfy."""
        return sum(1 for literal in self.literals if not state.literal_holds(literal))

    def observe(self, step: int, state) -> None:
        """Record the state reached after ``step`` steps; extend the share if it is about to run out on course."""
        if self.usable:
            self.record(step, self.left(state), time.perf_counter())

    def pace(self) -> tuple[int, float, int, int] | None:
        """Return (steps, seconds, literals achieved, literals left) of the window, or None before
        :data:`MIN_STEPS` steps."""
        if len(self.history) < MIN_STEPS + 1:
            return None
        step, now, left = self.history[-1]
        first = self.history[min(len(self.history) - MIN_STEPS - 1, int(len(self.history) * (1 - WINDOW)))]
        return step - first[0], now - first[1], first[2] - left, left

    def record(self, step: int, left: int, now: float) -> None:
        """:meth:`observe` with the literals left and the clock given."""
        self.history.append((step, now, left))
        remaining, whole, pace = self.part.deadline.remaining(), self.whole.deadline.remaining(), self.pace()
        if remaining is None or whole is None or pace is None:
            return
        steps, seconds, achieved, left = pace
        if remaining > AHEAD_STEPS * seconds / steps:
            return
        if achieved <= 0 or left == 0:
            return
        needed = SAFETY * left / achieved * seconds
        if needed > whole:
            return
        end = min(now + needed, self.whole.deadline.end)
        if end <= self.part.deadline.end:
            return
        self.extensions.append(f"on course after {step} steps ({left} of {self.total} goal literals left, "
                               f"{achieved} achieved in the last {steps} steps): the learned part's share extended "
                               f"by {end - self.part.deadline.end:.1f} s")
        self.part.deadline.extend_to(end)

    def more_steps(self, step: int) -> int:
        """Return the steps to add to a step limit the walk has reached after ``step`` steps: the
        forecast at the window's pace (with :data:`SAFETY`) where the walk is on course, its
        time fits in what the solve has left and the limit is one this course may extend
        (``steps``: not one the user gave), else 0."""
        pace, whole = self.pace(), self.whole.deadline.remaining()
        if not self.steps or pace is None:
            return 0
        steps, seconds, achieved, left = pace
        if achieved <= 0 or left == 0:
            return 0
        more = math.ceil(SAFETY * left / achieved * steps)
        if whole is not None and more * seconds / steps > whole:
            return 0
        self.extensions.append(f"on course at its step limit of {step} ({left} of {self.total} goal literals left, "
                               f"{achieved} achieved in the last {steps} steps): {more} more steps")
        return more

    @property
    def note(self) -> str:
        """What the extensions were (the last one's words, and how many there were)."""
        if not self.extensions:
            return ""
        more = f" (extension {len(self.extensions)})" if len(self.extensions) > 1 else ""
        return self.extensions[-1] + more


def step_limit(course: Course | None, step: int, state, max_steps: int) -> int:
    """Return a policy's step limit before its step ``step + 1`` from ``state``: ``max_steps``, or
    more where ``course`` (None: none) finds the walk on course at it; the course observes the state."""
    if course is None:
        return max_steps
    course.observe(step, state)
    return max_steps + course.more_steps(step) if step >= max_steps else max_steps

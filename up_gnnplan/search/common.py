"""What searches share: statuses, results, and the state-to-input conversion."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field

from up_gnnplan.encodings.base import StateInput


class Status(str, enum.Enum):
    """How a search ended; says honestly what happened."""

    SOLVED = "solved"
    UNSOLVABLE = "unsolvable"  # proven: the reachable space was exhausted without a goal
    GAVE_UP = "gave-up"  # the policy hit its step limit or a state with no unvisited successor
    TIMEOUT = "timeout"


@dataclass
class SearchResult:
    """The outcome of one search: status, pymimir ground actions, and counters."""

    status: Status
    actions: list = field(default_factory=list)
    cost: float = 0.0
    expanded: int = 0
    evaluated: int = 0
    seconds: float = 0.0
    message: str = ""

    @property
    def solved(self) -> bool:
        return self.status is Status.SOLVED


class Inputs:
    """Turn pymimir states of one task into value-function inputs."""

    def __init__(self, task):
        from up_gnnplan.states.atoms import StateAtoms

        self.atoms = StateAtoms(task)
        self.num_objects = task.num_objects

    def __call__(self, states) -> list[StateInput]:
        a = self.atoms
        return [StateInput(a.of(s), a.goal, self.num_objects, a.negative_goal) for s in states]


class Deadline:
    """A wall-clock limit; ``None`` means no limit."""

    def __init__(self, seconds: float | None):
        self.start = time.perf_counter()
        self.end = None if seconds is None else self.start + seconds

    def passed(self) -> bool:
        return self.end is not None and time.perf_counter() > self.end

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

"""What searches share: statuses, results, and the state-to-input conversion."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field

from up_gnnplan.encodings.base import StateInput
from up_gnnplan.limits import Deadline, Limits, LimitReached, MemoryLimitReached  # noqa: F401  (Deadline re-exported)


def up_status(status: "Status"):
    """Return UP's ``PlanGenerationResultStatus`` of a search's ``status``."""
    from unified_planning.engines import PlanGenerationResultStatus as UP

    return {Status.SOLVED: UP.SOLVED_SATISFICING, Status.UNSOLVABLE: UP.UNSOLVABLE_PROVEN,
            Status.GAVE_UP: UP.UNSOLVABLE_INCOMPLETELY, Status.TIMEOUT: UP.TIMEOUT, Status.MEMOUT: UP.MEMOUT}[status]


class Status(str, enum.Enum):
    """How a search ended; says honestly what happened."""

    SOLVED = "solved"
    UNSOLVABLE = "unsolvable"  # proven: the reachable space was exhausted without a goal
    GAVE_UP = "gave-up"  # the policy hit its step limit or a state with no unvisited successor
    TIMEOUT = "timeout"
    MEMOUT = "memout"  # the memory limit was reached


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
    # A policy's measure of each step of ``actions``: V of the state reached (value policy,
    # ``step_kind`` "value") or -log pi of the action taken (action policy, "surprise"). A fallback
    # search seeded with this result (``seed=``) enters the path's states in its open lists at them.
    step_values: list = field(default_factory=list)
    step_kind: str = ""
    # What a search stopped by a limit had done besides (seeded with a policy's path, FF left out), for
    # the message its caller writes instead of the limit's (mode auto: the learned part's share spent).
    note: str = ""

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


def seed_path(task, seed: "SearchResult | None") -> list[tuple]:
    """The states along ``seed``'s actions from the initial state of ``task``: one
    ``(parent, action, step cost, state, step value)`` per step (empty without a seed).

    A policy that gave up has walked a path the fallback search would otherwise have to find
    again; entering its states in the search's open lists lets the search go on from the best
    of them, by the model's value or by FF, while the initial state stays open (completeness is
    kept: the seeded states are ordinary open states with a known path).
    """
    if seed is None or not seed.actions:
        return []
    if len(seed.step_values) != len(seed.actions):
        raise ValueError(f"a seed needs one step value per action: {len(seed.actions)} actions, "
                         f"{len(seed.step_values)} values")
    steps, state = [], task.initial_state()
    for action, value in zip(seed.actions, seed.step_values):
        child, step_cost = action.apply(state, return_cost=True)
        steps.append((state, action, step_cost, child, value))
        state = child
    return steps


# FF values of a seed's path: at most this share of the search's time left goes to them, but never
# fewer than SEED_FF_VALUES states are valued (evenly spaced along the path, its last state always).
# Where FF takes about a millisecond every state is valued; a Transport walk of the medium tier (826
# steps, FF 28 ms a state) had the fallback spend its whole share valuing the path, and expand nothing.
# The states left out enter the learned list only, and get FF's value when expanded. The model's values
# of an action policy's path (:func:`value_path`) are held to the same share and floor.
SEED_FF_SHARE = 0.1
SEED_FF_VALUES = 64


def seed_positions(length: int, took: float, seconds: float | None) -> set[int] | range:
    """The positions of a seed's path of ``length`` states that a heuristic taking ``took`` seconds a state values
    in :data:`SEED_FF_SHARE` of ``seconds`` (None: no deadline, all), and at least :data:`SEED_FF_VALUES`: evenly
    spaced, counted back from the last, which is always among them."""
    if seconds is None:
        return range(length)
    want = min(length, max(SEED_FF_VALUES, int(SEED_FF_SHARE * seconds / max(took, 1e-6)), 1))
    return {length - 1 - k * length // want for k in range(want)}


def value_path(path: list[tuple], evaluate, inputs, seconds: float | None) -> tuple[list[tuple], set[int]]:
    """Value the states of an action policy's ``path`` (:func:`seed_path`; its step values are the policy's
    surprise, not V) with the model (``evaluate``: a :class:`~up_gnnplan.runtime.chunks.ChunkedEvaluator`), as
    many as :func:`seed_positions` allows at the pace of the last state's value within the search's ``seconds``
    left. Return the path with each state's value (one not valued takes that of the next valued one along it),
    and the ids of the states not valued (a deferred search values them when it expands them). Hard-lower
    Blocksworld (232 blocks): valuing a walk's 1,225 states took the fallback's 12 s share, and it expanded
    nothing."""
    last = len(path) - 1
    if seconds is None:
        values = evaluate([child for *_, child, _ in path], inputs, f"the {len(path)} states of the policy's path")
        return [(*step[:4], value) for step, value in zip(path, values.tolist())], set()
    began = time.perf_counter()
    known = {last: float(evaluate([path[last][3]], inputs, "the last state of the policy's path")[0])}
    rest = sorted(seed_positions(len(path), time.perf_counter() - began, seconds) - {last})
    if rest:
        values = evaluate([path[i][3] for i in rest], inputs, f"{len(rest)} states of the policy's path")
        known.update(zip(rest, values.tolist()))
    valued, value = [], known[last]
    for i in range(last, -1, -1):
        value = known.get(i, value)
        valued.append((*path[i][:4], value))
    valued.reverse()
    return valued, {id(path[i][3]) for i in range(len(path)) if i not in known}


def enter_path(path: list[tuple], key, ff, parents: dict, push, seconds: float | None = None) -> tuple[dict, int]:
    """Enter the states of :func:`seed_path`'s ``path`` into a best-first search: each gets its
    parent link in ``parents`` (by ``key``) and ``push(child_key, child, value, h)`` puts it in the
    open lists, the FF list only where ``h`` is not None. With ``ff`` and ``seconds`` (the search's
    time left), the states valued by FF are as many as :data:`SEED_FF_SHARE` of it allows at the
    pace of the last state's value, and at least :data:`SEED_FF_VALUES` (evenly spaced, counted
    back from the last); the others are pushed with ``h`` None. Return the FF value of each valued
    state by key (0 for every state without ``ff``), for its expansion, and how many states were
    entered. Stops at a state met before (up to renaming: the rest of the path would not apply to
    the state stored under its key) or one FF proves a dead end (so is the rest of the path).
    """
    known, parent_key, entered, last_h = {}, None, 0, None
    valued = range(len(path))  # the positions of the states FF values
    if ff is not None and path:
        began = time.perf_counter()
        last_h = ff(path[-1][3])
        valued = seed_positions(len(path), time.perf_counter() - began, seconds)
    for i, (parent, action, cost, child, value) in enumerate(path):
        parent_key = key(parent) if parent_key is None else parent_key
        child_key = key(child)
        if child_key in parents:
            break
        h = None
        if ff is None:
            h = 0.0
        elif i in valued:
            h = last_h if i == len(path) - 1 else ff(child)
            if h is None:
                break
        parents[child_key] = (parent_key, action, cost)
        if h is not None:
            known[child_key] = h
        push(child_key, child, value, h)
        parent_key, entered = child_key, entered + 1
    return known, entered


def seeded_note(entered: int, note: str, valued: int | None = None, modelled: int | None = None) -> str:
    """The search's note, saying how many states of the policy's path it was seeded with (and how
    many of them the model and FF valued, where not all)."""
    parts = [f"{who} valued {count}" for who, count in (("the model", modelled), ("FF", valued))
             if count is not None and count < entered]
    counts = f" ({', '.join(parts)})" if parts else ""
    return "; ".join(filter(None, [f"seeded with {entered} states of the policy's path{counts}" if entered else "", note]))


# The fallback's pace is first judged after this many timed expansions (the first one, with the
# session's warm-up, not timed), then at every expansion: see Progress.
PACE_EXPANSIONS = 16


class Progress:
    """Whether a dual search still makes progress: a lower FF value among its expanded states
    within ``stall`` expansions (None or 0: never stalled), as LAMA judges its searches' progress.

    Mode auto's ``model+lama`` fallback hands the time left to LAMA-first once the learned search
    stalls, instead of spending it where the model and FF no longer lead anywhere new. With the
    ``deadline`` of its share, it also hands over a search too slow to be judged at all: one that at
    its pace so far (judged from its :data:`PACE_EXPANSIONS` + 1st expansion on, at each) could make
    fewer than ``stall`` in all before its share runs out (medium Transport: 46-70 ms an expansion, a
    forward pass and FF on a state of 97 objects, with 15 s of the share left; LAMA-first, given
    those seconds, solved it). At a steady pace the count it could make in all stays the same as the
    share runs out; a search that slows down is handed over when it has.
    """

    def __init__(self, stall: int | None, deadline: Deadline | None = None):
        self.stall, self.best, self.since = stall or None, float("inf"), 0
        self.deadline, self.count, self.began, self.slow = deadline, 0, None, ""

    def expanded(self, h: float) -> None:
        """Count an expansion of a state of FF value ``h``."""
        if h < self.best:
            self.best, self.since = h, 0
        else:
            self.since += 1
        self.count += 1
        if self.count == 1:
            self.began = time.perf_counter()
        elif self.count > PACE_EXPANSIONS and self.stall is not None and self.deadline is not None and not self.slow:
            self._judge_pace()

    def _judge_pace(self) -> None:
        remaining = self.deadline.remaining()
        if remaining is None:
            return
        pace = (time.perf_counter() - self.began) / (self.count - 1)
        affordable = self.count + int(remaining / pace) if pace > 0 else self.stall
        if affordable < self.stall:
            self.slow = (f"too slow to search: at {1000 * pace:.0f} ms an expansion it could make {affordable} "
                         f"in all in its share of the time ({remaining:.1f} s left), fewer than the {self.stall} "
                         "without progress after which it would give up")

    @property
    def stalled(self) -> bool:
        return self.stall is not None and (self.since >= self.stall or bool(self.slow))

    @property
    def note(self) -> str:
        return self.slow or f"stalled: no lower FF value than {self.best:g} in {self.since} expansions"


def limits_of(limits: Limits | None, time_limit: float | None) -> Limits:
    """Return ``limits``, or new ones for ``time_limit`` seconds and the default memory limit."""
    return limits if limits is not None else Limits(time_limit)


def stopped(error: LimitReached, actions, cost: float, expanded: int, evaluated: int, limits: Limits,
            note: str = "") -> SearchResult:
    """Return the result of a search that a limit stopped (``note``: what it had done besides)."""
    status = Status.MEMOUT if isinstance(error, MemoryLimitReached) else Status.TIMEOUT
    return SearchResult(status, actions, cost, expanded, evaluated, limits.deadline.elapsed(), str(error), note=note)


def exhausted(states: int, symmetry, note: str = "") -> str:
    """The message of a search that exhausted the reachable states (up to symmetry, when its
    :class:`~up_gnnplan.search.symmetry.SearchSymmetry` merged any) without reaching a goal."""
    up_to = " (up to symmetric objects)" if symmetry.merged else ""
    return f"all {states} reachable states{up_to} explored without reaching a goal" + (f"; {note}" if note else "")

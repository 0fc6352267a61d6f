"""Label every reachable state of a small instance with its exact optimal cost-to-go V*.

pymimir expands the state space in C++ and computes cost-to-goal by a backward Dijkstra over
the transition graph, respecting action costs; dead ends (no path to a goal) are flagged and
get ``inf``, never a made-up number.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from up_gnnplan.datasets.heartbeat import Heartbeat
from up_gnnplan.errors import StateLimitExceeded
from up_gnnplan.limits import Limits, MemoryLimitReached, resident_mb
from up_gnnplan.states.atoms import Atoms, StateAtoms

# What the state graph and the labels take per state and per transition (measured on Blocksworld,
# Gripper and Visitall with pymimir 0.13.63 and CPython 3.11: 81 MB for 66k states and 187k
# transitions, 22 MB for 12k and 60k, plus a fifth), so that an expansion too large for the memory
# limit is refused before pymimir builds its graph, which cannot be stopped half-way.
BYTES_PER_STATE = 600
BYTES_PER_TRANSITION = 350


@dataclass
class Transitions:
    """The applicable actions of labelled states and where they lead (for action heads).

    For state ``i``, ``ptr[i]:ptr[i+1]`` indexes its actions: ``schema``/``args`` (see
    :mod:`up_gnnplan.states.actions`), ``cost``, and ``next``, the row of the successor among
    the same problem's labelled states (-1 when it was not labelled: an optimal search from it
    timed out). ``recorded[i]`` is False for states whose actions were not recorded (the
    successors of plan states, in datasets labelled along optimal plans).
    """

    ptr: np.ndarray  # int64[n + 1]
    schema: np.ndarray  # int16[T]
    args: np.ndarray  # int32[T, width]
    cost: np.ndarray  # float64[T]
    next: np.ndarray  # int64[T]
    recorded: np.ndarray  # bool[n]

    @classmethod
    def collect(cls, task, per_state: list, width: int, beat=None) -> "Transitions":
        """Build from ``per_state[i]`` = None (not recorded) or a list of (ground action, cost, next row);
        ``beat(units)`` (a :class:`~up_gnnplan.datasets.heartbeat.Heartbeat`) is called as the actions are converted."""
        from up_gnnplan.states.actions import ActionRows

        rows = ActionRows(task)
        counts = [len(entries) if entries is not None else 0 for entries in per_state]
        flat = [entry for entries in per_state if entries for entry in entries]
        chunk = 65_536  # actions converted between two heartbeats
        parts = []
        for start in range(0, len(flat), chunk):
            parts.append(rows([action for action, _, _ in flat[start:start + chunk]]))
            if beat is not None:
                beat(len(parts[-1][0]))
        schema, args = ((np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])) if parts
                        else rows([]))
        return cls(ptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), schema=schema.astype(np.int16),
                   args=args.reshape(-1, width).astype(np.int32),
                   cost=np.array([cost for _, cost, _ in flat], np.float64),
                   next=np.array([row for _, _, row in flat], np.int64),
                   recorded=np.array([entries is not None for entries in per_state], bool))


@dataclass
class LabelledStates:
    """The states of one problem with their labels; atoms are fluent atoms only."""

    states: list[Atoms]
    value: np.ndarray
    steps: np.ndarray
    dead_end: np.ndarray
    is_goal: np.ndarray
    label: np.ndarray
    initial_value: float
    transitions: Transitions | None = None
    initial: int = 0  # row of the initial state

    def __len__(self) -> int:
        return len(self.states)


def expand(task, max_states: int = 100_000, progress=None, *, limits: Limits | None = None,
           phase=None) -> LabelledStates:
    """Expand the full state space of ``task`` and return every state with its V*.

    Raises :class:`StateLimitExceeded` when the space has more than ``max_states`` states,
    :class:`~up_gnnplan.limits.MemoryLimitReached` when the process's resident memory would pass the
    memory limit of ``limits`` (default: :func:`~up_gnnplan.limits.default_memory_mb`), and
    :class:`~up_gnnplan.limits.TimeLimitReached` when its deadline passes while they are counted. The states
    are first counted by a breadth-first search that checks both limits as it goes (:func:`_survey`),
    so that a space too large is refused early, and before pymimir builds the graph at once.
    ``progress`` is an optional callable ``(done, total)`` for a progress display; ``phase(text)``
    is told how the work goes at least every few seconds (states so far, rate, memory).
    """
    limits = limits if limits is not None else Limits()
    survey = Heartbeat(limits, phase, lambda done, seconds: f"expanding the state space: {done:,} states so far",
                       deadline=True)
    count, edges = _survey(task, max_states, survey)
    need = (count * BYTES_PER_STATE + edges * BYTES_PER_TRANSITION) / 2**20
    headroom = limits.headroom_mb()
    if headroom is not None and need > headroom:
        raise MemoryLimitReached(
            f"memory limit of {limits.memory_mb:,} MB would be passed: labelling the {count:,} states and {edges:,} "
            f"transitions would take about {need:,.0f} MB more, and {headroom:,.0f} MB are left "
            f"(resident memory {resident_mb():,.0f} MB)")
    if phase is not None and survey.seconds() >= 1.0:  # building takes about as long: worth a line
        phase(f"expanding the state space: {count:,} states and {edges:,} transitions reachable; building their "
              f"graph (about {survey.seconds():.0f} s, as long as counting them took)")
    built = time.perf_counter()  # the time of the last line
    space = _state_space(task, max_states)
    if space is None:
        raise StateLimitExceeded(
            f"{task.source.describe()}: the state space has more than {max_states} states; raise the "
            "limit (--max-states) or label states along optimal plans instead (--method optimal)"
        )
    atoms = StateAtoms(task)
    states = space.get_states()
    n = len(states)
    beat = Heartbeat(limits, phase, lambda done, seconds: f"labelling the expanded states: {done:,} of {n:,} states, "
                                                          f"then {edges:,} transitions", since=built)
    fluent, value, steps = [], np.empty(n), np.empty(n, np.int32)
    dead_end, is_goal = np.empty(n, bool), np.empty(n, bool)
    initial_value, initial = float("inf"), 0
    for i, state in enumerate(states):
        beat()
        label = space.get_state_label(state)
        fluent.append(atoms.fluent(state))
        dead_end[i], is_goal[i] = label.is_dead_end, label.is_goal
        value[i] = float("inf") if label.is_dead_end else label.cost_to_goal
        steps[i] = -1 if label.is_dead_end else label.steps_to_goal
        if label.is_initial:
            initial_value, initial = value[i], i
        if progress is not None and (i % 1000 == 0 or i == n - 1):
            progress(i + 1, n)
    unit = task.has_unit_costs()
    if not unit:
        # pymimir's steps_to_goal counts the fewest actions to a goal, ignoring costs; with
        # action costs the documented label is the length of a cheapest path.
        beat = Heartbeat(limits, phase, lambda done, seconds: f"finding the lengths of cheapest paths: {done:,} of "
                                                              f"{n:,} states", since=beat.reported)
        steps = _steps_on_cheapest_paths(space, states, value, is_goal, beat)
    beat = Heartbeat(limits, phase, lambda done, seconds: f"recording the {edges:,} transitions: "
                                                          f"{done / max(2 * edges, 1):.0%} done", since=beat.reported)
    transitions = Transitions.collect(task, _transitions(space, states, unit, beat), task.action_signature.width, beat)
    return LabelledStates(fluent, value, steps, dead_end, is_goal, np.zeros(n, np.uint8), initial_value, transitions,
                          initial)


def _transitions(space, states, unit_costs: bool, beat=None) -> list[list]:
    """Return, per state, its (ground action, cost, successor row) from the expanded space;
    ``beat(units)`` is called with each state's number of transitions."""
    position = {state.get_index(): i for i, state in enumerate(states)}
    out = []
    for state in states:
        entries = []
        for action, successor in space.get_forward_transitions(state):
            cost = 1.0 if unit_costs else action.apply(state, return_cost=True)[1]
            entries.append((action, cost, position[successor.get_index()]))
        out.append(entries)
        if beat is not None:
            beat(len(entries))
    return out


class _TooManyStates(Exception):
    """Raised from pymimir's callback to stop the survey above the state limit."""


def _survey(task, max_states: int, beat: Heartbeat) -> tuple[int, int]:
    """Return (states, transitions) of the space reachable from the initial state of ``task``.

    A breadth-first search in pymimir, on to the end (past goals), calls back for every state
    and transition: ``beat`` counts the states, checks the memory limit and reports the progress
    every few seconds. Raises :class:`StateLimitExceeded` above ``max_states`` states and
    :class:`~up_gnnplan.limits.MemoryLimitReached` above the memory limit. The states stay in the
    task's state repository, where pymimir's expansion finds them again.
    """
    from pymimir.advanced.search import BrFSOptions, IBrFSEventHandler, find_solution_brfs

    generated = [0]

    class Counter(IBrFSEventHandler):
        def on_expand_state(self, state):
            beat()
            if beat.count > max_states:
                raise _TooManyStates

        def on_expand_goal_state(self, state):  # a goal state is expanded too: counted there
            pass

        def on_generate_state(self, state, action, cost, successor):
            generated[0] += 1

        # The other events are not needed.
        def on_generate_state_in_search_tree(self, *args): pass
        def on_generate_state_not_in_search_tree(self, *args): pass
        def on_finish_g_layer(self, *args): pass
        def on_start_search(self, *args): pass
        def on_end_search(self, *args): pass
        def on_solved(self, *args): pass
        def on_unsolvable(self, *args): pass
        def on_exhausted(self, *args): pass

    options = BrFSOptions()
    options.stop_if_goal = False
    options.start_state = task.initial_state()._advanced_state
    options.event_handler = Counter()
    try:
        find_solution_brfs(task.mimir_problem._search_context, options)
    except _TooManyStates:
        raise StateLimitExceeded(
            f"{task.source.describe()}: the state space has more than {max_states:,} states; raise the "
            "limit (--max-states) or label states along optimal plans instead (--method optimal)") from None
    return beat.count, generated[0]


def _state_space(task, max_states: int):
    """Return pymimir's full state space of ``task``, or None above ``max_states`` states.

    ``StateSpaceSampler.new`` also returns None for unsolvable problems (its option
    ``remove_if_unsolvable`` is on), which would read as "too many states" and make
    ``allow_unsolvable`` impossible, so the space is built with that option off.
    """
    import pymimir
    from pymimir.advanced.datasets import StateSpace, StateSpaceOptions
    from pymimir.advanced.datasets import StateSpaceSampler as AdvancedStateSpaceSampler

    options = StateSpaceOptions()
    options.max_num_states = max_states
    options.symmetry_pruning = False
    options.remove_if_unsolvable = False
    result = StateSpace.create(task.mimir_problem._search_context, options)
    if result is None:
        return None
    return pymimir.StateSpaceSampler(AdvancedStateSpaceSampler(result[0]), task.mimir_problem)


def _steps_on_cheapest_paths(space, states, value: np.ndarray, is_goal: np.ndarray, beat=None) -> np.ndarray:
    """Return, per state, the fewest actions on a path to a goal of cost V* (-1 for dead ends).

    A path is cheapest exactly when each of its transitions is tight (cost + V*(next) ==
    V*(state)), so this is a breadth-first search backwards from the goals over tight
    transitions. (pymimir's ``get_backward_transitions`` yields the target state, not the
    source, so the reverse edges are collected from the forward transitions.)
    """
    position = {state.get_index(): i for i, state in enumerate(states)}
    tight_predecessors: list[list[int]] = [[] for _ in states]
    for i, state in enumerate(states):
        if beat is not None:
            beat()
        if not np.isfinite(value[i]):
            continue
        for action, _ in space.get_forward_transitions(state):
            successor, cost = action.apply(state, return_cost=True)
            j = position[successor.get_index()]
            if abs(cost + value[j] - value[i]) <= 1e-9 * max(1.0, abs(value[i])):
                tight_predecessors[j].append(i)
    steps = np.full(len(states), -1, np.int32)
    queue = deque(np.flatnonzero(is_goal).tolist())
    steps[list(queue)] = 0
    while queue:
        j = queue.popleft()
        for i in tight_predecessors[j]:
            if steps[i] == -1:
                steps[i] = steps[j] + 1
                queue.append(i)
    return steps

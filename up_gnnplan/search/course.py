"""Whether a policy is on course to the goal when its share of the time runs out (mode auto's hand-off).

With fallback ``model+lama``, the learned part has ``handoff_share`` of the time and LAMA-first the
rest. A policy that is still walking towards the goal when its share is spent would hand over a
task it was about to solve (medium Blocksworld, 146 blocks: 488 steps in 13.7 s on a quiet machine,
468 of them in the share at load 3-5, then LAMA-first timed out). :class:`Course` watches the
policy's progress, measured by the model's V where it has a value head (its estimate of the cost
to the goal), else as the goal literals the state does not satisfy, and extends the share where the
pace of the recent steps reaches the goal within the time the whole solve has left:

- the window is the later half of the steps walked (at least :data:`MIN_STEPS`), so a policy that
  first unstacks and then builds is judged on its building;
- the forecast is what is left (V, or the literals) over the progress per step in the window, times
  the window's seconds per step, times :data:`SAFETY`; a window without progress is not on course;
- the share is extended to the forecast (never beyond the solve's deadline), and judged again when
  the extension runs out, so a policy that slows down hands over as before;
- the policy's step limit (4 x FF's estimate + 50, or 1000 where FF is left out) is extended the same
  way when the walk reaches it on course and its forecast time fits, but never a limit the user
  gave (engine param ``max_steps``);
- where FF takes long to ground, it is grounded beside the walk (:class:`~up_gnnplan.search.ff.Trial`),
  and its estimate of the initial state sets the step limit from the step it comes
  (:meth:`Course.awaited`);
- no extension, of the share or of the steps, takes a walk past the FF-relative step limit
  (:attr:`Course.cap`: 4 x FF's estimate + 50, where FF gave one): a Transport walk of the medium
  tier (FF's estimate 194) was extended to 2,154 steps and 49.7 s of the minute, 11 of its 44 goal
  literals still left, and LAMA-first had 7 s;
- a walk too slow to reach the goal at all hands over at once (:meth:`Course.hopeless`): the steps
  it still needs (FF's estimate of the initial state's plan less the steps walked, else the goal
  literals left), at its pace since its first step, would take over :data:`HOPELESS_FACTOR` times
  the time the whole solve has left, or, from step :data:`HOPELESS_SURE_STEPS` on, over that time
  itself. Rovers of the medium tier takes 1-2 s a step for plans of about 400 steps: without the
  test it spent the learned part's share walking, and LAMA-first then had too little of the minute
  left.
- a walk on course whose forecast does not fit in the time the solve has left walks on while LAMA-first's
  translator runs beside it (``translate``: it starts the translation), until the translator ends;
  LAMA-first then searches from the walk's furthest state (:func:`~up_gnnplan.search.lama.lama_first_from`).
  Handing over at once would have the translator start then, while the walk stops: a Blocksworld task of
  the hard tier (317 blocks, 201,612 ground actions) took the translator more than the half minute left,
  and the walk, which was still achieving goal literals, had stopped for nothing. Where a core is free
  the two run side by side; on one core they share it, the translator then ending later;
- where the translation would take a good part of the time left and a core is free, LAMA-first's translator
  starts beside the walk at once (:func:`translate_at_once`; where FF's trial runs beside the walk, which has
  the free core, once that has ended); the walk goes on as without it, and its
  hand-off, or its wait beside the translator when it is on course but too slow, finds the translation done
  or under way. Hard-lower Satellite (55 satellites): the translator takes 34.9 s, LAMA-first's search from the
  initial state 5 more; started when the walk's half of the minute ran out, it had not ended at the deadline;
- once LAMA-first's translation has started, no extension takes the walk past the deadline less
  :data:`RESERVE_SHARE` of the solve's limit, which LAMA-first keeps to plan from the walk's furthest state;
- a walk that goes round in circles stops at once (:meth:`Course.circling`), and the learned fallback
  goes on from its path: for :data:`CIRCLE_STEPS` steps it came no closer to the goal than before,
  and in them it undid goal literals it had achieved itself at least :data:`CIRCLE_UNDONE` times.
  Transport of the medium tier (44 packages): the walk delivered 17-18 packages, then picked
  delivered ones up and dropped them again for 600 more steps, until its step limit, 17.6 s of the
  minute; LAMA-first then had 26 s and needed 38. On IPC 2023 testing/easy it stops Satellite's and
  Transport's walks that would run to their step limit, whose fallback then solves most of them.
  With ``keep`` (engine param ``keep_goals``) the first circle does not stop the walk: from there it keeps the goal
  literals its state holds (:meth:`Course.undoes`: the policies take a step that undoes one only where no other is
  left), and a second :data:`CIRCLE_STEPS` steps no closer to the goal stop it. Medium Transport, 44 packages: the
  kept walk reached the goal 11 steps after its circle, 5.8 s against 28.7 s through the learned fallback and
  LAMA-first (benchmarks/results/code_ab/keep-goals/).

Goals with quantified conjuncts (compiled into derived atoms) or numeric conditions have no literal
count; there, without a value head, the share is never extended. The user's time limit is the solve's deadline, which
nothing here moves.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

# Steps walked before the pace is trusted, and the share of the walk it is measured on (the later part).
MIN_STEPS = 8
WINDOW = 0.5
# The forecast's margin: the time for the literals left at the window's pace, times this.
SAFETY = 1.5
# Judged when the share has less than this many of the window's steps left.
AHEAD_STEPS = 2
# A walk whose steps still needed would take over this many times the time the solve has left, at
# its pace since its first step, is hopeless; judged from this step on (the first step, with the
# session's warm-up, is not timed).
HOPELESS_FACTOR = 2.0
HOPELESS_STEPS = 3
# From this step on the pace is measured over enough steps to hold the walk to the time left itself
# (factor 1): a walk that needs more than all of it cannot finish, whatever extension it is granted.
# Miconic of 150 passengers: 0.15 s a step for FF's 392 steps, 58 s, when 51 s were left; the walk
# spent its share, and LAMA-first then solved the task in 4-6 s (alone in 5.3 s).
HOPELESS_SURE_STEPS = 20
# A walk that for this many steps came no closer to the goal (fewest goal literals left) and in them
# undid goal literals it had achieved itself at least CIRCLE_UNDONE times goes round in circles. On
# IPC 2023 testing/easy the shipped models' walks do only in Satellite and Transport (from step
# 109-316; 2 of those 24 walks would have reached the goal, at step 369 and 424, and the fallback
# solves them), the most elsewhere is 3; medium Transport's walks do from step 202 and 312.
CIRCLE_STEPS = 100
CIRCLE_UNDONE = 10
# A walk that came no closer to the goal for STALL_STEPS steps, and for as many steps as it took to get that close
# (STALL_FACTOR times them), with at most STALL_SHARE of its goal literals left, stalls without going round in
# circles: the medium tier's Satellite walks reached 1 of 46 and 11 of 119 goal literals left at step 84 and 186,
# and walked on to their step limit or share (382 and 758 steps; 12.7 and 28.1 s of the minute) without another;
# LAMA-first then took 2 and 12 actions from the walk's furthest state. Of the shipped models' walks on IPC 2023
# testing/easy and the medium and hard-lower tiers (no step limit, 25 s a walk), the rule stops five the circle rule
# does not, none of which reaches the goal (Rovers p22 and p30, Satellite p26, the medium tier's Satellite walks); the
# two that reach it after a stop by the rule (Satellite p20 at step 231, Transport p27 at 174) undo goal literals, and
# the circle rule stops them at the same steps. At a share of 0.25 or 0.5 Transport p24 (274 steps) is stopped too
# (benchmarks/results/walk_circles/stalls.md).
STALL_STEPS = 100
STALL_FACTOR = 1.0
STALL_SHARE = 0.1
# The share of the memory left under the solve's limit that LAMA-first's translator beside the walk may take;
# the walk keeps the rest.
BESIDE_MEMORY_SHARE = 0.5
# LAMA-first's translator starts beside the walk at once where a core is free and it would take at least this
# share of the time left at TRANSLATOR_SECONDS_PER_ACTION seconds per estimated ground action (the translator's
# pace on the hard-lower tier's Satellite, 118-124 µs; Transport and Ferry 166-183, Blocksworld 240; Spanner,
# whose estimate counts many actions the translator never builds, 2-3: benchmarks/results/translate_speed/).
EARLY_SHARE = 0.05
TRANSLATOR_SECONDS_PER_ACTION = 120e-6
# ... but not where it would take over this many times the time left: it could not end in time (the estimate counts
# up to 3x the time left where the translator took less: hard-lower Spanner, 185 s estimated for 4.5 s); 400 blocks
# in 3 s (38 s estimated) would only leave a translator's message where the solve's time limit is the cause.
LATE_FACTOR = 4.0
# Where LAMA-first's translation has started (at once or beside the walk), no extension takes the walk's share past
# the solve's deadline less this share of the solve's time limit, kept for LAMA-first from the walk's furthest state.
# Hard-lower Satellite (55 satellites): the walk, on course after 381 steps (135 of 304 goal literals left), was
# extended to the deadline by its forecast of 29.5 s, made 725 steps without reaching the goal, and LAMA-first, its
# translation done since the minute's first half, had no time left; LAMA-first alone solved the task in 33 s.
RESERVE_SHARE = 0.2
# With ``reduce`` (engine param ``handoff_reduced``): where the walk goes on past its share, LAMA-first plans beside it
# on the task without the done objects of its state (search.lama.ReducedSearch) where a core is free, judged at most
# every REDUCE_EVERY seconds of the walk; it starts again from a later state (the one before stopped) only where the
# goal literals left have fallen to REDUCE_AGAIN of those where the one before started. Hard-lower Transport (172
# packages): the walk delivers 163 in 47 s of the minute, and the task without them takes 12.9 s; 44 packages left
# take about 20 s, 9 more of the walk's steps about 4 s.
REDUCE_EVERY = 2.0
REDUCE_AGAIN = 0.5


def goal_literals(task) -> list:
    """The goal's non-static literals of ``task`` (pymimir's), which a state's progress is counted by; none where
    the goal has numeric conditions or quantified ones (compiled into derived atoms)."""
    condition = task.goal_condition
    literals = [literal for literal in condition.get_literals() if not literal.is_static()]
    return [] if condition.get_numerics() or any(literal.is_derived() for literal in literals) else literals


def translation_seconds(task) -> float:
    """LAMA-first's translation of ``task``, estimated at :data:`TRANSLATOR_SECONDS_PER_ACTION` a ground action
    (:func:`~up_gnnplan.problems.size.estimate_ground_actions`)."""
    from up_gnnplan.problems.size import estimate_ground_actions

    return estimate_ground_actions(task) * TRANSLATOR_SECONDS_PER_ACTION


def translate_at_once(task, limits, core: bool = True) -> str:
    """Why LAMA-first's translator of ``task`` should start beside the walk at once under ``limits``, in words
    (empty: it should not): the translation would take at least :data:`EARLY_SHARE` of the time left and at most
    :data:`LATE_FACTOR` times it, estimated
    from the task's ground actions (:func:`~up_gnnplan.problems.size.estimate_ground_actions`), and (with
    ``core``) a core is free (:func:`~up_gnnplan.search.ff.free_core`); without ``core`` the caller asks for the
    free core later (FF's trial has it now)."""
    from up_gnnplan.problems.size import estimate_ground_actions
    from up_gnnplan.search.ff import free_core

    remaining = limits.deadline.remaining()
    if remaining is None:
        return ""
    actions = estimate_ground_actions(task)
    seconds = actions * TRANSLATOR_SECONDS_PER_ACTION
    if not EARLY_SHARE * remaining <= seconds <= LATE_FACTOR * remaining or (core and not free_core()):
        return ""
    return (f"about {actions:,} ground actions, some {seconds:.0f} s of translation at "
            f"{TRANSLATOR_SECONDS_PER_ACTION * 1e6:.0f} µs each" + (", and a core is free" if core else ""))


class Course:
    """The progress of one policy walk, and the extensions of its share ``part`` of the ``whole`` solve's
    time (both :class:`~up_gnnplan.limits.Limits`; ``part`` from ``whole.share``).

    ``value``: the model's value function, where it has a value head (with ``inputs``, the task's
    state-to-input conversion): its V, the model's estimate of the cost to the goal, measures the
    progress instead of the goal literals, which a walk may achieve only at its end (Spanner's
    nuts are tightened at the gate, after every spanner is picked up). V is computed only when the
    pace is judged, for the window's first and last states.
    """

    def __init__(self, task, part, whole, steps: bool = False, value=None, inputs=None,
                 estimate: float | None = None, trial=None, factor: float = 0.0, say=None, translate=None,
                 at_once: str = "", keep: bool = False, reduce=None):
        self.part, self.whole, self.steps, self.estimate = part, whole, steps, estimate
        # Starts LAMA-first's translation (a search.lama.Translation): at once where ``at_once`` says why
        # (:func:`translate_at_once`), else where the walk is on course but too slow.
        self.translate, self.translation = translate, None
        self.task = task
        self.due: float | None = None  # where the translation started: the clock at its estimated end
        self.beside = False  # the walk, too slow for the time left, goes on until the translator ends
        self.handed = False  # the translator's end was seen
        self.memory_mb = part.memory_mb  # the walk's memory limit without a translator beside it
        # FF grounded beside the walk (a search.ff.Trial): its estimate sets the step limit when it comes.
        self.trial, self.factor, self.say = trial, factor, say or (lambda level, text: None)
        self.value = value if inputs is not None else None
        self.inputs = inputs
        self.literals = goal_literals(task)
        self.total = len(self.literals)
        # (step, clock, what is left: goal literals, or V computed when needed (None until then), state)
        self.history: list[tuple[int, float, float | None, object]] = []
        self.extensions: list[str] = []
        self.began: float | None = None  # the clock after the first step
        self.verdict = ""  # why the walk was found hopeless (:meth:`hopeless`) or circling (:meth:`circling`)
        self.too_slow = False  # hopeless: the learned fallback, slower still, is skipped too
        # Going round in circles (:meth:`circling`): the goal literals the last state satisfied, those
        # the walk achieved, the fewest left so far and the step it was reached, the achieved ones undone since.
        self.holds: np.ndarray | None = None
        self.achieved = np.zeros(len(self.literals), dtype=bool)
        # The goal literals as fluent atom indices and polarities (:meth:`holding`), and the state last asked about.
        self.atoms = np.array([literal.get_atom().get_index() for literal in self.literals], dtype=np.int64)
        self.positive = np.array([literal.get_polarity() for literal in self.literals], dtype=bool)
        self.asked, self.answer = None, None
        self.fewest, self.fewest_step, self.undone = len(self.literals) + 1, 0, 0
        # With ``keep``, a walk seen going round in circles keeps the goal literals its state holds from then on
        # (``keeping``; ``kept``: those of the state last seen): :meth:`undoes`.
        self.keep, self.keeping, self.kept = keep, False, []
        # Starts LAMA-first on the task without the done objects of a state of the walk (a search.lama.ReducedSearch,
        # or None where too few objects are done) from (state, step, goal literals left, memory share), where the walk
        # goes on past its share (``reduce_at``: its end, then the clock of the next look): :meth:`_reduce_beside`.
        self.reduce, self.reduced = reduce, None
        self.reduce_at = part.deadline.end if reduce is not None and self.literals else None
        # Where FF's trial has the free core, the translator starts once it has ended (:meth:`awaited`).
        self.pending = at_once if translate is not None else ""
        if self.pending and trial is None:
            self._start_at_once("at once")

    @property
    def usable(self) -> bool:
        return self.value is not None or bool(self.literals)

    def holding(self, state) -> np.ndarray:
        """Whether each of the goal's (non-static) literals holds in ``state``, from its fluent atoms' indices (kept
        for the state last asked about: the course asks several times a step). Hard-tier Blocksworld (488 blocks):
        one ``literal_holds`` call a literal took 2.5 ms of a 30-40 ms step, the course asking twice."""
        if self.asked is not state:
            atoms = np.fromiter(state._advanced_state.get_fluent_atoms(), dtype=np.int64)
            self.asked, self.answer = state, np.isin(self.atoms, atoms) == self.positive
        return self.answer

    def left(self, state) -> int:
        """Return how many of the goal's (non-static) literals ``state`` does not satisfy."""
        return len(self.literals) - int(np.count_nonzero(self.holding(state)))

    def observe(self, step: int, state) -> None:
        """Record the state reached after ``step`` steps; extend the share if it is about to run out on course;
        end it once LAMA-first's translator, beside the walk, has ended."""
        if self.value is not None:
            self.record(step, None, time.perf_counter(), state)
        elif self.literals:
            self.record(step, self.left(state), time.perf_counter())
        if self.translation is not None and not self.handed and self.translation.poll():
            if self.beside:
                walks_on = self._translated(step)
            else:  # started at once, ended before the walk needed it: its memory is the walk's again
                self.handed, walks_on = True, True
                self.part.memory_mb = self.memory_mb
            if walks_on:  # (a walk that hands over now has LAMA-first search from its state first)
                self._search_beside(step)
        if self.reduce_at is not None and time.perf_counter() >= self.reduce_at:
            self._reduce_beside(step, state)

    def awaited(self, step: int, max_steps: int) -> int:
        """Return the step limit after ``step`` steps: ``max_steps``, or, once FF's trial beside the walk
        has reported, its FF-relative limit (:func:`~up_gnnplan.search.ff.astray_limit`), said in the log."""
        trial = self.trial
        if trial is None or not trial.poll():
            return max_steps
        self.trial = None
        if self.pending:
            from up_gnnplan.search.ff import free_core

            if free_core():
                self._start_at_once(f"once FF's trial ended, at step {step}")
            self.pending = ""
        if trial.estimate is None:
            why = trial.why or "FF finds the initial state a dead end"
            self.say("info", f"policy step limit {max_steps} from step {step} (no FF estimate: FF {why})")
            return max_steps
        from up_gnnplan.search.ff import ASTRAY_FLOOR

        self.estimate = trial.estimate
        limit = max_steps if self.cap is None else min(max_steps, self.cap)
        self.say("info", f"policy step limit {limit} from step {step} ({self.factor:g} x FF's estimate "
                         f"{trial.estimate:g} of the initial state + {ASTRAY_FLOOR}; FF grounded beside the policy "
                         f"in {trial.took:.1f} s)")
        return limit

    def hopeless(self, step: int, state) -> bool:
        """Return whether the walk, after ``step`` steps in ``state``, cannot reach the goal in time:
        the steps it still needs (``estimate``, FF's estimate of the initial state, less the steps
        walked; else the goal literals left) at its pace since its first step would take over
        :data:`HOPELESS_FACTOR` times the time the whole solve has left (from step
        :data:`HOPELESS_SURE_STEPS` on: that time itself). Says why in ``verdict``. Not while LAMA-first's translator
        runs beside it, nor where the hand-off would have to translate again in less time than that took."""
        now = time.perf_counter()
        if step == 1:
            self.began = now
        whole = self.whole.deadline.remaining()
        if step < HOPELESS_STEPS or self.began is None or whole is None or self.translating:
            return False  # while LAMA-first's translator runs, stopping the walk would only wait for it
        if self._translate_again_over(whole):
            return False  # LAMA-first could not plan in the time left: the walk keeps its chance
        if self.estimate is not None:
            needed, basis = self.estimate - step, f"FF's estimate {self.estimate:g} of the plan less the steps walked"
        elif self.literals:
            needed, basis = self.left(state), "the goal literals left"
        else:
            return False
        pace = (now - self.began) / (step - 1)
        factor = HOPELESS_FACTOR if step < HOPELESS_SURE_STEPS else 1.0
        if needed <= 0 or needed * pace <= factor * whole:
            return False
        over = f"over {factor:g} x the" if factor != 1.0 else "more than the"
        self.verdict = (f"too slow to reach the goal in time after {step} steps: {needed:g} more steps ({basis}) "
                        f"at {pace:.2f} s a step would take {needed * pace:.0f} s, {over} {whole:.1f} s the solve "
                        "has left")
        self.too_slow = True
        return True

    def _translate_again_over(self, seconds: float) -> bool:
        """Whether LAMA-first's translator beside the walk ended without a translated task after longer than
        ``seconds``: the hand-off would translate again, and could not end in them. Hard-tier Blocksworld (488
        blocks): the translator ended so after 43.6 s, and the walk, 68 goal literals short after 1,647 steps, was
        judged too slow with 2.3 s left and stopped, to hand LAMA-first 1.2 s."""
        return self.translation_failed and self.translation.took > seconds

    @property
    def translation_failed(self) -> bool:
        """Whether LAMA-first's translator beside the walk has ended without a translated task."""
        return self.translation is not None and self.translation.poll() and not self.translation.done()

    def circling(self, step: int, state) -> bool:
        """Return whether the walk, after ``step`` steps in ``state``, goes round in circles: for
        :data:`CIRCLE_STEPS` steps no fewer goal literals left than before, and in them goal literals
        the walk had achieved undone :data:`CIRCLE_UNDONE` times or more. Says why in ``verdict``."""
        if not self.literals:
            return False
        holds = self.holding(state)
        if self.holds is not None:
            self.undone += int(np.count_nonzero(self.holds & ~holds & self.achieved))
            self.achieved |= holds & ~self.holds
        self.holds = holds
        if self.keeping:
            self.kept = self._held(holds)
        left = self.left(state)
        if left < self.fewest:
            self.fewest, self.fewest_step, self.undone = left, step, 0
            return False
        if self.undone < CIRCLE_UNDONE and not self.keeping:
            return self._stalled(step)
        if step - self.fewest_step < CIRCLE_STEPS:
            return False
        circles = (f"no closer to the goal than {self.fewest} of {self.total} goal literals left (step "
                   f"{self.fewest_step})")
        if self.keep and not self.keeping:
            self.say("info", f"going round in circles after {step} steps ({circles}, and since then it undid goal "
                             f"literals it had achieved {self.undone} times): from here it keeps the goal literals "
                             "its state holds, undoing one only where no other step is left")
            self.keeping, self.fewest_step, self.undone = True, step, 0
            self.kept = self._held(holds)
            return False
        self.verdict = f"going round in circles after {step} steps: {circles}, and since then " + (
            f"it undid goal literals it had achieved {self.undone} times" if not self.keeping else
            "it kept the goal literals it held")
        return True

    def _stalled(self, step: int) -> bool:
        """Whether the walk, after ``step`` steps, stalls: no closer to the goal for :data:`STALL_STEPS` steps and
        :data:`STALL_FACTOR` times the steps it took to get as close, with at most :data:`STALL_SHARE` of its goal
        literals left. Says why in ``verdict``."""
        if not 0 < self.fewest <= STALL_SHARE * self.total:
            return False
        if step - self.fewest_step < max(STALL_STEPS, int(STALL_FACTOR * self.fewest_step)):
            return False
        self.verdict = (f"stalled after {step} steps: no closer to the goal than {self.fewest} of {self.total} goal "
                        f"literals left (step {self.fewest_step})")
        return True

    def _held(self, holds: np.ndarray) -> list:
        return [self.literals[i] for i in np.flatnonzero(holds)]

    def undoes(self, successor) -> bool:
        """Whether ``successor`` of the state last seen by :meth:`circling` undoes a goal literal that state holds,
        once the walk keeps them (``keeping``: it went round in circles; False before)."""
        return self.keeping and bool(self.kept) and not successor.literals_hold(self.kept)

    def _left(self, i: int) -> float:
        step, now, left, state = self.history[i]
        if left is None:
            left = max(0.0, float(self.value(self.inputs([state]))[0]))
            self.history[i] = (step, now, left, state)
        return left

    def window(self) -> tuple[int, int, float] | None:
        """Return (the window's first entry, its steps, its seconds), or None before :data:`MIN_STEPS` steps."""
        if len(self.history) < MIN_STEPS + 1:
            return None
        first = min(len(self.history) - MIN_STEPS - 1, int(len(self.history) * (1 - WINDOW)))
        return first, self.history[-1][0] - self.history[first][0], self.history[-1][1] - self.history[first][1]

    def pace(self) -> tuple[int, float, float, float] | None:
        """Return (steps, seconds, progress, left) of the window, or None before :data:`MIN_STEPS` steps:
        progress in goal literals achieved, or in V's fall (V computed here, for the window's two ends)."""
        window = self.window()
        if window is None:
            return None
        first, steps, seconds = window
        left = self._left(len(self.history) - 1)
        return steps, seconds, self._left(first) - left, left

    def forecast(self) -> tuple[int, float, str] | None:
        """Return (steps, seconds) to the goal at the window's pace, times :data:`SAFETY`, and the pace in
        words; None before :data:`MIN_STEPS` steps or where the window made no progress."""
        pace = self.pace()
        if pace is None or pace[2] <= 0 or pace[3] <= 0:
            return None
        steps, seconds, achieved, left = pace
        windows = SAFETY * left / achieved  # windows of the same pace to the goal
        return math.ceil(windows * steps), windows * seconds, self._says(left, achieved, steps)

    def _says(self, left: float, achieved: float, steps: int) -> str:
        if self.value is not None:
            return f"V {left:.1f}, down {achieved:.1f} in the last {steps} steps"
        return f"{left:g} of {self.total} goal literals left, {achieved:g} achieved in the last {steps} steps"

    def record(self, step: int, left: float | None, now: float, state=None) -> None:
        """:meth:`observe` with what is left (None: V of ``state``, when needed) and the clock given."""
        self.history.append((step, now, left, state))
        remaining, whole, window = self.part.deadline.remaining(), self.whole.deadline.remaining(), self.window()
        if remaining is None or whole is None or window is None or remaining > AHEAD_STEPS * window[2] / window[1]:
            return  # judged only when the share is about to run out
        forecast = self.forecast()
        if forecast is None or self._past_cap(step, forecast[0]):
            return
        if forecast[1] > whole:
            self._beside_translation(step, whole, forecast[2])
            return
        end, kept = self._extension_end(now, forecast[1])
        if end <= self.part.deadline.end:
            return
        self.extensions.append(f"on course after {step} steps ({forecast[2]}): the learned part's share extended "
                               f"by {end - self.part.deadline.end:.1f} s{kept}")
        self.part.deadline.extend_to(end)

    def _extension_end(self, now: float, seconds: float) -> tuple[float, str]:
        """Return where an extension of ``seconds`` from ``now`` ends: at the latest the solve's deadline, less
        :data:`RESERVE_SHARE` of its limit where LAMA-first's translation has started and has ended or, estimated,
        ends before that; and the words for that.

        A translation estimated to end after the reserve's start leaves LAMA-first nothing to plan with in it:
        hard-lower Transport (108 packages; the translator alone takes 89 s), the walk on course with 4 of 108
        goal literals left was held 12 s before the deadline, where it needed about 6 s more. So does one that
        ended without a translated task (its share of the memory beside the walk too small; the hand-off would
        translate again): hard-tier Blocksworld (488 blocks), the translator ended after 36.6 s, the walk on course
        was held 12 s before the deadline after 1,594 steps, where alone it reaches the goal at step 1,786, at
        about 30 ms a step."""
        end = min(now + seconds, self.whole.deadline.end)
        if self.translation is None or self.whole.deadline.seconds is None:
            return end, ""
        reserve = RESERVE_SHARE * self.whole.deadline.seconds
        if end <= self.whole.deadline.end - reserve:
            return end, ""
        if self.translation_failed:
            return end, " (none kept for LAMA-first: its translator ended without a translated task)"
        if self.due is not None and self.due > self.whole.deadline.end - reserve and not self.translation.poll():
            return end, " (none kept for LAMA-first: its translator is estimated to end after the time it would keep)"
        return self.whole.deadline.end - reserve, f" (to {reserve:.0f} s before the deadline, kept for LAMA-first)"

    def translation_in_time(self) -> bool:
        """Whether LAMA-first's translation beside the walk has written the translated task, or runs still and is
        estimated (at :data:`TRANSLATOR_SECONDS_PER_ACTION` a ground action) to end before the deadline."""
        translation, end = self.translation, self.whole.deadline.end
        if translation is None:
            return False
        if translation.poll():
            return translation.done()
        return self.due is not None and end is not None and self.due < end

    @property
    def translating(self) -> bool:
        """Whether the walk, too slow for the time left, goes on while LAMA-first's translator runs beside it."""
        return self.beside and not self.handed

    def _start_at_once(self, when: str) -> None:
        """Start LAMA-first's translator beside the walk before it is needed (:func:`translate_at_once`)."""
        why, self.pending = self.pending, ""
        if self.translation is None and self._start_translation():
            self.say("info", f"LAMA-first's translator started beside the walk {when} ({why})")

    def _start_translation(self) -> bool:
        """Start LAMA-first's translation with :data:`BESIDE_MEMORY_SHARE` of the memory left, the walk keeping
        the rest; return whether it started (else why not is said, and no translation starts again)."""
        from up_gnnplan.errors import GnnplanError

        headroom = self.whole.headroom_mb()
        try:
            self.translation = self.translate(BESIDE_MEMORY_SHARE)
        except GnnplanError as error:  # a limit reached, or Fast Downward missing: the hand-off says so
            self.say("info", f"LAMA-first's translator not started beside the walk: {error}")
            self.translate = None
            return False
        self.due = time.perf_counter() + translation_seconds(self.task)
        self._walk_keeps(headroom)  # the walk and the translator each take a share of the memory left
        return True

    def _walk_keeps(self, headroom: float | None) -> None:
        """Hold the walk to its share of the ``headroom`` (the memory left) beside LAMA-first's translator or search,
        which has :data:`BESIDE_MEMORY_SHARE` of it."""
        if headroom is not None:
            from up_gnnplan.limits import resident_mb

            self.part.memory_mb = int(resident_mb() + (1 - BESIDE_MEMORY_SHARE) * headroom)

    def _search_beside(self, step: int) -> None:
        """LAMA-first's translator has ended after ``step`` steps: where it wrote the translated task and a core is
        free, start LAMA-first's search of it from the initial state beside the walk
        (:class:`~up_gnnplan.search.lama.BesideSearch`) with :data:`BESIDE_MEMORY_SHARE` of the memory left; the
        walk, and the learned fallback after it, stop where it finds a plan first (the part's ``overtaken``)."""
        from up_gnnplan.errors import GnnplanError
        from up_gnnplan.search.ff import free_core

        if not self.translation.done() or self.whole.deadline.passed():
            return
        if not free_core():
            self.say("info", f"LAMA-first's search not started beside the walk at step {step}: no core is free")
            return
        headroom = self.whole.headroom_mb()
        try:
            self.translation.search_beside(self.whole, BESIDE_MEMORY_SHARE)
        except GnnplanError as error:  # a limit reached, too little memory left: the hand-off says so
            self.say("info", f"LAMA-first's search not started beside the walk: {error}")
            return
        self._walk_keeps(headroom)
        self.part.overtaken = self._overtaken
        self.say("info", f"LAMA-first searches beside the walk from the initial state from step {step} (its "
                         f"translator ended after {self.translation.took:.1f} s; a core is free)")

    def _beside_translation(self, step: int, whole: float, words: str) -> None:
        """On course after ``step`` steps (``words``) but too slow for the ``whole`` seconds the solve has left: start
        LAMA-first's translation, once (unless it started at once), and extend the share to the solve's deadline
        (:meth:`observe` ends it when the translator ends). A translation started at once that has ended already
        leaves the share as it is: the walk hands over when it runs out. Where the translation could not end in time
        (estimated at over :data:`LATE_FACTOR` times the time left) and ``reduce`` is given, the walk goes on to the
        deadline without it, LAMA-first planning beside it on the task without its done objects
        (:meth:`_reduce_beside`) on the core the translator would take."""
        if self.beside:
            return
        seconds = translation_seconds(self.task) if self.translation is None and self.reduce is not None else 0.0
        if seconds > LATE_FACTOR * whole:
            self.beside = True
            self.part.deadline.extend_to(self.whole.deadline.end)
            self.extensions.append(
                f"on course after {step} steps ({words}) but too slow for the {whole:.1f} s left, and LAMA-first's "
                f"translator would take about {seconds:.0f} s: it walks on to the deadline without "
                "it (where a core is free, LAMA-first plans beside it on the task without its done objects)")
            self.reduce_at = time.perf_counter()
            return
        if self.translation is None:
            if self.translate is None or not self._start_translation():
                return
        elif self.translation.poll():
            return
        self.beside = True
        self.part.deadline.extend_to(self.whole.deadline.end)
        self.extensions.append(f"on course after {step} steps ({words}) but too slow for the {whole:.1f} s left: "
                               "it walks on while LAMA-first's translator runs beside it")

    def _reduce_beside(self, step: int, state) -> None:
        """The walk goes on past its share, after ``step`` steps in ``state``: where a core is free and LAMA-first's
        whole translation is neither done nor due before the deadline, start LAMA-first beside it on the task
        without the done objects of ``state`` (``reduce``) with :data:`BESIDE_MEMORY_SHARE` of the memory left, the
        walk keeping the rest; again from a later state (the one before stopped) only where the goal literals left
        have fallen to :data:`REDUCE_AGAIN` of those where the one before started. Looked at every
        :data:`REDUCE_EVERY` seconds. A translation of the whole task still running (not due in time) is stopped
        (``dropped``): it would hold the core. Hard-lower Transport (108 packages): the translator, estimated at
        63 s, takes 89 s."""
        from up_gnnplan.errors import GnnplanError
        from up_gnnplan.search.ff import free_core

        self.reduce_at = time.perf_counter() + REDUCE_EVERY
        running, left = self.reduced, self.left(state)
        if running is not None and (running.solved() or left > REDUCE_AGAIN * running.left):
            return
        if left == 0 or self.translation_in_time() or self.whole.deadline.passed():
            return
        # a search before it, or the whole task's translator (not due in time), still running holds the core it takes
        whole_running = self.translation is not None and not self.translation.poll()
        holder = (running is not None and not running.ended()) or whole_running
        if not holder and not free_core():
            return
        headroom = self.whole.headroom_mb()
        try:
            search = self.reduce(state, step, left, BESIDE_MEMORY_SHARE)
        except GnnplanError as error:  # a limit reached, or Fast Downward missing: the hand-off says so
            self.say("info", f"LAMA-first not started beside the walk on the task without its done objects: {error}")
            self.reduce_at = None
            return
        if search is None:  # too few objects done
            return
        if running is not None:
            running.stop()
        self.reduced = search
        self._walk_keeps(headroom)
        self.part.overtaken = self._overtaken
        dropped = ""
        if whole_running:  # it would hold a core
            self.translation.stop()
            self.translation.dropped, self.translation = True, None
            dropped = "; LAMA-first's translator of the whole task, not due before the deadline, stopped"
        self.say("info", f"LAMA-first plans beside the walk from step {step} ({left} of {self.total} goal literals "
                         f"left) on the task without its {search.done} done objects of {self.task.num_objects}"
                         + dropped)

    def _overtaken(self, what: str) -> str:
        """Why the walk should stop at ``what``: LAMA-first, searching beside it, found a plan (on the task without
        the done objects, or from the initial state); empty while neither has."""
        reduced = self.reduced.overtaken(what) if self.reduced is not None else ""
        translation = self.translation
        beside = translation.beside if translation is not None else None
        return reduced or (beside.overtaken(what) if beside is not None else "")

    def _translated(self, step: int) -> bool:
        """LAMA-first's translator, beside the walk, has ended after ``step`` steps: the walk hands over now, unless
        it is on course and its forecast now fits in the time the solve has left (it walks on to it, judged again
        there as any extension; the translation waits for the hand-off). A translator that ended without a translated
        task (its memory share too small) leaves the walk the time to the deadline: hard-tier Blocksworld (488
        blocks), the translator ended after 39.4 s, and the walk, on course, handed over to a translation that
        could not end again in the 20 s left. Return whether the walk goes on."""
        self.handed = True
        now, whole = time.perf_counter(), self.whole.deadline.remaining()
        ended = f"LAMA-first's translator ended after {self.translation.took:.1f} s"
        if not self.translation.done():  # LAMA-first would have to translate again: the walk keeps the time
            self.part.deadline.extend_to(self.whole.deadline.end)
            self.extensions.append(f"{ended} without a translated task: the walk goes on to the deadline")
            return True
        forecast = self.forecast()
        if forecast is not None and whole is not None and forecast[1] <= whole and not self._past_cap(step, forecast[0]):
            end, kept = self._extension_end(now, forecast[1])
            if end > now:
                self.part.deadline.extend_to(end)
                self.extensions.append(f"{ended}; on course after {step} steps ({forecast[2]}): the walk goes on for "
                                       f"{end - now:.1f} s{kept}")
                return True
        self.part.deadline.extend_to(now)
        self.extensions.append(f"{ended}: the walk hands over after {step} steps")
        return False

    def more_steps(self, step: int) -> int:
        """Return the steps to add to a step limit the walk has reached after ``step`` steps: the
        forecast at the window's pace (with :data:`SAFETY`) where the walk is on course, its
        time fits in what the solve has left (or LAMA-first's translator runs beside it) and the limit
        is one this course may extend (``steps``: not one the user gave), else 0."""
        forecast, whole = (self.forecast() if self.steps else None), self.whole.deadline.remaining()
        fits = whole is None or (forecast is not None and forecast[1] <= whole) or self.translating
        if forecast is None or not fits or self._past_cap(step, forecast[0]):
            return 0
        more, _, words = forecast
        if self.cap is not None:
            more = min(more, self.cap - step)
        self.extensions.append(f"on course at its step limit of {step} ({words}): {more} more steps")
        return more

    @property
    def cap(self) -> int | None:
        """The FF-relative step limit (:func:`~up_gnnplan.search.ff.astray_limit` without an upper bound),
        where FF's estimate is known and ``astray_factor`` is on: no extension lets a walk pass it."""
        if self.estimate is None or not self.factor:
            return None
        from up_gnnplan.search.ff import astray_limit

        return astray_limit(sys.maxsize, self.factor, self.estimate)

    def _past_cap(self, step: int, forecast_steps: int) -> bool:
        """Whether the walk, at the forecast's pace (without its margin), would reach :attr:`cap` before the goal."""
        return self.cap is not None and step + forecast_steps / SAFETY > self.cap

    @property
    def note(self) -> str:
        """What the extensions were (the last one's words, and how many there were)."""
        if not self.extensions:
            return ""
        more = f" (extension {len(self.extensions)})" if len(self.extensions) > 1 else ""
        return self.extensions[-1] + more


def step_limit(course: Course | None, step: int, state, max_steps: int) -> int:
    """Return a policy's step limit before its step ``step + 1`` from ``state``: ``max_steps``, or
    more where ``course`` (None: none) finds the walk on course at it, or ``step`` (stop now) where
    it finds the walk hopeless or going round in circles (:meth:`Course.hopeless`, :meth:`Course.circling`);
    the course observes the state."""
    if course is None:
        return max_steps
    max_steps = course.awaited(step, max_steps)
    if course.hopeless(step, state) or course.circling(step, state):
        return step
    course.observe(step, state)
    return max_steps + course.more_steps(step) if step >= max_steps else max_steps


def limit_note(course: Course | None, max_steps: int) -> str:
    """The message of a policy stopped by its step limit ``max_steps`` (or found hopeless by ``course``)."""
    return course.verdict if course is not None and course.verdict else f"step limit of {max_steps} reached"

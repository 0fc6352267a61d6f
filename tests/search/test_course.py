"""Mode auto's hand-off extends the learned part's share for a policy on course to the goal
(:mod:`up_gnnplan.search.course`), and for nothing else; the solve's own limit never moves."""

from __future__ import annotations

import importlib.util
import math
import time
from types import SimpleNamespace

import pytest

import up_gnnplan  # noqa: F401  (registers the engine)
from up_gnnplan.data import example
from up_gnnplan.limits import Limits
from up_gnnplan.plugins.engine import GnnplanEngine
from up_gnnplan.problems import Task
from up_gnnplan.search import course as course_module
from up_gnnplan.search.course import (BESIDE_MEMORY_SHARE, CIRCLE_STEPS, CIRCLE_UNDONE, HOPELESS_FACTOR,
                                     STALL_FACTOR, STALL_SHARE, STALL_STEPS,
                                      HOPELESS_STEPS, HOPELESS_SURE_STEPS, MIN_STEPS, SAFETY, Course, step_limit)

needs_fd = pytest.mark.skipif(importlib.util.find_spec("up_fast_downward") is None,
                              reason="the hand-off runs LAMA-first: needs up-fast-downward")


@pytest.fixture(scope="module")
def task():
    return Task.from_files(example("blocksworld"), example("blocksworld", "test-20.pddl"))


def walk(course: Course, lefts: list[int], seconds_per_step: float) -> None:
    """Record a walk whose last step is now, one step every ``seconds_per_step``, ``lefts[i]`` literals left after step i."""
    start = time.perf_counter() - seconds_per_step * (len(lefts) - 1)
    for step, left in enumerate(lefts):
        course.record(step, left, start + step * seconds_per_step)


SWITCHES = """(define (domain switches) (:requirements :strips :negative-preconditions)
  (:predicates (on ?x))
  (:action up :parameters (?x) :precondition (not (on ?x)) :effect (on ?x))
  (:action down :parameters (?x) :precondition (on ?x) :effect (not (on ?x))))"""


def test_goal_literals_hold_as_pymimir_says_negative_ones_too(tmp_path):
    """:meth:`Course.holding` reads the fluent atoms' indices; pymimir's ``literal_holds`` agrees on every state."""
    (tmp_path / "domain.pddl").write_text(SWITCHES)
    (tmp_path / "p.pddl").write_text("(define (problem p) (:domain switches) (:objects a b c) (:init (on b))"
                                     " (:goal (and (on a) (not (on b)) (on c))))")
    task = Task.from_files(tmp_path / "domain.pddl", tmp_path / "p.pddl")
    course = Course(task, Limits(10), Limits(10))
    seen, frontier = set(), [task.initial_state()]
    while frontier:
        state = frontier.pop()
        if state.get_index() in seen:
            continue
        seen.add(state.get_index())
        assert course.holding(state).tolist() == [state.literal_holds(literal) for literal in course.literals]
        frontier += [action.apply(state) for action in state.generate_applicable_actions()]
    assert len(seen) == 8 and course.total == 3


def test_goal_literals_left_are_counted_on_the_state(task):
    course = Course(task, Limits(10), Limits(10))
    state = task.initial_state()
    literals = task.goal_condition.get_literals()
    assert course.usable and course.total == len([lit for lit in literals if not lit.is_static()])
    assert course.left(state) == sum(1 for lit in literals if not lit.is_static() and not state.literal_holds(lit))
    assert 0 < course.left(state) <= course.total


def test_a_share_about_to_run_out_on_course_is_extended_to_the_forecast(task):
    whole = Limits(100)
    part = whole.share(0.001)  # about 0.1 s left: less than two steps of 0.1 s
    course = Course(task, part, whole)
    before = part.deadline.end
    walk(course, list(range(100, 100 - MIN_STEPS - 1, -1)), 0.1)  # one literal achieved a step
    left = 100 - MIN_STEPS
    # Judged once the walk has MIN_STEPS steps: MIN_STEPS literals achieved in MIN_STEPS x 0.1 s.
    expected = SAFETY * left * 0.1
    assert part.deadline.end > before
    assert part.deadline.remaining() == pytest.approx(expected, abs=0.05)
    assert whole.deadline.seconds == 100  # the solve's own limit does not move
    assert course.note.startswith(f"on course after {MIN_STEPS} steps ({left} of {course.total} goal literals left, "
                                  f"{MIN_STEPS} achieved in the last {MIN_STEPS} steps): the learned part's share "
                                  "extended by")


@pytest.mark.parametrize("lefts, why", [
    ([50] * (2 * MIN_STEPS + 1), "no literal achieved in the window"),
    (list(range(50, 50 - MIN_STEPS, -1)) + [50 - MIN_STEPS] * (2 * MIN_STEPS + 1), "progress only before the window"),
    (list(range(50, 50 - MIN_STEPS + 2, -1)), "too few steps to judge the pace"),
])
def test_a_share_is_not_extended_off_course(task, lefts, why):
    whole = Limits(100)
    part = whole.share(0.5)  # time in hand while the walk begins
    course = Course(task, part, whole)
    start = time.perf_counter() - 0.1 * (len(lefts) - 1)
    for step, left in enumerate(lefts):
        if step == len(lefts) - 1:  # the share about to run out at the last step
            part.deadline.extend_to(time.perf_counter() + 0.05)
            before = part.deadline.end
        course.record(step, left, start + 0.1 * step)
    assert part.deadline.end == before, why
    assert course.note == ""


def test_a_forecast_beyond_the_time_the_solve_has_left_is_not_granted(task):
    whole = Limits(3)  # the forecast below is SAFETY x 50 x 0.1 s = 7.5 s
    part = whole.share(0.001)
    course = Course(task, part, whole)
    before = part.deadline.end
    walk(course, [70 - i for i in range(2 * MIN_STEPS + 1)][:-1] + [50], 0.1)
    assert part.deadline.end == before


def test_a_share_with_time_in_hand_is_not_judged_yet(task):
    whole = Limits(100)
    part = whole.share(0.5)  # 50 s left: far more than two steps
    course = Course(task, part, whole)
    before = part.deadline.end
    walk(course, list(range(100, 100 - 2 * MIN_STEPS - 1, -1)), 0.1)
    assert part.deadline.end == before


def test_an_existential_goal_has_no_literal_count():
    from unified_planning.shortcuts import Exists, Variable

    from up_gnnplan.problems.loading import load_pddl

    problem = load_pddl(example("blocksworld"), example("blocksworld", "p04.pddl"))

    on = problem.fluent("on")
    x = Variable("x", on.signature[0].type)
    y = Variable("y", on.signature[1].type)
    problem.add_goal(Exists(on(x, y), x, y))
    course = Course(Task(problem), Limits(10), Limits(10))
    assert not course.usable
    course.observe(0, None)  # records nothing, extends nothing
    assert course.history == []


class Recording(Course):
    made: list = []

    def __init__(self, task, part, whole, steps=False, **kwargs):
        super().__init__(task, part, whole, steps, **kwargs)
        Recording.made.append((part, whole, steps, kwargs))


@needs_fd
@pytest.mark.parametrize("params, expected", [({}, 1), ({"on_course": False}, 0), ({"fallback": "model+ff"}, 0),
                                              ({"max_steps": 5000}, 1)])
def test_mode_auto_gives_its_policy_a_course_only_with_the_hand_off(task, monkeypatch, params, expected):
    monkeypatch.setattr(course_module, "Course", Recording)
    Recording.made = []
    result = GnnplanEngine(**params).solve_task(task, timeout=60)
    assert result.plan is not None
    assert len(Recording.made) == expected
    if expected:
        part, whole, steps, kwargs = Recording.made[0]
        assert part is not whole and whole.deadline.seconds is not None
        assert steps == ("max_steps" not in params)  # a step limit the user gave is never extended
        # A model with a value head has its walk judged by V, one without by the goal literals left.
        from up_gnnplan.models_zoo import find_model
        from up_gnnplan.runtime import OnnxValueFunction

        assert (kwargs["value"] is not None) == OnnxValueFunction(find_model(task.signature)).has_value


def test_the_on_course_param_is_checked():
    from unified_planning.exceptions import UPUsageError

    with pytest.raises(UPUsageError, match="mode 'gbfs' does not take param.*'on_course'"):
        GnnplanEngine(mode="gbfs", on_course=True)
    with pytest.raises(UPUsageError, match="'on_course' must be True or False"):
        GnnplanEngine(on_course="maybe")


def test_a_step_limit_reached_on_course_is_extended_when_the_user_gave_none(task):
    whole = Limits(100)
    course = Course(task, whole.share(0.5), whole, steps=True)
    walk(course, list(range(100, 100 - MIN_STEPS - 1, -1)), 0.01)  # one literal a step, 0.01 s a step
    left = 100 - MIN_STEPS
    assert course.more_steps(MIN_STEPS) == math.ceil(SAFETY * left)
    assert course.note.startswith(f"on course at its step limit of {MIN_STEPS} ({left} of {course.total} goal "
                                  f"literals left, {MIN_STEPS} achieved in the last {MIN_STEPS} steps): ")
    given = Course(task, whole.share(0.5), whole, steps=False)  # a limit the user gave holds
    walk(given, list(range(100, 100 - MIN_STEPS - 1, -1)), 0.01)
    assert given.more_steps(MIN_STEPS) == 0


def test_a_step_limit_is_not_extended_off_course_or_past_the_time_left(task):
    whole = Limits(100)
    flat = Course(task, whole.share(0.5), whole, steps=True)
    walk(flat, [50] * (MIN_STEPS + 1), 0.01)
    assert flat.more_steps(MIN_STEPS) == 0
    short = Limits(1)  # the forecast, SAFETY x 92 steps at 0.1 s, is past the 1 s left
    slow = Course(task, short.share(0.5), short, steps=True)
    walk(slow, list(range(100, 100 - MIN_STEPS - 1, -1)), 0.1)
    assert slow.more_steps(MIN_STEPS) == 0


class Granting:
    """A course that grants ``more`` steps once, at the first step limit reached."""

    verdict = ""
    keeping = False

    def __init__(self, more: int):
        self.more, self.asked = more, []

    def undoes(self, successor):
        return False

    def awaited(self, step, max_steps):
        return max_steps

    def hopeless(self, step, state):
        return False

    def circling(self, step, state):
        return False

    def observe(self, step, state):
        pass

    def more_steps(self, step):
        self.asked.append(step)
        more, self.more = self.more, 0
        return more


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A Blocksworld task of the IPC 2023 domain, whose shipped model has both heads."""
    from up_gnnplan.datasets.generators import generate

    folder = tmp_path_factory.mktemp("blocksworld")
    (problem,) = [p for p in generate("blocksworld", folder, count=1, seed=3, blocks=8) if p.name != "domain.pddl"]
    return Task.from_files(folder / "domain.pddl", problem)


@pytest.mark.parametrize("search", ["action", "value"])
def test_the_policies_walk_on_past_their_step_limit_as_their_course_grants(generated, search):
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.runtime import load_value_function
    from up_gnnplan.search import action_policy_rollout, policy_rollout

    task = generated
    model = load_value_function(find_model(task.signature, "actions" if search == "action" else "value"))
    if search == "action":
        run = lambda **kw: action_policy_rollout(task, model.scorer, **kw)  # noqa: E731
    else:
        run = lambda **kw: policy_rollout(task, model, **kw)  # noqa: E731
    assert run(max_steps=2, time_limit=60).message == "step limit of 2 reached"
    course = Granting(5000)
    result = run(max_steps=2, time_limit=60, course=course)
    assert result.solved and len(result.actions) > 2 and course.asked == [2]
    stingy = Granting(0)
    result = run(max_steps=2, time_limit=60, course=stingy)
    assert not result.solved and result.message == "step limit of 2 reached" and stingy.asked == [2]


def test_a_value_head_measures_the_progress_by_v(task):
    """With the model's V, the pace is V's fall, computed only for the window's first and last states."""
    whole = Limits(100)
    part = whole.share(0.001)
    asked = []

    def value(inputs):
        asked.extend(inputs)
        return [inputs[0]]

    course = Course(task, part, whole, steps=True, value=value, inputs=lambda states: states)
    start = time.perf_counter() - 0.1 * MIN_STEPS
    for step in range(MIN_STEPS + 1):  # V falls 2 a step, from 100; the literals (none here) play no part
        course.record(step, None, start + 0.1 * step, 100.0 - 2 * step)
    left = 100.0 - 2 * MIN_STEPS
    assert part.deadline.remaining() == pytest.approx(SAFETY * left / 2 * 0.1, abs=0.05)
    assert sorted(asked) == [left, 100.0]  # the window's two ends, each once
    assert course.note.startswith(f"on course after {MIN_STEPS} steps (V {left:.1f}, down {2 * MIN_STEPS:.1f} "
                                  f"in the last {MIN_STEPS} steps)")


def hopeless_after(course: Course, state, seconds_per_step: float, step: int = HOPELESS_STEPS) -> bool:
    """Ask ``course`` after step 1 and after ``step`` steps, ``seconds_per_step`` apart since step 1."""
    assert not course.hopeless(1, state)  # the first step is never timed
    course.began = time.perf_counter() - seconds_per_step * (step - 1)
    return course.hopeless(step, state)


@pytest.mark.parametrize("estimate, seconds_per_step, expected", [
    (1000, 1.0, True),    # 997 more steps at 1 s: 997 s, far over 2 x 10 s
    (20, 1.0, False),     # 17 s: within 2 x 10 s
    (25, 1.0, True),      # 22 s: just over
    (3, 1.0, False),      # FF's estimate walked already: nothing to judge by
])
def test_a_walk_whose_pace_cannot_reach_the_goal_by_ffs_estimate_is_hopeless(task, estimate, seconds_per_step,
                                                                             expected):
    whole = Limits(10)
    course = Course(task, whole.share(0.5), whole, estimate=estimate)
    assert hopeless_after(course, task.initial_state(), seconds_per_step) is expected
    if expected:
        assert course.verdict.startswith(f"too slow to reach the goal in time after {HOPELESS_STEPS} steps: "
                                         f"{estimate - HOPELESS_STEPS} more steps (FF's estimate {estimate} of the "
                                         "plan less the steps walked) at 1.00 s a step")
        assert f"over {HOPELESS_FACTOR:g} x the" in course.verdict
    else:
        assert course.verdict == ""


def test_without_ff_the_goal_literals_left_are_the_steps_needed(task):
    state = task.initial_state()
    left = Course(task, Limits(10), Limits(10)).left(state)
    whole = Limits(left * 0.1 / HOPELESS_FACTOR * 0.5)  # half the time the literals need at 0.1 s a step
    course = Course(task, whole.share(0.5), whole)
    assert hopeless_after(course, state, 0.1)
    assert f"{left} more steps (the goal literals left)" in course.verdict
    assert not hopeless_after(Course(task, Limits(100).share(0.5), Limits(100)), state, 0.1)


def test_a_walk_is_not_judged_hopeless_early_or_without_a_deadline(task):
    state = task.initial_state()
    early = Course(task, Limits(1).share(0.5), Limits(1), estimate=1000)
    assert not hopeless_after(early, state, 1.0, step=HOPELESS_STEPS - 1)
    unlimited = Course(task, Limits(None), Limits(None), estimate=1000)
    assert not hopeless_after(unlimited, state, 1.0)


def test_a_hopeless_walk_stops_at_once_and_says_why(task):
    whole = Limits(10)
    course = Course(task, whole.share(0.5), whole, estimate=1000)
    state = task.initial_state()
    assert step_limit(course, 1, state, 500) == 500
    course.began = time.perf_counter() - 2.0
    assert step_limit(course, HOPELESS_STEPS, state, 500) == HOPELESS_STEPS  # the limit is now: stop
    assert course_module.limit_note(course, HOPELESS_STEPS) == course.verdict
    assert course_module.limit_note(None, 500) == "step limit of 500 reached"



@pytest.mark.parametrize("took, hopeless", [(30.0, False), (2.0, True)])
def test_a_walk_is_not_hopeless_where_lama_first_would_translate_again_in_less_time_than_it_took(task, took, hopeless):
    """LAMA-first's translator beside the walk ended without a translated task after ``took`` s; 10 s are left."""
    whole = Limits(10)
    course = Course(task, whole.share(0.5), whole, estimate=1000)
    course.translation = Translating(ends=1, translated=False, took=took)
    state = task.initial_state()
    step_limit(course, 1, state, 500)
    course.began = time.perf_counter() - 2.0
    assert (step_limit(course, HOPELESS_STEPS, state, 500) == HOPELESS_STEPS) is hopeless
    assert course.too_slow is hopeless

def solved_with(course: type, task, monkeypatch):
    """Solve ``task`` in mode auto with ``course`` as the walk's Course; return the result and its log messages."""
    monkeypatch.setattr(course_module, "Course", course)
    result = GnnplanEngine().solve_task(task, timeout=60)
    return result, [log.message for log in result.log_messages]


class Hopeless(Course):
    """A course that finds every walk hopeless at its first judged step."""

    def hopeless(self, step, state):
        if step >= HOPELESS_STEPS:
            self.verdict, self.too_slow = "too slow (a test's verdict)", True
            return True
        return False


@needs_fd
def test_mode_auto_hands_a_hopeless_walk_to_lama_first_without_the_learned_fallback(task, monkeypatch):
    result, messages = solved_with(Hopeless, task, monkeypatch)
    assert result.plan is not None and result.metrics["found_by"] == "lama-first"
    assert any(m.startswith((f"policy: gave-up after {HOPELESS_STEPS} steps", f"action-policy: gave-up after {HOPELESS_STEPS} steps"))
               and m.endswith("too slow (a test's verdict)") for m in messages)
    assert "the learned fallback is skipped: the time left goes to LAMA-first" in messages
    assert not any(m.startswith(("gbfs", "dual-gbfs")) for m in messages)


class Reported:
    """A trial of FF beside the walk that has reported (or not) by the time it is polled."""

    def __init__(self, estimate=None, took=None, why=""):
        self.estimate, self.took, self.why, self.polls = estimate, took, why, 0

    def poll(self):
        self.polls += 1
        return self.polls > 1  # ends at its second poll


def test_ffs_estimate_from_beside_the_walk_sets_the_step_limit_when_it_comes(task):
    said = []
    whole = Limits(100)
    course = Course(task, whole.share(0.5), whole, trial=Reported(estimate=30, took=4.2), factor=4,
                    say=lambda level, text: said.append(text))
    assert course.awaited(0, 1000) == 1000 and not said  # not reported yet
    assert course.awaited(7, 1000) == 4 * 30 + 50
    assert course.estimate == 30 and course.trial is None
    assert said == ["policy step limit 170 from step 7 (4 x FF's estimate 30 of the initial state + 50; FF grounded "
                    "beside the policy in 4.2 s)"]
    assert course.awaited(8, 170) == 170  # said once


def test_a_trial_beside_the_walk_that_gives_no_estimate_leaves_the_limit(task):
    said = []
    course = Course(task, Limits(10), Limits(10), trial=Reported(why="took more than 4.0 s, its share of the time "
                                                                     "left"), factor=4,
                    say=lambda level, text: said.append(text))
    course.awaited(0, 1000)
    assert course.awaited(3, 1000) == 1000 and course.estimate is None
    assert said == ["policy step limit 1000 from step 3 (no FF estimate: FF took more than 4.0 s, its share of the "
                    "time left)"]


@pytest.mark.parametrize("estimate, more", [
    (None, math.ceil(SAFETY * (100 - MIN_STEPS))),  # no FF estimate: the forecast with its margin
    (100, math.ceil(SAFETY * (100 - MIN_STEPS))),   # the cap, 450 steps, far off
    (20, 50 + 4 * 20 - MIN_STEPS),                   # the goal forecast at step 100, the cap at 130: up to it
    (10, 0),                                         # the cap at 90, before the goal forecast at step 100
])
def test_no_step_extension_passes_the_ff_relative_limit(task, estimate, more):
    whole = Limits(100)
    course = Course(task, whole.share(0.5), whole, steps=True, estimate=estimate, factor=4)
    walk(course, list(range(100, 100 - MIN_STEPS - 1, -1)), 0.01)  # one literal a step: 92 left after 8
    assert course.cap == (None if estimate is None else 50 + 4 * estimate)
    assert course.more_steps(MIN_STEPS) == more


def test_no_time_extension_for_a_walk_that_would_meet_the_ff_relative_limit_first(task):
    lefts = list(range(100, 100 - MIN_STEPS - 1, -1))
    for estimate, extended in [(None, True), (10, False)]:
        whole = Limits(100)
        part = whole.share(0.001)
        before = part.deadline.end
        walk(Course(task, part, whole, estimate=estimate, factor=4), lefts, 0.1)
        assert (part.deadline.end > before) is extended


def test_from_enough_steps_on_a_walk_that_needs_more_than_all_the_time_left_is_hopeless(task):
    """At 1 s a step, 15 more steps take 15 s: within twice the 10 s left early on, but more than
    the 10 s themselves once the pace is measured over HOPELESS_SURE_STEPS steps."""
    state = task.initial_state()
    early = Course(task, Limits(10).share(0.5), Limits(10), estimate=HOPELESS_STEPS + 15)
    assert not hopeless_after(early, state, 1.0)
    whole = Limits(10)
    late = Course(task, whole.share(0.5), whole, estimate=HOPELESS_SURE_STEPS + 15)
    assert hopeless_after(late, state, 1.0, step=HOPELESS_SURE_STEPS)
    assert "15 more steps" in late.verdict and "would take 15 s, more than the" in late.verdict


class Holding:
    """A state in which the goal literals ``which`` (indices into the course's) hold, and no other: its fluent atoms
    are those of the positive ones among them and of the negative ones not among them (as pymimir's state gives them)."""

    def __init__(self, course: Course, which):
        self.ids = {id(course.literals[i]) for i in which}
        atoms = [literal.get_atom().get_index() for i, literal in enumerate(course.literals)
                 if (i in which) == literal.get_polarity()]
        self._advanced_state = SimpleNamespace(get_fluent_atoms=lambda: atoms)

    def literal_holds(self, literal) -> bool:
        return id(literal) in self.ids

    def literals_hold(self, literals) -> bool:
        return all(self.literal_holds(literal) for literal in literals)


def circles(course: Course, walk: list[set[int]]) -> int | None:
    """Return the first step of ``walk`` (the goal literals holding after each step) at which the course
    finds it going round in circles, or None."""
    return next((step for step, which in enumerate(walk) if course.circling(step, Holding(course, which))), None)


def test_a_walk_that_undoes_what_it_achieved_without_getting_closer_goes_round_in_circles(task):
    course = Course(task, Limits(100).share(0.5), Limits(100))
    assert course.total >= 3
    # Achieves literals 0 and 1, then for ever undoes and redoes 1: never fewer left than after step 2.
    walk = [set(), {0}, {0, 1}] + [{0} if step % 2 else {0, 1} for step in range(3, 400)]
    at = circles(course, walk)
    assert at == 2 + CIRCLE_STEPS  # by then it undid literal 1 about CIRCLE_STEPS / 2 times
    assert course.verdict.startswith(f"going round in circles after {at} steps")
    assert f"{course.total - 2} of {course.total} goal literals left (step 2)" in course.verdict
    whole = Limits(100)
    again = Course(task, whole.share(0.5), whole)
    for step, which in enumerate(walk[:at]):
        assert step_limit(again, step, Holding(again, which), 1000) == 1000
    assert step_limit(again, at, Holding(again, walk[at]), 1000) == at  # stop now, and say why
    assert course_module.limit_note(again, at) == again.verdict


def test_a_course_that_keeps_goal_literals_lets_a_circling_walk_go_on_keeping_them(task):
    """With ``keep``, the first circle does not stop the walk: from there the course keeps the goal literals the
    state holds (:meth:`Course.undoes`), and stops the walk after CIRCLE_STEPS more steps no closer to the goal."""
    said = []
    course = Course(task, Limits(100).share(0.5), Limits(100), keep=True, say=lambda level, text: said.append(text))
    walk = [set(), {0}, {0, 1}] + [{0} if step % 2 else {0, 1} for step in range(3, 400)]
    assert not course.undoes(Holding(course, set()))  # nothing kept before the walk circles
    at = circles(course, walk)
    assert at == 2 + 2 * CIRCLE_STEPS
    assert course.keeping and len(said) == 1, said
    assert said[0].startswith(f"going round in circles after {2 + CIRCLE_STEPS} steps")
    assert "from here it keeps the goal literals its state holds" in said[0]
    assert course.verdict.endswith("since then it kept the goal literals it held")
    held = walk[at]  # the literals of the state last seen, which the course keeps
    assert course.undoes(Holding(course, held - {0}))
    assert not course.undoes(Holding(course, held)) and not course.undoes(Holding(course, held | {2}))


def test_undoing_goal_literals_the_walk_found_holding_is_no_circle(task):
    """A Blocksworld walk first unstacks towers, undoing goal literals that held from the start."""
    course = Course(task, Limits(100).share(0.5), Limits(100))
    everything = set(range(course.total))
    walk = [everything] * 5 + [set()] * 300  # undone once, never achieved by the walk
    assert circles(course, walk) is None


@pytest.mark.parametrize("undone", [CIRCLE_UNDONE - 1, CIRCLE_UNDONE])
def test_a_walk_circles_only_after_enough_undone_literals(task, undone):
    course = Course(task, Limits(100).share(0.5), Limits(100))
    # One literal achieved, then undone and redone `undone` times early on, then the walk idles.
    walk = [set(), {0}] + [set() if i % 2 == 0 else {0} for i in range(2 * undone)] + [{0}] * 2 * CIRCLE_STEPS
    assert (circles(course, walk) is not None) is (undone >= CIRCLE_UNDONE)


def test_getting_closer_to_the_goal_starts_the_count_again(task):
    course = Course(task, Limits(100).share(0.5), Limits(100))
    churn = [{0} if i % 2 else {0, 1} for i in range(CIRCLE_STEPS - 10)]
    walk = [set(), {0}, {0, 1}] + churn + [{0, 1, 2}] + churn + [{0, 1, 2}] * 5
    assert circles(course, walk) is None


def test_a_walk_that_comes_no_closer_near_the_goal_stalls(task):
    """The medium tier's Satellite walks reached their last few goal literals and walked on without another."""
    course = Course(task, Limits(100).share(0.5), Limits(100))
    total = course.total
    near = max(1, int(STALL_SHARE * total))  # goal literals left, few enough
    assert near <= STALL_SHARE * total
    reached = 150  # the step it gets that close: idle, then one goal literal a step
    closer = [set(range(i)) for i in range(total - near + 1)]
    walk = [set()] * (reached + 1 - len(closer)) + closer + [closer[-1]] * 1000
    at = circles(course, walk)
    assert at == reached + max(STALL_STEPS, int(STALL_FACTOR * reached))
    assert course.verdict == (f"stalled after {at} steps: no closer to the goal than {near} of {total} goal literals "
                              f"left (step {reached})")


def test_a_walk_far_from_the_goal_does_not_stall(task):
    """Coming no closer for long is no stall where more than STALL_SHARE of the goal literals are left: a
    Blocksworld walk unstacks for hundreds of steps before it builds."""
    course = Course(task, Limits(100).share(0.5), Limits(100))
    walk = [set(), {0}] + [{0}] * 2000
    assert course.total - 1 > STALL_SHARE * course.total
    assert circles(course, walk) is None


class Circling(Course):
    """A course that finds every walk going round in circles at its third step."""

    def circling(self, step, state):
        if step >= 3:
            self.verdict = "going round in circles (a test's verdict)"
            return True
        return False


@needs_fd
def test_a_walk_going_round_in_circles_stops_and_the_learned_fallback_goes_on_from_its_path(task, monkeypatch):
    result, messages = solved_with(Circling, task, monkeypatch)
    assert result.plan is not None
    assert any(m.endswith("going round in circles (a test's verdict)") for m in messages), messages
    assert "the learned fallback is skipped: the time left goes to LAMA-first" not in messages
    assert any("seeded with 3 states of the policy's path" in m for m in messages), messages


class Translating:
    """LAMA-first's translation beside the walk, as the course sees it: it ends at its ``ends``-th poll."""

    def __init__(self, ends: int = 2, translated: bool = True, took: float = 1.5):
        self.ends, self.polls, self.took, self.translated, self.takes = ends, 0, None, translated, took
        self.searches = []

    def poll(self):
        self.polls += 1
        if self.polls >= self.ends:
            self.took = self.takes
        return self.took is not None

    def done(self):  # ended, with a translated task unless ``translated`` is False (its memory share too small)
        return self.took is not None and self.translated

    def search_beside(self, limits, memory_share):  # recorded; it never finds a plan
        self.searches.append(memory_share)
        return type("Beside", (), {"overtaken": lambda self, what: ""})()


def test_a_walk_on_course_but_too_slow_walks_on_while_lama_firsts_translator_runs(task):
    whole = Limits(3)  # the forecast, SAFETY x 50 x 0.1 s = 7.5 s, does not fit in the time left
    part = whole.share(0.001)
    started = []
    course = Course(task, part, whole, translate=lambda share: started.append(Translating()) or started[-1])
    walk(course, [70 - i for i in range(2 * MIN_STEPS + 1)][:-1] + [50], 0.1)
    assert len(started) == 1 and course.translating
    assert part.deadline.end == whole.deadline.end  # the walk may go on to the solve's deadline
    assert part.memory_mb < whole.memory_mb  # and keeps half the memory left: the translator has the other half
    assert "but too slow for the" in course.note and "LAMA-first's translator runs beside it" in course.note
    assert not hopeless_after(course, task.initial_state(), 10.0, step=HOPELESS_SURE_STEPS)  # never stopped for it
    state = Holding(course, range(course.total))  # no literal left: no forecast (as off course)
    course.observe(2 * MIN_STEPS + 1, state)  # the first poll: still translating
    assert course.translating and not part.deadline.passed()
    course.observe(2 * MIN_STEPS + 2, state)  # the translator has ended: the walk hands over now
    assert not course.translating and part.deadline.remaining() == 0
    assert course.note.startswith(f"LAMA-first's translator ended after 1.5 s: the walk hands over after "
                                  f"{2 * MIN_STEPS + 2} steps")


def test_a_walk_whose_forecast_fits_when_the_translator_ends_walks_on_to_it(task, monkeypatch):
    monkeypatch.setattr("up_gnnplan.search.ff.free_core", lambda: False)  # no search beside the walk
    whole = Limits(3)
    part = whole.share(0.001)
    course = Course(task, part, whole, translate=lambda share: Translating(ends=1))
    walk(course, [70 - i for i in range(2 * MIN_STEPS + 1)][:-1] + [50], 0.1)  # 7.5 s forecast: translating
    assert course.translating
    course.observe(2 * MIN_STEPS + 1, Holding(course, range(course.total - 1)))  # one literal left: on course
    assert not course.translating and 0 < part.deadline.remaining() < whole.deadline.remaining()
    assert course.note.startswith(f"LAMA-first's translator ended after 1.5 s; on course after {2 * MIN_STEPS + 1} "
                                  "steps (1 of")


def test_without_a_translator_a_walk_too_slow_is_not_extended(task):
    """Fast Downward missing (or a limit reached as it starts): the walk hands over as before, said once."""
    from up_gnnplan.errors import GnnplanError

    said, whole = [], Limits(3)
    part = whole.share(0.001)
    before = part.deadline.end

    def missing(memory_share):
        raise GnnplanError("LAMA-first is not installed")

    course = Course(task, part, whole, translate=missing, say=lambda level, text: said.append(text))
    walk(course, [70 - i for i in range(2 * MIN_STEPS + 1)][:-1] + [50], 0.1)
    assert part.deadline.end == before and course.translation is None and course.note == ""
    assert said == ["LAMA-first's translator not started beside the walk: LAMA-first is not installed"]


class SlowerThanTheTranslator(Course):
    """A course that starts LAMA-first's translator beside the walk at step MIN_STEPS (as one on course but too
    slow for the time left does), and a walk slower than the translator: once it has achieved a goal literal
    (so that the hand-off plans from its state), its next step waits for the translator. Its forecast never
    fits (too slow), so the walk hands over when the translator ends."""

    def forecast(self):
        found = super().forecast()
        return None if found is None else (found[0], math.inf, found[2])

    def observe(self, step, state):
        self.first = getattr(self, "first", None) or self.left(state)
        if step == MIN_STEPS and self.translation is None:
            self._beside_translation(step, self.whole.deadline.remaining(), "a test's pace")
        elif self.translating and self.left(state) < self.first:
            self.translation.process.wait(timeout=60)
        super().observe(step, state)


def recorded_translations(monkeypatch, ends: bool = True) -> list:
    """Make LAMA-first's translations recorded in the list returned; with ``ends`` False, the walk never sees one
    end (as on a task too large to translate in the time left)."""
    from up_gnnplan.search import lama

    made = []

    class Recorded(lama.Translation):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

        def poll(self):
            return super().poll() if ends else False

    monkeypatch.setattr(lama, "Translation", Recorded)
    return made


def stopped(translation) -> bool:
    from pathlib import Path

    return translation.process.poll() is not None and not Path(translation.folder.name).exists()


@needs_fd
def test_mode_auto_hands_over_from_the_walk_once_the_translator_beside_it_ends(task, monkeypatch):
    made = recorded_translations(monkeypatch)
    result, messages = solved_with(SlowerThanTheTranslator, task, monkeypatch)
    assert result.plan is not None, messages
    assert any("LAMA-first's translator ended after" in m and "the walk hands over after" in m for m in messages), messages
    assert result.metrics["found_by"] == "walk+lama-first", messages
    assert any(m.startswith("lama-first: solved") and "from step" in m for m in messages), messages
    assert not any(m.startswith(("dual-gbfs", "gbfs")) and "solved" in m for m in messages)
    assert len(made) == 1 and stopped(made[0])  # translated once, beside the walk; nothing outlives the solve
    from up_gnnplan.limits import default_memory_mb

    command = made[0].command
    assert int(command[command.index("--overall-memory-limit") + 1].rstrip("M")) < default_memory_mb() / 2


@needs_fd
def test_a_walk_that_reaches_the_goal_beside_the_translator_stops_it(task, monkeypatch):
    made = recorded_translations(monkeypatch, ends=False)

    class Beside(Course):
        def observe(self, step, state):
            if step == MIN_STEPS and self.translation is None:
                self._beside_translation(step, self.whole.deadline.remaining(), "a test's pace")
            super().observe(step, state)

    result, messages = solved_with(Beside, task, monkeypatch)
    assert result.plan is not None and result.metrics["found_by"] == "learned", messages
    assert len(made) == 1 and stopped(made[0])


def test_a_translation_started_at_once_leaves_the_walk_as_it_was_when_it_ends_first(task, monkeypatch):
    monkeypatch.setattr("up_gnnplan.search.ff.free_core", lambda: False)  # no search beside the walk
    whole = Limits(100, memory_mb=4000)
    part = whole.share(0.5)
    said, started = [], []
    course = Course(task, part, whole, translate=lambda share: started.append(Translating(ends=1)) or started[-1],
                    at_once="a test's reason", say=lambda level, text: said.append(text))
    assert len(started) == 1 and not course.translating  # started, but the walk does not wait for it
    assert said == ["LAMA-first's translator started beside the walk at once (a test's reason)"]
    assert part.memory_mb < whole.memory_mb  # the translator has half the memory left while it runs
    before = part.deadline.end
    course.observe(1, task.initial_state())  # it has ended: its memory is the walk's again, the share unchanged
    assert part.memory_mb == whole.memory_mb and part.deadline.end == before and course.note == ""
    whole_too_short = Limits(3)
    slow = Course(task, whole_too_short.share(0.001), whole_too_short, translate=lambda share: Translating(ends=1),
                  at_once="a test's reason")
    slow.observe(1, task.initial_state())
    share_end = slow.part.deadline.end
    walk(slow, [70 - i for i in range(2 * MIN_STEPS + 1)][:-1] + [50], 0.1)  # on course but too slow
    assert not slow.beside and slow.part.deadline.end == share_end  # translated already: it hands over at its share's end


def test_a_walk_too_slow_waits_for_the_translation_started_at_once_that_still_runs(task):
    whole = Limits(3)
    part = whole.share(0.001)
    started = []
    course = Course(task, part, whole, translate=lambda share: started.append(Translating(ends=3)) or started[-1],
                    at_once="a test's reason")
    walk(course, [70 - i for i in range(2 * MIN_STEPS + 1)][:-1] + [50], 0.1)
    assert len(started) == 1 and course.translating and part.deadline.end == whole.deadline.end
    state = Holding(course, range(course.total))
    course.observe(2 * MIN_STEPS + 1, state)
    course.observe(2 * MIN_STEPS + 2, state)  # the third poll: ended, and the walk hands over
    assert not course.translating and part.deadline.remaining() == 0


def test_the_translator_starts_at_once_only_where_it_takes_long_and_a_core_is_free(task, monkeypatch):
    from up_gnnplan.search import ff

    monkeypatch.setattr(ff, "free_core", lambda: True)
    assert course_module.translate_at_once(task, Limits(60)) == ""  # a small task: the translation is quick
    assert course_module.translate_at_once(task, Limits(None)) == ""  # no deadline: no hurry
    from up_gnnplan.problems.size import estimate_ground_actions

    actions = estimate_ground_actions(task)
    monkeypatch.setattr(course_module, "TRANSLATOR_SECONDS_PER_ACTION", 30.0 / actions)  # 30 s of the 60
    assert course_module.translate_at_once(task, Limits(60)).endswith("and a core is free")
    assert course_module.translate_at_once(task, Limits(5)) == ""  # over LATE_FACTOR x the time left: too late
    monkeypatch.setattr(ff, "free_core", lambda: False)
    assert course_module.translate_at_once(task, Limits(60)) == ""
    # FF's trial has the free core now: the course asks for it once the trial has ended
    assert course_module.translate_at_once(task, Limits(60), core=False).endswith("µs each")


@pytest.mark.parametrize("free", [True, False])
def test_a_translation_due_at_once_waits_for_ffs_trial_to_end(task, monkeypatch, free):
    from up_gnnplan.search import ff

    monkeypatch.setattr(ff, "free_core", lambda: free)
    said, started = [], []
    whole = Limits(100)
    course = Course(task, whole.share(0.5), whole, trial=Reported(estimate=30, took=4.2), factor=4,
                    say=lambda level, text: said.append(text), at_once="a test's reason",
                    translate=lambda share: started.append(Translating(ends=5)) or started[-1])
    assert not started  # the trial has the free core
    course.awaited(0, 1000)
    assert not started
    course.awaited(7, 1000)  # the trial has ended: the translator starts, where a core is free
    assert len(started) == int(free) and course.pending == ""
    assert ("LAMA-first's translator started beside the walk once FF's trial ended, at step 7 (a test's reason)"
            in said) is free
    course.awaited(8, 1000)
    assert len(started) == int(free)  # once


@needs_fd
def test_mode_auto_with_the_translator_started_at_once_solves_by_its_walk_and_stops_it(task, monkeypatch):
    made = recorded_translations(monkeypatch, ends=False)
    monkeypatch.setattr(course_module, "translate_at_once", lambda task, limits, core=True: "a test's reason")
    result, messages = solved_with(Course, task, monkeypatch)
    assert result.plan is not None and result.metrics["found_by"] == "learned", messages
    assert "LAMA-first's translator started beside the walk at once (a test's reason)" in messages
    assert len(made) == 1 and stopped(made[0])


@needs_fd
@pytest.mark.parametrize("ends, late", [(True, False), (False, False), (False, True)])
def test_a_walk_that_gave_up_beside_the_translation_started_at_once_skips_the_learned_fallback(task, monkeypatch,
                                                                                              ends, late):
    """Where the translation has ended, or still runs and is estimated to end before the deadline, when the walk
    gives up (here: going round in circles), the hand-off searches it next: on the large tasks where it starts at
    once, the learned fallback found no plan. Where it is estimated to end after the deadline, the fallback runs."""
    made = recorded_translations(monkeypatch, ends=ends)
    monkeypatch.setattr(course_module, "translate_at_once", lambda task, limits, core=True: "a test's reason")
    if late:
        monkeypatch.setattr(course_module, "TRANSLATOR_SECONDS_PER_ACTION", 1000.0)
    result, messages = solved_with(Circling, task, monkeypatch)
    assert result.plan is not None, messages
    assert any(m.endswith("going round in circles (a test's verdict)") for m in messages), messages
    skipped = ("the learned fallback is skipped: LAMA-first's translation, started beside the walk, is searched next "
               "(from the walk's state)")
    assert (skipped in messages) is not late
    fallback = any(m.startswith(("gbfs", "dual-gbfs", "policy-best-first", "dual-policy-best-first")) for m in messages)
    assert fallback is late, messages
    if not late:
        assert result.metrics["found_by"] in ("lama-first", "walk+lama-first"), messages
    assert len(made) == 1 and stopped(made[0])  # translated once, at once


@needs_fd
def test_a_hopeless_walk_hands_over_to_the_translation_started_at_once(task, monkeypatch):
    made = recorded_translations(monkeypatch)
    monkeypatch.setattr(course_module, "translate_at_once", lambda task, limits, core=True: "a test's reason")
    result, messages = solved_with(Hopeless, task, monkeypatch)
    assert result.plan is not None and result.metrics["found_by"] == "lama-first", messages
    assert len(made) == 1 and stopped(made[0])  # translated once, at once


def test_once_lama_firsts_translation_has_started_an_extension_keeps_its_reserve(task):
    """The reserve is kept for a translation that has written the translated task; not for one that ended without
    it (its memory share too small: the hand-off would translate again)."""
    from up_gnnplan.search.course import RESERVE_SHARE

    lefts = list(range(100, 100 - MIN_STEPS - 1, -1))  # the forecast: SAFETY x 92 x 0.65 s, about 90 of the 100 s
    whole = Limits(100)
    part = whole.share(0.001)
    course = Course(task, part, whole, translate=lambda share: Translated(), at_once="a test's reason")
    walk(course, lefts, 0.65)
    assert part.deadline.end == pytest.approx(whole.deadline.end - RESERVE_SHARE * 100)
    assert course.note.endswith("(to 20 s before the deadline, kept for LAMA-first)")
    failed = Limits(100)
    part = failed.share(0.001)
    course = Course(task, part, failed, translate=lambda share: Translating(ends=1, translated=False),
                    at_once="a test's reason")
    walk(course, lefts, 0.65)
    assert part.deadline.end > failed.deadline.end - RESERVE_SHARE * 100
    assert course.note.endswith("(none kept for LAMA-first: its translator ended without a translated task)")
    alone = Limits(100)  # no translation: the extension may run to the forecast
    part = alone.share(0.001)
    walk(Course(task, part, alone), lefts, 0.65)
    assert part.deadline.end > alone.deadline.end - RESERVE_SHARE * 100


def test_no_reserve_is_kept_for_a_translation_estimated_to_end_after_it_begins(task, monkeypatch):
    """A translation still running and estimated (at 120 µs a ground action) to end after the reserve's start leaves
    LAMA-first nothing to plan with in it: the walk on course is extended as without a translation. One estimated
    to end before it keeps the reserve while it runs."""
    import up_gnnplan.problems.size as size
    from up_gnnplan.search.course import RESERVE_SHARE

    lefts = list(range(100, 100 - MIN_STEPS - 1, -1))  # the forecast: about 90 of the 100 s, as above
    for actions, kept in ((10 ** 9, False), (1000, True)):
        monkeypatch.setattr(size, "estimate_ground_actions", lambda task, actions=actions: actions)
        whole = Limits(100)
        part = whole.share(0.001)
        course = Course(task, part, whole, translate=lambda share: Translating(ends=10 ** 6), at_once="a test's reason")
        walk(course, lefts, 0.65)
        if kept:
            assert part.deadline.end == pytest.approx(whole.deadline.end - RESERVE_SHARE * 100)
            assert course.note.endswith("(to 20 s before the deadline, kept for LAMA-first)")
        else:
            assert part.deadline.end > whole.deadline.end - RESERVE_SHARE * 100
            assert course.note.endswith("(none kept for LAMA-first: its translator is estimated to end after the "
                                        "time it would keep)")


class Translated(Translating):
    """A translation started with the walk that has ended with the translated task."""

    def __init__(self):
        super().__init__(ends=1)


@pytest.mark.parametrize("free", [True, False])
def test_lama_firsts_search_starts_beside_the_walk_once_the_translator_ends_where_a_core_is_free(task, monkeypatch,
                                                                                                    free):
    """The translator started with the walk ends: where a core is free LAMA-first's search starts beside the walk
    with half the memory left, the walk keeping the rest, and its ``overtaken`` is the walk's limits'; else the log
    says why it did not start."""
    monkeypatch.setattr("up_gnnplan.search.ff.free_core", lambda: free)
    whole, said = Limits(60, memory_mb=4000), []
    part = whole.share(0.5)
    translation = Translated()
    course = Course(task, part, whole, translate=lambda share: translation, at_once="a test",
                    say=lambda level, text: said.append(text))
    course.observe(3, task.initial_state())
    assert translation.searches == ([BESIDE_MEMORY_SHARE] if free else [])
    assert (part.overtaken is not None) is free and (part.memory_mb < whole.memory_mb) is free
    words = ("LAMA-first searches beside the walk from the initial state from step 3" if free else
             "LAMA-first's search not started beside the walk at step 3: no core is free")
    assert any(words in text for text in said), said


def test_a_walk_beside_a_translator_that_ended_without_a_translated_task_goes_on_to_the_deadline(task):
    """On course but too slow, the walk goes on beside LAMA-first's translator; the translator ends without a
    translated task (its memory share too small): the walk keeps the time to the deadline instead of handing
    over to a translation that would have to start again."""
    whole = Limits(3)
    part = whole.share(0.001)
    course = Course(task, part, whole, translate=lambda share: Translating(translated=False))
    walk(course, [70 - i for i in range(2 * MIN_STEPS + 1)][:-1] + [50], 0.1)
    assert course.translating
    state = Holding(course, range(course.total))
    course.observe(2 * MIN_STEPS + 1, state)  # the first poll: still translating
    course.observe(2 * MIN_STEPS + 2, state)  # ended, without output.sas (Translating.done)
    assert part.deadline.end == whole.deadline.end and not part.deadline.passed()
    assert course.note.startswith("LAMA-first's translator ended after 1.5 s without a translated task: the walk "
                                  "goes on to the deadline")

"""Mode auto's fallback ``model+lama``: the learned search hands the time left to LAMA-first (the Fast
Downward of up-fast-downward), under the solve's limits, and the engine validates its plan."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest
from unified_planning.engines import PlanGenerationResultStatus as Status

import up_gnnplan  # noqa: F401  (registers the engine)
from up_gnnplan.compare.runner import check_plan
from up_gnnplan.data import example
from up_gnnplan.limits import Limits, resident_mb
from up_gnnplan.plugins.engine import GnnplanEngine
from up_gnnplan.problems.loading import load_pddl

needs_fd = pytest.mark.skipif(importlib.util.find_spec("up_fast_downward") is None,
                              reason="the hand-off runs LAMA-first: needs up-fast-downward")


@pytest.fixture(scope="module")
def blocks():
    return load_pddl(example("blocksworld", "domain.pddl"), example("blocksworld", "p04.pddl"))


def messages(result) -> list[str]:
    return [m.message for m in result.log_messages]


@needs_fd
@pytest.mark.parametrize("cut", [{"handoff_share": 0}, {"handoff_stall": 1}])
def test_lama_first_finds_a_validated_plan_where_the_learned_search_is_cut_short(cut, blocks):
    """The policy gives up at once; the learned search is skipped (share 0) or stalls after one
    expansion without a lower FF value; LAMA-first's plan comes back validated, said to be its."""
    result = GnnplanEngine(max_steps=1, fallback="model+lama", **cut).solve(blocks, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING, messages(result)
    assert result.metrics["found_by"] == "lama-first"
    assert any(m.startswith("lama-first: solved") for m in messages(result)), messages(result)
    valid, note, cost = check_plan(blocks, result.plan)
    assert valid, note
    assert float(result.metrics["plan_cost"]) == pytest.approx(cost)


@needs_fd
def test_the_learned_part_keeps_what_it_finds(blocks):
    result = GnnplanEngine(max_steps=1, fallback="model+lama").solve(blocks, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING, messages(result)
    assert result.metrics["found_by"] == "learned"
    assert not any(m.startswith("lama-first") for m in messages(result))


def fast_downward_processes(under, settle: float = 3.0) -> list[int]:
    """The processes working in a hand-off's temporary folder under ``under`` (Fast Downward's driver,
    translator, search; not those of other runs on the machine), once none is left or after ``settle``
    seconds: a process killed with a large address space takes a moment to end."""
    end = time.perf_counter() + settle
    while True:
        found = _working_under(under)
        if not found or time.perf_counter() > end:
            return found
        time.sleep(0.05)


def _working_under(under) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            if cwd.startswith(str(under)) and "gnnplan-lama-" in cwd:
                found.append(int(pid))
        except OSError:
            continue
    return found


@needs_fd
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_time_limit_holds_with_the_hand_off(tmp_path, monkeypatch):
    """LAMA-first on a Sokoban it does not solve in a few seconds is stopped at the solve's deadline,
    its process group with it."""
    from up_gnnplan.datasets.generators import generate

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # its folder, told from other runs' by where it is

    (problem_file,) = generate("sokoban", tmp_path, count=1, seed=0, grid_size=20, boxes=8)
    problem = load_pddl(tmp_path / "domain.pddl", problem_file)
    engine = GnnplanEngine(fallback="model+lama", handoff_share=0, astray_factor=0)
    began = time.perf_counter()
    result = engine.solve(problem, timeout=6)
    seconds = time.perf_counter() - began
    assert result.status in (Status.TIMEOUT, Status.SOLVED_SATISFICING), messages(result)
    assert seconds < 6 + 0.5, messages(result)
    if result.status == Status.TIMEOUT:
        assert any(m.startswith("lama-first: timeout") for m in messages(result)), messages(result)
    assert fast_downward_processes(tmp_path) == []


@needs_fd
def test_lama_first_gets_only_the_memory_left_under_the_limit(blocks):
    from up_gnnplan.problems import Task
    from up_gnnplan.search import Status as SearchStatus
    from up_gnnplan.search.lama import MIN_MB, lama_first

    task = Task(blocks)
    tight = lama_first(task, Limits(60, memory_mb=int(resident_mb()) + MIN_MB // 2))
    assert tight.status is SearchStatus.MEMOUT and "before LAMA-first" in tight.message
    roomy = lama_first(task, Limits(60, memory_mb=int(resident_mb()) + 1024))
    assert roomy.status is SearchStatus.SOLVED and roomy.actions


def test_without_fast_downward_the_learned_search_goes_on_alone(blocks, monkeypatch):
    """up-fast-downward missing (an import that fails): one warning, and the learned search alone."""
    from up_gnnplan.search.lama import NO_FAST_DOWNWARD, fast_downward_installed

    monkeypatch.setitem(sys.modules, "up_fast_downward", None)
    assert not fast_downward_installed()
    result = GnnplanEngine(max_steps=1, fallback="model+lama", handoff_share=0).solve(blocks, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING, messages(result)
    assert result.metrics["found_by"] == "learned"
    warnings = [m.message for m in result.log_messages if m.level.name == "WARNING"]
    assert warnings == [f"{NO_FAST_DOWNWARD}; the learned search (model+ff) goes on alone"]
    assert "\n" not in warnings[0] and "pip install 'up-gnnplan[fast-downward]'" in warnings[0]


def test_the_hand_off_params_are_checked():
    from unified_planning.exceptions import UPUsageError

    with pytest.raises(UPUsageError, match="'handoff_share' must be a number from 0 to 1"):
        GnnplanEngine(handoff_share=1.5)
    with pytest.raises(UPUsageError, match="mode 'gbfs' does not take param.*'handoff_stall'"):
        GnnplanEngine(mode="gbfs", handoff_stall=10)


def test_the_fast_downward_driver_is_where_up_fast_downward_ships_it():
    if importlib.util.find_spec("up_fast_downward") is None:
        pytest.skip("needs up-fast-downward")
    from up_gnnplan.search.lama import driver

    assert driver().is_file() and driver().name == "fast-downward.py" and isinstance(driver(), Path)


@needs_fd
def test_mode_grounds_lama_first_gets_only_the_memory_left_under_the_limit(blocks):
    """Mode ground's planner for the ground problem is the same runner: the solve's memory limit
    reaches it (UP's fast-downward engine, used before, takes none), and its plan is UP's."""
    from up_gnnplan.grounding.solve import lama_first
    from up_gnnplan.search.lama import MIN_MB

    tight = lama_first(blocks, Limits(60, memory_mb=int(resident_mb()) + MIN_MB // 2))
    assert tight.status == Status.MEMOUT and "before LAMA-first" in messages(tight)[0]
    roomy = lama_first(blocks, Limits(60, memory_mb=int(resident_mb()) + 1024))
    assert roomy.status == Status.SOLVED_SATISFICING
    assert check_plan(blocks, roomy.plan)[0] is True and float(roomy.metrics["plan_cost"]) == len(roomy.plan.actions)


def _weak_model(problem, path, record: dict):
    from pddl_cases import untrained_model

    return untrained_model(problem, path, record)


@needs_fd
def test_the_learned_part_takes_the_share_its_model_records_unless_the_user_gives_one(blocks, tmp_path):
    pytest.importorskip("torch")
    why = "its greedy policy solved none of its 4 judge problems"
    path = _weak_model(blocks, tmp_path / "weak.onnx", {"handoff_share": 0.1, "handoff_share_why": why})
    result = GnnplanEngine(model=str(path)).solve(blocks, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING, messages(result)
    said = [m for m in messages(result) if m.startswith("the learned part's share")]
    assert said == [f"the learned part's share of the time 0.1, as weak.onnx records ({why}; --handoff-share sets "
                    "another)"]
    given = GnnplanEngine(model=str(path), handoff_share=0.5).solve(blocks, timeout=60)
    assert not any(m.startswith("the learned part's share") for m in messages(given))
    plain = _weak_model(blocks, tmp_path / "plain.onnx", {})
    assert not any(m.startswith("the learned part's share")
                   for m in messages(GnnplanEngine(model=str(plain)).solve(blocks, timeout=60)))


def test_the_policys_step_limit_follows_the_astray_factor_its_model_records_unless_the_user_gives_one(
        blocks, tmp_path):
    pytest.importorskip("torch")
    why = "its greedy policy solved all 4 judge problems"
    path = _weak_model(blocks, tmp_path / "trusted.onnx", {"astray_factor": 0.0, "astray_factor_why": why})
    result = GnnplanEngine(model=str(path), fallback="model+ff").solve(blocks, timeout=60)
    said = messages(result)
    assert f"policy step limit not tied to FF, as trusted.onnx records ({why}; --astray-factor sets one)" in said
    assert not any(m.startswith("policy step limit") and "FF's estimate" in m for m in said), said
    given = messages(GnnplanEngine(model=str(path), fallback="model+ff", astray_factor=4).solve(blocks, timeout=60))
    assert any(m.startswith("policy step limit") and "4 x FF's estimate" in m for m in given), given
    plain = messages(GnnplanEngine(model=str(_weak_model(blocks, tmp_path / "plain.onnx", {})),
                                   fallback="model+ff").solve(blocks, timeout=60))
    assert any("4 x FF's estimate" in m for m in plain) and not any("records" in m for m in plain), plain


@needs_fd
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="address-space limits as on Linux")
def test_lama_first_runs_under_an_outer_address_space_limit(tmp_path):
    """Under ``ulimit -v`` lower than the default memory limit (half the RAM), the solve's default
    limit stays below it and so does LAMA-first's: its driver refused to start a translator with a
    limit above the process's own (exit code 36, an internal error) before."""
    import resource
    import subprocess

    from up_gnnplan.limits import MB, resident_under

    space_mb = 3000
    code = ("import sys; from up_gnnplan.limits import Limits, default_memory_mb;"
            "from up_gnnplan.problems import Task; from up_gnnplan.search.lama import lama_first;"
            f"task = Task.from_files({str(example('blocksworld', 'domain.pddl'))!r}, "
            f"{str(example('blocksworld', 'p04.pddl'))!r});"
            "print(default_memory_mb()); found = lama_first(task, Limits(60));"
            "print(found.status.name, len(found.actions), found.message)")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (space_mb * MB, space_mb * MB))

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          preexec_fn=limit, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    default, outcome = done.stdout.splitlines()[-2:]
    assert int(default) <= resident_under(space_mb)
    assert outcome.startswith("SOLVED ") and int(outcome.split()[1]) > 0, outcome


def _gripper_hand_off(tmp_path, max_steps: int):
    """Solve a Gripper problem of 20 balls whose walk stops at ``max_steps`` and whose learned search stalls at once:
    return the problem, the engine's params, and LAMA-first's line in the log, after checking that the plan, found
    from the walk's state, is valid."""
    from up_gnnplan.datasets.generators import generate

    problem_file, = generate("gripper", tmp_path, count=1, seed=5, balls=20)
    problem = load_pddl(tmp_path / "domain.pddl", problem_file)
    engine = dict(max_steps=max_steps, handoff_stall=1, fallback="model+lama")
    result = GnnplanEngine(**engine).solve(problem, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING, messages(result)
    assert result.metrics["found_by"] == "walk+lama-first"
    said = [m for m in messages(result) if m.startswith("lama-first: solved")]
    assert said, messages(result)
    valid, note, cost = check_plan(problem, result.plan)
    assert valid, note
    return problem, engine, said[0]


@needs_fd
def test_lama_first_plans_from_the_furthest_state_of_the_walk_and_the_plan_is_its_prefix_and_lamas(tmp_path):
    """Gripper, 20 balls: the walk stops at its step limit (8 steps) with 2 balls delivered, the learned search
    stalls; LAMA-first plans from the walk's state of fewest goal literals left (after step 5: the first such),
    in the same translation as from the initial state, and the plan, validated, is the walk's first 5 steps
    and LAMA-first's. Without handoff_from_walk LAMA-first plans from the initial state."""
    problem, engine, said = _gripper_hand_off(tmp_path, max_steps=8)
    assert "from step 5 of the policy's walk (18 of 20 goal literals left)" in said
    alone = GnnplanEngine(**engine, handoff_from_walk=False).solve(problem, timeout=60)
    assert alone.metrics["found_by"] == "lama-first", messages(alone)
    said = [m for m in messages(alone) if m.startswith("lama-first: solved")]
    assert said and "walk" not in said[0], messages(alone)


@needs_fd
def test_a_state_as_the_initial_state_of_the_files_and_of_the_translated_task(tmp_path):
    """The state after two steps, written into the problem's :init (static atoms and numeric values kept) and
    into Fast Downward's translated task: LAMA-first's plans from it, replayed from it, reach the goal."""
    from up_gnnplan.problems import load_task
    from up_gnnplan.search.lama import fast_downward, lama_first_from, state_problem_text
    from up_gnnplan.states.successors import is_goal

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "roads"
    task = load_task(fixtures / "domain.pddl", fixtures / "p01.pddl")
    state = task.initial_state()
    for _ in range(2):
        state = state.generate_applicable_actions()[0].apply(state)
    text = state_problem_text(task, state)
    assert "(= (road-length s g) 10)" in text and "(link s x)" in text and "(= (total-cost) 0)" in text
    for result in (fast_downward(task, Limits(30.0), "lama-first", start=state),
                   lama_first_from(task, Limits(30.0), state, 0.5)[0]):
        assert result.solved, result.message
        end = state
        for action in result.actions:
            end = action.apply(end)
        assert is_goal(task, end)


@pytest.mark.parametrize("code", [-9, 247])
def test_a_fast_downward_component_killed_is_a_timeout_at_its_limit_and_memory_before(code):
    """Exit code 247 (SIGKILL, as the driver passes it on) ended a hand-off as an internal error: LAMA-first's
    translator had run past its CPU-time limit and was killed at the hard one."""
    from up_gnnplan.search.lama import Status, _failure

    command = ["python", "fast-downward.py", "--overall-memory-limit", "3000M", "--overall-time-limit", "27s",
               "--translate", "domain.pddl", "problem.pddl"]
    status, message = _failure(code, "INFO     Planner time: 27.11s\n", command, "LAMA-first's translator")
    assert status is Status.TIMEOUT
    assert message == "LAMA-first's translator ran out of time (killed at its time limit of 27 s)"
    status, message = _failure(code, "INFO     Planner time: 3.2s\n", command, "LAMA-first's translator")
    assert status is Status.MEMOUT
    assert message == "LAMA-first's translator was killed by the system (SIGKILL) after 3.2 s, most likely for its memory"


class _Ended:
    """A translator's process that has ended with ``code``."""

    def __init__(self, code: int):
        self.returncode = code

    def poll(self):
        return self.returncode


@pytest.mark.parametrize("code, short", [(0, False), (10, False), (22, True), (-9, True), (21, False)])
def test_a_translation_that_ran_out_of_its_memory_share_is_translated_again(code, short):
    from up_gnnplan.search.lama import Translation

    translation = Translation.__new__(Translation)  # its process only: no translator is started
    translation.process, translation.took, translation.began = _Ended(code), None, 0.0
    assert translation.short_of_memory() is short


@needs_fd
def test_the_hand_off_translates_again_where_the_translation_beside_the_walk_ran_out_of_memory(monkeypatch):
    """A translation started beside the walk with half the memory left, which that half did not hold: the hand-off
    translates the task again with all the memory left, and plans."""
    from up_gnnplan.problems import Task
    from up_gnnplan.search import lama

    task = Task.from_files(example("blocksworld"), example("blocksworld", "test-20.pddl"))
    limits = Limits(60)
    beside = lama.Translation(task, limits, 0.5)
    beside.wait(limits)
    beside.process.returncode = 22  # as Fast Downward's translator out of memory
    result, from_walk = lama.lama_first_from(task, limits, None, 0.5, translation=beside)
    assert result.solved and not from_walk, result.message


@needs_fd
def test_lama_firsts_search_beside_the_walk_stops_the_learned_part_and_the_hand_off_takes_its_plan(monkeypatch):
    """The translator started with the walk has ended and a core is free: LAMA-first searches the translated task
    from the initial state beside the walk, with half the memory left. Once it has a plan the learned part's next
    check stops it (Overtaken), and the hand-off returns that plan without searching again."""
    from up_gnnplan.limits import Overtaken
    from up_gnnplan.problems import Task
    from up_gnnplan.search import course as course_module
    from up_gnnplan.search import lama
    from up_gnnplan.states.successors import is_goal

    task = Task.from_files(example("blocksworld"), example("blocksworld", "test-20.pddl"))
    whole = Limits(60, memory_mb=4000)
    part = whole.share(0.5)
    said = []
    monkeypatch.setattr(course_module, "translate_at_once", lambda *args, **kwargs: "")
    monkeypatch.setattr("up_gnnplan.search.ff.free_core", lambda: True)
    course = course_module.Course(task, part, whole, translate=lambda share: lama.Translation(task, whole, share),
                                  at_once="a test", say=lambda level, text: said.append(text))
    translation = course.translation
    assert translation is not None and part.memory_mb < whole.memory_mb  # the translator has half the memory left
    translation.wait(whole)
    course.observe(1, task.initial_state())
    assert translation.beside is not None, said
    assert any("LAMA-first searches beside the walk from the initial state from step 1" in text for text in said)
    assert part.memory_mb < whole.memory_mb  # the search has half the memory left, the walk the rest
    deadline = time.perf_counter() + 30
    while not translation.beside.planned() and time.perf_counter() < deadline:
        time.sleep(0.05)
    with pytest.raises(Overtaken, match="before step 2: LAMA-first, searching beside it, found a plan"):
        part.check("before step 2")
    whole.check("the hand-off")  # the solve's own limits are not overtaken
    result, from_walk = lama.lama_first_from(task, whole, task.initial_state(), 0.5, translation)
    assert result.solved and not from_walk and result is translation.beside.found
    assert "searched beside the walk from the initial state" in result.message
    state = task.initial_state()
    for action in result.actions:
        state = action.apply(state)
    assert is_goal(task, state)
    folder = Path(translation.folder.name)
    translation.stop()
    assert translation.beside.process.poll() is not None and not folder.exists()


class _Planned:
    """A search beside that has found a plan."""

    name = "LAMA-first"

    def planned(self):
        return True


@needs_fd
def test_a_search_is_stopped_where_the_search_beside_it_found_a_plan_first(tmp_path):
    """The hand-off's search from the walk's state polls the search beside it: once that has a plan, it is
    killed and gives up, saying why."""
    from up_gnnplan.problems import Task
    from up_gnnplan.search import lama

    task = Task.from_files(example("blocksworld"), example("blocksworld", "test-20.pddl"))
    limits = Limits(60)
    translation = lama.Translation(task, limits)
    try:
        assert translation.translated(limits) is None
        began = time.perf_counter()
        result = lama._search_sas(task, limits, translation.folder.name, "output.sas", "LAMA-first", None,
                                  rival=_Planned())
        assert not result.solved and result.message == "stopped: LAMA-first found a plan first"
        assert time.perf_counter() - began < 5
    finally:
        translation.stop()



class _JoinNow:
    """A search from the initial state that joins at once and has found a plan."""

    def due(self):
        return True

    def start(self):
        return _Planned()


@needs_fd
def test_a_search_is_stopped_where_the_search_that_joined_it_found_a_plan_first():
    """The search from the initial state that joins the hand-off's search from the walk's state (``join``) is
    polled once started: once it has a plan, the search from the walk's state is killed and gives up."""
    from up_gnnplan.problems import Task
    from up_gnnplan.search import lama

    task = Task.from_files(example("blocksworld"), example("blocksworld", "test-20.pddl"))
    limits = Limits(60)
    translation = lama.Translation(task, limits)
    try:
        assert translation.translated(limits) is None
        result = lama._search_sas(task, limits, translation.folder.name, "output.sas", "LAMA-first", None,
                                  join=_JoinNow())
        assert not result.solved and result.message == "stopped: LAMA-first found a plan first"
    finally:
        translation.stop()


def _walked(task, steps: int):
    """The state after the first ``steps`` applicable actions, each the first applicable one."""
    state = task.initial_state()
    for _ in range(steps):
        state = state.generate_applicable_actions()[0].apply(state)
    return state


@needs_fd
@pytest.mark.parametrize("free", [True, False])
def test_the_hand_offs_search_from_the_initial_state_joins_the_one_from_the_walks_state_where_a_core_is_free(
        monkeypatch, free):
    """Where a core is free, LAMA-first's search from the initial state starts beside the one from the walk's state
    (here at once: JOIN_SHARE 0), both with all the time left, and the first plan, valid from where it starts, is the
    result; where none is free, the search from the walk's state runs alone in its share, and its plan is the
    result."""
    from up_gnnplan.problems import Task
    from up_gnnplan.search import lama
    from up_gnnplan.states.successors import is_goal

    task = Task.from_files(example("blocksworld"), example("blocksworld", "test-20.pddl"))
    start = _walked(task, 3)
    joined, shares = [], []
    monkeypatch.setattr("up_gnnplan.search.ff.free_core", lambda: free)
    monkeypatch.setattr(lama, "JOIN_SHARE", 0.0)
    search_beside, share = lama.Translation.search_beside, Limits.share
    monkeypatch.setattr(lama.Translation, "search_beside",
                        lambda self, *args: joined.append(args[1:]) or search_beside(self, *args))
    monkeypatch.setattr(Limits, "share", lambda self, fraction: shares.append(fraction) or share(self, fraction))
    result, from_walk = lama.lama_first_from(task, Limits(60), start, 0.5)
    assert result.solved, result.message
    assert joined == ([(lama.RIVAL_MEMORY_SHARE, lama.BESIDE_THE_WALKS_STATE)] if free else [])
    assert shares[:1] == [1.0 if free else 0.5]
    if not from_walk:
        assert free and "searched beside the search from the walk's state from the initial state" in result.message
    state = start if from_walk else task.initial_state()
    for action in result.actions:
        state = action.apply(state)
    assert is_goal(task, state)


def test_the_task_without_its_done_objects(tmp_path):
    """A delivered package is done: left out of the objects, the initial state and the goal; the location it was
    delivered to, which the goal names too, stays, since a road ties it to locations that are not done; a package
    in the truck is not done (``in`` is no goal atom)."""
    from up_gnnplan.problems import load_task
    from up_gnnplan.search.lama import reduced_problem_text

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "deliver"
    task = load_task(fixtures / "domain.pddl", fixtures / "p01.pddl")
    text, done = reduced_problem_text(task, task.initial_state())
    assert done == ["p1"]
    assert "p1" not in text
    assert "(:objects a b c - loc p2 - pkg t - truck)" in text
    assert "(road a b)" in text and "(at p2 a)" in text and "(truck-at t a)" in text
    assert "(:goal (and (at p2 c)))" in text
    state = task.initial_state()
    for step in ("(drive t a b)", "(load p1 t b)"):  # p1 in the truck: no object is done
        state = next(a for a in state.generate_applicable_actions() if str(a) == step).apply(state)
    assert reduced_problem_text(task, state) is None


@needs_fd
def test_lama_first_plans_on_the_task_without_its_done_objects_and_its_plan_reaches_the_whole_goal(tmp_path):
    """The plan of the smaller task, replayed from the state in the whole task, reaches the whole goal; where a done
    object leaves the smaller task unsolvable (a Blocksworld block done on one that must move: that one is never
    clear), it says so and gives up, and the whole task is left to the rest of the hand-off."""
    from up_gnnplan.problems import load_task
    from up_gnnplan.search import Status as SearchStatus
    from up_gnnplan.search.lama import lama_first_reduced, reduced_problem_text
    from up_gnnplan.states.successors import is_goal

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "deliver"
    task = load_task(fixtures / "domain.pddl", fixtures / "p01.pddl")
    state = task.initial_state()
    result = lama_first_reduced(task, Limits(30.0), state, reduced_problem_text(task, state))
    assert result.solved, result.message
    for action in result.actions:
        state = action.apply(state)
    assert is_goal(task, state)
    # a is done (on c and under c as the goal asks), b under it must go to the table; c (clear) and d (under b) stay
    (tmp_path / "p.pddl").write_text("""(define (problem stuck) (:domain blocksworld) (:objects a b c d)
      (:init (on c a) (on a b) (on b d) (ontable d) (clear c) (handempty))
      (:goal (and (on c a) (on a b) (ontable b) (ontable d))))""")
    blocks = load_task(example("blocksworld", "domain.pddl"), tmp_path / "p.pddl")
    reduced = reduced_problem_text(blocks, blocks.initial_state())
    assert reduced[1] == ["a"]
    stuck = lama_first_reduced(blocks, Limits(30.0), blocks.initial_state(), reduced)
    assert stuck.status is SearchStatus.GAVE_UP
    assert stuck.message == "LAMA-first proved the task without the 1 done object unsolvable"


@needs_fd
def test_the_hand_off_plans_without_the_done_objects_of_the_walks_state(tmp_path):
    """Gripper, 20 balls: the walk stops at its step limit with a quarter of the objects done (delivered balls);
    LAMA-first plans from there on the task without them, and the plan, validated, is the walk's prefix and
    LAMA-first's. With handoff_reduced off, LAMA-first plans on the whole task."""
    problem, engine, said = _gripper_hand_off(tmp_path, max_steps=40)
    assert " done objects of 24)" in said
    whole = GnnplanEngine(**engine, handoff_reduced=False).solve(problem, timeout=60)
    assert whole.status == Status.SOLVED_SATISFICING, messages(whole)
    assert not any("done objects" in m for m in messages(whole)), messages(whole)


def _deliver_task():
    from up_gnnplan.problems import load_task

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "deliver"
    return load_task(fixtures / "domain.pddl", fixtures / "p01.pddl")


def _step(state, name: str):
    return next(a for a in state.generate_applicable_actions() if str(a) == name)


@needs_fd
def test_lama_first_plans_beside_a_walk_past_its_share_on_the_task_without_its_done_objects(monkeypatch):
    """A walk gone on past its share, a core free: LAMA-first plans beside it on the task without the done objects
    of its state, with half the memory left. Once its plan (replayed in the whole task from that state) reaches the
    whole goal, the walk's next check stops it (Overtaken); no second search starts, and stopping it removes its
    folder."""
    from up_gnnplan.limits import Overtaken
    from up_gnnplan.search import course as course_module
    from up_gnnplan.search import lama
    from up_gnnplan.states.successors import is_goal

    task = _deliver_task()
    whole = Limits(60, memory_mb=4000)
    part = whole.share(0.0)  # its share spent: the walk goes on in an extension
    said, started = [], []

    def reduce(state, step, left, share):
        started.append(lama.ReducedSearch(task, whole, state, step, lama.reduced_problem_text(task, state), left,
                                          share))
        return started[-1]

    monkeypatch.setattr("up_gnnplan.search.ff.free_core", lambda: True)
    course = course_module.Course(task, part, whole, reduce=reduce, say=lambda level, text: said.append(text))
    part.deadline.extend_to(whole.deadline.end)
    state = _step(task.initial_state(), "(load p2 t a)").apply(task.initial_state())
    course.observe(1, state)
    assert started and said == ["LAMA-first plans beside the walk from step 1 (1 of 2 goal literals left) on the task "
                                "without its 1 done objects of 6"]
    assert part.memory_mb < whole.memory_mb  # the search has half the memory left, the walk the rest
    deadline = time.perf_counter() + 30
    while not course.reduced.ended() and time.perf_counter() < deadline:
        time.sleep(0.05)
    with pytest.raises(Overtaken, match="before step 2: LAMA-first, on the task without the 1 done object of step 1 "
                                        "of the walk beside it, found a plan"):
        part.check("before step 2")
    found = course.reduced.result(whole)
    assert found.solved
    for action in found.actions:
        state = action.apply(state)
    assert is_goal(task, state)
    course.reduce_at = 0.0
    course.observe(2, state)
    assert len(started) == 1  # it has a plan: none again
    folder = Path(course.reduced.folder.name)
    course.reduced.stop()
    assert not folder.exists()


@needs_fd
def test_a_plan_beside_the_walk_is_the_walks_steps_to_its_state_and_lamas_or_none_where_the_walk_took_them_back():
    """At the hand-off, LAMA-first's search started beside the walk on the task without its done objects is waited
    for: its plan follows the walk's steps to the state it started from, with their cost; on a path that does not
    pass that state (the walk took those steps back) there is none."""
    from up_gnnplan.search import SearchResult
    from up_gnnplan.search import Status as SearchStatus
    from up_gnnplan.search import lama
    from up_gnnplan.search.modes import Job, _await_reduced, _reduced_after_walk

    task = _deliver_task()
    first = _step(task.initial_state(), "(load p2 t a)")
    middle = first.apply(task.initial_state())
    second = _step(middle, "(drive t a b)")
    walk = SearchResult(SearchStatus.GAVE_UP, [first, second], 2.0)
    reduced = lama.ReducedSearch(task, Limits(60), middle, 1, lama.reduced_problem_text(task, middle), 1, 1.0)
    said = []
    job = Job(None, {}, Limits(60), lambda level, text: said.append(text), {})
    try:
        plan, waited = _await_reduced(job, task, walk, reduced, left=1)
        assert waited and plan is not None and reduced.used
        assert plan.actions[:1] == [first] and plan.actions[1:] == reduced.found.actions
        assert plan.cost == 1.0 + reduced.found.cost
        assert said and said[0].startswith("lama-first: solved") and "from its step 1" in said[0]
        other = SearchResult(SearchStatus.GAVE_UP, [_step(task.initial_state(), "(drive t a b)")], 1.0)
        assert _reduced_after_walk(task, other, reduced, reduced.found) is None  # its state is not on this path
    finally:
        reduced.stop()


def test_a_walk_too_slow_for_a_translation_that_cannot_end_walks_on_without_the_translator(monkeypatch):
    """On course but too slow, where LAMA-first's translation is estimated at over LATE_FACTOR times the time left:
    with ``reduce`` no translator starts (its core is left to LAMA-first on the smaller task), and the walk goes on
    to the deadline; without ``reduce`` the translator starts, as before."""
    from up_gnnplan.search import course as course_module

    task = _deliver_task()
    for reduce, translator in ((lambda *args: None, False), (None, True)):
        whole = Limits(60)
        part = whole.share(0.5)
        started = []
        course = course_module.Course(task, part, whole, translate=lambda share: started.append(share) or None,
                                      reduce=reduce)
        monkeypatch.setattr(course_module, "translation_seconds", lambda task: 1e6)
        monkeypatch.setattr(course, "_start_translation", lambda: started.append(1) or True)
        course._beside_translation(10, 30.0, "a test")
        assert bool(started) is translator
        assert course.beside and part.deadline.end == whole.deadline.end
        if not translator:
            assert "it walks on to the deadline without it" in course.extensions[-1]


class _Running:
    """A Fast Downward process beside the walk that has not ended."""

    def __init__(self, done: int = 1, left: int = 1):
        self.done, self.left, self.stopped, self.dropped, self.beside = done, left, False, False, None

    def poll(self):
        return self.stopped

    def ended(self):
        return self.stopped

    def solved(self):
        return False

    def stop(self):
        self.stopped = True


def test_the_whole_tasks_translator_not_due_in_time_leaves_its_core_to_lama_first_on_the_smaller_task(monkeypatch):
    """The whole task's translator, started with the walk and estimated to end after the deadline, holds the core:
    LAMA-first on the task without the done objects starts in its place (no other core free), and the translator is
    stopped and dropped, the hand-off left to search the smaller task. A search on the smaller task is not started
    again until the goal literals left have halved."""
    from up_gnnplan.search import course as course_module

    task = _deliver_task()
    whole = Limits(60, memory_mb=4000)
    part = whole.share(0.0)
    monkeypatch.setattr("up_gnnplan.search.ff.free_core", lambda: False)
    said, started = [], []
    translator = _Running()
    course = course_module.Course(task, part, whole, translate=lambda share: translator, at_once="a test",
                                  reduce=lambda *args: started.append(_Running(left=args[2])) or started[-1],
                                  say=lambda level, text: said.append(text))
    course.due = time.perf_counter() + 600  # estimated to end long after the deadline
    part.deadline.extend_to(whole.deadline.end)
    state = task.initial_state()
    course.observe(1, state)
    assert len(started) == 1 and translator.stopped and translator.dropped and course.translation is None
    assert said[-1].endswith("LAMA-first's translator of the whole task, not due before the deadline, stopped")
    course.reduce_at = 0.0
    course.observe(2, state)  # as many goal literals left: the one running goes on
    assert len(started) == 1 and not started[0].stopped


@needs_fd
def test_the_learned_fallback_is_skipped_where_ff_is_left_out_and_lama_first_plans_on_the_smaller_task_next(
        tmp_path, monkeypatch):
    """Gripper, 20 balls, the walk stopped at its step limit with a quarter of the objects done: where FF is left out
    of the learned fallback (as on tasks too large to ground it), the fallback is skipped and LAMA-first plans on the
    task without the done objects next; where FF fits, the fallback runs first, as before."""
    from up_gnnplan.search import ff

    problem, engine, said = _gripper_hand_off(tmp_path, max_steps=40)
    ran = GnnplanEngine(**engine).solve(problem, timeout=60)
    assert any(m.startswith("dual-policy-best-first: gave-up") for m in messages(ran)), messages(ran)
    monkeypatch.setattr(ff, "_fits", lambda *args, **kwargs: ff._Fit("FF left out: as a test"))
    result = GnnplanEngine(**engine).solve(problem, timeout=60)
    assert result.status == Status.SOLVED_SATISFICING and result.metrics["found_by"] == "walk+lama-first"
    skipped = [m for m in messages(result) if m.startswith("the learned fallback is skipped (FF left out: as a test)")]
    assert skipped and "on the task without its" in skipped[0], messages(result)
    assert not any("policy-best-first" in m for m in messages(result)), messages(result)
    valid, note, _ = check_plan(problem, result.plan)
    assert valid, note


def test_lama_first_on_the_smaller_task_has_all_the_time_left_where_the_whole_translation_could_not_end(monkeypatch):
    from up_gnnplan.search import modes

    task = _deliver_task()
    assert modes._reduced_share(task, Limits(60)) == modes.REDUCED_SHARE
    assert modes._reduced_share(task, Limits(None)) == modes.REDUCED_SHARE
    monkeypatch.setattr("up_gnnplan.problems.size.estimate_ground_actions", lambda task: 10 ** 7)  # 1,200 s
    assert modes._reduced_share(task, Limits(60)) == 1.0

"""``gnnplan learn``: one budget from PDDL files to an ONNX model, as named, timed stages.

    checking  ─► labelling ─► judge-plans ─► training (judged) ─► export ──► frontier-judge ─► search-judge
    (inputs)     (labels)     (LAMA-first)    (recipe, loop)       (exporters)  (among close     (search_judge:
                                                                                 epochs)          the share)

The budget (``minutes``) counts from the command's start, over every session of the run, and
covers all stages: labelling gets at most :data:`LABEL_SHARE` of it (what it leaves flows to
training), export keeps back :func:`export_reserve`, training has the rest and holds to its
deadline (:mod:`up_gnnplan.training.budget`).

The run folder (``work_dir``) keeps what a stopped run needs to go on: ``run.json`` (the
problems, their labelling outcomes, the recipe, the seconds spent), one ``labels/*.npz`` per
labelled problem, ``train.safetensors`` (the training state) and, where the model is refined on the optimal labels,
``refine.safetensors`` and ``refine.json`` (the epoch it was refined from); all small and none pickled.
The same command continues a stopped run. The ONNX file is written under a temporary name and
renamed at the end, so the output either is the finished model or is not there.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from up_gnnplan.errors import GnnplanError
from up_gnnplan.learn.inputs import LearnInputError, check_problems, judge_split, problem_files
from up_gnnplan.limits import TimeLimitReached

LABEL_SHARE = 0.30  # labelling takes at most this share of the budget
GRAPH_FILE = "graph.onnx"  # in the run folder: the network exported untrained, before training (_graph_ahead)
CANDIDATE_FILE = "model.onnx"  # in the run folder: the trained model before its final record (the search judge runs it)
EPOCH_FILE = "epoch-"  # in the run folder, EPOCH_FILE + "N.onnx": epoch N's model while the frontier judge runs it
MIN_TRAIN_SECONDS = 3.0  # less than this for training is refused (no model could be chosen)
MIN_BUDGET_SECONDS = 10.0  # below this the run is refused at once: start-up, loading and export alone take seconds
MAX_STATES = 20_000  # expand a training problem fully up to this many states
# A wave with a problem too large for its share multiplies the share of the later ones by this (they are larger
# still); the fair share alone stopped Satellite's labelling at 20 objects with 5m46s of its 8m47s unused.
SHARE_GROWTH = 2.0
# With auto or satisficing labels: after A* with LM-cut found no optimal plan for this many problems in a row, each with at
# least MISS_SECONDS for it, the later (larger) ones go straight to LAMA-first (Transport: LM-cut spent half of each
# share from 19 objects on, in vain; Rovers switched after three shares of 3-6 s, too short for problems LM-cut
# solves in 10-20 s).
OPTIMAL_MISSES, MISS_SECONDS = 3, 10.0
# With labels auto: once the problems A* with LM-cut found no optimal plan for have taken this share of the labelling
# time (their whole time, LAMA-first's plan included), the later ones go straight to LAMA-first. The shares grow after
# each miss, so that A* gets the time larger problems need; where misses and optimal plans alternate (Rovers, 30
# minutes), the misses took 8-127 s each, and 43 of 95 problems were labelled, against 95 without the growth.
MISS_SHARE = 0.25
MIN_SEARCH_JUDGE_SECONDS = 3.0  # less than this a problem for the search judge, and it is not run
JOB_GRACE = 5.0  # seconds a labelling job may run past its share (loading the task) before it is killed
RUN_FORMAT = 3  # 2: the key names files by name and content, so a run folder moves between machines; 3: and labels
LABELLED = ("expanded", "optimal-plan", "satisficing-plan")  # the outcomes of labelling that give training data


class LearnError(GnnplanError):
    """A learn run cannot produce a model (too small a budget, nothing labelled)."""


@dataclass
class LearnOptions:
    """The settings of one ``gnnplan learn`` run."""

    minutes: float = 30.0  # the whole budget, from the command's start to the ONNX file written
    jobs: int = 1  # labelling processes at once
    work_dir: Path | None = None  # run folder (default: next to the output, OUTPUT.learn)
    seed: int = 0
    memory_mb: int | None = None  # resident-memory limit of each labelling process (its address space gets room)
    max_states: int = MAX_STATES
    labels: str = "auto"  # "auto", "satisficing": LAMA-first's plan where A* with LM-cut finds none in time
    command: str = "gnnplan learn"  # recorded in the model's metadata
    started: float | None = None  # time.perf_counter() at the command's start (default: now)
    device: str = "auto"  # training's torch device: auto (a GPU when torch sees one), cpu, cuda, cuda:N
    batch_size: int | None = None  # states per step; None: the device's (recipe.CPU_BATCH, recipe.GPU_BATCH)
    label_only: bool = False  # stop after labelling; the same run continues (trains) later, here or elsewhere
    head: str | None = None  # the model's heads (recipe.HEADS); None: the recipe's (recipe.HEAD)
    labels_from: Path | None = None  # a run folder of the same problems whose labels a new run starts from
    hidden: int | None = None  # the network's features; None: recipe.HIDDEN
    layers: int | None = None  # its message-passing layers; None: recipe.LAYERS
    ema_epochs: float | None = None  # the weight average's time constant in epochs; None: recipe.EMA_EPOCHS, 0: none


def choosing_reserve(budget: float, judges: int, head: str) -> float:
    """Seconds kept back after training for the value policy's runs on the judge problems (``choosing``):
    5% of the budget, at most 90 s; none without judge problems or without a value head."""
    return min(90.0, 0.05 * budget) if judges and "value" in head.split("+") else 0.0


def search_judge_reserve(budget: float, judges: list, plans: dict | None) -> float:
    """Seconds kept back after training for the search judge (:func:`_search_judge_stage`): its time on each
    judge problem LAMA-first was tried on and did not solve, and a start-up's, within
    :data:`~up_gnnplan.learn.recipe.JUDGE_PLAN_SHARE` of the budget; none where LAMA-first solved every one."""
    from up_gnnplan.learn.recipe import JUDGE_PLAN_SECONDS, JUDGE_PLAN_SHARE
    from up_gnnplan.learn.search_judge import JOB_GRACE as START, to_search

    searched = to_search(judges, None, plans or {})[0]
    return min(JUDGE_PLAN_SHARE * budget, len(searched) * JUDGE_PLAN_SECONDS + START) if searched else 0.0


def export_reserve(budget: float) -> float:
    """Seconds kept back for exporting (tracing, writing, the metadata: measured 2.4 s for a 30-layer R-GNN on a
    loaded machine) and for the interpreter's exit (about 1 s with torch loaded)."""
    return min(30.0, max(4.5, 0.02 * budget))


@dataclass
class _Run:
    """The run folder's ``run.json``."""

    format: int
    key: dict  # what must match for a run to continue (domain, problems, seed)
    spent: float = 0.0  # seconds spent in earlier sessions (and this one, as saved)
    labels: dict = field(default_factory=dict)  # problem name -> labelling summary
    labels_done: bool = False
    recipe: dict | None = None
    phases: dict = field(default_factory=dict)  # stage -> seconds over all sessions
    sessions: int = 0
    judge_plans: dict | None = None  # judge problem name -> LAMA-first's outcome on it (_judge_plan_stage)


class _Clock:
    """The run's deadline and time spent, over sessions, kept in its folder as the run goes."""

    def __init__(self, budget: float, spent_before: float, started: float, run: _Run, work: Path):
        self.budget, self.spent_before, self.started = budget, spent_before, started
        self.deadline = started + budget - spent_before
        self.run, self.work = run, work
        self._under_way = None  # counts the stage under way into run.phases

    def spent(self) -> float:
        return self.spent_before + time.perf_counter() - self.started

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    @contextmanager
    def stage(self, name: str):
        """Count the seconds of stage ``name`` in the run's phases, while it is under way too."""
        before, start = self.run.phases.get(name, 0.0), time.perf_counter()
        self._under_way = lambda: self.run.phases.__setitem__(name, before + time.perf_counter() - start)
        try:
            yield
        finally:
            self._under_way()
            self._under_way = None

    def keep(self) -> None:
        """Write the seconds spent so far to the run folder. A run killed outright (SIGKILL, the end of a
        machine's lease: no ``finally`` runs) continues with its training time counted, not given again
        (Ferry, 30 minutes: a run killed in its refinement trained 21 minutes more when continued)."""
        if self._under_way is not None:
            self._under_way()
        self.run.spent = self.spent()
        _save_run(self.work, self.run)


def learn(domain, problems, output, options: LearnOptions | None = None, say=None) -> dict:
    """Learn a model of ``domain`` from ``problems`` (files or folders) and write it to ``output``.

    ``say(line)`` gets the progress lines (default: standard error). Returns the summary that is
    also recorded in the model's metadata. Raises :class:`LearnError` / :class:`LearnInputError`
    (or the loader's errors) with nothing written at ``output``.
    """
    options = options or LearnOptions()
    started = options.started if options.started is not None else time.perf_counter()
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    budget = options.minutes * 60.0
    if not budget >= MIN_BUDGET_SECONDS:
        raise LearnError(f"--timeout {budget:g} s is too small to train at all: starting, labelling and exporting "
                         f"alone take seconds; give at least {MIN_BUDGET_SECONDS:g} s")
    domain, output = Path(domain), Path(output)
    if not domain.is_file():
        raise LearnInputError(f"{domain}: no such domain file")
    if not options.label_only:  # a device that cannot be had is refused before any work
        from up_gnnplan.training.devices import resolve_device

        resolve_device(options.device)
    phase_start = time.perf_counter()
    files = problem_files(domain, problems)
    say(f"checking {len(files)} problem(s) of {domain.name}")
    checked = check_problems(domain, files, say=say)
    train_problems, judges = judge_split(checked)
    work = Path(options.work_dir) if options.work_dir else output.with_name(output.name + ".learn")
    key = _run_key(domain, [p.path for p in checked], options.seed, options.labels)
    run, fresh = _open_run(work, key)
    if options.labels_from is not None:
        _take_labels(Path(options.labels_from), work, run, fresh, say)
    clock = _Clock(budget, run.spent, started, run, work)
    run.sessions += 1
    if not fresh:
        say(f"continuing the run in {work} ({run.spent:.0f} s of {budget:.0f} s spent before)")
    _add_phase(run, "checking", time.perf_counter() - phase_start)
    try:
        result = _stages(domain, output, options, say, run, work, clock, train_problems, judges, checked)
    except LearnError:
        if fresh and not any(run.labels.get(p, {}).get("status") in LABELLED for p in run.labels):
            shutil.rmtree(work, ignore_errors=True)  # nothing worth continuing from
        raise
    finally:
        if work.is_dir():
            clock.keep()
    return result


def _stages(domain, output, options, say, run, work, clock, train_problems, judges, checked) -> dict:
    if not run.labels_done:
        with clock.stage("labelling"):
            _label_stage(domain, options, say, run, work, clock, train_problems)
    labelled = [p for p in train_problems if run.labels.get(p.name, {}).get("status") in LABELLED]
    if run.judge_plans is None and judges and labelled:
        with clock.stage("judge-plans"):
            _judge_plan_stage(domain, say, run, clock, judges)
    if options.label_only:
        states = sum(run.labels[p.name]["states"] for p in labelled)
        say(f"labelled {len(labelled)} of {len(train_problems)} training problem(s), {states:,} states, in {work}; "
            f"{clock.spent():.0f} s of {clock.budget:.0f} s spent. The same command without --label-only trains "
            "(here, or on another machine with this folder)")
        return {"label_only": True, "labelled": len(labelled), "problems": len(train_problems), "states": int(states),
                "work_dir": str(work), "seconds": round(clock.spent(), 1)}
    if not labelled:
        statuses = {run.labels.get(p.name, {}).get("status") for p in train_problems}
        if statuses <= {"unsolvable"}:
            raise LearnError(f"no training problem is solvable: all {len(train_problems)} are proven unsolvable")
        if statuses <= {"not-tried"}:
            raise LearnError(f"the budget ran out before any of the {len(train_problems)} training problems was "
                             "labelled; give a longer --timeout")
        raise LearnError(f"no training problem could be labelled within the budget (each of the "
                         f"{len(train_problems)} was too large: no {'optimal ' if options.labels == 'optimal' else ''}plan within "
                         f"its share of the "
                         f"{LABEL_SHARE:.0%} of --timeout for labelling); give a longer --timeout or smaller problems"
                         + ("" if options.labels != "optimal" else
                            ", or label them by LAMA-first's plans: --labels auto"))
    frontier = _frontier(train_problems, run, judges)
    with clock.stage("training"):
        model, encoding, config, record, data, tasks, candidates = _train_stage(domain, options, say, run, work, clock,
                                                                                labelled, judges, frontier)
    if tasks and "policy_validation" in record and "value" in getattr(model, "outputs", ()):
        with clock.stage("choosing"):
            _choose_first_policy(model, encoding, config, record, tasks, clock, say, work,
                                 search_judge_reserve(clock.budget, judges, run.judge_plans))
    _compare_walks(record, run.judge_plans, judges)
    _choose_astray_factor(record, judges)
    candidate = work / CANDIDATE_FILE  # the model as mode auto runs it, but for the share the search judge may set
    with clock.stage("export"):
        _export(model, encoding, config, record, data.domain, candidate, work / GRAPH_FILE)
    for stale in work.glob(f"{EPOCH_FILE}*.onnx"):  # the frontier judge's files of a run stopped in that stage
        stale.unlink()
    if candidates is not None and frontier and _lowered_share(record, judges):
        with clock.stage("frontier-judge"):
            _frontier_stage(domain, model, encoding, config, record, data.domain, candidates, frontier, options,
                            clock, say, work, search_judge_reserve(clock.budget, judges, run.judge_plans))
    if _lowered_share(record, judges) and _lama_failed(judges, run.judge_plans):
        with clock.stage("search-judge"):
            _search_judge_stage(domain, candidate, options, record, judges, run.judge_plans, clock, say)
    _choose_handoff_share(record, judges)
    summary = _summary(options, run, clock, checked, labelled, judges, record)
    record["learn"] = summary
    record["command"] = options.command
    summary["phases"] = {k: round(v, 1) for k, v in run.phases.items()}
    summary["seconds"] = round(clock.spent(), 1)
    _amend_metadata(candidate, record, output)
    _report(say, output, summary, config)
    return summary


# -- labelling ---------------------------------------------------------------------------------

def _label_stage(domain, options, say, run, work, clock, problems) -> None:
    """Label ``problems`` (smallest first) in waves of ``options.jobs`` within the labelling time.

    Each problem gets a fair share of the time left, times a growth factor: a wave with a problem too large
    for its share multiplies the factor by :data:`SHARE_GROWTH`, so that the larger problems after it get
    the time they need (fewer of them are tried) instead of failing alike. Labelling stops when its time is
    spent, or when a problem was too large for all of the time left (the later ones are larger still).
    """
    from contextlib import closing

    from up_gnnplan.datasets.build import PRELOAD
    from up_gnnplan.executors import Job, make_executor
    from up_gnnplan.learn.labels import LAMA_SECONDS, optimal_share
    from up_gnnplan.limits import address_space_for

    labels_dir = work / "labels"
    labels_dir.mkdir(parents=True, exist_ok=True)
    # A share of the time left (start-up and checks spent part of the budget already); a run continued while
    # labelling labels on with that share of what it has left.
    labels_deadline = time.perf_counter() + LABEL_SHARE * clock.left()
    todo = [p for p in problems if p.name not in run.labels]
    total = len(problems)
    say(f"labelling {len(todo)} of {total} training problem(s), smallest first, in at most "
        f"{max(0.0, labels_deadline - time.perf_counter()):.0f} s")
    growth, hopeless, recent = 1.0, None, []  # recent: seconds of each finished problem's wave
    mode, misses = options.labels, 0  # misses: problems in a row that LM-cut gave no optimal plan for
    executor = make_executor("local", options.jobs)
    while todo:
        left = labels_deadline - time.perf_counter()
        if left < 1.0 or hopeless:
            why = ("the labelling time is spent" if left < 1.0 else
                   f"{hopeless} was too large to label in all the labelling time left")
            for p in todo:
                run.labels[p.name] = {"status": "not-tried", "states": 0, "plan_length": 0, "seconds": 0.0, "note": why}
            say(f"  {len(todo)} larger problem(s) not labelled ({', '.join(p.name for p in todo[:4])}"
                f"{' ...' if len(todo) > 4 else ''}): {why}")
            break
        wave, todo = todo[:options.jobs], todo[options.jobs:]
        fair = left * min(options.jobs, len(wave) + len(todo)) / (len(wave) + len(todo))
        share = min(max(1.0, fair * growth), left)
        jobs = [Job(p.name, "up_gnnplan.learn.labels:label_one",
                    (str(domain.resolve()), str(p.path.resolve()), share, options.max_states,
                     str((labels_dir / f"{p.name}.npz").resolve()), mode, min(fair, share)),
                    share + JOB_GRACE + (LAMA_SECONDS if mode == "auto" else 0.0),
                    address_space_for(options.memory_mb))
                for p in wave]
        by_name = {p.name: p for p in wave}
        wave_start, grown = time.perf_counter(), None  # grown: why the later shares grow ("too-large", "miss")

        def beat(running, share=share):  # a problem that takes long is seen, with the time its share allows
            busy = ", ".join(f"{by_name[key].name} ({by_name[key].objects} objects) for {_duration(seconds)}"
                             for key, seconds in running)
            left = max(0.0, labels_deadline - time.perf_counter())
            say(f"  ... labelling {busy}, of a share of {_duration(share)}; at most {_duration(left)} of labelling left")

        with executor, closing(executor.run(jobs, PRELOAD + ["up_gnnplan.learn.labels"], beat=beat)) as outcomes:
            for outcome in outcomes:
                p = by_name[outcome.key]
                if outcome.status == "ok":
                    summary = outcome.value
                else:
                    what = {"timeout": f"stopped at the end of its share ({share:.0f} s)",
                            "memout": f"out of memory (--memory-mb {options.memory_mb})"}.get(
                        outcome.status, f"{outcome.status}: {str(outcome.error)[:200]}")
                    summary = {"status": "too-large" if outcome.status in ("timeout", "memout") else "error",
                               "states": 0, "plan_length": 0, "seconds": round(share, 1), "note": what}
                summary["objects"] = p.objects
                run.labels[p.name] = summary
                if summary["status"] == "too-large":
                    if share >= left - JOB_GRACE:
                        hopeless = p.name
                    grown = "too-large"
                elif summary["status"] == "satisficing-plan" and mode == "auto":
                    # A* found no optimal plan in its share: the next ones get more, as if the problem were skipped,
                    # so that optimal plans label what they can (Blocksworld, 15 minutes: 8 problems along optimal
                    # plans and 66 along LAMA-first's without it, against 19 optimal ones with --labels optimal; its
                    # plans 1.14x the optimal labels' model's); three misses in a row end it (LAMA-first at once).
                    grown = grown or "miss"
                clock.keep()
                done = sum(1 for q in problems if q.name in run.labels)
                recent.append(time.perf_counter() - wave_start)
                say(f"  [{done}/{total}] {p.name} ({p.objects} objects): {_describe_label(summary)}; "
                    f"{_eta(recent, total - done, options.jobs, labels_deadline)}")
                if summary["status"] == "optimal-plan":
                    misses = 0
                elif summary["status"] == "satisficing-plan" and share * optimal_share(mode) >= MISS_SECONDS:
                    misses += 1
                if mode in ("auto", "satisficing") and misses >= OPTIMAL_MISSES:
                    mode = "lama-first"
                    say(f"  A* with LM-cut found no optimal plan for {misses} problems in a row: the larger ones are "
                        "labelled by LAMA-first's plans at once")
                elif mode == "auto" and _missed_share(run, labels_deadline) >= MISS_SHARE:
                    mode = "lama-first"
                    say(f"  the problems A* with LM-cut found no optimal plan for took {MISS_SHARE:.0%} of the "
                        "labelling time: the larger ones are labelled by LAMA-first's plans at once")
        if not hopeless and (grown == "too-large" or (grown == "miss" and mode == "auto")):  # misses: while A* is tried
            growth *= SHARE_GROWTH
            say(f"  the next problems get {growth:g} times a fair share of the time left (a problem was too large "
                f"for {'an optimal plan in ' if grown == 'miss' else ''}its {share:.0f} s)")
    run.labels_done = True
    _save_run(work, run)


def _missed_share(run, labels_deadline: float) -> float:
    """The share of the labelling time (spent so far and left) that problems labelled by LAMA-first's plan after
    A* with LM-cut found none took."""
    spent = missed = 0.0
    for summary in run.labels.values():
        spent += summary.get("seconds", 0.0)
        missed += summary.get("seconds", 0.0) if summary["status"] == "satisficing-plan" else 0.0
    whole = spent + max(0.0, labels_deadline - time.perf_counter())
    return missed / whole if whole > 0 else 0.0


def _describe_label(summary: dict) -> str:
    status = summary["status"]
    if status == "expanded":
        text = f"{summary['states']:,} states (full state space)"
    elif status == "optimal-plan":
        text = f"{summary['states']:,} states along an optimal plan of {summary['plan_length']} steps"
    elif status == "satisficing-plan":
        text = f"{summary['states']:,} states along a plan of {summary['plan_length']} steps"
    elif status == "unsolvable":
        text = "skipped, unsolvable"
    else:
        text = "skipped"
    note = f" ({summary['note']})" if summary.get("note") else ""
    return f"{text}{note} in {summary['seconds']:.1f} s"


def _eta(recent: list[float], remaining: int, jobs: int, deadline: float) -> str:
    """An estimate of the labelling time left: what is left times the mean of the last three problems (they
    grow with the problems' size, so the mean of all would say too little), at most the labelling deadline."""
    if remaining == 0:
        return "labelling done"
    last = recent[-3:]
    mean = sum(last) / max(len(last), 1)
    estimate = min(mean * remaining / max(jobs, 1), max(0.0, deadline - time.perf_counter()))
    return f"about {_duration(estimate)} of labelling left (at most {_duration(max(0.0, deadline - time.perf_counter()))})"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


# -- training ----------------------------------------------------------------------------------

def _frontier(train_problems: list, run: _Run, judges: list) -> list:
    """The frontier problems of the frontier judge (:func:`~up_gnnplan.learn.frontier_judge.frontier_problems`) where
    it may run: where LAMA-first failed a judge problem (the search judge's condition); else none."""
    from up_gnnplan.learn.frontier_judge import frontier_problems

    return frontier_problems(train_problems, run.labels, judges) if _lama_failed(judges, run.judge_plans) else []


def _train_stage(domain, options, say, run, work, clock, labelled, judges, frontier=()):
    from up_gnnplan.datasets.store import Dataset
    from up_gnnplan.learn.frontier_judge import CANDIDATES
    from up_gnnplan.learn.frontier_judge import reserve as frontier_reserve
    from up_gnnplan.learn.recipe import HEAD, Recipe, choose, config_of, ema_decay, error_name, held_out
    from up_gnnplan.problems import load_task
    from up_gnnplan.training.devices import resolve_device
    from up_gnnplan.training.loop import train
    from up_gnnplan.training.run import Candidates

    tasks = [load_task(domain, p.path) for p in judges]
    state_path = work / "train.safetensors"
    before = _trained_seconds(state_path)

    head = (run.recipe or {}).get("head") or options.head or HEAD
    device = resolve_device(options.device)

    reserved = {"frontier": frontier_reserve(clock.budget, len(frontier))}  # until the walks show it will not run

    def training_left() -> float:
        return (clock.left() - export_reserve(clock.budget) - choosing_reserve(clock.budget, len(judges), head)
                - search_judge_reserve(clock.budget, judges, run.judge_plans) - reserved["frontier"])

    seconds = training_left()
    # A continued run whose training had begun ends it in the time left, however short (the chosen epoch is in its
    # state); one that had not begun needs time to train.
    begun = before > 0.0
    if seconds < MIN_TRAIN_SECONDS and not begun and run.sessions > 1:
        raise LearnError(f"this run has spent {clock.spent_before:.0f} s of its {clock.budget:.0f} s already: give a "
                         f"longer --timeout to train on, or remove {work} to start anew")
    if seconds < MIN_TRAIN_SECONDS and not begun:
        raise LearnError(f"--timeout {clock.budget:g} s leaves {max(seconds, 0):.1f} s for training after "
                         f"{clock.spent():.0f} s of checking and labelling: too little to train at all; give a longer "
                         f"--timeout (the labels are kept in {work}: the same command goes on from them)")
    if run.recipe is None:
        summaries = [dict(run.labels[p.name], objects=p.objects, name=p.name) for p in labelled]
        run.recipe = asdict(choose(seconds, summaries, [p.objects for p in judges], gpu=device.type == "cuda",
                                   batch_size=options.batch_size, head=options.head or HEAD,
                                   held_out_names=[p.name for p in held_out(labelled)], hidden=options.hidden,
                                   layers=options.layers, ema_epochs=options.ema_epochs))
        _save_run(work, run)
    recipe = Recipe(**run.recipe)
    kept = ("head", "batch_size", "hidden", "layers")  # chosen when training began; a continued run keeps them
    if any(getattr(options, name) not in (None, getattr(recipe, name)) for name in kept):
        raise LearnError(f"the run in {work} trains {recipe.head} at batches of {recipe.batch_size} with "
                         f"{recipe.hidden} features and {recipe.layers} layers, as chosen when its training began; "
                         "continue it without --head, --batch-size, --hidden and --layers, or remove the folder to "
                         "start anew")
    if options.ema_epochs is not None and ema_decay(options.ema_epochs, recipe.epoch_states,
                                                    recipe.batch_size) != recipe.ema:
        raise LearnError(f"the run in {work} trains with a weight average of decay {recipe.ema:g} a step (0: none), as "
                         "chosen when its training began; continue it without --ema-epochs, or remove the folder to "
                         "start anew")
    labels = {p.name: work / "labels" / f"{p.name}.npz" for p in labelled}
    data = Dataset.load_all(path for name, path in labels.items() if name not in recipe.held_out)
    validation = Dataset.load_all(path for name, path in labels.items() if name in recipe.held_out)
    config = config_of(recipe, options.seed, options.device)
    _graph_ahead(work / GRAPH_FILE, config, data, say)
    seconds = training_left()
    if seconds < MIN_TRAIN_SECONDS and not begun:  # reading the labels and exporting the graph took what labelling had left
        raise LearnError(f"--timeout {clock.budget:g} s leaves {max(seconds, 0):.1f} s for training after "
                         f"{clock.spent():.0f} s of checking, labelling, reading the labels and exporting the "
                         f"network's graph: too little to train at all; give a longer --timeout (the labels are kept "
                         f"in {work}: the same command goes on from them)")
    # The refinement's time is kept back from the training on all labels, unless that training has not begun and
    # would be left too little (a continued run); a training that has begun ends where the refinement's time begins.
    refining = recipe.refine_share * recipe.seconds if recipe.refine else 0.0
    if refining and before == 0.0 and seconds - refining < MIN_TRAIN_SECONDS:
        refining = 0.0
    config.max_seconds = before + seconds - refining  # the loop counts earlier sessions' seconds (the state's)
    trained = len(labelled) - len(recipe.held_out)
    error = error_name(recipe.head)
    checked_on = (f"the {error} on {len(recipe.held_out)} labelled problem(s) held out "
                  f"({', '.join(recipe.held_out)})" if recipe.held_out else "the training error")
    if recipe.judge_ties == "error-unless-all":
        checked_on = f"the fewest steps where they solve all, else {checked_on}"
    say(f"training {config.architecture} ({config.head}) on {len(data):,} states of {trained} problem(s) for "
        f"up to {_duration(max(0.0, seconds - refining))} on {device}; epochs of {config.epoch_states} states "
        f"(batches of {config.batch_size}), judged by the greedy policy on "
        f"{len(judges)} held-back problem(s) ({', '.join(p.name for p in judges) or 'none'}, "
        f"at most {config.policy_steps} steps each), then by {checked_on}"
        + (f"; then refined on the optimal labels alone of {len(recipe.refine)} problem(s) for the last "
           f"{_duration(refining)}" if refining else ""))
    candidates = Candidates(CANDIDATES) if frontier and tasks else None  # for the frontier judge
    try:
        model, encoding, record = train(data, config, _epoch_lines(say, clock, error, training_left), validation=validation,
                                        validation_tasks=tasks or None, state_path=state_path,
                                        started=time.perf_counter(), judge_graph=_judge_graph(work),
                                        candidates=candidates)
    except TimeLimitReached:  # the time ran out before the first epoch (a machine busier than the estimate)
        raise LearnError(f"--timeout {clock.budget:g} s left {seconds:.1f} s for training, which building the model "
                         "took before its first epoch: too little to train at all; give a longer --timeout (the "
                         f"labels are kept in {work}: the same command goes on from them)") from None
    judged = record.get("policy_validation") or {}
    if candidates is not None and judged.get("solved", 0) >= len(tasks):
        candidates, reserved["frontier"] = None, 0.0  # every judge problem walked: the frontier judge will not run
    if refining and judged.get("solved", 0) < len(tasks):
        model, encoding, record = _train_on(model, encoding, record, data, config, validation, tasks, state_path, say,
                                            clock, error, training_left, candidates)
    elif refining:
        model, config, record = _refine(model, config, record, recipe, labels, validation, tasks, work, clock, say,
                                        training_left)
        if (record.get("refinement") or {}).get("kept") == "refined":
            candidates = None  # the epochs kept are of the training before the refinement
    return model, encoding, config, record, data, tasks, candidates


def _train_on(model, encoding, record, data, config, validation, tasks, state_path, say, clock, error, training_left,
              candidates=None):
    """Go on training on all labels through the refinement's time, where the chosen epoch's greedy policy (of
    ``model``) did not solve every judge problem; return (model, encoding, record), the record saying why there was
    no refinement.

    The optimal labels refine the length of plans; where the policy falls short of solving the judge problems, the
    labels along LAMA-first's plans carry it (Rovers, 30 minutes: refined after 70% of the time, 21 test tasks of 30
    by the model, against 26 trained all the time on all labels)."""
    from up_gnnplan.training.loop import train

    chosen = _judged(record)
    left = training_left()
    say(f"  the chosen epoch solved {chosen['solved']}/{len(tasks)} judge problems: no refinement on the optimal "
        f"labels (it shortens the plans of a policy that solves them all); training on all labels goes on for up to "
        f"{_duration(max(0.0, left))}")
    if left >= MIN_TRAIN_SECONDS:
        config.max_seconds = _trained_seconds(state_path) + left
        model, encoding, record = train(data, config, _epoch_lines(say, clock, error, training_left),
                                        validation=validation, validation_tasks=tasks, state_path=state_path,
                                        started=time.perf_counter(), judge_graph=_judge_graph(state_path.parent),
                                        candidates=candidates)
    record["refinement"] = {"kept": "all labels", "all_labels": chosen,
                            "why": f"not refined: the model of all labels solved {chosen['solved']} of {len(tasks)} "
                                   f"judge problems with epoch {chosen['epoch']} of {chosen['epochs']}"}
    return model, encoding, record


def _judged(record: dict) -> dict:
    """What the judge found of a training's chosen epoch (its ``record``): solved, steps, the epoch and of how many."""
    judged = record["policy_validation"]
    return {"solved": judged["solved"], "steps": judged["steps"], "epoch": record.get("best_epoch"),
            "epochs": record.get("epochs")}


REFINE_FILE = "refine.safetensors"  # in the run folder: the training state of the refinement on optimal labels
REFINE_ORIGIN = "refine.json"  # in the run folder: the epoch of the training on all labels that the refinement began from


def _refine(model, config, record, recipe, labels, validation, tasks, work, clock, say, training_left):
    """Train on from ``model`` (chosen by the judge on all labels) on the optimal labels of ``recipe.refine`` in the
    training time left, judged by the same problems with ties broken by the steps; return the model, its config
    and record: the refined one where its greedy policy solved more judge problems, or as many in fewer steps,
    else ``model``. Both records say what the judge found (``record["refinement"]``)."""
    from dataclasses import replace

    from up_gnnplan.datasets.store import Dataset
    from up_gnnplan.learn.recipe import error_name
    from up_gnnplan.training.loop import train

    state_path, origin_path = work / REFINE_FILE, work / REFINE_ORIGIN
    whole = _judged(record)
    origin = {"epoch": whole["epoch"], "epochs": whole["epochs"]}
    if origin_path.is_file() and json.loads(origin_path.read_text()) != origin:
        state_path.unlink(missing_ok=True)  # a continued run trained on all labels further: refine its new choice
    origin_path.write_text(json.dumps(origin))
    before = _trained_seconds(state_path)
    seconds = training_left()
    if seconds < MIN_TRAIN_SECONDS and before == 0.0:
        say(f"  no refinement on the optimal labels: {max(seconds, 0.0):.1f} s of training left")
        return model, config, record
    data = Dataset.load_all(labels[name] for name in recipe.refine)
    refined_config = replace(config, judge_ties="steps", max_seconds=before + seconds)
    say(f"refining the chosen epoch ({whole['epoch']}: judge {whole['solved']}/{len(tasks)} in "
        f"{whole['steps']} steps) on the optimal labels alone: {len(data):,} states of {len(recipe.refine)} "
        f"problem(s), for up to {_duration(seconds)}; kept where its judge solves more, or as many in fewer steps")
    try:
        refined, _, refined_record = train(data, refined_config, _epoch_lines(say, clock, error_name(recipe.head),
                                                                              training_left, "refining "),
                                           validation=validation, validation_tasks=tasks, state_path=state_path,
                                           started=time.perf_counter(), initial_weights=model.state_dict(),
                                           judge_graph=_judge_graph(work))
    except TimeLimitReached:
        say("  no refinement on the optimal labels: the time ran out before its first epoch")
        return model, config, record
    found = _judged(refined_record)
    better = (found["solved"], -found["steps"]) > (whole["solved"], -whole["steps"])
    refinement = {"problems": len(recipe.refine), "states": len(data), "kept": "refined" if better else "all labels",
                  "all_labels": whole, "refined": found}
    say(f"  refined: judge {found['solved']}/{len(tasks)} in {found['steps']} steps (epoch "
        f"{found['epoch']} of {found['epochs']}), against {whole['solved']}/{len(tasks)} "
        f"in {whole['steps']} on all labels: {'the refined model is' if better else 'the model of all labels is'} kept")
    if better:
        refined_record["refinement"] = refinement
        return refined, refined_config, refined_record
    record["refinement"] = refinement
    return model, config, record


def _epoch_lines(say, clock, error: str, training_left, prefix: str = ""):
    """Return the training loop's ``on_epoch``: a line every few seconds (at most every 15 s)."""
    last = [0.0]

    def on_epoch(epoch, loss, value, best, judge=None):
        now = time.perf_counter()
        if now - last[0] >= min(15.0, max(2.0, clock.budget / 60)):
            last[0] = now
            clock.keep()
            if judge is None:
                verdict = f"(best {best:.3f})"
            else:
                verdict = (f"judge {judge['solved']}/{judge['tasks']} ({judge['steps']} steps); chosen so far: "
                           f"epoch {judge['best_epoch']} (judge {judge['best_solved']}/{judge['tasks']}, "
                           f"{error} {best:.3f})")
            say(f"  {prefix}epoch {epoch}: loss {loss:.3f}, {error} {value:.3f}, {verdict}; "
                f"{_duration(max(0.0, training_left()))} of training left")

    return on_epoch


def _judge_graph(work: Path) -> Path | None:
    """The graph file of the run in ``work`` (:func:`_graph_ahead`), which the judge's policy runs in with the epoch's
    weights (:mod:`up_gnnplan.training.judge_runtime`), or None where there is none (the judge then runs in torch)."""
    graph = work / GRAPH_FILE
    return graph if graph.is_file() else None


def _choose_first_policy(model, encoding, config, record, tasks, clock, say, work: Path, kept: float = 0.0) -> None:
    """Run the chosen model's greedy value policy on the judge problems, within the time kept back for it,
    and record in ``record["first_policy"]`` the policy mode auto starts with: the value policy where it
    solves more of them than the action policy did (Spanner: the action policy walks into dead ends that
    the value policy avoids), else the action policy (one forward pass a step instead of one per successor)."""
    from up_gnnplan.limits import Limits
    from up_gnnplan.training.judge_runtime import RuntimeJudge
    from up_gnnplan.training.judging import policy_validation

    action = record["policy_validation"]
    seconds = clock.left() - export_reserve(clock.budget) - kept  # kept: for the search judge after it
    if seconds < 1.0 or getattr(model, "actions", None) is None or "value" not in getattr(model, "outputs", ()):
        return  # no time left, or not a model of both heads
    graph = _judge_graph(work)
    runtime = RuntimeJudge(graph).runtime(model, encoding) if graph is not None else None
    limits = Limits(seconds)
    solved, steps = policy_validation(model, encoding, tasks, config.policy_steps, limits, value=True, runtime=runtime)
    first = "policy" if solved > action["solved"] else "action-policy"
    record["first_policy"] = first
    record["first_policy_judge"] = {"value_policy": {"solved": int(solved), "steps": int(steps)},
                                    "action_policy": {"solved": action["solved"], "steps": action["steps"]},
                                    "stopped_by_time_limit": limits.deadline.passed()}
    say(f"  the greedy value policy solved {solved}/{len(tasks)} judge problems ({steps} steps), the action policy "
        f"{action['solved']}/{len(tasks)}: mode auto starts with the "
        f"{'value policy' if first == 'policy' else 'action policy'}")


def _judge_plan_stage(domain, say, run, clock, judges) -> None:
    """LAMA-first on each judge problem, within :data:`~up_gnnplan.learn.recipe.JUDGE_PLAN_SHARE` of the budget
    (at most :data:`~up_gnnplan.learn.recipe.JUDGE_PLAN_SECONDS` a problem): its plans' lengths are what the
    judge's walks are measured against (:func:`_compare_walks`). Kept in the run folder; a run continued after
    this stage does not run them again."""
    from up_gnnplan.learn.labels import fast_downward_plan
    from up_gnnplan.learn.recipe import JUDGE_PLAN_SECONDS, JUDGE_PLAN_SHARE
    from up_gnnplan.problems import load_task

    deadline = time.perf_counter() + min(JUDGE_PLAN_SHARE * clock.budget, max(0.0, clock.left()))
    plans = {}
    say(f"LAMA-first on the {len(judges)} judge problem(s), the plans the judge's walks are measured against, in "
        f"at most {_duration(max(0.0, deadline - time.perf_counter()))}")
    for p in judges:
        seconds = min(JUDGE_PLAN_SECONDS, deadline - time.perf_counter())
        if seconds < 1.0:
            plans[p.name] = {"status": "not-tried", "length": None, "seconds": 0.0}
            continue
        start = time.perf_counter()
        status, plan = fast_downward_plan(load_task(domain, p.path), seconds, alias="lama-first")
        plans[p.name] = {"status": status, "length": len(plan) if plan is not None else None,
                         "seconds": round(time.perf_counter() - start, 1)}
        say(f"  {p.name} ({p.objects} objects): " + (f"a plan of {len(plan)} steps in {plans[p.name]['seconds']:.1f} s"
                                                    if plan is not None else f"no plan ({status}) in its {seconds:.1f} s"))
    run.judge_plans = plans
    clock.keep()


def _compare_walks(record: dict, plans: dict | None, judges: list) -> None:
    """Record in ``record["judge_against_lama"]`` the steps of the judge's walks (the chosen model's greedy action
    policy) against those of LAMA-first's plans on the judge problems that both solved, where there are at least
    :data:`~up_gnnplan.learn.recipe.MIN_TRUSTED_JUDGES` of them. Without the walks' steps per problem (a run
    whose training began before the judge recorded them), only where both solved every one."""
    from up_gnnplan.learn.recipe import MIN_TRUSTED_JUDGES

    judged = record.get("policy_validation")
    if not judges or not judged or not plans:
        return
    lengths = [(plans.get(p.name) or {}).get("length") for p in judges]
    walks = judged.get("walks")
    if walks is None or len(walks) != len(judges):  # the total of the walks alone
        if judged["solved"] < len(judges) or not all(lengths):
            return
        walked, planned, count = judged["steps"], sum(lengths), len(judges)
    else:
        both = [(walk, length) for walk, length in zip(walks, lengths) if walk is not None and length]
        if len(both) < min(MIN_TRUSTED_JUDGES, len(judges)):
            return
        walked, planned, count = sum(w for w, _ in both), sum(n for _, n in both), len(both)
    record["judge_against_lama"] = {"walk_steps": int(walked), "plan_steps": int(planned), "problems": count,
                                    "ratio": round(walked / planned, 2)}


def _long_walks(record: dict) -> float | None:
    """The ratio of the judge's walks to LAMA-first's plans where it exceeds
    :data:`~up_gnnplan.learn.recipe.LONG_WALKS` (a policy that wanders to its goals), else None."""
    from up_gnnplan.learn.recipe import LONG_WALKS

    ratio = (record.get("judge_against_lama") or {}).get("ratio")
    return ratio if ratio is not None and ratio > LONG_WALKS else None


def _greedy_share(record: dict, judges: list) -> tuple[float | None, str | None]:
    """Mode auto's share of the time for the learned part as the greedy judge found the policy, and why; (None,
    None) where it found nothing to lower the engine's default for: :data:`~up_gnnplan.learn.recipe.WEAK_POLICY_SHARE`
    where no greedy policy of the model (the action policy, or the value policy where it was tried) solved any judge
    problem, and from there up to the engine's default in proportion to the judge problems it solved (a quarter of
    them: 0.2). Where the walks it solved them in were much longer than LAMA-first's plans (:func:`_long_walks`): at
    most :data:`~up_gnnplan.learn.recipe.LONG_WALK_SHARE`."""
    from up_gnnplan.learn.recipe import LONG_WALK_SHARE, WEAK_POLICY_SHARE
    from up_gnnplan.search.modes import HANDOFF_SHARE

    judged = record.get("policy_validation")
    if not judges or not judged:
        return None, None
    value = (record.get("first_policy_judge") or {}).get("value_policy", {}).get("solved", 0)
    solved = max(judged["solved"], value)
    share = None if solved >= len(judges) else \
        round(WEAK_POLICY_SHARE + (HANDOFF_SHARE - WEAK_POLICY_SHARE) * solved / len(judges), 3)
    ratio = _long_walks(record)
    if ratio is not None and (share is None or share > LONG_WALK_SHARE):
        against = record["judge_against_lama"]
        return LONG_WALK_SHARE, (f"its greedy policy's walks on the {against.get('problems', len(judges))} judge "
                                 f"problems it solved took {ratio:.2f}x the steps of LAMA-first's plans")
    if share is None:
        return None, None
    return share, (f"its greedy policy solved none of its {len(judges)} judge problems" if not solved
                   else f"its greedy policy solved {solved} of its {len(judges)} judge problems")


def _lama_failed(judges: list, plans: dict | None) -> bool:
    """Whether LAMA-first left a judge problem it was tried on unsolved: the learned part may have solved more."""
    from up_gnnplan.learn.search_judge import to_search

    _, _, lama, tried = to_search(judges, None, plans or {})
    return lama < tried


def _lowered_share(record: dict, judges: list) -> bool:
    """Whether the greedy judge lowers the learned part's share (:func:`_greedy_share`)."""
    return _greedy_share(record, judges)[0] is not None


def _choose_handoff_share(record: dict, judges: list) -> None:
    """Record in ``record["handoff_share"]`` mode auto's share of the time for the learned part where the greedy
    judge found the policy weak (:func:`_greedy_share`), unless the search judge found the learned part (the policy,
    then the search) solving more of the judge problems than LAMA-first in the same time (:func:`_search_judge_stage`):
    then the engine's default, recorded with why. Otherwise nothing is recorded and the engine's default holds."""
    from up_gnnplan.search.modes import HANDOFF_SHARE

    share, why = _greedy_share(record, judges)
    if share is None:
        return
    searched = record.get("search_judge")
    if searched and searched["learned"] > searched["lama"]:
        record["handoff_share"] = HANDOFF_SHARE
        how = f", in {searched['seconds']:g} s each" if searched["problems"] else " (by the walks alone)"
        record["handoff_share_why"] = (
            f"its learned part (the policy, then the search) solved {searched['learned']} of the {searched['tried']} "
            f"judge problems LAMA-first was tried on, LAMA-first {searched['lama']}{how} (by the greedy judge "
            f"alone: {share:.0%}, as {why})")
        return
    record["handoff_share"], record["handoff_share_why"] = share, why


def _search_judge_stage(domain: Path, model: Path, options, record: dict, judges: list, plans: dict | None, clock,
                        say) -> None:
    """Run ``model`` as mode auto does, without the hand-off, on the judge problems its greedy walks did not solve
    and LAMA-first was tried on (:mod:`~up_gnnplan.learn.search_judge`), each in its own process, for as long as
    LAMA-first had (:data:`~up_gnnplan.learn.recipe.JUDGE_PLAN_SECONDS`, less where the time kept for it is
    shorter), and record in ``record["search_judge"]`` how many the learned part solved against LAMA-first. Stops
    once the learned part can no longer solve more of them than LAMA-first did."""
    from contextlib import closing

    from up_gnnplan.learn.recipe import JUDGE_PLAN_SECONDS
    from up_gnnplan.learn.search_judge import JOB_GRACE as START, to_search

    walks = (record.get("policy_validation") or {}).get("walks")
    todo, learned, lama, tried = to_search(judges, walks, plans or {})
    if lama >= tried:
        return
    if not todo:  # the walks alone solved more of them than LAMA-first
        say(f"search judge: the greedy walks solved {learned} of the {tried} judge problem(s) LAMA-first was tried on, "
            f"LAMA-first {lama}: nothing to search")
        record["search_judge"] = {"seconds": 0.0, "tried": tried, "learned": learned, "lama": lama, "problems": {}}
        return
    seconds = min(JUDGE_PLAN_SECONDS, (clock.left() - export_reserve(clock.budget) - START) / len(todo))
    if seconds < MIN_SEARCH_JUDGE_SECONDS:
        say(f"  search judge: not run ({max(seconds, 0.0):.1f} s a problem left for it)")
        return
    say(f"search judge: mode auto's learned part (the policy, then the search; no hand-off) on the {len(todo)} judge "
        f"problem(s) the greedy walks did not solve, {seconds:.0f} s each, against LAMA-first's {lama} of {tried}")
    found = {}
    with closing(_searches(domain, model, todo, seconds, options)) as outcomes:
        for left, (name, result) in zip(range(len(todo) - 1, -1, -1), outcomes):
            found[name] = result
            learned += bool(result["solved"])
            say(f"  {name}: {_searched(result)}")
            if learned + left <= lama or clock.left() - export_reserve(clock.budget) < seconds:
                break  # it cannot solve more than LAMA-first did, or the budget has no room for another
    record["search_judge"] = {"seconds": round(seconds, 1), "tried": tried, "learned": learned, "lama": lama,
                              "problems": found}


def _searches(domain: Path, model: Path, problems: list, seconds: float, options):
    """Yield (name, outcome) of mode auto's learned part with ``model`` on each of ``problems`` in turn
    (:func:`~up_gnnplan.learn.search_judge.search_one`), each in its own process under the run's memory limit; a job
    that failed gives ``solved`` False and its status. Closing the generator stops the jobs not yet run."""
    from contextlib import closing

    from up_gnnplan.datasets.build import PRELOAD
    from up_gnnplan.executors import Job, make_executor
    from up_gnnplan.learn.search_judge import JOB_GRACE, search_one
    from up_gnnplan.limits import address_space_for

    executor = make_executor("local", 1)
    with executor, closing(executor.run(
            [Job(p.name, f"{search_one.__module__}:{search_one.__name__}",
                 (str(domain.resolve()), str(p.path.resolve()), str(model.resolve()), seconds, options.memory_mb),
                 seconds + JOB_GRACE, address_space_for(options.memory_mb)) for p in problems],
            PRELOAD + [search_one.__module__])) as outcomes:
        for outcome in outcomes:
            yield outcome.key, (outcome.value if outcome.status == "ok" else
                                {"solved": False, "status": outcome.status, "seconds": round(outcome.wall, 1)})


def _searched(result: dict) -> str:
    """One search's outcome (:func:`_searches`) in words."""
    if result["solved"]:
        return f"a plan of {result['length']} steps in {result['seconds']:.1f} s (by {result.get('found_by')})"
    return f"no plan ({result.get('status')}) in {result['seconds']:.1f} s"


def _frontier_stage(domain: Path, model, encoding, config, record: dict, domain_name: str, candidates, frontier: list,
                    options, clock, say, work: Path, kept: float = 0.0) -> None:
    """Run mode auto's learned part of the chosen epoch, then of the other epochs in ``candidates`` that solved as
    many judge problems, on the ``frontier`` problems (:mod:`~up_gnnplan.learn.frontier_judge`), each in its own
    process, and keep the epoch that solves the most of them (the chosen one on a tie): its weights go into ``model``
    and its file to the run folder's candidate, and ``record`` says which epoch and why (``record["frontier_judge"]``).
    ``kept``: seconds to leave for the stages after it (the search judge's)."""
    from contextlib import closing

    from up_gnnplan.learn.frontier_judge import better, hopeless, seconds_each

    chosen_epoch = record.get("best_epoch")
    solved = (record.get("policy_validation") or {}).get("solved")
    by_epoch = {c.epoch: (c, walks) for _, c, walks in candidates.kept}
    others = [e for e in candidates.epochs() if e != chosen_epoch and -by_epoch[e][0].score[0] == solved]
    if chosen_epoch not in by_epoch or not others:
        return
    order = [chosen_epoch] + others
    seconds = seconds_each(clock.left() - export_reserve(clock.budget) - kept, len(order), len(frontier))
    names = ", ".join(p.name for p in frontier)
    if not seconds:
        say(f"frontier judge: not run (too little time left for {len(order)} epochs on {len(frontier)} problems)")
        return
    say(f"frontier judge: the learned part (the policy, then the search; no hand-off) of epochs "
        f"{', '.join(map(str, order))} (the chosen one first; each solved {solved} judge problem(s) by its walks) on "
        f"{len(frontier)} training problem(s) the labelling did not reach ({names}), {seconds:.0f} s each; "
        "another epoch is kept where it solves more")
    results, best = [], None
    for epoch in order:
        if hopeless({"solved": 0}, best, len(frontier)):
            which = "the chosen epoch" if best["epoch"] == chosen_epoch else f"epoch {best['epoch']}"
            say(f"  {which} solved all {len(frontier)}: no other epoch can solve more")
            break
        path = work / CANDIDATE_FILE if epoch == chosen_epoch else work / f"{EPOCH_FILE}{epoch}.onnx"
        if epoch != chosen_epoch:
            model.load_state_dict(by_epoch[epoch][0].weights)
            _export(model, encoding, config, record, domain_name, path, work / GRAPH_FILE)
        found = {"epoch": epoch, "solved": 0, "problems": {}}
        with closing(_searches(domain, path, frontier, seconds, options)) as outcomes:
            for left, (name, result) in zip(range(len(frontier) - 1, -1, -1), outcomes):
                found["problems"][name] = result
                found["solved"] += bool(result["solved"])
                if hopeless(found, best, left) or clock.left() - export_reserve(clock.budget) - kept < seconds:
                    break
        results.append(found)
        say(f"  epoch {epoch}: {found['solved']} of {len(found['problems'])} solved ("
            + "; ".join(f"{n}: {_searched(r)}" for n, r in found["problems"].items()) + ")")
        if best is None or better(found, best):
            if best is not None and best["epoch"] != chosen_epoch:
                (work / f"{EPOCH_FILE}{best['epoch']}.onnx").unlink(missing_ok=True)
            best = found
        elif epoch != chosen_epoch:
            path.unlink(missing_ok=True)
        if clock.left() - export_reserve(clock.budget) - kept < seconds * len(frontier) / 2:
            break  # no room for another epoch's runs
    model.load_state_dict(by_epoch[best["epoch"]][0].weights)
    record["frontier_judge"] = {"problems": [p.name for p in frontier], "seconds": round(seconds, 1),
                                "epochs": results, "chosen": best["epoch"], "greedy_choice": chosen_epoch}
    if best["epoch"] == chosen_epoch:
        say(f"  the chosen epoch {chosen_epoch} stays")
        return
    os.replace(work / f"{EPOCH_FILE}{best['epoch']}.onnx", work / CANDIDATE_FILE)
    candidate, walks = by_epoch[best["epoch"]]
    record["best_epoch"] = best["epoch"]
    if len(candidate.score) == 3:
        record["best_validation_mae"] = round(float(candidate.score[2]), 4)  # its epoch's error on the held-out states
    judged = record["policy_validation"]
    judged["steps"] = int(candidate.score[1])
    if walks is not None:
        judged["walks"] = walks
    record["frontier_judge"]["why"] = (
        f"epoch {best['epoch']} solved {best['solved']} of the {len(frontier)} frontier problems, the greedy judge's "
        f"epoch {chosen_epoch} {results[0]['solved']}; the record's figures other than the judge's and the "
        f"held-out error are of epoch {chosen_epoch}")
    say(f"  epoch {best['epoch']} is kept instead of epoch {chosen_epoch}: {best['solved']} against "
        f"{results[0]['solved']} of the frontier problems")


def _choose_astray_factor(record: dict, judges: list) -> None:
    """Record in ``record["astray_factor"]`` no FF-relative step limit for mode auto's policy
    (:data:`~up_gnnplan.learn.recipe.TRUSTED_ASTRAY_FACTOR`) where its greedy action policy solved every one of
    at least :data:`~up_gnnplan.learn.recipe.MIN_TRUSTED_JUDGES` judge problems: the limit is there to cut a
    policy that wanders, and FF's estimate can be far below what even a good plan takes (Goldminer: 25-31
    for test problems whose plans, LAMA-first's too, take 144-384 steps), unless its walks there were much longer
    than LAMA-first's plans (:func:`_long_walks`). Otherwise nothing is recorded."""
    from up_gnnplan.learn.recipe import MIN_TRUSTED_JUDGES, TRUSTED_ASTRAY_FACTOR

    judged = record.get("policy_validation")
    if len(judges) < MIN_TRUSTED_JUDGES or not judged or judged["solved"] < len(judges) or _long_walks(record):
        return
    record["astray_factor"] = TRUSTED_ASTRAY_FACTOR
    record["astray_factor_why"] = f"its greedy policy solved all {len(judges)} judge problems"


def _trained_seconds(state_path: Path) -> float:
    """Return the training seconds of earlier sessions recorded in a training state file (0 without one)."""
    if not state_path.is_file():
        return 0.0
    try:
        from safetensors import safe_open

        with safe_open(str(state_path), framework="pt") as handle:
            return float(json.loads((handle.metadata() or {})["progress"]).get("seconds", 0.0))
    except Exception:  # a damaged state is reported by the loop itself
        return 0.0


# -- export and summary ------------------------------------------------------------------------

def _graph_ahead(path: Path, config, data, say) -> None:
    """Export an untrained model of ``config`` to ``path`` before training (once per run folder), on the clock:
    at the end its weights are filled in (:func:`~up_gnnplan.exporters.refill.refill_onnx`), a fraction of a
    second, where tracing and converting the network again took 2.4-7 s, the longer the busier the machine (a
    21 s run overran by 2-3 s with two other jobs on two cores)."""
    if path.is_file():
        return
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.training.checkpoint import build

    start = time.perf_counter()
    encoding, model = build(config, data.signature, data.action_signature, data.types)
    partial = path.with_name(f".{path.name}.partial")
    try:
        export_onnx(model, encoding, partial, domain=data.domain, train_config=config.to_dict(), training_record={})
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    say(f"  the network's graph exported ahead in {time.perf_counter() - start:.1f} s (the end puts the weights in)")


def _export(model, encoding, config, record, domain_name, output: Path, graph: Path | None = None) -> None:
    """Write the ONNX file under a temporary name, then rename it into place: ``graph`` (:func:`_graph_ahead`)
    with the model's weights, or, where that file is missing or gives other values, a new export."""
    from up_gnnplan.exporters import export_onnx
    from up_gnnplan.exporters.refill import refill_onnx

    partial = output.with_name(f".{output.name}.partial")
    try:
        filled = graph is not None and graph.is_file() and refill_onnx(
            graph, model, encoding, partial, metadata={"training_record": record, "train_config": config.to_dict()})
        if not filled:
            export_onnx(model, encoding, partial, domain=domain_name, train_config=config.to_dict(),
                        training_record=record)
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)


def _amend_metadata(exported: Path, record: dict, output: Path) -> None:
    """Put the final record (the search judge's share, the phase timings, export included) into the training record
    of the ``exported`` file, then write it under a temporary name beside ``output`` and rename it into place."""
    import onnx

    from up_gnnplan import model_format

    proto = onnx.load(str(exported))
    for entry in proto.metadata_props:
        if entry.key == model_format.PREFIX + "training_record":
            entry.value = json.dumps(record)
    partial = output.with_name(f".{output.name}.partial")
    try:
        onnx.save(proto, str(partial))
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)
    exported.unlink(missing_ok=True)


def _summary(options, run, clock, checked, labelled, judges, record) -> dict:
    judged = record.get("policy_validation")
    skipped = {name: s for name, s in run.labels.items() if s["status"] not in LABELLED}
    return {
        "command": options.command,
        "minutes": options.minutes,
        "seed": options.seed,
        "sessions": run.sessions,
        "problems": len(checked),
        "data": {
            "labelled": {p.name: {k: run.labels[p.name][k] for k in ("status", "states", "plan_length", "seconds")}
                         for p in labelled},
            "skipped": {name: {"status": s["status"], "note": s.get("note", "")} for name, s in skipped.items()},
            "states": int(sum(run.labels[p.name]["states"] for p in labelled)),
            "held_out": list((run.recipe or {}).get("held_out", [])),  # labelled, not trained on: the epochs' error
        },
        "judge": {"problems": [p.name for p in judges], "objects": [p.objects for p in judges],
                  **({"solved": judged["solved"], "steps": judged["steps"], "step_limit": judged["step_limit"]}
                     if judged else {}),
                  "best_epoch": record.get("best_epoch"), "epochs": record.get("epochs"),
                  "ties": (run.recipe or {}).get("judge_ties", "steps"),
                  "held_out_error": record.get("best_validation_mae") if (run.recipe or {}).get("held_out") else None,
                  **({"settled": record["settled"]["epoch"]} if record.get("settled") else {})},
        "recipe": run.recipe,
        **({"refinement": record["refinement"]} if record.get("refinement") else {}),
        "handoff_share": record.get("handoff_share"),
        "handoff_share_why": record.get("handoff_share_why"),
        **({"search_judge": record["search_judge"]} if record.get("search_judge") else {}),
        **({"frontier_judge": record["frontier_judge"]} if record.get("frontier_judge") else {}),
        "astray_factor": record.get("astray_factor"),
        **({"judge_against_lama": record["judge_against_lama"]} if record.get("judge_against_lama") else {}),
        "judge_plans": run.judge_plans,
        "device": record.get("device"),
        **({"non_finite_note": record["non_finite_note"]} if record.get("non_finite_note") else {}),
        "phases": {k: round(v, 1) for k, v in run.phases.items()},
        "seconds": round(clock.spent(), 1),
    }


def _report(say, output, summary, config) -> None:
    data, judge, phases = summary["data"], summary["judge"], summary["phases"]
    kinds = [s["status"] for s in data["labelled"].values()]
    say(f"wrote {output}: {config.architecture} ({config.head})")
    say(f"  labels: {len(kinds)} training problem(s), {data['states']:,} states ({kinds.count('expanded')} expanded, "
        f"{kinds.count('optimal-plan')} along optimal plans, {kinds.count('satisficing-plan')} along LAMA-first's); "
        f"{len(data['skipped'])} skipped" + (f"; {len(data['held_out'])} held out of training" if data["held_out"] else ""))
    from up_gnnplan.learn.recipe import error_name

    held = (f"; {error_name(config.head)} {judge['held_out_error']:.3f} on the held-out problems"
            if judge.get("held_out_error") is not None else "")
    if judge["problems"]:
        say(f"  judge: the greedy policy of the chosen epoch ({judge['best_epoch']} of {judge['epochs']}) solved "
            f"{judge.get('solved', 0)}/{len(judge['problems'])} held-back problems ({', '.join(judge['problems'])}) in "
            f"{judge.get('steps', 0)} steps (failures count {judge.get('step_limit')}){held}")
        if judge.get("settled"):
            say(f"  training stopped after epoch {judge['settled']}, before its time: the judge had settled (the last "
                f"{config.settle_epochs} epochs solved every judge problem, with no {error_name(config.head)} on the "
                "held-out problems and the same steps)")
        against = summary.get("judge_against_lama")
        if against:
            say(f"  judge: on the {against.get('problems', len(judge['problems']))} problem(s) both solved, "
                f"LAMA-first's plans take {against['plan_steps']} steps: the walks {against['ratio']:.2f}x theirs")
    else:
        say(f"  judge: none (a single training problem); epoch {judge['best_epoch']} of {judge['epochs']} by the "
            "training error")
    refinement = summary.get("refinement")
    if refinement and refinement.get("why"):
        say(f"  labels: {refinement['why']}; trained on all labels all the time")
    elif refinement:
        whole, refined = refinement["all_labels"], refinement["refined"]
        say(f"  labels: the model of all labels solved {whole['solved']}/{len(judge['problems'])} judge problems in "
            f"{whole['steps']} steps, refined on the optimal labels of {refinement['problems']} problem(s) "
            f"{refined['solved']}/{len(judge['problems'])} in {refined['steps']}: "
            + ("the refined one is kept" if refinement["kept"] == "refined" else "the model of all labels is kept"))
    hint = _hint(data, judge, summary)
    if hint:
        say(f"  hint: {hint}")
    if summary.get("handoff_share") is not None:
        say(f"  mode auto: the learned part gets {summary['handoff_share']:.0%} of the time before LAMA-first takes "
            f"the rest, since {summary['handoff_share_why']} (gnnplan solve --handoff-share sets another)")
    if summary.get("astray_factor") is not None:
        say("  mode auto: the policy's steps are not limited by FF's estimate (only by its share of the time), since "
            "it solved every judge problem (gnnplan solve --astray-factor sets a limit)")
    if summary.get("non_finite_note"):
        say(f"  note: {summary['non_finite_note']}")
    say("  phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items())
        + f"; {summary['seconds']:.0f} s of {summary['minutes'] * 60:.0f} s")


# Fewer labelled training problems than this, and a judge no epoch's policy solved: the summary says more would help
# (Depots, 7 of 10 problems labelled, judge 0/3; Newspapers, 4 of 36, judge 1/4 and 3/5 of its larger tasks, where
# 30 labelled problems made 4/4 and 5/5: results/learn_eval/pddlgym/).
FEW_PROBLEMS = 15


def _hint(data: dict, judge: dict, summary: dict) -> str | None:
    """What would most likely help a model whose greedy policy solved no judge problem, or solved some in walks
    much longer than LAMA-first's plans (:func:`_long_walks`, the rule that also lowers the learned part's share
    of the time), read from the run."""
    ratio = _long_walks(summary)
    if judge["problems"] and ratio is not None and judge.get("solved"):
        which = "the judge problems" if judge["solved"] == len(judge["problems"]) else \
            f"the {judge['solved']} of {len(judge['problems'])} judge problems it solved"
        return (f"the greedy policy's walks on {which} took {ratio:.2f}x the steps of LAMA-first's plans: "
                "it wanders to its goals, and on larger problems it may not reach them; more training problems "
                f"nearer the judge problems' size (up to {max(judge.get('objects') or [0])} objects), or a longer "
                "--timeout, may help")
    if not judge["problems"] or judge.get("solved"):
        return None
    reasons = []
    labelled, unlabelled = len(data["labelled"]), sum(1 for s in data["skipped"].values() if s["status"] != "unsolvable")
    if unlabelled:
        reasons.append(f"{unlabelled} training problem(s) were not labelled in the time: a longer --timeout (or more "
                       "--jobs) labels them")
    if labelled < FEW_PROBLEMS:
        reasons.append(f"{labelled} labelled problem(s) are few: more training problems, of the sizes labelled and a "
                       "little larger, help most")
    if not reasons:
        reasons.append("more training problems nearer the judge problems' size (up to "
                       f"{max(judge.get('objects') or [0])} objects), or a longer --timeout, may help")
    return "the greedy policy solved no judge problem; " + "; ".join(reasons)


# -- the run folder ----------------------------------------------------------------------------

def _run_key(domain: Path, problems: list[Path], seed: int, labels: str) -> dict:
    """Return what a continued run must match: the files by name and content (not by path, so that a
    run labelled on one machine can be trained on another, a GPU machine say), the seed and the labels."""
    import hashlib

    def named(path: Path) -> str:
        return f"{path.name}:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"

    return {"domain": named(domain), "problems": [named(p) for p in problems], "seed": seed, "labels": labels}


def _take_labels(source: Path, work: Path, run: _Run, fresh: bool, say) -> None:
    """Start the new run of ``work`` from the labels of the finished labelling in ``source`` (a run folder of the
    same domain and problems, whatever its seed and heads): another head or seed trained on the same labels,
    without labelling again. The seconds that labelling took count against this run's budget, as they would
    have had it labelled them itself."""
    if not fresh:
        raise LearnError(f"--labels-from starts a new run, but {work} holds one already; remove it or give another "
                         "--work-dir")
    path = source / "run.json"
    try:
        other = _Run(**json.loads(path.read_text()))
    except FileNotFoundError:
        raise LearnError(f"--labels-from {source}: no run folder (no run.json in it)") from None
    except (ValueError, TypeError) as error:
        raise LearnError(f"{path}: not a readable run record ({error})") from None
    def problems(key: dict) -> dict:
        return {k: v for k, v in key.items() if k not in ("seed", "labels")}

    theirs, mine = other.key.get("labels"), run.key.get("labels")
    # --labels optimal from a run that also labelled by LAMA-first's plans: its optimal labels alone
    optimal_only = mine == "optimal" and theirs != mine
    if other.format != RUN_FORMAT or problems(other.key) != problems(run.key) or not (theirs == mine or optimal_only):
        raise LearnError(f"--labels-from {source}: its run labelled other problems (or another domain file, or with "
                         f"other --labels: --labels {theirs}, which this run may take as they are, or with --labels "
                         "optimal their optimal labels alone)")
    if not other.labels_done:
        raise LearnError(f"--labels-from {source}: its labelling is not finished; run its command to finish it (add "
                         "--label-only to stop after labelling)")
    labels = dict(other.labels)
    left_out = sorted(name for name, summary in labels.items()
                      if optimal_only and summary.get("status") == "satisficing-plan")
    for name in left_out:  # as --labels optimal would have had them: no optimal plan in the problem's share
        labels[name] = dict(labels[name], status="too-large",
                            note=f"labelled along LAMA-first's plan in {source}; left out with --labels optimal")
    (work / "labels").mkdir(parents=True, exist_ok=True)
    for label in (source / "labels").glob("*.npz"):
        if label.stem not in left_out:
            shutil.copyfile(label, work / "labels" / label.name)
    phases = {k: v for k, v in other.phases.items() if k in ("checking", "labelling")}
    run.labels, run.labels_done, run.phases = labels, True, dict(phases)
    run.spent = sum(phases.values())
    _save_run(work, run)
    labelled = sum(1 for s in run.labels.values() if s.get("status") in LABELLED)
    dropped = f" ({len(left_out)} labelled along LAMA-first's plans left out: --labels optimal)" if left_out else ""
    say(f"labels of {labelled} problem(s) taken from {source}{dropped}; their {run.spent:.0f} s of labelling count "
        "against this run's time")


def _open_run(work: Path, key: dict) -> tuple[_Run, bool]:
    """Return (the run of ``work``, whether it is new); refuse a folder of another run."""
    path = work / "run.json"
    if path.is_file():
        try:
            saved = json.loads(path.read_text())
            run = _Run(**saved)
        except (ValueError, TypeError) as error:
            raise LearnError(f"{path}: not a readable run record ({error}); remove {work} to start anew") from None
        if run.format != RUN_FORMAT:
            raise LearnError(f"{work} holds a run of an older gnnplan learn (format {run.format}, this one writes "
                             f"{RUN_FORMAT}); remove it or give another --work-dir")
        if run.key != key:
            differs = [name for name in ("domain", "problems", "seed", "labels") if run.key.get(name) != key.get(name)]
            if differs == ["labels"]:  # --labels auto became the default on 2026-11-29: runs before were "optimal"
                raise LearnError(f"{work} holds a run made with --labels {run.key.get('labels')}; give --labels "
                                 f"{run.key.get('labels')} to continue it, or remove it or give another --work-dir")
            raise LearnError(f"{work} holds a run of other problems, another seed or other --labels; remove it or give another "
                             "--work-dir")
        return run, False
    work.mkdir(parents=True, exist_ok=True)
    run = _Run(RUN_FORMAT, key)
    _save_run(work, run)
    return run, True


def _save_run(work: Path, run: _Run) -> None:
    path = work / "run.json"
    partial = work / "run.json.partial"
    partial.write_text(json.dumps(asdict(run), indent=1))
    os.replace(partial, path)


def _add_phase(run: _Run, name: str, seconds: float) -> None:
    run.phases[name] = run.phases.get(name, 0.0) + seconds

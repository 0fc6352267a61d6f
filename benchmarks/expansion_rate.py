"""State-space expansion rate: our pymimir pipeline against UP's ``SequentialSimulator``.

On the same instance, in one run, each side does a breadth-first expansion of the reachable
state space with duplicate detection (a set of states, by the state's own hash and equality),
stopping when the space is exhausted, when ``--max-states`` states have been expanded, or when
the side has used ``--seconds`` of wall time. The rate is expanded states per second of wall
time (``time.perf_counter``); parsing, grounding set-up and simulator construction are not
timed. Sides measured:

- UP: ``SequentialSimulator(problem=task.up_problem)`` with ``get_initial_state``,
  ``get_applicable_actions`` and ``apply``;
- ours (1) "bfs": the same BFS over pymimir states through ``up_gnnplan.states.successors``;
- ours (2) "bfs+atoms": (1) plus ``StateAtoms.of`` on every generated successor (duplicates
  included), the conversion dataset building and search pay per state;
- ours (3) "native": ``pymimir.StateSpaceSampler.new(..., symmetry_pruning=False)`` timed as a
  whole (it also labels every state with its goal distance), reported as
  ``num_states / time`` only when the whole space fits in ``--max-states``.

Every run of every side uses a freshly loaded task, so no run profits from the ground actions
or states an earlier one cached in pymimir's repositories. With ``--repeat N`` each side runs N
times (the sides interleaved) and the median run is reported: the machine may be shared, and
timings of a few milliseconds are noisy. The load average at start and end is printed.

Run single-threaded for comparable numbers::

    OMP_NUM_THREADS=1 python -m benchmarks.expansion_rate --repeat 3
    OMP_NUM_THREADS=1 python -m benchmarks.expansion_rate --max-states 5000 --seconds 30 \\
        --problem DOMAIN.pddl:PROBLEM.pddl --problem ... --markdown table.md

Without ``--problem`` it measures the bundled Blocksworld ``p04`` (125 states) and, when
``../shared/benchmarks`` exists next to the project, a few IPC 2023 Blocksworld
``training/easy`` instances and IPC 1998 Gripper instances of growing size.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from .common import SHARED


@dataclass
class Run:
    """One side's expansion: counts, wall time and whether the whole space was expanded."""

    expanded: int
    generated: int
    reached: int  # distinct states seen (expanded + still in the queue)
    seconds: float
    finished: bool  # the queue ran empty: ``reached`` is the number of reachable states
    stopped: str = ""  # "", "cap" or "time"

    @property
    def rate(self) -> float:
        return self.expanded / self.seconds if self.seconds > 0 else float("inf")


def default_problems() -> list[tuple[str, Path, Path]]:
    """Return (label, domain, problem) for the default instances that exist on this machine."""
    import up_gnnplan

    data = Path(up_gnnplan.__file__).resolve().parent / "data" / "blocksworld"
    problems = [("bundled blocksworld p04", data / "domain.pddl", data / "p04.pddl")]
    blocks = SHARED / "ipc2023-learning" / "blocksworld"
    for name, note in (("p16", "5 blocks"), ("p21", "6 blocks")):
        if (blocks / "training" / "easy" / f"{name}.pddl").is_file():
            problems.append(
                (f"ipc2023 blocksworld easy/{name} ({note})", blocks / "domain.pddl", blocks / "training" / "easy" / f"{name}.pddl")
            )
    gripper = SHARED / "ipc-classic" / "gripper"
    for name, note in (("prob01", "4 balls"), ("prob02", "6 balls")):
        if (gripper / f"{name}.pddl").is_file():
            problems.append((f"gripper {name} ({note})", gripper / "domain.pddl", gripper / f"{name}.pddl"))
    return problems


def parse_problem(text: str) -> tuple[str, Path, Path]:
    domain, sep, problem = text.partition(":")
    if not sep or not domain or not problem:
        raise argparse.ArgumentTypeError(f"expected DOMAIN:PROBLEM, got {text!r}")
    problem_path = Path(problem)
    return (f"{problem_path.parent.name}/{problem_path.stem}", Path(domain), problem_path)


# -- the sides -------------------------------------------------------------------------------


def bfs(initial, expand, max_states: int, seconds: float) -> Run:
    """Breadth-first expansion with duplicate detection; ``expand(state)`` lists successors."""
    start = time.perf_counter()
    deadline = start + seconds
    seen = {initial}
    queue = deque([initial])
    expanded = generated = 0
    stopped = ""
    while queue:
        if expanded >= max_states:
            stopped = "cap"
            break
        if time.perf_counter() >= deadline:
            stopped = "time"
            break
        state = queue.popleft()
        expanded += 1
        for successor in expand(state):
            generated += 1
            if successor not in seen:
                seen.add(successor)
                queue.append(successor)
    elapsed = time.perf_counter() - start
    return Run(expanded, generated, len(seen), elapsed, finished=not queue, stopped=stopped)


def run_up(task, max_states: int, seconds: float) -> Run:
    from unified_planning.shortcuts import SequentialSimulator

    with SequentialSimulator(problem=task.up_problem) as simulator:
        initial = simulator.get_initial_state()

        def expand(state):
            return [simulator.apply(state, action, params) for action, params in simulator.get_applicable_actions(state)]

        return bfs(initial, expand, max_states, seconds)


def run_ours(task, max_states: int, seconds: float, with_atoms: bool) -> Run:
    from up_gnnplan.states import StateAtoms, successors

    if not with_atoms:

        def expand(state):
            return [successor for _, successor, _ in successors(state)]

    else:
        atoms = StateAtoms(task)  # set-up (static and type atoms) is not timed

        def expand(state):
            out = []
            for _, successor, _ in successors(state):
                atoms.of(successor)
                out.append(successor)
            return out

    return bfs(task.initial_state(), expand, max_states, seconds)


def run_native(task, max_states: int) -> tuple[int | None, float]:
    """Return (number of states or None if more than ``max_states``, seconds)."""
    import pymimir

    start = time.perf_counter()
    space = pymimir.StateSpaceSampler.new(task.mimir_problem, max_states=max_states, symmetry_pruning=False)
    elapsed = time.perf_counter() - start
    return (None if space is None else space.num_states()), elapsed


# -- reporting -------------------------------------------------------------------------------


def fmt_rate(rate: float | None) -> str:
    if rate is None:
        return "n/a"
    return f"{rate:,.0f}" if rate >= 100 else f"{rate:,.1f}"


def fmt_ratio(ours: float | None, up: float) -> str:
    if ours is None or up <= 0:
        return "n/a"
    return f"{ours / up:,.0f}x" if ours / up >= 100 else f"{ours / up:,.1f}x"


def describe(run: Run) -> str:
    how = "whole space" if run.finished else f"stopped by {run.stopped}"
    return f"{run.expanded} expanded, {run.generated} generated, {run.reached} reached in {run.seconds:.3f}s ({how})"


HEADER = (
    "| instance | states | UP expanded | UP states/s | (1) bfs states/s | (2) bfs+atoms states/s "
    "| (3) native states/s | (1)/UP | (2)/UP | (3)/UP |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def row(label, up: Run, bfs1: Run, bfs2: Run, native_states, native_seconds, max_states) -> str:
    if bfs1.finished:
        states = f"{bfs1.reached:,}"
    elif native_states is None and bfs1.stopped == "cap":
        states = f"> {max_states:,}"
    else:
        states = f">= {bfs1.reached:,}"
    up_expanded = f"{up.expanded:,}" + ("" if up.finished else f" ({up.stopped})")
    native = None if native_states is None else native_states / native_seconds
    return (
        f"| {label} | {states} | {up_expanded} | {fmt_rate(up.rate)} | {fmt_rate(bfs1.rate)} | {fmt_rate(bfs2.rate)} "
        f"| {fmt_rate(native)} | {fmt_ratio(bfs1.rate, up.rate)} | {fmt_ratio(bfs2.rate, up.rate)} "
        f"| {fmt_ratio(native, up.rate)} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--problem",
        action="append",
        type=parse_problem,
        metavar="DOMAIN:PROBLEM",
        help="a PDDL domain and problem file pair; repeatable (default: bundled and shared instances)",
    )
    parser.add_argument("--max-states", type=int, default=2000, help="expanded-state limit per side (default 2000)")
    parser.add_argument("--seconds", type=float, default=60.0, help="wall-time budget per side (default 60)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="run each side this many times, each on a fresh task, and report the median (default 1)"
    )
    parser.add_argument("--markdown", type=Path, help="also write the table to this markdown file")
    args = parser.parse_args(argv)
    if args.max_states <= 0:
        parser.error("--max-states must be positive")
    if args.repeat <= 0:
        parser.error("--repeat must be positive")

    import unified_planning.shortcuts as ups

    from up_gnnplan.problems import load_task

    ups.get_environment().credits_stream = None  # no engine banner in the output
    problems = args.problem or default_problems()
    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("note: OMP_NUM_THREADS is not 1; set it for comparable numbers", file=sys.stderr)

    load_before = os.getloadavg()
    rows = []
    for label, domain, problem in problems:
        print(f"== {label}: {problem}", file=sys.stderr)

        def fresh():
            return load_task(domain, problem)  # parsing and pymimir set-up: not timed

        # Interleave the sides, so that a change of machine load hits all of them alike.
        ups_runs, bfs1_runs, bfs2_runs, natives = [], [], [], []
        for _ in range(args.repeat):
            ups_runs.append(run_up(fresh(), args.max_states, args.seconds))
            bfs1_runs.append(run_ours(fresh(), args.max_states, args.seconds, with_atoms=False))
            bfs2_runs.append(run_ours(fresh(), args.max_states, args.seconds, with_atoms=True))
            natives.append(run_native(fresh(), args.max_states))
        up, bfs1, bfs2 = (sorted(runs, key=lambda r: r.rate)[len(runs) // 2] for runs in (ups_runs, bfs1_runs, bfs2_runs))
        native_states, native_seconds = sorted(natives, key=lambda r: r[1])[len(natives) // 2]
        print(f"   UP            : {describe(up)}", file=sys.stderr)
        print(f"   (1) bfs       : {describe(bfs1)}", file=sys.stderr)
        print(f"   (2) bfs+atoms : {describe(bfs2)}", file=sys.stderr)
        if native_states is None:
            print(f"   (3) native    : more than {args.max_states} states (gave up after {native_seconds:.3f}s)", file=sys.stderr)
        else:
            print(f"   (3) native    : {native_states} states in {native_seconds:.3f}s", file=sys.stderr)

        for name, ours in (("(1) bfs", bfs1), ("(2) bfs+atoms", bfs2)):
            if ours.finished and up.finished and ours.reached != up.reached:
                print(f"WARNING: {label}: {name} reached {ours.reached} states, UP reached {up.reached}")
            if ours.finished and native_states is not None and ours.reached != native_states:
                print(f"WARNING: {label}: {name} reached {ours.reached} states, pymimir's state space has {native_states}")
        if bfs1.finished and bfs2.finished and bfs1.reached != bfs2.reached:
            print(f"WARNING: {label}: (1) reached {bfs1.reached} states, (2) reached {bfs2.reached}")
        rows.append(row(label, up, bfs1, bfs2, native_states, native_seconds, args.max_states))

    table = "\n".join([HEADER, *rows])
    load = f"load average (1 min) {load_before[0]:.2f} at start, {os.getloadavg()[0]:.2f} at end"
    print(f"{load}; {os.cpu_count()} cpus", file=sys.stderr)
    print(table)
    if args.markdown is not None:
        command = "OMP_NUM_THREADS={} python -m benchmarks.expansion_rate {}".format(
            os.environ.get("OMP_NUM_THREADS", "<unset>"), shlex.join(sys.argv[1:] if argv is None else argv)
        )
        args.markdown.write_text(
            f"<!-- {command} ; {datetime.datetime.now().isoformat(timespec='seconds')} ; "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, {load} -->\n\n{table}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the benchmark scripts share: paths, the commands log, tables, the benchmark sets, the
shipped models' index.

Scripts run from the repository root (``python -m benchmarks.NAME``), where ``gnnplan compare
--register benchmarks.goose.engine`` finds the peer's engine module too. A script changes the
shipped models only through ``gnnplan export --ship`` and the package's own tools imported here.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# The package's tools that change the shipped models and their index (developers), for the
# scripts: the one place that says where they live.
from up_gnnplan.exporters.shipping import editing_index, keep_as, keep_value_model  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SHARED = ROOT.parent / "shared" / "benchmarks"  # the benchmark sets, listed in its manifest.csv
ZOO_WORK = Path("/tmp/gnnplan-zoo")  # build_zoo's datasets and checkpoints, and the generated problems


# -- the machine and tables ---------------------------------------------------------------------


def load_average() -> str:
    """Return the load average over 1, 5 and 15 minutes ("n/a" where the system keeps none)."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def clock_line(word: str) -> str:
    """Return "WORD <UTC time>, load average ..., OMP_NUM_THREADS=..." for a run's first or last line."""
    return (f"{word} {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load average {load_average()}, "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")


def fmt(x, digits: int | None = None) -> str:
    """Return a figure for a table: ``digits`` decimals with thousands separators, or without
    ``digits`` as many as its size calls for (none from 100 on); "n/a" for None and NaN."""
    if x is None or x != x:
        return "n/a"
    if digits is not None:
        return f"{x:,.{digits}f}"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def table(header: list[str], rows: list[list[str]], right_from: int = 1) -> str:
    """Return a markdown table of ``rows`` under ``header``, the columns from ``right_from`` on right-aligned."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < right_from else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# -- files and commands -------------------------------------------------------------------------


def read_json(path: Path) -> dict:
    """Return the JSON object in ``path``, or an empty one where there is no file yet."""
    return json.loads(path.read_text()) if path.is_file() else {}


def write_json(path: Path, data) -> None:
    """Write ``data`` to ``path`` as indented JSON, making its folder first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def add_task_options(parser) -> None:
    """The options of a script that solves generated tier tasks: per-task limits and the output folder."""
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--memory-mb", type=int, default=4000)
    parser.add_argument("-o", "--output", type=Path, required=True)


def note(log: Path, text: str) -> None:
    """Append ``text`` to the commands log ``log``, after the time."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')}  {text}\n")


@dataclass
class Ran:
    """How a command of :func:`run` ended: ``ok`` (also its truth value), and its stderr's last lines
    where they were kept."""

    ok: bool
    tail: str = ""

    def __bool__(self) -> bool:
        return self.ok


def run(command: list, log: Path, *, output: Path | None = None, check: bool = True, cwd: Path | None = None,
        env: dict | None = None, keep_tail: bool = False) -> Ran:
    """Run ``command``, printed and logged in ``log`` with its exit status and seconds.

    With ``output`` given and there, the command is logged as reused and not run, so that a
    stopped stage resumes. A failure is logged with its command, then stops the script
    (``check``) or is returned. ``keep_tail``: stderr passes through a pipe (shown as it comes)
    and its last lines come back, for the note of a failure.
    """
    line = shlex.join(str(c) for c in command)
    if output is not None and Path(output).exists():
        print(f"$ {line}   # reused existing output", flush=True)
        note(log, f"{line}   # reused existing output")
        return Ran(True)
    print(f"$ {line}", flush=True)
    note(log, line + (f"   # in {cwd}" if cwd else ""))
    start = time.perf_counter()
    tail: list[str] = []
    if keep_tail:
        process = subprocess.Popen([str(c) for c in command], stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
        for text in process.stderr:
            sys.stderr.write(text)
            tail = (tail + [text.rstrip()])[-5:]
        code = process.wait()
    else:
        code = subprocess.run([str(c) for c in command], cwd=cwd, env=env).returncode
    seconds = time.perf_counter() - start
    # Scripts run side by side append to one log: a failure names its command.
    note(log, f"# exit {code} after {seconds:.0f} s" + (f": {line}" if code else ""))
    if code != 0 and check:
        sys.exit(f"failed: {line}")
    return Ran(code == 0, "\n".join(tail))


@dataclass
class Measured:
    """A process run by :func:`run_capped`: its output, seconds, peak resident memory and end."""

    text: str  # stdout and stderr
    seconds: float
    peak_mb: int
    status: int  # as os.wait4 gives it
    killed: bool  # by the wall-clock limit


def run_capped(command: list[str], *, cap_mb: int, kill_after: float, env: dict | None = None,
               cwd: str | None = None) -> Measured:
    """Run ``command`` in a session of its own under an address-space cap of ``cap_mb`` MB, killed
    (with its children) after ``kill_after`` seconds; its peak resident memory comes from ``os.wait4``."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (cap_mb * 2**20, cap_mb * 2**20))

    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, preexec_fn=cap,
                                   start_new_session=True)
        killed = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > kill_after:
                os.killpg(process.pid, signal.SIGKILL)
                killed = True
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read().decode(errors="replace")
    return Measured(text, seconds, round(usage.ru_maxrss / 1024), status, killed)


def record_state(state: Path, record: Path) -> None:
    """Write the header of the training state ``state`` (``gnnplan train --state``: its config, and its
    progress with the curve of every epoch) to ``record``, a small JSON file kept with the results;
    the state itself (weights, optimiser) stays in the work folder, out of the repository. Without
    a state (a run that ended before its first save), nothing is written."""
    from safetensors import safe_open

    if not state.is_file():
        return
    with safe_open(str(state), framework="numpy") as handle:
        header = handle.metadata() or {}

    json_entries = ("config", "progress", "version")  # the others (format, data digests) are plain text
    write_json(record, {"note": f"The metadata of the training state {state} (weights and optimiser state stay "
                                "there, out of the repository).",
                        **{key: json.loads(value) if key in json_entries else value for key, value in header.items()}})


# -- the benchmark sets -------------------------------------------------------------------------

# The domains of the IPC 2023 Learning Track, each with a shipped model.
IPC2023 = ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban", "spanner",
           "transport")


@dataclass
class Spec:
    """A domain of the shipped models: where its training and test problems come from."""

    domain: str  # domain file, relative to SHARED
    train: str  # folder of training problems (as in manifest.csv)
    test: str  # folder of test problems
    limit: int = 20000  # largest state space expanded for training
    larger: str | None = None  # folder of the optimal-plan problems (default: the training folder)
    test_min_objects: int = 0  # only test problems with at least this many objects
    # Generated domains (not in SHARED): generator name and, per split (train, larger, test), a list
    # of (size parameters, count); files go to ZOO_WORK/gen/NAME/SPLIT.
    generator: str | None = None
    sizes: dict | None = None
    # An evaluation-only test set of another shipped model (e.g. larger generated problems): no
    # training; the coverage goes into that model's entry under "more_coverage".
    model: str | None = None


def _generated(generator: str, train, larger, test) -> Spec:
    return Spec("", "", "", generator=generator, sizes={"train": train, "larger": larger, "test": test})


def _larger(generator: str, test) -> Spec:
    return Spec("", "", "", generator=generator, sizes={"test": test}, model=generator)


def _ipc2023(name: str) -> Spec:
    base = f"ipc2023-learning/{name}"
    return Spec(f"{base}/domain.pddl", f"{base}/training/easy", f"{base}/testing/easy")


DOMAINS = {
    "blocks": Spec("ipc-classic/blocks/domain.pddl", "ipc-classic/blocks", "ipc-classic/blocks", 8000,
                   test_min_objects=10),
    **{name: _ipc2023(name) for name in IPC2023},
    "gripper": Spec("ipc-classic/gripper/domain.pddl", "ipc-classic/gripper", "ipc-classic/gripper",
                    test_min_objects=20),
    "logistics": Spec("generated/logistics-train/domain.pddl", "generated/logistics-train", "generated/logistics-valid"),
    "visitall": Spec("tiny/visitall/domain.pddl", "tiny/visitall/training/easy", "ipc-classic/visitall-opt11-strips",
                     larger="goose-aaai24/visitall/train"),
    "grid": Spec("generated/grid-train/domain.pddl", "generated/grid-train", "generated/grid-valid",
                 larger="generated/grid-valid"),
    # The x/y-coordinate domains of Stahlberg, Bonet & Geffner (2024), generated by the package.
    "navig-xy": _generated("navig-xy",
                           train=[({"width": w, "height": h}, 3) for w, h in ((3, 2), (4, 3), (5, 3), (6, 4), (7, 4))],
                           larger=[({"width": 9, "height": 5}, 3), ({"width": 10, "height": 6}, 3)],
                           test=[({"width": w, "height": h}, 2) for w, h in ((12, 8), (16, 10), (20, 12), (30, 15), (40, 20))]),
    "visitall-xy": _generated("visitall-xy",
                              train=[({"width": w, "height": h}, 2) for w, h in ((2, 2), (3, 2), (4, 2), (3, 3))],
                              larger=[({"width": 4, "height": 3}, 3), ({"width": 4, "height": 4}, 3)],
                              test=[({"width": w, "height": h}, 2) for w, h in ((5, 5), (6, 6), (8, 8), (10, 10), (12, 12))]),
    "vacuum": _generated("vacuum",
                         train=[({"locations": n, "robots": r, "extra_edges": 1}, 4) for n, r in ((5, 2), (6, 2), (8, 2), (6, 3))],
                         larger=[({"locations": 12, "robots": 3}, 6)],
                         test=[({"locations": n, "robots": r}, 2) for n, r in ((16, 3), (20, 3), (30, 4), (40, 4), (60, 5))]),
    # Larger instances than any public set of these domains, generated by the package, for the
    # shipped blocksworld (IPC 2023 testing/easy: up to 29 blocks), gripper (IPC 1998: up to 42
    # balls) and logistics (generated splits: up to 40 objects) models.
    "blocksworld-large": _larger("blocksworld", [({"blocks": n}, 2) for n in (35, 50, 75, 100, 150)]),
    "gripper-large": _larger("gripper", [({"balls": n}, 1) for n in (15, 20, 25, 30, 40, 50, 60, 80, 100, 150)]),
    "logistics-large": _larger("logistics", [({"cities": c, "city_size": s, "packages": k, "airplanes": a}, 2)
                                             for c, s, k, a in ((4, 4, 8, 2), (5, 4, 10, 2), (6, 5, 12, 3),
                                                                (8, 5, 16, 3), (10, 6, 20, 4))]),
}


def generate_splits(name: str, spec: Spec) -> dict[str, list[Path]]:
    """Write the generated problems of ``spec`` (seed = the split's position) and return them."""
    from up_gnnplan.datasets.generators import generate

    out = {}
    for seed, (split, sizes) in enumerate(spec.sizes.items()):
        folder = ZOO_WORK / "gen" / name / split
        out[split] = [p for params, count in sizes for p in generate(spec.generator, folder, count=count, seed=seed, **params)]
    return out


def manifest(folder: str) -> list[tuple[int, str, str]]:
    """Return (objects, problem, reachable_states) of ``folder``'s problems in SHARED's manifest, smallest first."""
    from up_gnnplan.compare import natural_key

    with open(SHARED / "manifest.csv", newline="") as f:
        rows = [(int(r["objects"]), r["problem"].strip(), r["reachable_states"].strip())
                for r in csv.DictReader(f) if r["dir"].strip() == folder]
    return sorted(rows, key=lambda r: (r[0], natural_key(r[1])))


def expandable(folder: str, limit: int, most: int) -> list[Path]:
    """Up to ``most`` problems of ``folder`` with at most ``limit`` reachable states, spread over all sizes."""
    rows = sorted((int(s), name) for _, name, s in manifest(folder) if s.isdigit() and 1 < int(s) <= limit)
    if len(rows) > most:
        step = len(rows) / most
        rows = [rows[int(i * step)] for i in range(most)]
    return [SHARED / folder / name for _, name in rows]


def larger(folder: str, limit: int, exclude: set[str], count: int) -> list[Path]:
    """The ``count`` smallest problems of ``folder`` whose state space does not fit under ``limit``."""
    rows = [name for _, name, s in manifest(folder)
            if not s.startswith("unsolvable") and not (s.isdigit() and int(s) <= limit)
            and str(SHARED / folder / name) not in exclude]
    return [SHARED / folder / name for name in rows[:count]]


def test_problems(spec: Spec, count: int) -> list[Path]:
    """Up to ``count`` test problems spread evenly over the sizes, the smallest and the largest included."""
    rows = [name for objects, name, _ in manifest(spec.test) if objects >= spec.test_min_objects]
    if len(rows) > count:
        rows = [rows[round(i * (len(rows) - 1) / (count - 1))] for i in range(count)]
    return [SHARED / spec.test / name for name in rows]


def largest(domain: str) -> tuple[int, Path]:
    """Return (objects, problem) of the largest IPC 2023 ``testing/easy`` problem of ``domain``."""
    folder = f"ipc2023-learning/{domain}/testing/easy"
    objects, name = max((objects, name) for objects, name, _ in manifest(folder))
    return objects, SHARED / folder / name


def largest_tasks(domains):
    """Yield (domain, objects, problem path, task, shipped value model) of each domain's largest
    ``testing/easy`` problem, for the domains with a shipped value model (others are reported)."""
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.problems import load_task

    for domain in domains:
        objects, problem = largest(domain)
        task = load_task(SHARED / f"ipc2023-learning/{domain}/domain.pddl", problem)
        path = find_model(task.signature, "value")
        if path is None:
            print(f"{domain}: no shipped model, skipped", flush=True)
            continue
        yield domain, objects, problem, task, path


def random_walk(state, steps: int, rng):
    """Yield the states of a random walk of at most ``steps`` steps from ``state`` (it stops where no
    action applies), each step's successor drawn by ``rng``."""
    from up_gnnplan.states import successors

    for _ in range(steps):
        options = successors(state)
        if not options:
            return
        state = rng.choice(options)[1]
        yield state


def greedy_walk(task, steps: int, max_batch: int, values) -> None:
    """Take at most ``steps`` steps of the greedy policy from ``task``'s initial state: the unvisited
    successors of each state go to ``values(children)``, and the walk moves to the lowest-valued one.
    It stops at the goal, where no successor is left unvisited, and before a batch of more than
    ``max_batch`` successors."""
    import numpy as np

    from up_gnnplan.states.successors import is_goal, successors

    state, seen = task.initial_state(), set()
    for _ in range(steps):
        seen.add(state.get_index())
        children = [c for _, c, _ in successors(state) if c.get_index() not in seen]
        if not children or len(children) > max_batch:
            return
        state = children[int(np.argmin(values(children)))]
        if is_goal(task, state):
            return


# -- the shipped models' index ------------------------------------------------------------------


def set_coverage(name: str, text: str, *, test_set: str | None = None, shipped_now: bool = False) -> None:
    """Write the coverage ``text`` into the index entry of the shipped model ``name``.

    ``test_set``: the figures of a further test set of the model (its ``more_coverage``) instead
    of its own ``coverage``; ``shipped_now``: the model has just shipped, so the further test sets'
    figures, measured with the model before it, go.
    """
    with editing_index() as models:
        for entry in models:
            if entry["name"] != name:
                continue
            if test_set:
                entry.setdefault("more_coverage", {})[test_set] = text
            else:
                entry["coverage"] = text
            if shipped_now:
                entry.pop("more_coverage", None)

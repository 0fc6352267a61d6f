"""Wall-clock of one fixed `gnnplan compare` sweep with 1 and 2 workers: the process pool against Ray.

The sweep: the shipped Blocksworld model (engine ``gnnplan``, its default mode) on ``--problems``
generated Blocksworld problems of ``--blocks`` blocks (seed 0), 60 s and 4096 MB per task, as
``gnnplan compare`` runs it (:func:`up_gnnplan.compare.runner.run_tasks`). Each configuration
runs it from scratch, ``--repeats`` times, one after the other:

- *pool*: :class:`~up_gnnplan.executors.ProcessPool` with 1 and with 2 processes;
- *ray*: :class:`~up_gnnplan.executors.RayExecutor` on a local Ray instance started for it with
  ``num_cpus`` 1 and 2. The instance's start-up is timed apart, before the sweep; the sweep's
  time includes Ray's worker processes starting (as the pool's includes its forkserver).

Each configuration runs in a fresh Python process of its own, as one `gnnplan compare` would.

Scaling ratio: wall with 1 worker / wall with 2. Ray's overhead per task: (Ray's wall − the
pool's wall) / tasks at the same number of workers; and, apart from any planning, the same for
``--problems`` jobs that do nothing (each still a process of its own, forked from a forkserver).
The empty jobs run after the sweep in the same process (forkservers and Ray workers started).
The records of every run are checked to hold the same status and plan length per problem.

Results: ``OUT/results.json`` (every run) and ``OUT/report.md`` (the table and the command):

    OMP_NUM_THREADS=1 python -m benchmarks.sweep_scaling -o benchmarks/results/sweep_scaling
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from .common import RESULTS, ROOT, load_average


def noop(phase=None) -> int:
    """Do nothing in a job's process (the cost of a job alone)."""
    return os.getpid()


def sweep(tasks, executor, out: Path) -> tuple[float, list[dict]]:
    from up_gnnplan.compare.runner import run_tasks

    start = time.perf_counter()
    records = run_tasks(tasks, out, memory_mb=4096, progress=False, executor=executor)
    return time.perf_counter() - start, records


def empty_jobs(count: int, executor) -> float:
    from up_gnnplan.executors import Job

    start = time.perf_counter()
    with executor:
        outcomes = list(executor.run([Job(n, "benchmarks.sweep_scaling:noop", timeout=60) for n in range(count)]))
    assert all(o.status == "ok" for o in outcomes), [o.error for o in outcomes if o.status != "ok"]
    return time.perf_counter() - start


def run_configuration(name: str, workers: int, tasks, jobs: int, folder: Path) -> dict:
    """Return the sweep's and the empty jobs' walls of one executor with ``workers`` workers."""
    from up_gnnplan.executors import ProcessPool, RayExecutor

    result = {"executor": name, "workers": workers}
    ray = None
    if name == "ray":
        import ray

        start = time.perf_counter()
        ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
        result["startup_s"] = round(time.perf_counter() - start, 2)

    def executor():
        return ProcessPool(workers) if name == "local" else RayExecutor()

    try:
        wall, records = sweep(tasks, executor(), folder / f"{name}-{workers}")
        result["sweep_s"] = round(wall, 2)
        result["records"] = {r["problem"]: [r["status"], r["plan_length"], r["wall_time"]] for r in records}
        result["empty_jobs_s"] = round(empty_jobs(jobs, executor()), 2)
    finally:
        if ray is not None:
            start = time.perf_counter()
            ray.shutdown()
            result["shutdown_s"] = round(time.perf_counter() - start, 2)
    return result


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def report(data: dict) -> str:
    runs, n = data["runs"], data["problems"]
    by = {}
    for run in runs:
        by.setdefault((run["executor"], run["workers"]), []).append(run)
    lines = [
        "# Sweeps: process pool against Ray", "",
        f"{data['date']}, {data['machine']}; load average before the runs {data['load_before']}, after "
        f"{data['load_after']}.", "",
        "```bash", data["command"], "```", "",
        f"Sweep: `gnnplan` (shipped Blocksworld model, default mode) on {n} generated Blocksworld problems of "
        f"{data['blocks']} blocks, 60 s and 4096 MB per task; {data['repeats']} run(s) per configuration, median "
        "(every run in `results.json`). Empty jobs: the same number of jobs that return at once.", "",
        "| executor | workers | sweep wall (s) | runs | scaling 1→2 | empty jobs (s) | Ray start-up (s) |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for (name, workers), group in by.items():
        wall = median(group, "sweep_s")
        one = by.get((name, 1))
        ratio = f"{median(one, 'sweep_s') / wall:.2f}" if workers == 2 and one else ""
        startup = f"{median(group, 'startup_s'):.1f}" if name == "ray" else ""
        each = ", ".join(f"{r['sweep_s']:.1f}" for r in group)
        lines.append(f"| {name} | {workers} | {wall:.1f} | {each} | {ratio} | {median(group, 'empty_jobs_s'):.2f} | "
                     f"{startup} |")
    lines += ["", "| workers | Ray's overhead per task, sweep (s) | Ray's overhead per job, empty jobs (s) |",
              "|---:|---:|---:|"]
    for workers in sorted({w for _, w in by}):
        if ("local", workers) in by and ("ray", workers) in by:
            local, ray = by[("local", workers)], by[("ray", workers)]
            lines.append(f"| {workers} | {(median(ray, 'sweep_s') - median(local, 'sweep_s')) / n:+.3f} | "
                         f"{(median(ray, 'empty_jobs_s') - median(local, 'empty_jobs_s')) / n:+.3f} |")
    same = data["same_results"]
    lines += ["", f"Same status and plan length per problem in every run: {'yes' if same else 'NO'}; "
              f"solved {data['solved']}/{n}.", ""]
    return "\n".join(lines)


def run_in_process(name: str, workers: int, folder: Path, out: Path) -> dict:
    """Run one configuration in a fresh Python process, as one `gnnplan compare` would, and return its result."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", "benchmarks.sweep_scaling", "--run", name, str(workers), str(folder),
                           str(out)], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{name} x{workers} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=RESULTS / "sweep_scaling")
    parser.add_argument("--problems", type=int, default=16)
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--executors", nargs="+", default=["local", "ray"], choices=["local", "ray"])
    parser.add_argument("--run", nargs=4, metavar=("EXECUTOR", "WORKERS", "PROBLEMS", "OUT"),
                        help="(internal) run one configuration on the problems of a folder and print its JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    from up_gnnplan.compare import file_problems, make_tasks, parse_engine
    from up_gnnplan.datasets.generators import generate

    if args.run:
        name, workers, folder, out = args.run
        problems = sorted(p for p in Path(folder).glob("*.pddl") if p.name != "domain.pddl")
        tasks = make_tasks([parse_engine("gnnplan")], file_problems(Path(folder) / "domain.pddl", problems), 60)
        print(json.dumps(run_configuration(name, int(workers), tasks, len(tasks), Path(out))))
        return
    command = "OMP_NUM_THREADS=1 python -m benchmarks.sweep_scaling " + shlex.join(sys.argv[1:] if argv is None else argv)
    load_before = load_average()
    runs = []
    with tempfile.TemporaryDirectory(prefix="sweep-scaling-") as tmp:
        folder = Path(tmp)
        generate("blocksworld", folder / "problems", count=args.problems, seed=0, blocks=args.blocks)
        for repeat in range(args.repeats):
            for name in args.executors:
                for workers in (1, 2):
                    run = run_in_process(name, workers, folder / "problems", folder / f"run-{repeat}")
                    run["repeat"] = repeat
                    runs.append(run)
                    print(f"{name} x{workers} (run {repeat + 1}): sweep {run['sweep_s']} s, "
                          f"empty jobs {run['empty_jobs_s']} s", file=sys.stderr, flush=True)
    outcomes = [{p: r[:2] for p, r in run["records"].items()} for run in runs]
    data = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}), Python "
                   f"{platform.python_version()}",
        "command": command, "problems": args.problems, "blocks": args.blocks, "repeats": args.repeats,
        "load_before": load_before, "load_after": load_average(),
        "same_results": all(o == outcomes[0] for o in outcomes),
        "solved": sum(status.startswith("solved") for status, _ in outcomes[0].values()),
        "runs": runs,
    }
    try:
        import ray

        data["ray_version"] = ray.__version__
    except ImportError:
        pass
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "results.json").write_text(json.dumps(data, indent=1) + "\n")
    text = report(data)
    (args.output / "report.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

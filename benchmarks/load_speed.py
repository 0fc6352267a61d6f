"""Load time and peak memory of a task from PDDL files: pymimir straight from the files against UP's reader.

For the largest generated task of each domain of the IPC 2023 Learning Track's medium and hard
tiers (the package's generators, seed 0; the medium sizes are the tier's largest, the hard sizes
are our choice, 3-10 times beyond them as the hard tier is), each path builds a
:class:`~up_gnnplan.problems.bridge.Task` ready for search, in a process of its own under an
address-space cap and a wall-clock kill:

- *files*: ``Task.from_files(domain, problem)``: pymimir reads the files (the new path);
- *up*: ``Task(load_pddl(domain, problem))``: UP's reader, then UP's writer hands the text to
  pymimir (the path every command took before).

The time is measured inside the process around the load (imports excluded), the peak resident
memory of the whole process from ``os.wait4`` (so it includes the ~150 MB of imports). A run killed
at its limit is recorded as a timeout; once UP's reader timed out on a domain's medium task, its
hard task is not run on that path (it is larger) and is recorded as such. With ``--solve``,
``gnnplan solve`` is also timed end to end on a few tasks, by the working tree (*after*) and by a
git revision (*before*, default the commit this work started from).

    OMP_NUM_THREADS=1 python -m benchmarks.load_speed -o benchmarks/results/load_speed --solve
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import ROOT, run_capped, table

# (tier, domain, generator parameters). Medium: the tier's largest tasks (issue 33's list).
INSTANCES = [
    ("medium", "blocksworld", {"blocks": 146}),
    ("medium", "childsnack", {"children": 40, "allergic_children": 24, "trays": 5, "sandwiches": 48}),
    ("medium", "ferry", {"cars": 97, "locations": 50}),
    ("medium", "floortile", {"rows": 19, "columns": 13, "robots": 13}),
    ("medium", "miconic", {"passengers": 78, "floors": 59}),
    ("medium", "rovers", {"rovers": 10, "waypoints": 88, "cameras": 10, "objectives": 40}),
    ("medium", "satellite", {"satellites": 40, "instruments": 78, "modes": 5, "directions": 40}),
    ("medium", "sokoban", {"grid_size": 49, "boxes": 34}),
    ("medium", "spanner", {"spanners": 88, "nuts": 49, "locations": 40}),
    ("medium", "transport", {"vehicles": 10, "packages": 44, "locations": 40}),
    ("hard", "blocksworld", {"blocks": 488}),
    ("hard", "childsnack", {"children": 200, "allergic_children": 120, "trays": 20, "sandwiches": 240}),
    ("hard", "ferry", {"cars": 974, "locations": 300}),
    ("hard", "floortile", {"rows": 40, "columns": 30, "robots": 30}),
    ("hard", "miconic", {"passengers": 400, "floors": 300}),
    ("hard", "rovers", {"rovers": 15, "waypoints": 150, "cameras": 15, "objectives": 60}),
    ("hard", "satellite", {"satellites": 99, "instruments": 300, "modes": 5, "directions": 150}),
    ("hard", "sokoban", {"grid_size": 99, "boxes": 100}),
    ("hard", "spanner", {"spanners": 487, "nuts": 250, "locations": 200}),
    ("hard", "transport", {"vehicles": 30, "packages": 300, "locations": 200}),
]
SOLVE = [("medium", "blocksworld"), ("medium", "rovers")]  # gnnplan solve before/after on these

# Load a task in the package on PYTHONPATH (an editable install's import hook would win over it).
LOAD = """
import sys, time, json, warnings
sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith('__editable__')]
warnings.simplefilter('ignore')
from up_gnnplan.problems import Task, load_pddl
path, domain, problem = sys.argv[1:4]
start = time.perf_counter()
task = Task.from_files(domain, problem) if path == 'files' else Task(load_pddl(domain, problem))
task.initial_state()
print(json.dumps({'seconds': time.perf_counter() - start, 'objects': task.num_objects,
                  'predicates': len(task.signature)}))
"""
SOLVE_CLI = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith('__editable__')]
from up_gnnplan.cli import main
sys.argv = ['gnnplan'] + sys.argv[1:]
main()
"""


def generate_instances(folder: Path) -> list[dict]:
    """Write the instances (seed 0, one problem each) with the working tree's generators."""
    from up_gnnplan.datasets.generators import generate

    out = []
    for tier, domain, sizes in INSTANCES:
        target = folder / f"{tier}-{domain}"
        (problem,) = [p for p in generate(domain, target, count=1, seed=0, **sizes) if p.name != "domain.pddl"]
        out.append({"tier": tier, "domain": domain, "sizes": sizes, "domain_file": str(target / "domain.pddl"),
                    "problem_file": str(problem), "problem_kb": round(problem.stat().st_size / 1024)})
    return out


def environment(code_root: Path) -> dict:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(code_root)}


def load(instance: dict, path: str, timeout: float, cap_mb: int) -> dict:
    """Load ``instance`` by ``path`` ("files" or "up") in a capped process; return seconds, peak MB, outcome."""
    command = [sys.executable, "-c", LOAD, path, instance["domain_file"], instance["problem_file"]]
    ran = run_capped(command, cap_mb=cap_mb, kill_after=timeout, env=environment(ROOT), cwd=tempfile.gettempdir())
    last = ran.text.strip().splitlines()[-1] if ran.text.strip() else ""
    if ran.killed:
        return {"outcome": f"timeout ({timeout:g} s)", "seconds": None, "peak_mb": ran.peak_mb}
    try:
        found = json.loads(last)
    except ValueError:
        memory = any(s in ran.text for s in ("MemoryError", "bad_alloc", "Cannot allocate"))
        return {"outcome": f"memout ({cap_mb} MB)" if memory else f"error: {last[:200]}", "seconds": None,
                "peak_mb": ran.peak_mb}
    return {"outcome": "loaded", "seconds": round(found["seconds"], 3), "peak_mb": ran.peak_mb,
            "objects": found["objects"], "wall": round(ran.seconds, 2)}


def solve(code_root: Path, instance: dict, timeout: float, cap_mb: int) -> dict:
    """Run ``gnnplan solve`` of the version at ``code_root`` on ``instance``; return its wall time and last line."""
    command = [sys.executable, "-c", SOLVE_CLI, "solve", instance["domain_file"], instance["problem_file"],
               "--timeout", f"{timeout:g}"]
    ran = run_capped(command, cap_mb=cap_mb, kill_after=timeout + 60, env=environment(code_root),
                     cwd=tempfile.gettempdir())
    lines = [line for line in ran.text.strip().splitlines() if line.strip()]
    return {"wall": round(ran.seconds, 2), "peak_mb": ran.peak_mb, "killed": ran.killed,
            "summary": lines[-1][:300] if lines else ""}


def checkout(revision: str) -> Path:
    """Return a copy of the package at ``revision`` (``git archive``, made once in the temp folder)."""
    path = Path(tempfile.gettempdir()) / f"gnnplan-load-speed-{revision}"
    if not (path / "up_gnnplan").is_dir():
        path.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "up_gnnplan"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(path)], input=archive, check=True)
    return path


def ratio(up: dict, files: dict, key: str) -> str:
    if files.get(key) is None:
        return "-"
    if up.get(key) is None:
        return f"> {up['limit'] / files[key]:,.0f}" if key == "seconds" and up.get("limit") else "-"
    return f"{up[key] / max(files[key], 1e-9):,.1f}"


def write_summary(rows: list[dict], solves: list[dict], args, out: Path) -> None:
    lines = ["# Load time: pymimir straight from the files against UP's reader", "",
             f"Command: `OMP_NUM_THREADS=1 python -m benchmarks.load_speed -o {args.output_name}"
             f"{f' --solve --solve-timeout {args.solve_timeout:g}' if solves else ''} --up-timeout {args.up_timeout:g} "
             f"--cap-mb {args.cap_mb}`", "",
             "Seconds: the load alone, inside its process (imports excluded): files to a Task ready for search. "
             "Peak MB: the process's peak resident memory (imports included). Ratios: UP path / files path.", ""]
    header = ["tier", "domain", "sizes", "objects", "problem KB", "files s", "files MB", "UP s", "UP MB",
              "time ratio", "memory ratio"]
    body = []
    for row in rows:
        files, up = row["files"], row["up"]
        body.append([row["tier"], row["domain"], " ".join(f"{k}={v}" for k, v in row["sizes"].items()),
                     str(files.get("objects", "-")), str(row["problem_kb"]),
                     f"{files['seconds']:.2f}" if files.get("seconds") is not None else files["outcome"],
                     str(files["peak_mb"]),
                     f"{up['seconds']:.2f}" if up.get("seconds") is not None else up["outcome"],
                     str(up["peak_mb"]) if up.get("peak_mb") is not None else "-",
                     ratio(up, files, "seconds"), ratio(up, files, "peak_mb") if up.get("seconds") is not None else "-"])
    lines.append(table(header, body, right_from=3))
    if solves:
        lines += ["", "## gnnplan solve end to end", "",
                  f"`gnnplan solve DOMAIN PROBLEM --timeout {args.solve_timeout:g}`, before ({args.before}) and after; "
                  "wall seconds of the whole process.", ""]
        lines.append(table(["task", "version", "wall s", "peak MB", "last line"],
                           [[s["task"], s["version"], f"{s['wall']:.1f}", str(s["peak_mb"]), s["summary"][:150]]
                            for s in solves], right_from=2))
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--up-timeout", type=float, default=300.0, help="wall-clock kill of a UP-path load")
    parser.add_argument("--files-timeout", type=float, default=300.0, help="wall-clock kill of a files-path load")
    parser.add_argument("--cap-mb", type=int, default=6000, help="address-space cap of every load")
    parser.add_argument("--solve", action="store_true", help="also time gnnplan solve before/after (SOLVE)")
    parser.add_argument("--solve-timeout", type=float, default=120.0)
    parser.add_argument("--before", default="fea731f", help="git revision of the 'before' solves")
    parser.add_argument("--only", nargs="*", help="domains to run (default: all)")
    args = parser.parse_args(argv)
    args.output_name = str(args.output)
    out = args.output.resolve()
    out.mkdir(parents=True, exist_ok=True)
    problems = Path(tempfile.mkdtemp(prefix="gnnplan-load-speed-"))  # regenerated from the seed, not kept
    instances = [i for i in generate_instances(problems) if not args.only or i["domain"] in args.only]
    rows, up_timed_out = [], set()
    for instance in instances:
        files = load(instance, "files", args.files_timeout, args.cap_mb)
        if instance["domain"] in up_timed_out:
            up = {"outcome": "not run (its medium task timed out)", "seconds": None, "peak_mb": None}
        else:
            up = load(instance, "up", args.up_timeout, args.cap_mb)
        up["limit"] = args.up_timeout
        if up["outcome"].startswith(("timeout", "memout")):
            up_timed_out.add(instance["domain"])
        row = {**{k: instance[k] for k in ("tier", "domain", "sizes", "problem_kb")}, "files": files, "up": up}
        rows.append(row)
        print(json.dumps(row), flush=True)
        (out / "results.json").write_text(json.dumps({"loads": rows}, indent=1) + "\n")
    solves = []
    if args.solve:
        before = checkout(args.before)
        for tier, domain in SOLVE:
            instance = next((i for i in instances if (i["tier"], i["domain"]) == (tier, domain)), None)
            if instance is None:
                continue
            for version, root in (("before", before), ("after", ROOT)):
                result = {"task": f"{tier} {domain}", "version": version,
                          **solve(root, instance, args.solve_timeout, args.cap_mb)}
                solves.append(result)
                print(json.dumps(result), flush=True)
    (out / "results.json").write_text(json.dumps({"loads": rows, "solves": solves}, indent=1) + "\n")
    write_summary(rows, solves, args, out)


if __name__ == "__main__":
    main()

"""The exported aggregation in two levels against one table [nodes, largest in-degree]: time per batch.

Until 2026-11-24 the exported graph gathered each node's messages into one table as wide as the
largest in-degree, so one hub (a Gripper room holding every ball, a Rovers rover in every
``can_traverse`` atom) made a layer's work nodes x hub degree. Now the messages fill rows of
K slots (K = ceil(sqrt(D)) until 2026-12-01, since then sized by the usual node), reduced first per row and then per node
(:class:`up_gnnplan.models.layers.aggregation.TableAggregator`).

For each test problem, the shipped value model as it was before (the ONNX file at git revision
``--before``, one-level tables) and the same weights exported by this version (``gnnplan export
FILE -o NEW``: two levels) run the same packed batches, the successors of the first ``--steps``
greedy-policy states, alternating which goes first, ``--repeats`` times each. Problems: the
largest IPC 2023 ``testing/easy`` task of each domain, and generated Gripper and Logistics
problems with hubs. Prints one markdown table; ratios are taken within the run:

    OMP_NUM_THREADS=1 python -m benchmarks.aggregation_levels --steps 3 --repeats 3
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from .common import IPC2023, ROOT, clock_line, greedy_walk, largest_tasks, table

# Generated problems with hubs: (generator, parameters); each with the shipped model of its domain.
GENERATED = {"gripper-150": ("gripper", {"balls": 150}), "logistics-c10p40": ("logistics", {"cities": 10, "city_size": 6,
                                                                                             "packages": 40, "airplanes": 4})}


def generated_tasks(names, folder: Path):
    from up_gnnplan.datasets.generators import generate
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.problems import load_task

    for name in names:
        generator, params = GENERATED[name]
        (problem,) = generate(generator, folder / name, count=1, seed=0, **params)
        task = load_task(folder / name / "domain.pddl", problem)
        yield name, task.num_objects, problem, task, find_model(task.signature, "value")


def file_before(path: Path, revision: str, folder: Path) -> Path:
    """The shipped file ``path`` as it was at git ``revision``."""
    relative = path.resolve().relative_to(ROOT)
    out = folder / f"before-{path.name}"
    out.write_bytes(subprocess.run(["git", "show", f"{revision}:{relative}"], cwd=ROOT, check=True,
                                   capture_output=True).stdout)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="*", default=[*IPC2023, *GENERATED], metavar="SET",
                        help=f"IPC 2023 domains and generated problems: {', '.join([*IPC2023, *GENERATED])}")
    parser.add_argument("--before", default="8bccd58", help="git revision of the one-level files (the last before they were exported again)")
    parser.add_argument("--steps", type=int, default=3, help="policy steps per problem (one batch each)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each file per batch")
    parser.add_argument("--max-batch", type=int, default=400, help="skip batches with more successors (seconds each)")
    args = parser.parse_args(argv)
    from up_gnnplan.encodings.packing import pack
    from up_gnnplan.runtime import OnnxValueFunction
    from up_gnnplan.search.common import Inputs

    print(f"{clock_line('start')}, before = {args.before}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="gnnplan-levels-"))
    tasks = list(largest_tasks([s for s in args.sets if s in IPC2023]))
    tasks += list(generated_tasks([s for s in args.sets if s in GENERATED], work))
    out = []
    for domain, objects, problem, task, path in tasks:
        old = file_before(Path(path), args.before, work)
        new = work / f"after-{Path(path).name}"
        subprocess.run(["gnnplan", "export", str(old), "-o", str(new)], check=True, capture_output=True)
        sessions = {"one level": OnnxValueFunction(old), "two levels": OnnxValueFunction(new)}
        vf, convert = sessions["two levels"], Inputs(task)
        totals = {"one level": 0.0, "two levels": 0.0, "batches": 0, "states": 0, "diff": 0.0}

        def both_files(children):
            """Time the batch ``children`` on both files, alternating which goes first; return its values."""
            feed = pack(vf.encoding.encode(convert(children)), vf.encoding.relations)
            values = {}
            for repeat in range(args.repeats):
                for kind in (list(sessions) if repeat % 2 == 0 else list(sessions)[::-1]):
                    session = sessions[kind]
                    start = time.perf_counter()
                    values[kind] = session.session.run(["value"], {n: feed[n] for n in session.input_names})[0]
                    totals[kind] += time.perf_counter() - start
            totals["diff"] = max(totals["diff"], float(np.abs(values["one level"] - values["two levels"]).max()))
            totals["batches"] += 1
            totals["states"] += len(children)
            return values["two levels"]

        greedy_walk(task, args.steps, args.max_batch, both_files)
        batches = totals["batches"]
        if not batches:
            print(f"{domain}: no batch within --max-batch {args.max_batch}", flush=True)
            continue
        r = args.repeats
        row = [domain, Path(problem).name, str(objects), Path(path).stem, str(batches), f"{totals['states'] / batches:.0f}",
               f"{1000 * totals['one level'] / (batches * r):.1f}", f"{1000 * totals['two levels'] / (batches * r):.1f}",
               f"{totals['one level'] / totals['two levels']:.2f}x", f"{totals['diff']:.1e}"]
        out.append(row)
        print(" | ".join(row), flush=True)
    print(table(["problem set", "problem", "objects", "model", "batches", "states/batch", "ms/batch, one level",
                 "ms/batch, two levels", "speed-up", "max |diff|"], out))
    print(clock_line("end"))


if __name__ == "__main__":
    main()

"""Split rows in the packed layout against one row per relation: padded atoms and session time.

For the largest IPC 2023 ``testing/easy`` problem of each domain (by object count), the shipped
model's greedy policy takes ``--steps`` steps; at each step the batch of successors it
evaluates is packed both ways (``up_gnnplan.encodings.packing.pack`` with ``split=True``, the
runtime's layout, and ``split=False``: every relation padded to the largest one), and the same
onnxruntime session runs both feeds, alternating which goes first, ``--repeats`` times. Values
of the two are compared. Prints one markdown table; ratios are taken within the run:

    OMP_NUM_THREADS=1 python -m benchmarks.packing_rows --steps 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from .common import IPC2023, clock_line, greedy_walk, largest_tasks, table


def rows_of(feed) -> tuple[int, int]:
    """(rows, padded atoms) over all arities of a packed feed."""
    arrays = [v for k, v in feed.items() if k.startswith("arity_")]
    return sum(a.shape[0] for a in arrays), sum(a.shape[0] * a.shape[1] for a in arrays)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domains", nargs="*", default=list(IPC2023), metavar="DOMAIN",
                        help="IPC 2023 domains (default: all ten)")
    parser.add_argument("--steps", type=int, default=5, help="policy steps per problem (one batch each)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each layout per batch")
    parser.add_argument("--max-batch", type=int, default=400, help="skip batches with more successors (seconds each)")
    parser.add_argument("--row-cost", type=int, help="packing.ROW_COST for the split rows (default: the package's)")
    args = parser.parse_args(argv)
    from up_gnnplan.encodings import packing
    from up_gnnplan.encodings.packing import pack

    if args.row_cost is not None:
        packing.ROW_COST = args.row_cost
    from up_gnnplan.runtime import OnnxValueFunction
    from up_gnnplan.search.common import Inputs

    print(f"{clock_line('start')}, ROW_COST {packing.ROW_COST}", flush=True)
    out = []
    for domain, objects, problem, task, path in largest_tasks(args.domains):
        vf, convert = OnnxValueFunction(path), Inputs(task)
        names = vf.input_names
        totals = {"split": 0.0, "whole": 0.0, "batches": 0, "states": 0, "real": 0, "padded_split": 0,
                  "padded_whole": 0, "rows_split": 0, "rows_whole": 0, "diff": 0.0}

        def both_layouts(children):
            """Time the batch ``children`` in both layouts, alternating which goes first; return its values."""
            feed = vf.encoding.encode(convert(children))
            feeds = {"split": pack(feed, vf.encoding.relations), "whole": pack(feed, vf.encoding.relations, split=False)}
            values = {}
            for repeat in range(args.repeats):
                for kind in (("split", "whole") if repeat % 2 == 0 else ("whole", "split")):
                    start = time.perf_counter()
                    values[kind] = vf.session.run(["value"], {n: feeds[kind][n] for n in names})[0]
                    totals[kind] += time.perf_counter() - start
            totals["diff"] = max(totals["diff"], float(np.abs(values["split"] - values["whole"]).max()))
            for kind in ("split", "whole"):
                rows, padded = rows_of(feeds[kind])
                totals[f"rows_{kind}"] += rows
                totals[f"padded_{kind}"] += padded
            totals["real"] += sum(len(v) for k, v in feed.items() if k.startswith("rel_"))
            totals["batches"] += 1
            totals["states"] += len(children)
            return values["split"]

        greedy_walk(task, args.steps, args.max_batch, both_layouts)
        if not totals["batches"]:
            print(f"{domain}: no batch within --max-batch {args.max_batch}", flush=True)
            continue
        b, r = totals["batches"], args.repeats
        row = [domain, problem.name, str(objects), str(b), f"{totals['states'] / b:.0f}", f"{totals['real'] / b:,.0f}",
               f"{totals['padded_whole'] / b:,.0f} ({totals['rows_whole'] / b:.0f})",
               f"{totals['padded_split'] / b:,.0f} ({totals['rows_split'] / b:.0f})",
               f"{1000 * totals['whole'] / (b * r):.1f}", f"{1000 * totals['split'] / (b * r):.1f}",
               f"{totals['whole'] / totals['split']:.2f}x", f"{totals['diff']:.1e}"]
        out.append(row)
        print(" | ".join(row), flush=True)
    print(table(["domain", "problem", "objects", "batches", "states/batch", "atoms/batch",
                 "padded atoms (rows), one row per relation", "padded atoms (rows), split rows",
                 "ms/batch, one row per relation", "ms/batch, split rows", "speed-up", "max |diff|"], out))
    print(clock_line("end"))


if __name__ == "__main__":
    main()

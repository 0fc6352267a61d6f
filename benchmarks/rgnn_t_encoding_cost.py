"""The cost of the R-GNN[t] encoding: atoms, compose atoms and encoding time per state.

Regenerates the cost table in the docstring of ``up_gnnplan/encodings/rgnn_t.py``: for
Blocksworld states of 5, 10 and 20 blocks (towers built at random, goal one tower) and
generated Navig-xy instances (6 x 4, 10 x 10, ``blocked_ratio`` 0.25), the atoms of ``A_0`` and
``OBJ``, the compose atoms ``Δ_1`` and ``Δ_2``, and the encoding time in ms per state for
``t = 0, 1, 2`` (the plain ``rgnn`` encoding in parentheses), one state per call and batches of
32, best of 5 rounds. The bundled Blocksworld domain is untyped, so its blocks are objects
without a ``type:block`` atom each (the docstring's A_0+OBJ column counted those too):

    OMP_NUM_THREADS=1 python -m benchmarks.rgnn_t_encoding_cost
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from up_gnnplan.data import example
from up_gnnplan.datasets.generators import generate
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.rgnn import RGNNEncoding
from up_gnnplan.encodings.rgnn_t import COMPOSE, RGNNTEncoding
from up_gnnplan.problems import load_task
from up_gnnplan.states import StateAtoms


def timed(encoding, batch, repeat: int) -> float:
    """Return ms per state: the best of 5 rounds of ``repeat`` calls (the machine is shared)."""
    encoding.encode(batch)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            encoding.encode(batch)
        best = min(best, time.perf_counter() - start)
    return best / repeat / len(batch) * 1000


def report(label: str, signature, state: StateInput) -> None:
    """Print one row of the table."""
    plain = RGNNEncoding(signature)
    counts, single, batched = [], [], []
    for t in (0, 1, 2):
        encoding = RGNNTEncoding(signature, t=t)
        out = encoding.encode([state])
        atoms = sum(len(out[f"rel_{i}"]) for i, (name, _) in enumerate(encoding.relations) if name != COMPOSE)
        counts.append(len(out[f"rel_{len(encoding.relations) - 1}"]) if t else 0)
        single.append(timed(encoding, [state], 50))
        batched.append(timed(encoding, [state] * 32, 5))
    nodes = len(out["node_graph"])
    print(f"{label:24s} {state.num_objects:4d} {nodes:6d} {atoms:8d} {counts[1]:8d} {counts[2]:8d}     "
          + " / ".join(f"{x:.2f}" for x in single) + f"  ({timed(plain, [state], 50):.2f})    "
          + " / ".join(f"{x:.2f}" for x in batched) + f"  ({timed(plain, [state] * 32, 5):.2f})")


def blocks_problem(n: int, seed: int) -> str:
    """Return a Blocksworld problem of ``n`` blocks in random towers, with the goal one tower b0 on b1 on ..."""
    rng = random.Random(seed)
    names = [f"b{i}" for i in range(n)]
    towers, order = [], names[:]
    rng.shuffle(order)
    for block in order:
        if towers and rng.random() < 0.6:
            rng.choice(towers).append(block)
        else:
            towers.append([block])
    init = ["(handempty)"]
    for tower in towers:
        init.append(f"(ontable {tower[0]})")
        init += [f"(on {up} {down})" for down, up in zip(tower, tower[1:])]
        init.append(f"(clear {tower[-1]})")
    goal = [f"(on {names[i]} {names[i + 1]})" for i in range(n - 1)]
    return (f"(define (problem bw{n}) (:domain blocksworld) (:objects {' '.join(names)})"
            f" (:init {' '.join(init)}) (:goal (and {' '.join(goal)})))")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cases = []
        for n in (5, 10, 20):
            path = tmp / f"bw{n}.pddl"
            path.write_text(blocks_problem(n, n))
            cases.append((f"Blocksworld {n:2d} blocks", example("blocksworld"), path))
        for w, h in ((6, 4), (10, 10)):
            (path,) = generate("navig-xy", tmp / f"nav{w}x{h}", count=1, seed=0, width=w, height=h, blocked_ratio=0.25)
            cases.append((f"Navig-xy {w:2d} x {h:2d}", path.parent / "domain.pddl", path))
        print("instance                 objs  nodes  A_0+OBJ      Δ_1      Δ_2     "
              "ms/state t=0/1/2 (rgnn), batch 1     batch 32")
        for label, domain, problem in cases:
            task = load_task(domain, problem)
            converter = StateAtoms(task)
            state = StateInput(converter.of(task.initial_state()), converter.goal, task.num_objects,
                               converter.negative_goal)
            report(label, task.signature, state)


if __name__ == "__main__":
    main()

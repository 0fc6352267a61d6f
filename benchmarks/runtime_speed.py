"""Run-time speed: onnxruntime against torch eager, GBFS expansion rate, policy step breakdown.

Three measurements in one run, on the shipped Blocks model (``models_zoo/blocks.onnx``) and the
torch model of the same weights: rebuilt from the ONNX file itself by default
(:func:`up_gnnplan.exporters.reexport.load_exported`, so a fresh clone reproduces every figure),
or loaded from a torch checkpoint given with ``--checkpoint`` (the value check then confirms
that the file holds the checkpoint's weights; rebuilt from the file, it checks onnxruntime
against torch on the same weights):

1. Evaluated states per second, onnxruntime (:class:`OnnxValueFunction`, one intra-op thread)
   against torch eager (the checkpoint model from ``load_checkpoint``: eval mode,
   ``torch.no_grad()``, ``torch.set_num_threads(1)``), at batch sizes 1, 8 and 64, on the same
   batches of the same states. "full" includes ``encoding.encode`` (onnxruntime: the value
   function's ``__call__``; torch: encode + ``torch.from_numpy`` + forward + ``.numpy()``);
   "model" runs on pre-encoded inputs (onnxruntime: ``session.run`` on a ready feed; torch:
   forward on ready tensors); "encode" times ``encoding.encode`` alone. States: random walks
   from the initial states of IPC-2000 Blocks ``probBLOCKS-{10..17}-*`` through
   ``up_gnnplan.states.successors`` (each visited state recorded, duplicates dropped), converted
   with ``up_gnnplan.search.common.Inputs(task)``. A batch holds states of one problem (as in
   search); the batches are shuffled (seeded) so consecutive batches come from different
   problems. Timing is in rounds: each round takes the next chunk of batches (about
   ``--chunk-states`` states) and runs every variant on that chunk, the order of the variants
   alternating between rounds, so all variants see the same states and share machine noise.
   Rounds continue until the variants' summed time in the cell reaches ``--cell-seconds`` (at
   least ``--min-rounds``). Values of onnxruntime and torch are compared on every timed batch
   and, untimed, on all collected states at batch 64.
   Also (batch 64, model and full): onnxruntime sessions at every graph optimisation level with
   one intra-op thread, and at the default level with two.
2. ``up_gnnplan.search.gbfs`` with the onnxruntime value function on a few of those problems:
   status, expansions, evaluations, expansions/s (``--gbfs-seconds`` limit each).
3. The package's ``policy_rollout`` on the largest instances for ``--policy-steps`` steps: its
   time per step, and where that time goes, read from cProfile's record of a second, profiled
   run of the same rollout (goal test, successor generation, symmetry classes, ``Inputs``,
   ``encoding.encode`` with ``pack``, ``session.run``, the rest; each part's time per step is
   its profiled share of the unprofiled time).

Run single-threaded::

    OMP_NUM_THREADS=1 python -m benchmarks.runtime_speed --markdown /tmp/runtime_speed.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from up_gnnplan.encodings.packing import pack

from .common import ROOT, SHARED, fmt, load_average, random_walk, table

BLOCKS = SHARED / "ipc-classic" / "blocks"


# -- states ------------------------------------------------------------------------------------


def collect_states(problems: list[Path], total: int, walk_length: int, seed: int):
    """Return [(name, task, inputs converter, [StateInput])] with about ``total`` states in all."""
    from up_gnnplan.problems import load_task
    from up_gnnplan.search.common import Inputs

    rng = random.Random(seed)
    per_problem = -(-total // len(problems))
    out = []
    for path in problems:
        task = load_task(BLOCKS / "domain.pddl", path)
        inputs = Inputs(task)
        seen, states = set(), []
        tries = 0
        while len(states) < per_problem and tries < 50 * per_problem:
            tries += 1  # a walk that ends at once still counts
            for state in random_walk(task.initial_state(), walk_length, rng):
                tries += 1
                if state.get_index() not in seen:
                    seen.add(state.get_index())
                    states.append(state)
                    if len(states) >= per_problem:
                        break
        out.append((path.stem, task, inputs, inputs(states)))
    # trim to exactly ``total`` (from the last problems)
    excess = sum(len(s) for *_, s in out) - total
    i = len(out) - 1
    while excess > 0 and i >= 0:
        cut = min(excess, len(out[i][3]) - 1)
        name, task, inputs, states = out[i]
        out[i] = (name, task, inputs, states[: len(states) - cut])
        excess -= cut
        i -= 1
    return out


def make_batches(collected, size: int, seed: int):
    """Batches of ``size`` states of one problem each (remainders dropped), shuffled."""
    batches = []
    for _, _, _, states in collected:
        for start in range(0, len(states) - size + 1, size):
            batches.append(states[start : start + size])
    random.Random(seed + size).shuffle(batches)
    return batches


# -- the sides ---------------------------------------------------------------------------------


class Sides:
    """The variants timed in section 1, each a callable on one prepared batch."""

    def __init__(self, vf, model, encoding):
        import torch

        self.vf, self.model, self.encoding, self.torch = vf, model, encoding, torch
        self.names = encoding.input_names()  # torch's inputs: one per relation
        if not vf.packed:
            assert self.names == vf.input_names

    def runtime_feed(self, feed):
        """The onnxruntime inputs: the packed per-arity layout when the file has it."""
        if self.vf.packed:
            feed = pack(feed, self.encoding.relations)
        return {n: feed[n] for n in self.vf.input_names}

    def prepare(self, batch):
        feed = self.encoding.encode(batch)
        tensors = [self.torch.from_numpy(feed[n]) for n in self.names]
        return {"states": batch, "feed": self.runtime_feed(feed), "tensors": tensors}

    def ort_full(self, p):
        return self.vf(p["states"])

    def ort_model(self, p):
        return self.vf.session.run(["value"], p["feed"])[0]

    def torch_full(self, p):
        torch = self.torch
        with torch.no_grad():
            feed = self.encoding.encode(p["states"])
            return self.model(*[torch.from_numpy(feed[n]) for n in self.names]).numpy()

    def torch_model(self, p):
        with self.torch.no_grad():
            return self.model(*p["tensors"]).numpy()

    def encode(self, p):
        self.runtime_feed(self.encoding.encode(p["states"]))


VARIANTS = ["ort_full", "torch_full", "ort_model", "torch_model", "encode"]


def time_rounds(variants: dict, batches, chunk_states: int, cell_seconds: float, min_rounds: int, outputs=None):
    """Interleaved rounds; return {variant: (states, seconds, [per-round seconds])} and rounds.

    ``outputs``: optional dict variant -> list, receiving each batch's output (for value checks).
    """
    per_chunk = max(1, chunk_states // len(batches[0]["states"]))
    chunks = [batches[i : i + per_chunk] for i in range(0, len(batches), per_chunk)]
    names = list(variants)
    totals = {n: [0, 0.0, []] for n in names}
    # warm-up: one batch per variant, untimed
    for n in names:
        variants[n](batches[0])
    rounds = 0
    while rounds < min_rounds or sum(t[1] for t in totals.values()) < cell_seconds:
        chunk = chunks[rounds % len(chunks)]
        order = names if rounds % 2 == 0 else names[::-1]
        for n in order:
            fn = variants[n]
            got = []
            start = time.perf_counter()
            for p in chunk:
                got.append(fn(p))
            elapsed = time.perf_counter() - start
            totals[n][0] += sum(len(p["states"]) for p in chunk)
            totals[n][1] += elapsed
            totals[n][2].append(elapsed)
            if outputs is not None and n in outputs:
                outputs[n].append(got)
        rounds += 1
        if rounds >= 50 * len(chunks):
            break
    return totals, rounds


def max_diff(a_lists, b_lists) -> float:
    worst = 0.0
    for a_chunk, b_chunk in zip(a_lists, b_lists):
        for a, b in zip(a_chunk, b_chunk):
            worst = max(worst, float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)))))
    return worst


def section_throughput(args, collected, sides, log):
    rows, model_rows, diffs = [], [], {}
    for size in args.batch_sizes:
        batches = [sides.prepare(b) for b in make_batches(collected, size, args.seed)]
        if not batches:
            log(f"batch {size}: skipped, no problem has {size} collected states (raise --states)")
            continue
        objects = statistics.mean(s.num_objects for p in batches for s in p["states"])
        variants = {n: getattr(sides, n) for n in VARIANTS}
        outputs = {n: [] for n in ("ort_full", "torch_full", "ort_model", "torch_model")}
        before = load_average()
        totals, rounds = time_rounds(variants, batches, args.chunk_states, args.cell_seconds, args.min_rounds, outputs)
        diff = max(max_diff(outputs["ort_full"], outputs["torch_full"]), max_diff(outputs["ort_model"], outputs["torch_model"]))
        diffs[size] = diff
        rate = {n: totals[n][0] / totals[n][1] for n in totals}
        full_rounds = [tb / ta for ta, tb in zip(totals["ort_full"][2], totals["torch_full"][2])]
        model_rounds = [tb / ta for ta, tb in zip(totals["ort_model"][2], totals["torch_model"][2])]
        states = totals["ort_full"][0]
        enc_share_ort = totals["encode"][1] / totals["ort_full"][1]
        log(f"batch {size}: {rounds} rounds, {states} states per variant, mean objects {objects:.1f}, "
            f"load {before} -> {load_average()}, max|diff| {diff:.2e}")
        for n in totals:
            log(f"  {n:12s} {rate[n]:9.1f} states/s  ({totals[n][1]:.2f} s)")
        rows.append([str(size), fmt(rate["ort_full"]), fmt(rate["torch_full"]),
                     f"{rate['ort_full'] / rate['torch_full']:.2f}x",
                     f"{min(full_rounds):.2f}–{max(full_rounds):.2f}x ({rounds})",
                     fmt(1000 * totals["ort_full"][1] / states), fmt(1000 * totals["encode"][1] / states),
                     f"{100 * enc_share_ort:.0f}%", str(states), f"{diff:.1e}"])
        model_rows.append([str(size), fmt(rate["ort_model"]), fmt(rate["torch_model"]),
                           f"{rate['ort_model'] / rate['torch_model']:.2f}x",
                           f"{min(model_rounds):.2f}–{max(model_rounds):.2f}x ({rounds})",
                           fmt(1000 * totals["ort_model"][1] / states), fmt(1000 * totals["torch_model"][1] / states),
                           fmt(rate["encode"])])
    full = table(["batch", "onnxruntime states/s", "torch states/s", "ort/torch", "per-round ort/torch (min–max, rounds)",
                  "ort ms/state", "encode ms/state", "encode share of ort", "states per side", "max abs diff"], rows)
    model = table(["batch", "onnxruntime model-only states/s", "torch model-only states/s", "ort/torch",
                   "per-round ort/torch (min–max, rounds)", "ort model ms/state", "torch model ms/state",
                   "encode-only states/s"], model_rows)
    return full, model, diffs


def section_check_all(collected, sides, log):
    """Untimed: values of both sides on every collected state, batch 64 (per problem)."""
    worst, count = 0.0, 0
    for _, _, _, states in collected:
        for start in range(0, len(states), 64):
            p = sides.prepare(states[start : start + 64])
            a, b = sides.ort_full(p), sides.torch_full(p)
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
            count += len(p["states"])
    log(f"value check on all {count} states (batch 64): max |onnxruntime - torch| = {worst:.2e}")
    return worst, count


def section_ort_options(args, collected, sides, model_path, log):
    import onnxruntime as ort

    def session(level, threads):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        if level is not None:
            options.graph_optimization_level = level
        return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])

    default_level = ort.SessionOptions().graph_optimization_level
    L = ort.GraphOptimizationLevel
    configs = [("default (package: level not set), 1 thread", None, 1)]
    for name in ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_LAYOUT", "ORT_ENABLE_ALL"):
        if hasattr(L, name):
            configs.append((f"{name}, 1 thread", getattr(L, name), 1))
    configs.append(("default, 2 threads", None, 2))
    configs.append(("ORT_ENABLE_ALL, 2 threads", L.ORT_ENABLE_ALL, 2))
    sessions = {label: session(level, threads) for label, level, threads in configs}
    encoding = sides.encoding
    variants = {}
    for label, s in sessions.items():
        def model_fn(p, s=s):
            return s.run(["value"], p["feed"])[0]

        def full_fn(p, s=s):
            return s.run(["value"], sides.runtime_feed(encoding.encode(p["states"])))[0]

        variants[f"{label}|model"] = model_fn
        variants[f"{label}|full"] = full_fn
    batches = [sides.prepare(b) for b in make_batches(collected, 64, args.seed)]
    if not batches:
        log("onnxruntime options: skipped, no problem has 64 collected states (raise --states)")
        return "(skipped)", "no batch of 64"
    outputs = {n: [] for n in variants}
    before = load_average()
    totals, rounds = time_rounds(variants, batches, args.chunk_states, args.options_seconds, args.min_rounds, outputs)
    ref = outputs[f"{configs[0][0]}|model"]
    log(f"onnxruntime options, batch 64: {rounds} rounds, default level = {default_level}, load {before} -> {load_average()}")
    rows = []
    base = {kind: totals[f"{configs[0][0]}|{kind}"][0] / totals[f"{configs[0][0]}|{kind}"][1] for kind in ("model", "full")}
    for label, _, _ in configs:
        m, f = totals[f"{label}|model"], totals[f"{label}|full"]
        rm, rf = m[0] / m[1], f[0] / f[1]
        diff = max(max_diff(outputs[f"{label}|model"], ref), max_diff(outputs[f"{label}|full"], ref))
        log(f"  {label:45s} model {rm:8.1f}/s  full {rf:8.1f}/s  max|diff| vs default {diff:.1e}")
        rows.append([label, fmt(rm), f"{rm / base['model']:.2f}x", fmt(rf), f"{rf / base['full']:.2f}x", f"{diff:.1e}"])
    note = f"default graph_optimization_level of `ort.SessionOptions()`: `{default_level}`; {rounds} rounds, {totals[variants.__iter__().__next__()][0]} states per variant"
    return table(["session", "model-only states/s", "vs default", "full states/s", "vs default", "max abs diff vs default"], rows), note


def graph_summary(model_path, encoding, collected) -> str:
    """Node counts of the ONNX graph as exported and after onnxruntime's default optimisation."""
    import collections
    import tempfile

    import onnx
    import onnxruntime as ort

    proto = onnx.load(str(model_path))
    ops = collections.Counter(n.op_type for n in proto.graph.node)
    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        options.optimized_model_filepath = str(Path(tmp) / "optimised.onnx")
        ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
        optimised = onnx.load(options.optimized_model_filepath)
    opt_ops = collections.Counter(n.op_type for n in optimised.graph.node)
    feed = encoding.encode(collected[-1][3][:1])
    empty = sum(1 for n in encoding.input_names() if n.startswith("rel_") and feed[n].shape[0] == 0)
    relations = len(encoding.relations)
    top = lambda c: ", ".join(f"{k} {v}" for k, v in c.most_common(6))
    return (f"ONNX graph: {len(proto.graph.node)} nodes as exported ({top(ops)}); {len(optimised.graph.node)} after "
            f"onnxruntime's default optimisation ({top(opt_ops)}); {relations} relations (inputs rel_*), of which "
            f"{empty} are empty for a state of {collected[-1][0]}")


def section_profile(args, collected, sides, model_path, log):
    """onnxruntime's own profiler: share of kernel time per operator type, batch 1 and 64."""
    import collections
    import json
    import tempfile

    import onnxruntime as ort

    rows = []
    for size in args.profile_batch_sizes:
        batches = [sides.prepare(b) for b in make_batches(collected, size, args.seed)]
        batches = batches[: max(1, args.profile_states // size)]
        if not batches:
            log(f"profile batch {size}: skipped, no batch of that size")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.log_severity_level = 3
            options.enable_profiling = True
            options.profile_file_prefix = str(Path(tmp) / "profile")
            session = ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
            for p in batches:
                session.run(["value"], p["feed"])
            events = json.loads(Path(session.end_profiling()).read_text())
        kernel, count = collections.defaultdict(float), collections.Counter()
        runs, run_time = 0, 0.0
        for e in events:
            if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
                kernel[e["args"]["op_name"]] += e["dur"]
                count[e["args"]["op_name"]] += 1
            elif e.get("cat") == "Session" and e.get("name") == "model_run":
                runs += 1
                run_time += e["dur"]
        total = sum(kernel.values())
        top = sorted(kernel.items(), key=lambda kv: -kv[1])
        shares = ", ".join(f"{op} {100 * t / total:.0f}%" for op, t in top[:8])
        elementwise = sum(kernel[k] for k in ("Softplus", "Tanh", "Mul", "Add", "Exp", "Log", "Sub", "Div"))
        index_ops = sum(kernel[k] for k in ("Gather", "GatherElements", "ScatterElements", "Concat", "Reshape", "Flatten",
                                            "Expand", "Where", "Identity", "Shape", "If", "Unsqueeze", "Squeeze", "Slice"))
        kernels_per_run = sum(count.values()) / max(runs, 1)
        log(f"profile batch {size}: {runs} runs, {kernels_per_run:.0f} kernels/run, kernel time {100 * total / run_time:.0f}% of "
            f"model_run; by op: {shares}")
        rows.append([str(size), str(runs), f"{kernels_per_run:.0f}", f"{100 * total / run_time:.0f}%",
                     f"{100 * kernel['Gemm'] / total:.0f}%" if "Gemm" in kernel else "0%",
                     f"{100 * elementwise / total:.0f}%", f"{100 * index_ops / total:.0f}%", shares])
    return table(["batch", "runs", "kernels per run", "kernel time / run time", "Gemm", "elementwise (Softplus, Tanh, Mul, Add, …)",
                  "indexing and shape ops", "top operator types (share of kernel time)"], rows)


# -- GBFS ------------------------------------------------------------------------------------------


def section_gbfs(args, vf, log):
    from up_gnnplan.problems import load_task
    from up_gnnplan.search import gbfs

    rows = []
    for name in args.gbfs_problems:
        task = load_task(BLOCKS / "domain.pddl", BLOCKS / f"{name}.pddl")
        before = load_average()
        result = gbfs(task, vf, time_limit=args.gbfs_seconds)
        rate = result.expanded / result.seconds if result.seconds > 0 else float("nan")
        log(f"gbfs {name}: {result.status.value}, expanded {result.expanded}, evaluated {result.evaluated}, "
            f"{result.seconds:.1f} s, {rate:.1f} exp/s, plan {len(result.actions) if result.solved else '-'}, load {before}")
        rows.append([name, str(task.num_objects), result.status.value, str(len(result.actions)) if result.solved else "–",
                     f"{result.expanded:,}", f"{result.evaluated:,}", f"{result.seconds:.1f}", fmt(rate),
                     fmt(result.evaluated / result.seconds)])
    return table(["problem", "blocks", "status", "plan length", "expansions", "evaluations", "seconds",
                  "expansions/s", "evaluations/s"], rows, right_from=1)


# -- policy step breakdown ---------------------------------------------------------------------


# The parts of a policy step, each the cumulative time of the package's functions that do it
# (module path, function name) in cProfile's record of ``policy_rollout``; none calls another.
PARTS = {"is_goal": [("up_gnnplan/states/successors.py", "is_goal")],
         "successors": [("up_gnnplan/states/successors.py", "__init__"), ("up_gnnplan/states/successors.py", "__iter__")],
         "symmetry": [("up_gnnplan/search/symmetry.py", "keys")],
         "Inputs": [("up_gnnplan/search/common.py", "__call__")],
         "encode": [("up_gnnplan/encodings/", "encode"), ("up_gnnplan/encodings/packing.py", "pack")],
         "session.run": [("onnxruntime/capi/onnxruntime_inference_collection.py", "run")]}


def profiled_rollout(task, vf, max_steps: int):
    """Run the package's ``policy_rollout`` under cProfile; return its result and seconds per part.

    ``rest`` is the rollout's time outside the parts (the loop itself, limits, the chunked
    evaluator). cProfile slows Python calls down more than native ones, so the shares are those
    of the profiled run; the unprofiled time per step is measured beside it.
    """
    import cProfile
    import pstats

    from up_gnnplan.search import policy_rollout

    profiler = cProfile.Profile()
    profiler.enable()
    result = policy_rollout(task, vf, max_steps=max_steps)
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    cumulative = {}  # part -> seconds
    for (path, _, function), (_, _, _, seconds, _) in stats.items():
        path = path.replace("\\", "/")
        for part, places in PARTS.items():
            if any(function == name and where in path for where, name in places):
                cumulative[part] = cumulative.get(part, 0.0) + seconds
    total = sum(s for (_, _, f), (_, _, _, s, _) in stats.items() if f == "policy_rollout")
    seconds = {part: cumulative.get(part, 0.0) for part in PARTS}
    seconds["rest"] = max(0.0, total - sum(seconds.values()))
    seconds["total"] = total
    return result, seconds


POLICY_COLUMNS = (["objects", "steps", "states valued/step", "policy_rollout ms/step"]
                  + [f"{part} ms (share)" for part in (*PARTS, "rest")] + ["under cProfile ms/step", "same actions"])


def policy_row(label: str, load, vf, max_steps: int, log) -> list[str]:
    """Time ``max_steps`` steps of the package's ``policy_rollout`` with ``vf`` on the task ``load()``
    returns (a fresh one per run), and where the time goes; return the cells of ``POLICY_COLUMNS``."""
    from up_gnnplan.search import policy_rollout

    parts = [*PARTS, "rest"]
    task = load()
    vf.check_signature(task.signature, label)
    policy_rollout(task, vf, max_steps=1)  # warm-up of the session on this instance's size
    before = load_average()
    plain = policy_rollout(load(), vf, max_steps=max_steps)
    profiled, seconds = profiled_rollout(load(), vf, max_steps)
    steps = max(plain.expanded, 1)
    same = [str(a) for a in plain.actions] == [str(a) for a in profiled.actions]
    share = {k: seconds[k] / seconds["total"] for k in parts}
    plain_ms = 1000 * plain.seconds / steps
    log(f"policy {label}: {task.num_objects} objects, {plain.expanded} steps ({plain.status.value}), "
        f"{plain.evaluated} states valued, {plain_ms:.2f} ms/step unprofiled, "
        f"{1000 * seconds['total'] / steps:.2f} ms/step under cProfile; shares "
        + ", ".join(f"{k} {100 * share[k]:.0f}%" for k in parts) + f"; same actions: {same}; load {before}")
    return ([str(task.num_objects), f"{plain.expanded} ({plain.status.value})", f"{plain.evaluated / steps:.1f}",
             f"{plain_ms:.2f}"]
            + [f"{plain_ms * share[k]:.2f} ({100 * share[k]:.0f}%)" for k in parts]
            + [f"{1000 * seconds['total'] / steps:.2f}", "yes" if same else "no"])


def section_policy(args, vf, log):
    """Time per greedy policy step of the package's own ``policy_rollout``, and where it goes."""
    from up_gnnplan.problems import load_task

    data = ROOT / "up_gnnplan" / "data" / "blocksworld"
    problems = [("probBLOCKS-17-0", BLOCKS / "domain.pddl", BLOCKS / "probBLOCKS-17-0.pddl"),
                ("bundled test-20", data / "domain.pddl", data / "test-20.pddl")]
    rows = [[label, *policy_row(label, lambda: load_task(domain, problem), vf, args.policy_steps, log)]
            for label, domain, problem in problems]
    return table(["instance", *POLICY_COLUMNS], rows)


# -- main --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="blocks", help="shipped model name or ONNX path (default: blocks)")
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="torch checkpoint of the same model [default: the model rebuilt from the ONNX file's weights]")
    parser.add_argument("--states", type=int, default=2000, help="states to collect by random walks (default 2000)")
    parser.add_argument("--walk-length", type=int, default=50, help="steps per random walk before restarting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--chunk-states", type=int, default=128, help="states per variant per round")
    parser.add_argument("--cell-seconds", type=float, default=40.0,
                        help="per batch size: run rounds until the variants' summed time reaches this")
    parser.add_argument("--options-seconds", type=float, default=40.0, help="the same, for the onnxruntime options")
    parser.add_argument("--min-rounds", type=int, default=3)
    parser.add_argument("--profile-batch-sizes", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--profile-states", type=int, default=256, help="states per profiled batch size")
    parser.add_argument("--gbfs-problems", nargs="+", default=["probBLOCKS-10-0", "probBLOCKS-12-0", "probBLOCKS-14-0", "probBLOCKS-17-0"])
    parser.add_argument("--gbfs-seconds", type=float, default=30.0)
    parser.add_argument("--policy-steps", type=int, default=50)
    parser.add_argument("--skip", nargs="*", default=[], choices=["throughput", "check", "options", "profile", "gbfs", "policy"])
    parser.add_argument("--markdown", type=Path, help="also write the tables to this markdown file")
    args = parser.parse_args(argv)

    import onnxruntime
    import torch

    from up_gnnplan.models_zoo import resolve
    from up_gnnplan.runtime import OnnxValueFunction
    from up_gnnplan.exporters.reexport import load_exported
    from up_gnnplan.training.checkpoint import load_checkpoint

    torch.set_num_threads(1)
    lines: list[str] = []

    def log(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = load_average()
    log(f"start {started:%Y-%m-%d %H:%M:%S} UTC, load average {load_start}, {os.cpu_count()} cpus, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, torch threads {torch.get_num_threads()}")
    log(f"python {platform.python_version()}, torch {torch.__version__}, onnxruntime {onnxruntime.__version__}, {platform.machine()}")

    model_path = resolve(args.model)
    vf = OnnxValueFunction(model_path)
    if args.checkpoint is not None:
        model, encoding, config, _ = load_checkpoint(args.checkpoint)
        source = f"checkpoint {args.checkpoint}"
    else:
        model, encoding, config, _ = load_exported(model_path)
        source = f"torch model rebuilt from the weights of {model_path.name}"
    model.eval()
    log(f"model {model_path} ({vf.provider}); {source}: {config.architecture}, hidden {config.hidden}, "
        f"layers {config.layers}, {config.aggregation}; {sum(p.numel() for p in model.parameters()):,} parameters")
    if encoding.config() != vf.encoding.config():
        log("WARNING: checkpoint and ONNX encodings differ")

    problems = sorted((p for p in BLOCKS.glob("probBLOCKS-*-*.pddl") if 10 <= int(p.stem.split("-")[1]) <= 17),
                      key=lambda p: tuple(int(x) for x in p.stem.split("-")[1:]))
    t = time.perf_counter()
    collected = collect_states(problems, args.states, args.walk_length, args.seed)
    for name, task, _, states in collected:
        vf.check_signature(task.signature, name)
    total = sum(len(s) for *_, s in collected)
    log(f"collected {total} states from {len(collected)} problems ({', '.join(f'{n}:{len(s)}' for n, _, _, s in collected)}) "
        f"in {time.perf_counter() - t:.1f} s")
    sides = Sides(vf, model, encoding)
    graph = graph_summary(model_path, vf.encoding, collected)
    log(graph)

    out = {}
    if "throughput" not in args.skip:
        out["full"], out["model"], out["diffs"] = section_throughput(args, collected, sides, log)
    if "check" not in args.skip:
        out["check"] = section_check_all(collected, sides, log)
    if "options" not in args.skip:
        out["options"], out["options_note"] = section_ort_options(args, collected, sides, model_path, log)
    if "profile" not in args.skip:
        out["profile"] = section_profile(args, collected, sides, model_path, log)
    if "gbfs" not in args.skip:
        out["gbfs"] = section_gbfs(args, vf, log)
    if "policy" not in args.skip:
        out["policy"] = section_policy(args, vf, log)

    ended = datetime.datetime.now(datetime.timezone.utc)
    log(f"end {ended:%Y-%m-%d %H:%M:%S} UTC, load average {load_average()} (start {load_start}), {(ended - started).total_seconds():.0f} s")

    md = [f"Command: `OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} python -m benchmarks.runtime_speed "
          + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])) + "`", "",
          (f"Date: {started:%Y-%m-%d %H:%M}–{ended:%H:%M} UTC; load average (1/5/15 min) {load_start} at start, {load_average()} at end; "
           f"{os.cpu_count()} cpus; torch {torch.__version__}, onnxruntime {onnxruntime.__version__}."), ""]
    md += [graph + ".", ""]
    if "full" in out:
        md += ["Evaluated states per second, including `encoding.encode`:", "", out["full"], "",
               "Model only (pre-encoded inputs):", "", out["model"], ""]
    if "check" in out:
        md += [f"Value check, all {out['check'][1]} states at batch 64: max |onnxruntime − torch| = {out['check'][0]:.1e}.", ""]
    if "options" in out:
        md += [f"onnxruntime session options, batch 64 ({out['options_note']}):", "", out["options"], ""]
    if "profile" in out:
        md += [("onnxruntime profiler (`enable_profiling`; one intra-op thread, default optimisation; the profiler slows "
                "runs down, so only the shares are meaningful):"), "", out["profile"], ""]
    if "gbfs" in out:
        md += [f"GBFS with the onnxruntime value function (time limit {args.gbfs_seconds:g} s):", "", out["gbfs"], ""]
    if "policy" in out:
        md += [(f"Policy step breakdown ({args.policy_steps} steps at most; `policy_rollout` as the engine runs it, "
                "the shares from cProfile's record of a second run):"), "", out["policy"], ""]
    md += ["Log:", "", "```", *lines, "```", ""]
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("\n".join(md))
        print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""On a GPU machine: the CUDA provider's node placement and speed, and training on the GPU against the CPU.

One script for one short lease of a GPU machine (``device`` in the tool library: a bare machine
with torch and no package registry, so the wheels travel with the tree). Every section writes its
figures to ``OUT/gpu_check.json`` as it finishes, so a run cut short keeps what it measured; a
section that fails is recorded with its error and the next one runs. On a machine without CUDA
the CUDA rows are skipped with the reason (the CPU rows are this machine's baseline).

Sections:

``models``
    ``gnnplan models --check --device cuda``: every shipped model loads on the CUDA provider.
``placement``
    For every shipped ONNX file, a session on ``[CUDA, CPU]`` with onnxruntime's verbose log: the
    nodes it placed on each provider (onnxruntime keeps shape arithmetic on the CPU on purpose;
    anything else there is a node the CUDA provider lacks).
``inference``
    Value models on states of IPC 2023 medium-tier size (``--problem`` files: random walks from
    their initial states), at batches of 1, 64, 1,024 and 8,192 states: states per second of the
    session call alone (``model``) and with the encoding (``full``), on CUDA, on the CPU provider
    with one thread (the package's default) and with all cores; a node profile of one CUDA call
    (which provider ran each node, from onnxruntime's profiler). A cell whose CPU call would take
    longer than ``--cell-seconds`` by the previous batch's rate is left out and says so.
``policy``
    Time per policy step on those problems: the action policy (one call per step) and the value
    policy (one call over the successors), CUDA against the CPU provider, ``--policy-steps`` steps.
``train``
    ``gnnplan train`` on the same labelled files and configuration on each ``--train-device``
    (``cuda``, ``cuda --amp``, ``cpu``): states per second and the validation errors, read from
    each checkpoint's record.

Run (a GPU machine; here the CPU baseline of the same sections)::

    OMP_NUM_THREADS=1 python -m benchmarks.gpu_check --out /tmp/gpu --problem P.pddl:MODEL ... \
        --train-data labels/*.npz --validation-data held.npz
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path

BATCHES = (1, 64, 1024, 8192)


class Report:
    """The figures so far, written after every section."""

    def __init__(self, out: Path):
        self.path = out / "gpu_check.json"
        self.data = json.loads(self.path.read_text()) if self.path.is_file() else {}

    def put(self, section: str, value) -> None:
        self.data[section] = value
        self.path.write_text(json.dumps(self.data, indent=1))


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def cuda_available() -> tuple[bool, str]:
    import onnxruntime as ort

    providers = ort.get_available_providers()
    return "CUDAExecutionProvider" in providers, ", ".join(providers)


# -- sections --------------------------------------------------------------------------------------

def section_environment(args) -> dict:
    import onnxruntime as ort

    info = {"machine": platform.machine(), "cpus": os.cpu_count(), "python": sys.version.split()[0],
            "onnxruntime": ort.__version__, "providers": ort.get_available_providers()}
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.cuda.is_available()
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            info["bf16"] = torch.cuda.is_bf16_supported()
    except ImportError:
        info["torch"] = None
    try:
        info["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                             "--format=csv,noheader"], capture_output=True, text=True,
                                            timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        info["nvidia_smi"] = None
    return info


def section_models(args) -> dict:
    done = subprocess.run([sys.executable, "-m", "up_gnnplan.cli", "models", "--check", "--device", "cuda"],
                          capture_output=True, text=True, timeout=300)
    return {"exit_code": done.returncode, "stdout": done.stdout[-6000:], "stderr": done.stderr[-3000:]}


_PLACEMENT_CHILD = r"""
import sys, onnxruntime as ort
ort.set_default_logger_severity(0)
for path in sys.argv[1:]:
    print("=== " + path, file=sys.stderr, flush=True)
    options = ort.SessionOptions()
    options.log_severity_level = 0
    try:
        session = ort.InferenceSession(path, sess_options=options, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        print("=== providers " + ",".join(session.get_providers()), file=sys.stderr, flush=True)
    except Exception as error:
        print("=== failed " + str(error).replace("\n", " ")[:300], file=sys.stderr, flush=True)
"""
_PLACED = re.compile(r"Node\(s\) placed on \[(\w+)\]\. Number of nodes: (\d+)")
_ALL_PLACED = re.compile(r"All nodes placed on \[(\w+)\]\. Number of nodes: (\d+)")
_NODE_LINE = re.compile(r"^\s+(\w+) \(([^)]*)\)\s*$")


def section_placement(args) -> dict:
    """Which provider onnxruntime placed each node of every shipped model on (its verbose log)."""
    from up_gnnplan.models_zoo import zoo_dir

    files = sorted(str(p) for p in zoo_dir().glob("*.onnx"))
    done = subprocess.run([sys.executable, "-c", _PLACEMENT_CHILD, *files], capture_output=True, text=True, timeout=600)
    models, current, provider = {}, None, None
    for line in done.stderr.splitlines():
        if line.startswith("=== providers "):
            models[current]["session_providers"] = line[len("=== providers "):].split(",")
        elif line.startswith("=== failed "):
            models[current]["failed"] = line[len("=== failed "):]
        elif line.startswith("=== "):
            current = Path(line[4:]).name
            models[current] = {"placed": {}, "cpu_ops": {}}
        elif current is not None:
            found = _ALL_PLACED.search(line) or _PLACED.search(line)
            if found:
                provider = found.group(1)
                models[current]["placed"][provider] = int(found.group(2))
                continue
            if provider == "CPUExecutionProvider" and line.startswith((" ", "\t")):
                node = _NODE_LINE.match(line)
                if node:
                    ops = models[current]["cpu_ops"]
                    ops[node.group(1)] = ops.get(node.group(1), 0) + 1
                lines = models[current].setdefault("cpu_lines", [])
                if len(lines) < 40:
                    lines.append(line.strip()[:200])
            else:
                provider = None
    read = sum(1 for m in models.values() if m["placed"])
    return {"files": len(files), "with_placement_log": read, "exit_code": done.returncode, "models": models,
            "log_tail": "" if read else done.stderr[-4000:]}


def _walk_states(problem: Path, count: int, seed: int):
    """Return (task, [StateInput]) with ``count`` states from random walks of ``problem`` (repeats allowed)."""
    import random

    from up_gnnplan.problems import load_task
    from up_gnnplan.search.common import Inputs
    from up_gnnplan.states import successors

    task = load_task(problem.parent / "domain.pddl", problem)
    rng, states, seen = random.Random(seed), [], set()
    state, tries = task.initial_state(), 0
    while len(states) < count and tries < 20 * count:
        tries += 1
        options = successors(state)
        if not options or rng.random() < 0.02:
            state = task.initial_state()
            continue
        state = rng.choice(options)[1]
        if state.get_index() not in seen:
            seen.add(state.get_index())
            states.append(state)
    return task, Inputs(task)(states)


def _timed(fn, least_seconds: float, most_runs: int = 50) -> tuple[float, int]:
    """Return (seconds per call, calls) of ``fn`` after one warm-up call, timed for at least ``least_seconds``."""
    fn()
    runs, began = 0, time.perf_counter()
    while runs < most_runs and (runs == 0 or time.perf_counter() - began < least_seconds):
        fn()
        runs += 1
    return (time.perf_counter() - began) / runs, runs


def _sessions(path: Path, cuda: bool, all_cores: bool = True):
    """The sessions compared: the CPU provider on one thread (the package's default), on every core
    (``all_cores``), and CUDA where onnxruntime offers it."""
    from up_gnnplan.runtime.value_function import OnnxValueFunction

    sides = {"cpu-1": OnnxValueFunction(path, threads=1, device="cpu")}
    if all_cores:
        sides[f"cpu-{os.cpu_count()}"] = OnnxValueFunction(path, threads=os.cpu_count(), device="cpu")
    if cuda:
        sides["cuda"] = OnnxValueFunction(path, device="cuda")
    return sides


def section_inference(args) -> dict:
    """States per second of value models at each batch size, CUDA against the CPU provider."""
    from up_gnnplan.models_zoo import resolve

    cuda, _ = cuda_available()
    rows = []
    for spec in args.problem:
        problem, model = spec.split(":")
        path = resolve(model)
        task, states = _walk_states(Path(problem), min(max(BATCHES), args.states), args.seed)
        say(f"inference: {Path(problem).name} ({task.num_objects} objects), {len(states)} states, {path.name}")
        for side, vf in _sessions(path, cuda).items():
            if not vf.has_value:
                continue
            last_rate = None
            for batch in BATCHES:
                inputs = [states[i % len(states)] for i in range(batch)]
                if last_rate and side.startswith("cpu") and batch / last_rate > args.cell_seconds:
                    rows.append({"problem": Path(problem).name, "objects": task.num_objects, "model": path.name,
                                 "side": side, "batch": batch, "skipped": f"about {batch / last_rate:.0f} s a call"})
                    continue
                feed = vf.prepare(inputs)
                model_s, calls = _timed(lambda: vf.run(feed), args.cell_seconds / 4)
                full_s, _ = _timed(lambda: vf(inputs), args.cell_seconds / 4, most_runs=max(1, calls // 2))
                last_rate = batch / model_s
                rows.append({"problem": Path(problem).name, "objects": task.num_objects, "model": path.name,
                             "side": side, "provider": vf.provider, "batch": batch, "calls": calls,
                             "model_states_per_s": round(batch / model_s, 1), "full_states_per_s": round(batch / full_s, 1),
                             "model_ms_per_call": round(1000 * model_s, 3)})
                say(f"  {side:7s} batch {batch:5d}: {batch / model_s:10.1f} states/s (model), "
                    f"{batch / full_s:10.1f} (full)")
        if cuda:
            rows.append({"problem": Path(problem).name, "model": path.name, "profile": _profile(path, states[:64])})
    return {"rows": rows}


def _profile(path: Path, states) -> dict:
    """Count the nodes each provider ran in one CUDA call on ``states`` (onnxruntime's profiler)."""
    import onnxruntime as ort

    from up_gnnplan.runtime.value_function import OnnxValueFunction

    vf = OnnxValueFunction(path, device="cuda")
    feed = vf.prepare(states)
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), sess_options=options,
                                   providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    session.run(None, feed)
    session.run(None, feed)
    trace = Path(session.end_profiling())
    counts, cpu_ops = {}, {}
    for event in json.loads(trace.read_text()):
        if event.get("cat") != "Node" or not event.get("name", "").endswith("_kernel_time"):
            continue
        provider = event.get("args", {}).get("provider", "?")
        counts[provider] = counts.get(provider, 0) + 1
        if provider != "CUDAExecutionProvider":
            op = event["args"].get("op_name", "?")
            cpu_ops[op] = cpu_ops.get(op, 0) + 1
    trace.unlink()
    return {"node_runs_by_provider": counts, "non_cuda_ops": cpu_ops}


def section_policy(args) -> dict:
    """Milliseconds per step of the action policy and the value policy, CUDA against the CPU provider."""
    from up_gnnplan.models_zoo import resolve
    from up_gnnplan.problems import load_task
    from up_gnnplan.search.action_policy import action_policy_rollout
    from up_gnnplan.search.policy import policy_rollout

    cuda, _ = cuda_available()
    rows = []
    for spec in args.problem:
        problem, model = spec.split(":")
        path = resolve(model)
        task = load_task(Path(problem).parent / "domain.pddl", problem)
        for side, vf in _sessions(path, cuda, all_cores=False).items():
            searches = ([("action-policy", action_policy_rollout, vf.scorer)] if vf.has_actions else []) + (
                [("policy", policy_rollout, vf)] if vf.has_value else [])
            for kind, run, guide in searches:
                began = time.perf_counter()
                result = run(task, guide, max_steps=args.policy_steps, time_limit=args.cell_seconds)
                seconds = time.perf_counter() - began
                rows.append({"problem": Path(problem).name, "objects": task.num_objects, "model": path.name,
                             "side": side, "search": kind, "status": result.status.value, "steps": result.expanded,
                             "evaluated": result.evaluated, "seconds": round(seconds, 2),
                             "ms_per_step": round(1000 * seconds / result.expanded, 2) if result.expanded else None})
                say(f"policy: {Path(problem).name} {kind:13s} {side:7s} {result.expanded} steps, "
                    f"{1000 * seconds / max(result.expanded, 1):.1f} ms a step ({result.status.value})")
    return {"rows": rows}


def section_train(args) -> dict:
    """``gnnplan train`` on the same data and configuration on each device: states per second, errors."""
    import torch

    from up_gnnplan.training.checkpoint import load_checkpoint

    rows = []
    for variant in args.train_device:
        device, *flags = variant.split("+")
        if device.startswith("cuda") and not torch.cuda.is_available():
            rows.append({"variant": variant, "skipped": "torch sees no CUDA device"})
            continue
        for batch in args.train_batch:
            out = args.out / f"train-{variant}-b{batch}.pt"
            command = [sys.executable, "-m", "up_gnnplan.cli", "train", *map(str, args.train_data), "-o", str(out),
                       "--head", "logits+value", "--batch-size", str(batch), "--epoch-states", str(args.epoch_states),
                       "--max-epochs", str(args.epochs), "--patience", "1000", "--device", device, "--threads", "1",
                       "--seed", "0", "--timeout", str(args.train_timeout)]
            for held in args.validation_data:
                command += ["--validation-dataset", str(held)]
            if "amp" in flags:
                command.append("--amp")
            began = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.train_timeout + 120)
            seconds = time.perf_counter() - began
            row = {"variant": variant, "batch": batch, "exit_code": done.returncode, "command_seconds": round(seconds, 1)}
            if done.returncode == 0:
                record = load_checkpoint(out)[3]["record"]
                row.update({key: record.get(key) for key in ("train_states_per_second", "states_per_second_overall",
                                                              "epochs", "steps", "seconds", "best_epoch", "machine")})
                row["validation"] = record.get("validation")
                row["train_error"] = record.get("train")
            else:
                row["stderr"] = done.stderr[-1500:]
            rows.append(row)
            say(f"train {variant} batch {batch}: {row.get('train_states_per_second')} states/s "
                f"(exit {done.returncode}, {seconds:.0f} s)")
    return {"rows": rows, "data": [Path(p).name for p in args.train_data],
            "validation_data": [Path(p).name for p in args.validation_data]}


SECTIONS = {"environment": section_environment, "models": section_models, "placement": section_placement,
            "inference": section_inference, "policy": section_policy, "train": section_train}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated, in order")
    parser.add_argument("--problem", action="append", default=[], help="PROBLEM.pddl:MODEL (domain.pddl beside it)")
    parser.add_argument("--states", type=int, default=2048, help="distinct states to walk (batches cycle them)")
    parser.add_argument("--cell-seconds", type=float, default=8.0)
    parser.add_argument("--policy-steps", type=int, default=40)
    parser.add_argument("--train-data", nargs="*", type=Path, default=[])
    parser.add_argument("--validation-data", nargs="*", type=Path, default=[])
    parser.add_argument("--train-device", nargs="*", default=["cuda", "cuda+amp"])
    parser.add_argument("--train-batch", nargs="*", type=int, default=[32, 256])
    parser.add_argument("--epoch-states", type=int, default=4096)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-timeout", type=float, default=150.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    report = Report(args.out)
    for name in args.sections.split(","):
        say(f"section {name}")
        began = time.perf_counter()
        try:
            value = SECTIONS[name](args)
        except Exception as error:  # a section's failure is recorded; the next one runs
            value = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()[-3000:]}
            say(f"section {name} failed: {value['error']}")
        value["section_seconds"] = round(time.perf_counter() - began, 1)
        report.put(name, value)
    return 0


if __name__ == "__main__":
    sys.exit(main())

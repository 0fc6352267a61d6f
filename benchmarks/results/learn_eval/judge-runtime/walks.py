"""The judge's walks in torch and in onnxruntime, the same weights: python walks.py LEARN.onnx (one thread).

The file's weights are rebuilt in torch (``load_exported``), as a training run holds them; the file itself runs in
onnxruntime, as the judge now does. Each walk is the greedy action policy on one of ``gnnplan learn``'s Blocksworld
judge problems, at most 295 steps (the run's limit).
"""

import sys
import time

import torch

from up_gnnplan.exporters.reexport import load_exported
from up_gnnplan.problems.bridge import load_task
from up_gnnplan.runtime.value_function import OnnxValueFunction
from up_gnnplan.search import action_policy_rollout
from up_gnnplan.training.adapters import TorchActionScorer

torch.set_num_threads(1)
BLOCKSWORLD = "/work/shared/benchmarks/ipc2023-learning/blocksworld"
path = sys.argv[1]
model, encoding, _, _ = load_exported(path)
scorers = {"torch": TorchActionScorer(model, encoding), "onnxruntime": OnnxValueFunction(path, device="cpu").scorer}
for problem in ("p50", "p97", "p98", "p99"):
    task = load_task(f"{BLOCKSWORLD}/domain.pddl", f"{BLOCKSWORLD}/training/easy/{problem}.pddl")
    for name, scorer in scorers.items():
        began = time.perf_counter()
        result = action_policy_rollout(task, scorer, max_steps=295)
        seconds = time.perf_counter() - began
        steps = len(result.actions)
        print(f"{problem} {name}: {result.status.name} after {steps} steps in {seconds:.2f} s "
              f"({1000 * seconds / max(steps, 1):.1f} ms a step)", flush=True)

"""Spanner at the IPC 2023 medium tier's shape (more spanners than nuts): the greedy policies of
Spanner's `learn` model (action head, git 390ef9c) and of the hand-made value model, on the same
generated tasks, 60 s and 2,000 steps each.

    for p in "30 15 15" "50 25 25" "70 35 30" "88 49 40" "30 15 33"; do set -- $p
        gnnplan generate spanner -o /tmp/sp$1-$3 --count 2 --seed 7 -p spanners=$1 -p nuts=$2 -p locations=$3
    done
    git show 390ef9c:up_gnnplan/models_zoo/spanner.onnx > /tmp/spanner-learn.onnx
    OMP_NUM_THREADS=1 python benchmarks/results/learn_eval/held_out/spanner/larger/policies.py \
        /tmp/spanner-learn.onnx up_gnnplan/models_zoo/spanner.onnx /tmp/sp30-15 /tmp/sp50-25 /tmp/sp70-30 /tmp/sp88-40 \
        /tmp/sp30-33   # (output.txt: the first four runs, then the last, 2026-11-28 00:40-00:47 UTC)
"""

import glob
import sys
import time

from up_gnnplan.problems import Task
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.search.action_policy import action_policy_rollout
from up_gnnplan.search.policy import policy_rollout

actions, values = OnnxValueFunction(sys.argv[1]), OnnxValueFunction(sys.argv[2])
for folder in sys.argv[3:]:
    for problem in sorted(glob.glob(f"{folder}/p*.pddl")):
        task = Task.from_files(f"{folder}/domain.pddl", problem)
        began = time.perf_counter()
        a = action_policy_rollout(task, actions.scorer, max_steps=2000, time_limit=60)
        middle = time.perf_counter()
        v = policy_rollout(task, values, max_steps=2000, time_limit=60)
        print(problem.split("/")[-1], "learn (action policy):", a.status.value, len(a.actions), f"{middle - began:.1f}s",
              "| hand-made (value policy):", v.status.value, len(v.actions), f"{time.perf_counter() - middle:.1f}s",
              flush=True)

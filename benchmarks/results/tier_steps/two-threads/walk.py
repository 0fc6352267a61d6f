"""The action policy's greedy walk on one task, ms a step; THREADS: the session's intra-op threads (default 1)."""
import os
import sys
import time
import warnings
from pathlib import Path

from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search import action_policy_rollout

warnings.simplefilter("ignore")
domain, problem, steps, model = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
task = Task.from_files(domain, problem)
model = load_value_function(Path(model), threads=int(os.environ.get("THREADS", "1")))
start = time.perf_counter()
walk = action_policy_rollout(task, model.scorer, max_steps=steps, time_limit=300)
elapsed = time.perf_counter() - start
print(len(walk.actions), walk.status, walk.evaluated, f"{1000 * elapsed / max(1, len(walk.actions)):.2f} ms/step")

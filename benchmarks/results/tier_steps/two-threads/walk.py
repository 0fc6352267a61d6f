import sys, time, warnings
warnings.simplefilter('ignore')
from pathlib import Path
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
import os, up_gnnplan.search.action_policy as ap; ap.SCORE_CHUNK = int(os.environ.get("CHUNK", ap.SCORE_CHUNK))
from up_gnnplan.search import action_policy_rollout
domain, problem, steps, model = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
task = Task.from_files(domain, problem)
model = load_value_function(Path(model), threads=int(os.environ.get("THREADS","1")))
t=time.perf_counter(); w = action_policy_rollout(task, model.scorer, max_steps=steps, time_limit=300)
el=time.perf_counter()-t
print(len(w.actions), w.status, w.evaluated, f"{1000*el/max(1,len(w.actions)):.2f} ms/step", w.note if hasattr(w,'note') else '')
import resource; print('maxrss MB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024)

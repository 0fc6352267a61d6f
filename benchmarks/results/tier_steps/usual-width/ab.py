"""One call on a task's initial state, files interleaved: python ab2.py DOMAIN_DIR FILE... (env REPS, INNER)"""
import sys, glob, os, time, numpy as np
from pathlib import Path
from up_gnnplan.problems import Task
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows
from up_gnnplan.encodings.actions import ActionInput, encode_actions
d, *models = sys.argv[1:]
prob = sorted(glob.glob(d + '/p-*.pddl'))[0]
task = Task.from_files(d + '/domain.pddl', prob)
vfs = [OnnxValueFunction(m, device='cpu') for m in models]
state = task.initial_state()
si = Inputs(task)([state])[0]
feed = vfs[0].prepare([si])
if vfs[0].has_actions:
    schema, args = ActionRows(task)(state.generate_applicable_actions())
    feed.update(encode_actions(vfs[0].actions, [ActionInput(schema, args)], [si.num_objects])[0])
outs = [vf.session.run(None, feed) for vf in vfs]
diff = max(float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) for o in outs for a, b in zip(o, outs[0]))
reps, inner = int(os.environ.get("REPS", 7)), int(os.environ.get("INNER", 3))
times = {m: [] for m in models}
for rep in range(reps):
    for m, vf in (zip(models, vfs) if rep % 2 == 0 else reversed(list(zip(models, vfs)))):
        a = time.perf_counter()
        for _ in range(inner): vf.session.run(None, feed)
        times[m].append((time.perf_counter() - a) / inner * 1000)
base = np.median(times[models[0]])
mins = {m: min(times[m]) for m in models}
print("  min: " + ", ".join(f"{mins[m]:.2f} ms ({mins[m] / mins[models[0]]:.2f}x)" for m in models))
print(f"{Path(prob).name} ({si.num_objects} objects): " + ", ".join(f"{Path(m).parent.name}/{Path(m).name} {np.median(times[m]):.2f} ms ({np.median(times[m]) / base:.2f}x)" for m in models) + f"; largest relative difference {diff:.1e}")

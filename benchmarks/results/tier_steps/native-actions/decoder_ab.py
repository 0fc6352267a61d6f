"""Two exported files of the same weights, one session call each on the task's initial state, alternating, 15 rounds:
`python decoder_ab.py DOMAIN PROBLEM BEFORE.onnx FACTORED.onnx` (the second written by `gnnplan export BEFORE.onnx -o
FACTORED.onnx` with factored_decoders.patch applied)."""
import sys, time, numpy as np, warnings
warnings.simplefilter('ignore')
from pathlib import Path
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows
from up_gnnplan.encodings.actions import ActionInput
domain, problem, a, b = sys.argv[1:5]
task = Task.from_files(domain, problem)
models = {'before': load_value_function(Path(a)), 'factored': load_value_function(Path(b))}
s = task.initial_state(); acts = s.generate_applicable_actions()
si = Inputs(task)([s])[0]; schema, args = ActionRows(task)(acts)
for n in (16, 1000, 16384, len(acts)):
    if n > len(acts): continue
    inp = ActionInput(schema[:n], args[:n])
    t = {k: [] for k in models}
    for k, m in models.items(): m.scorer(si, inp)
    d = np.abs(np.asarray(models['before'].scorer(si, inp)) - np.asarray(models['factored'].scorer(si, inp))).max()
    for _ in range(15):
        for k, m in models.items():
            b0 = time.perf_counter(); m.scorer(si, inp); t[k].append(1000 * (time.perf_counter() - b0))
    print(f"{n} actions: " + ", ".join(f"{k} min {min(v):.2f} median {np.median(v):.2f} ms" for k, v in t.items()) + f"; ratio of minima {min(t['factored'])/min(t['before']):.2f}; largest difference {d:.2e}")

import sys, time, numpy as np
from pathlib import Path
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows
from up_gnnplan.encodings.actions import ActionInput, encode_actions
domain, problem, *models = sys.argv[1:]
task = Task.from_files(domain, problem)
vfs = [load_value_function(Path(m)) for m in models]
state = task.initial_state()
si, (schema, args) = Inputs(task)([state])[0], ActionRows(task)(state.generate_applicable_actions())
feed = {**vfs[0]._state_feed([si]), **encode_actions(vfs[0].actions, [ActionInput(schema, args)], [si.num_objects])[0]}
outs = [vf.session.run(["scores"], feed)[0] for vf in vfs]
for m, o in zip(models, outs): print(m, "max |diff| vs first", float(np.abs(o - outs[0]).max()), "argmax", int(o.argmax()))
times = {m: [] for m in models}
for rep in range(int(__import__("os").environ.get("REPS", 25))):
    for m, vf in zip(models, vfs):
        a = time.perf_counter()
        for _ in range(int(__import__("os").environ.get("INNER", 10))): vf.session.run(["scores"], feed)
        times[m].append((time.perf_counter() - a) / int(__import__("os").environ.get("INNER", 10)) * 1000)
for m in models: print(f"{m}: median {np.median(times[m]):.2f} ms, min {min(times[m]):.2f}")

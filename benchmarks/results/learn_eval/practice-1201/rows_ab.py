"""ActionRows of HEAD against those of 62aa3c9 on the states of a walk: `python rows_ab.py DOMAIN PROBLEM MODEL STEPS`
(from the repository root)."""
import importlib.util, subprocess, sys, tempfile, time, warnings
from pathlib import Path
warnings.simplefilter('ignore')
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search import action_policy_rollout
from up_gnnplan.states.actions import ActionRows as New
OLD = Path(tempfile.mkdtemp()) / 'actions_old.py'
OLD.write_text(subprocess.run(['git', 'show', '62aa3c9:up_gnnplan/states/actions.py'], capture_output=True, text=True, check=True).stdout)
spec = importlib.util.spec_from_file_location('actions_old', OLD); old = importlib.util.module_from_spec(spec); sys.modules['actions_old'] = old; spec.loader.exec_module(old)
d, p, m, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
task = Task.from_files(d, p)
model = load_value_function(m)
r = action_policy_rollout(task, model.scorer, max_steps=steps)
states = [task.initial_state()]
for a in r.actions[:steps]:
    states.append(a.apply(states[-1]))
acts = [s.generate_applicable_actions() for s in states]
print(task.num_objects, 'objects', len(states), 'states', sum(map(len, acts)), 'actions')
res = {'old': [], 'new': []}
for rep in range(3):
    for name, cls in (('old', old.ActionRows), ('new', New)):
        rows = cls(task); t = time.perf_counter()
        out = [rows(a) for a in acts]
        res[name].append((time.perf_counter() - t) / len(acts) * 1000)
for k, v in res.items(): print(k, f'{min(v):.1f} ms a state (min of 3)', [round(x, 1) for x in v])

"""ActionRows of the working tree against those of git revision REV on the same states' applicable actions (a walk
of the model's policy), from the repository root:

    OMP_NUM_THREADS=1 python benchmarks/results/tier_steps/native-actions/rows_ab.py REV DOMAIN PROBLEM MODEL STEPS

Each round converts every state's actions with a fresh ActionRows (all rows new, as a walk meets them), the two
alternating, three rounds; the minimum per arm, in microseconds per action; the rows are checked to be the same."""
import importlib.util, subprocess, sys, tempfile, time, warnings
from pathlib import Path
import numpy as np
warnings.simplefilter('ignore')
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search import action_policy_rollout
from up_gnnplan.states.actions import ActionRows as Now
from up_gnnplan.states.successors import applicable_actions

rev, domain, problem, model_path, steps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
old_file = Path(tempfile.mkdtemp()) / 'actions_before.py'
old_file.write_text(subprocess.run(['git', 'show', f'{rev}:up_gnnplan/states/actions.py'], capture_output=True, text=True,
                                   check=True).stdout)
spec = importlib.util.spec_from_file_location('actions_before', old_file)
before = importlib.util.module_from_spec(spec); sys.modules['actions_before'] = before; spec.loader.exec_module(before)
task = Task.from_files(domain, problem)
walk = action_policy_rollout(task, load_value_function(model_path).scorer, max_steps=steps, time_limit=600)
states = [task.initial_state()]
for action in walk.actions:
    states.append(action.apply(states[-1]))
actions = [applicable_actions(s) for s in states]
count = sum(map(len, actions))
times = {'before': [], 'now': []}
for _ in range(3):
    for name, rows_class in (('before', before.ActionRows), ('now', Now)):
        rows, began = rows_class(task), time.perf_counter()
        out = [rows(a) for a in actions]
        times[name].append((time.perf_counter() - began) / count * 1e6)
        if name == 'before':
            first = out
        else:
            assert all(np.array_equal(x, y) for a, b in zip(first, out) for x, y in zip(a, b)), 'the rows differ'
b, n = min(times['before']), min(times['now'])
print(f"{problem.split('/')[-1]}: {len(states)} states, {count:,} actions; before {b:.2f} us an action, now {n:.2f} "
      f"({n / b:.2f}x)")

"""The action policy's walk as before (pymimir's wrapped actions, cached on each state the walk keeps) and
now (``states.successors.applicable_actions``: pymimir's native actions, wrapped where read, not cached), the same walk twice. From the repository root:

    OMP_NUM_THREADS=1 python benchmarks/results/tier_steps/native-actions/step_ab.py DOMAIN PROBLEM MODEL STEPS

Each round walks STEPS steps (or to the goal) in a process of its own per arm, the arms alternating, three
rounds (``ROUNDS``); the minimum per arm, and the peak resident memory of the arm's process."""
import json, os, subprocess, sys

ROUNDS = int(os.environ.get('ROUNDS', 3))

ONE = r"""
import json, resource, sys, time, warnings
warnings.simplefilter('ignore')
import up_gnnplan.search.action_policy as policy
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
domain, problem, model_path, steps, arm = sys.argv[1:6]
if arm == 'before':
    policy.applicable_actions = lambda state: state.generate_applicable_actions()
task = Task.from_files(domain, problem)
model = load_value_function(model_path)
began, cpu = time.perf_counter(), time.process_time()
walk = policy.action_policy_rollout(task, model.scorer, max_steps=int(steps), time_limit=600)
seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
print(json.dumps(dict(steps=len(walk.actions), status=walk.status.value, actions=walk.evaluated, seconds=seconds, cpu=cpu,
                      plan=[str(a) for a in walk.actions][-3:], rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)))
"""

domain, problem, model, steps = sys.argv[1:5]
rows = {'before': [], 'now': []}
for _ in range(ROUNDS):
    for arm in rows:
        out = subprocess.run([sys.executable, '-c', ONE, domain, problem, model, steps, arm], capture_output=True,
                             text=True, check=True).stdout
        rows[arm].append(json.loads(out.strip().splitlines()[-1]))
b, n = rows['before'], rows['now']
assert all(r['plan'] == b[0]['plan'] and r['steps'] == b[0]['steps'] for r in b + n), 'the walks differ'
ms = {arm: [1000 * r['seconds'] / max(1, r['steps']) for r in rs] for arm, rs in rows.items()}
cpu = {arm: min(1000 * r['cpu'] / max(1, r['steps']) for r in rs) for arm, rs in rows.items()}
print(f"{problem.split('/')[-1]}: {b[0]['steps']} steps ({b[0]['status']}), {b[0]['actions'] / max(1, b[0]['steps']):,.0f} "
      f"actions a step; before {min(ms['before']):.1f} ms a step, now {min(ms['now']):.1f} ms "
      f"({min(ms['now']) / min(ms['before']):.2f}x); peak memory {b[0]['rss_mb']} MB, now {n[0]['rss_mb']} MB; "
      f"CPU ms a step {', '.join(f'{arm} {value:.1f}' for arm, value in cpu.items())}; rounds {[[round(x, 1) for x in ms[arm]] for arm in rows]}")

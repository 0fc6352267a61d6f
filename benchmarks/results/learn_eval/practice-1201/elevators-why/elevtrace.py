import sys
from up_gnnplan.problems.bridge import load_task
from up_gnnplan.runtime.value_function import OnnxValueFunction
from up_gnnplan.search import action_policy_rollout
E='/work/shared/benchmarks/learning-practice/elevators'
task = load_task(E+'/domain.pddl', E+'/train/'+sys.argv[2])
ov = OnnxValueFunction(sys.argv[1], device='cpu')
r = action_policy_rollout(task, ov.scorer, max_steps=int(sys.argv[3]) if len(sys.argv)>3 else 150, backtrack=False)
print(r.status, len(r.actions))
for a in r.actions[:120]: print(a)

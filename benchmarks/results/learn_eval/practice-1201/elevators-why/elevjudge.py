import sys, warnings
warnings.simplefilter('ignore')
from up_gnnplan.problems.bridge import load_task
from up_gnnplan.runtime.value_function import OnnxValueFunction
from up_gnnplan.search import action_policy_rollout
E=sys.argv[2]
ov = OnnxValueFunction(sys.argv[1], device='cpu')
for p in sys.argv[3:]:
    task = load_task(E+'/domain.pddl', E+'/train/'+p+'.pddl')
    r = action_policy_rollout(task, ov.scorer, max_steps=300, backtrack=False)
    print(p, task.num_objects, r.status.name, len(r.actions), flush=True)

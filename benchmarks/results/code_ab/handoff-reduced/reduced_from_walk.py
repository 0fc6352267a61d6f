"""The shipped model's action policy for STEPS steps (no course), then LAMA-first on the task without the done objects of
the state reached: how many are done, and how long the smaller task takes (translation and search).

    OMP_NUM_THREADS=1 python reduced_from_walk.py DOMAIN.pddl PROBLEM.pddl MODEL.onnx STEPS
"""
import sys
from up_gnnplan.problems import Task
from up_gnnplan.search.lama import reduced_problem_text, lama_first_reduced
from up_gnnplan.limits import Limits
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.search import action_policy_rollout
domain, problem, model, steps = sys.argv[1:5]
t = Task.from_files(domain, problem)
m = OnnxValueFunction(model)
r = action_policy_rollout(t, m.scorer, max_steps=int(steps))
s = t.initial_state()
for a in r.actions: s = a.apply(s)
red = reduced_problem_text(t, s)
print(len(red[1]), "done of", t.num_objects, red[1][:10])
open('/tmp/reduced.pddl', 'w').write(red[0])
import time; b=time.time()
res = lama_first_reduced(t, Limits(60), s, red)
print(res.status, res.message, len(res.actions), time.time()-b)

"""Which successor searches of an optimal plan's states find their plans, searched from the goal's end (1 s or 5,000
expansions each, at most 60 s in all): `python successor_probe.py DOMAIN PROBLEM`; output in successor_probe.txt."""
import sys, time, warnings
warnings.simplefilter('ignore')
from up_gnnplan.problems import load_task
from up_gnnplan.learn.labels import fast_downward_plan
from up_gnnplan.datasets.optimal import _heuristic, _search, reordered_successors
from up_gnnplan.search.symmetry import SymmetricActions
from up_gnnplan.states.successors import successors
import numpy as np
d, p = sys.argv[1], sys.argv[2]
task = load_task(d, p)
t = time.perf_counter()
st, plan = fast_downward_plan(task, 60)
print(p.split('/')[-1], 'objects', task.num_objects, 'plan', st, len(plan or []), f'{time.perf_counter()-t:.1f}s')
path=[task.initial_state()]; costs=[]
for a in plan:
    n,c=a.apply(path[-1], return_cost=True); path.append(n); costs.append(c)
suffix = np.concatenate([np.cumsum(costs[::-1])[::-1], [0.0]])
seen={s.get_index() for s in path}
for succ,_,_ in reordered_successors(task,path,plan,costs,suffix): seen.add(succ.get_index())
nre = len(seen)-len(path)
steps_out=[successors(s) for s in path[:-1]]
sym=SymmetricActions(task,None)
classes=[sym.keys(s,[a for a,_,_ in out]) for s,out in zip(path[:-1],steps_out)]
# pending with plan index
pend=[]
for i,(out,keys) in enumerate(zip(steps_out,classes)):
    done={k for (_,s,_),k in zip(out,keys) if s.get_index() in seen}
    for (_,s,_),k in zip(out,keys):
        if k not in done:
            done.add(k); pend.append((i,s))
h=_heuristic(task,'hmax')
seq=[]; t=time.perf_counter(); tsucc=0
for i, s in reversed(pend):  # from the goal's end
    if s.get_index() in seen: continue
    seen.add(s.get_index())
    t0=time.perf_counter()
    r=_search(task,s,h,1.0,5000)[0]
    dt=time.perf_counter()-t0
    ok = r in ('solved','unsolvable','exhausted')
    seq.append((i, 'o' if ok else 'x', dt))
    if time.perf_counter()-t>60: break
print('reordered', nre, 'pending', len(pend), 'tried', len(seq), 'ok', sum(1 for x in seq if x[1]=='o'), f'time {time.perf_counter()-t:.1f}s', 'ok time', round(sum(x[2] for x in seq if x[1]=='o'),1))
print(''.join(x[1] for x in seq))

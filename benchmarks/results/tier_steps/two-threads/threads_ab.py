"""One session call on the walk's states with 1 and 2 intra-op threads, alternating; minimum and median of each."""
import sys, time, statistics, warnings
warnings.simplefilter('ignore')
from pathlib import Path
from up_gnnplan.problems import Task
from up_gnnplan.runtime.value_function import OnnxValueFunction
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows
from up_gnnplan.encodings.actions import ActionInput
domain, problem, m = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
task = Task.from_files(domain, problem)
models = {t: OnnxValueFunction(Path(m), threads=t) for t in (1, 2)}
s = task.initial_state(); acts = s.generate_applicable_actions()
si = Inputs(task)([s])[0]; schema, args = ActionRows(task)(acts)
inp = ActionInput(schema, args)
times = {1: [], 2: []}
for t in (1, 2):
    for _ in range(3): models[t].scorer(si, inp)
for r in range(rounds):
    for t in (1, 2):
        for _ in range(10):
            a = time.perf_counter(); models[t].scorer(si, inp); times[t].append(time.perf_counter() - a)
print(task.num_objects, 'objects')
for t in (1, 2):
    print(t, 'threads: min %.2f ms, median %.2f ms' % (1000 * min(times[t]), 1000 * statistics.median(times[t])))
print('2 / 1 (median): %.2f' % (statistics.median(times[2]) / statistics.median(times[1])))

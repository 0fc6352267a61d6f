"""Dynamic int8 quantization of a shipped model (onnxruntime.quantization.quantize_dynamic, int8 weights): one call
scoring the initial state's actions, the original file against the quantized one, interleaved 20 times (median).

    OMP_NUM_THREADS=1 python quantize.py MODEL.onnx DOMAIN.pddl PROBLEM.pddl
"""
import time, sys, numpy as np
from onnxruntime.quantization import quantize_dynamic, QuantType
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search import Inputs
src = sys.argv[1]; d, p = sys.argv[2:4]
quantize_dynamic(src, "/tmp/quantized.onnx", weight_type=QuantType.QInt8)
task = Task.from_files(d, p)
m0 = load_value_function(src, threads=1); m1 = load_value_function("/tmp/quantized.onnx", threads=1)
s = task.initial_state(); acts = list(s.generate_applicable_actions())
inp = Inputs(task)
from up_gnnplan.search.action_policy import _score, ActionRows
from up_gnnplan.limits import Limits
rows = ActionRows(task)
def t(m):
    b = time.perf_counter(); r = _score(m.scorer, inp, rows, s, acts, Limits(None), "x"); return time.perf_counter() - b, r
for m in (m0, m1): t(m)
a, b = [], []
for i in range(20):
    x, r0 = t(m0); a.append(x); y, r1 = t(m1); b.append(y)
print("orig ms", 1000*np.median(a), "quant ms", 1000*np.median(b), "argmax same", int(np.argmax(r0)) == int(np.argmax(r1)), "corr", np.corrcoef(r0, r1)[0,1])

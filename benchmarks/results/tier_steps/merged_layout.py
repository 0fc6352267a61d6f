"""One onnxruntime call of a shipped model exported in the packed layout (one batched product per arity and layer)
and in the merged one (every relation padded to the largest arity: one product a layer), interleaved, five rounds.

    git apply benchmarks/results/tier_steps/merged_layout.patch
    gnnplan generate blocksworld -o /tmp/prof/bw200 --count 1 -p blocks=200   # and blocks=50 into /tmp/prof/bw50
    OMP_NUM_THREADS=1 python benchmarks/results/tier_steps/merged_layout.py up_gnnplan/models_zoo/blocksworld.onnx \
        /tmp/prof/bw200/domain.pddl /tmp/prof/bw200/p-b200-0-0.pddl /tmp/prof/bw50/p-b50-0-0.pddl
"""
import sys, time, copy
import numpy as np
from up_gnnplan.exporters.reexport import load_exported
from up_gnnplan.exporters.onnx_export import export_onnx
from up_gnnplan.encodings.actions import ActionInput
from up_gnnplan.problems import Task
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows
src, dom = sys.argv[1], sys.argv[2]
model, encoding, config, data = load_exported(src)
files = {}
for layout in ("packed", "merged"):
    m = copy.deepcopy(model)
    m.export_layout = layout
    if hasattr(m, "gnn"): m.gnn.export_layout = layout
    path = f"/tmp/prof/{layout}.onnx"
    export_onnx(m, encoding, path, domain=data["domain"], train_config=data["config"], training_record=data["record"])
    files[layout] = OnnxValueFunction(path)
    import onnx; print(layout, len(onnx.load(path).graph.node), "nodes")
for problem in sys.argv[3:]:
    task = Task.from_files(dom, problem); state = task.initial_state()
    actions = state.generate_applicable_actions()
    si = Inputs(task)([state])[0]; schema, args = ActionRows(task)(actions)
    outs = {n: f.scorer(si, ActionInput(schema, args)) for n, f in files.items()}
    a, b = outs["packed"], outs["merged"]
    print("max diff", max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,))))
    times = {n: [] for n in files}
    for rnd in range(5):
        for n, f in files.items():
            calls, start = 0, time.perf_counter()
            while time.perf_counter() - start < 0.6:
                f.scorer(si, ActionInput(schema, args)); calls += 1
            times[n].append(1000 * (time.perf_counter() - start) / calls)
    print(problem.split('/')[-1], si.num_objects, "objects:", {n: round(min(t), 2) for n, t in times.items()}, flush=True)

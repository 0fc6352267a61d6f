"""One onnxruntime call of a shipped model scoring a state's actions, under session options (five rounds,
interleaved; the fastest round of each).

    gnnplan generate blocksworld -o /tmp/prof/bw200 --count 1 -p blocks=200
    OMP_NUM_THREADS=1 python benchmarks/results/tier_steps/session_options.py up_gnnplan/models_zoo/blocksworld.onnx \
        /tmp/prof/bw200/domain.pddl /tmp/prof/bw200/p-b200-0-0.pddl
"""
import sys, time
import onnxruntime as ort
from up_gnnplan.encodings.actions import ActionInput
from up_gnnplan.problems import Task
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows

def session(path, **config):
    o = ort.SessionOptions(); o.intra_op_num_threads = 1; o.inter_op_num_threads = 1
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL; o.log_severity_level = 3
    for k, v in config.items():
        if k == "level": o.graph_optimization_level = v
        elif k == "mem_pattern": o.enable_mem_pattern = v
        elif k == "arena": o.enable_cpu_mem_arena = v
        else: o.add_session_config_entry(k, v)
    return ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])

ARMS = {
    "default": {},
    "denormal-as-zero": {"session.set_denormal_as_zero": "1"},
    "no-mem-pattern": {"mem_pattern": False},
    "extended": {"level": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED},
    "basic": {"level": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC},
}
model = OnnxValueFunction(sys.argv[1])
sessions = {name: session(sys.argv[1], **cfg) for name, cfg in ARMS.items()}
for problem in sys.argv[3:]:
    task = Task.from_files(sys.argv[2], problem)
    state = task.initial_state()
    actions = state.generate_applicable_actions()
    state_input = Inputs(task)([state])[0]
    schema, args = ActionRows(task)(actions)
    times = {name: [] for name in ARMS}
    for rnd in range(5):  # interleaved rounds
        for name, s in sessions.items():
            model.session = s
            model.scorer(state_input, ActionInput(schema, args))
            calls, start = 0, time.perf_counter()
            while time.perf_counter() - start < 0.6:
                model.scorer(state_input, ActionInput(schema, args)); calls += 1
            times[name].append(1000 * (time.perf_counter() - start) / calls)
    base = min(times["default"])
    print(f"{problem.split('/')[-1]}: {state_input.num_objects} objects, {len(actions)} actions: " +
          ", ".join(f"{n} {min(t):.2f} ms ({min(t)/base:.2f}x)" for n, t in times.items()), flush=True)

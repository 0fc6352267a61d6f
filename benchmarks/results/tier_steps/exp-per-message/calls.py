"""One onnxruntime call (value and action scores, or the value alone) on a task's initial state, for several
exports of the same weights: three rounds, interleaved, the fastest round of each, ratios to the first file.

    OMP_NUM_THREADS=1 python calls.py DOMAIN.pddl PROBLEM.pddl before=OLD.onnx now=NEW.onnx other=OTHER.onnx
"""
import sys
import time

from up_gnnplan.encodings.actions import ActionInput
from up_gnnplan.problems import Task
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows

domain, problem, *arms = sys.argv[1:]
task = Task.from_files(domain, problem)
state = task.initial_state()
actions = state.generate_applicable_actions()
state_input = Inputs(task)([state])[0]
models = {arm.split("=")[0]: OnnxValueFunction(arm.split("=", 1)[1]) for arm in arms}


def call(model):
    if model.has_actions:
        action_input = ActionInput(*ActionRows(task)(actions))
        if model.has_value:
            return lambda: model.value_and_scores(state_input, action_input)
        return lambda: model.scorer(state_input, action_input)
    return lambda: model([state_input])


calls = {name: call(model) for name, model in models.items()}
times = {name: [] for name in calls}
for _ in range(3):
    for name, run in calls.items():
        run()
        n, start = 0, time.perf_counter()
        while n < 2 or time.perf_counter() - start < 0.6:
            run()
            n += 1
        times[name].append(1000 * (time.perf_counter() - start) / n)
best = {name: min(t) for name, t in times.items()}
first = next(iter(best.values()))
print(f"{problem.split('/')[-1]}: {state_input.num_objects} objects: "
      + ", ".join(f"{name} {ms:.1f} ms ({ms / first:.2f}x)" for name, ms in best.items()), flush=True)

"""One onnxruntime call of the shipped Blocksworld model scoring the initial state's actions, by size.

    for n in 5 50 100 200 488; do gnnplan generate blocksworld -o /tmp/bw$n --count 1 -p blocks=$n; done
    OMP_NUM_THREADS=1 python benchmarks/results/tier_steps/session_sizes.py up_gnnplan/models_zoo/blocksworld.onnx \
        /tmp/bw5 /tmp/bw50 /tmp/bw100 /tmp/bw200 /tmp/bw488
"""

import glob
import sys
import time

from up_gnnplan.encodings.actions import ActionInput
from up_gnnplan.problems import Task
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows

model = OnnxValueFunction(sys.argv[1])
for folder in sys.argv[2:]:
    task = Task.from_files(f"{folder}/domain.pddl", sorted(glob.glob(f"{folder}/p*.pddl"))[0])
    state = task.initial_state()
    actions = state.generate_applicable_actions()
    state_input = Inputs(task)([state])[0]
    schema, args = ActionRows(task)(actions)
    model.scorer(state_input, ActionInput(schema, args))
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < 2:
        model.scorer(state_input, ActionInput(schema, args))
        calls += 1
    print(f"{folder}: {state_input.num_objects} objects, {len(actions)} actions: "
          f"{1000 * (time.perf_counter() - start) / calls:.2f} ms a call")

"""The course's own time per step (mode auto's checks: hopeless, circling, observe) on the states of a walk.

    git worktree add /tmp/wt-before c3f871c; git worktree add /tmp/wt-after 7579329   # before / after Course.holding
    gnnplan generate blocksworld -o /tmp/bw488 --count 1 -p blocks=488
    for f in /tmp/bw488 /tmp/gnnplan-tiers/hard-lower/ferry /tmp/gnnplan-tiers/hard-lower/transport; do
      for arm in before after; do PYTHONPATH=/tmp/wt-$arm OMP_NUM_THREADS=1 python course_checks.py $f 200; done; done

The first 200 steps of the shipped model's action policy, then the course of mode auto (keep_goals, no step limit)
judging each of their states in turn, best of five passes.
"""
import glob, sys, time
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.models_zoo import find_model
from up_gnnplan.search import action_policy_rollout
from up_gnnplan.search.course import Course, step_limit
from up_gnnplan.limits import Limits
folder, steps = sys.argv[1], int(sys.argv[2])
task = Task.from_files(f"{folder}/domain.pddl", sorted(glob.glob(f"{folder}/p*.pddl"))[0])
model = load_value_function(find_model(task.signature, None))
walk = action_policy_rollout(task, model.scorer, max_steps=steps, time_limit=600)
states = [task.initial_state()]
for action in walk.actions:
    states.append(action.apply(states[-1]))
best = None
for _ in range(5):
    whole = Limits(1000)
    course = Course(task, whole.share(0.5), whole, keep=True)
    t = time.perf_counter()
    for step, state in enumerate(states):
        step_limit(course, step, state, 10 ** 6)
    took = (time.perf_counter() - t) / len(states) * 1000
    best = took if best is None else min(best, took)
print(f"{folder}: {len(states)} states, {course.total} goal literals: the course {best:.3f} ms a step (best of 5)")

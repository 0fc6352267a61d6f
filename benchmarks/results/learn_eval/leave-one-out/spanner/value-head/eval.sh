# Spanner: learn --head value's model against the shipped hand-made value model, one after the other on each set
set -x
S=/work/shared/benchmarks/ipc2023-learning/spanner
M=/work/sp-value/learn.onnx
cd /tmp
OMP_NUM_THREADS=1 python - $M /work/main/up_gnnplan/models_zoo/spanner.onnx /tmp/sp30-15 /tmp/sp50-25 /tmp/sp70-30 /tmp/sp88-40 /tmp/sp30-33 <<'PY' > /work/sp-value/larger-policies.txt
import glob, sys, time
from up_gnnplan.problems import Task
from up_gnnplan.runtime import OnnxValueFunction
from up_gnnplan.search.policy import policy_rollout
learnt, shipped = OnnxValueFunction(sys.argv[1]), OnnxValueFunction(sys.argv[2])
for folder in sys.argv[3:]:
    for problem in sorted(glob.glob(f"{folder}/p*.pddl")):
        task = Task.from_files(f"{folder}/domain.pddl", problem)
        said = []
        for name, model in (("learn --head value", learnt), ("hand-made", shipped)):
            began = time.perf_counter()
            r = policy_rollout(task, model, max_steps=2000, time_limit=60)
            said.append(f"{name} (value policy): {r.status.value} {len(r.actions)} {time.perf_counter() - began:.1f}s")
        print(problem.split("/")[-1], " | ".join(said), flush=True)
PY
for arm in learn shipped; do
  model=$([ $arm = learn ] && echo "--model $M" || echo "")
  OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan $model --suite $S/testing/easy --suite /tmp/gnnplan-standing/spanner-scaled \
      --suite /tmp/gnnplan-tiers/medium/spanner --suite /tmp/gnnplan-tiers/hard-lower/spanner --timeout 60 --memory-mb 4000 \
      --jobs 1 --no-plots -o OUT/$arm
done

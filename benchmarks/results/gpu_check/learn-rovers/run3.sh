#!/bin/bash
# One lease: gnnplan learn's training of a Rovers run labelled on the 2-core machine, continued here in three
# arms at once with the same budget: cuda at batch 256 (the recipe's GPU default), cuda at batch 32, the CPU at 32.
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
began=$(date +%s)
if [ -z "${LOCAL:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
  export PYTHONPATH=/tmp/site:$PWD
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
fi
python3 -c "import torch, pymimir, unified_planning, onnxruntime; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'ort', onnxruntime.__version__)"
G=$PWD/.gpu/rovers
spent=$(python3 -c "import json; print(int(json.load(open('$G/run/run.json'))['spent']))")
T=$((spent + ${ARM_SECONDS:-465}))
echo "labelled before: $spent s; each arm: --timeout $T; setup $(( $(date +%s) - began )) s"
arm() {
  name=$1; shift
  rm -rf $G/$name.learn; cp -r $G/run $G/$name.learn
  (cd $G && timeout ${ARM_KILL:-540} python3 -m up_gnnplan.cli learn domain.pddl easy -o $OUT/rovers-$name.onnx \
     --work-dir $name.learn --timeout $T "$@" > $OUT/$name.log 2>&1; echo "$name: exit $? at $(( $(date +%s) - began )) s")
}
arm cuda256 --device ${GPU:-cuda} &
arm cuda32 --device ${GPU:-cuda} --batch-size 32 &
arm cpu32 --device cpu &
sleep 5; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv 2>/dev/null
wait
(cd $G && tar czf $OUT/runs.tgz */run.json)
echo "all done at $(( $(date +%s) - began )) s"

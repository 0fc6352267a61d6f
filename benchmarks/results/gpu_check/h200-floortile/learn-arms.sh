#!/bin/bash
# One lease: the Floortile `gnnplan learn` run of the leave-one-out campaign (labelled on the 2-core machine, set back
# to the end of its labelling), continued here in two arms at once with the same budget: the recipe's GPU defaults
# (--device cuda: batch 256, lr 8e-3) and its CPU defaults (--device cpu: batch 32, lr 1e-3, one thread).
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
began=$(date +%s)
if [ -z "${LOCAL:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
  export PYTHONPATH=/tmp/site:$PWD
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee $OUT/env.txt
  nproc | tee -a $OUT/env.txt
fi
python3 -c "import torch, pymimir, unified_planning, onnxruntime; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'ort', onnxruntime.__version__)" | tee -a $OUT/env.txt
G=$PWD/.gpu/floortile
spent=$(python3 -c "import json; print(int(json.load(open('$G/run/run.json'))['spent']))")
T=$((spent + ${ARM_SECONDS:-420}))
echo "labelled before: $spent s; each arm: --timeout $T; setup $(( $(date +%s) - began )) s" | tee -a $OUT/env.txt
arm() {
  name=$1; shift
  rm -rf $G/$name.learn; cp -r $G/run $G/$name.learn
  (cd $G && timeout ${ARM_KILL:-500} python3 -m up_gnnplan.cli learn domain.pddl easy -o $OUT/floortile-$name.onnx \
     --work-dir $name.learn --timeout $T "$@" > $OUT/$name.log 2>&1; echo "$name: exit $? at $(( $(date +%s) - began )) s")
}
arm cuda --device ${GPU:-cuda} &
arm cpu --device cpu &
sleep 60; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv 2>/dev/null
wait
(cd $G && tar czf $OUT/runs.tgz */run.json)
tail -n 4 $OUT/cuda.log $OUT/cpu.log
echo "all done at $(( $(date +%s) - began )) s"

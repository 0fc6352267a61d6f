#!/bin/bash
# Spanner: the learnt model (learn, 30 minutes, the action head alone) against the shipped hand-made value model, one run each, same tasks
export OMP_NUM_THREADS=1 PYTHONPATH=/work/g2
D=/work/shared/benchmarks/ipc2023-learning/spanner
SCALED=$(python -c "from benchmarks.standing import scaled_tests; d, t = scaled_tests('spanner-scaled'); print(d, *t)")
for set in easy scaled; do
  if [ $set = easy ]; then TASKS="--suite $D/testing/easy"; else TASKS="$SCALED"; fi
  gnnplan compare --engine gnnplan --model /work/le13/spanner/learn.onnx $TASKS -o /work/le14/$set-learn --timeout 60 > /work/le14/$set-learn.log 2>&1
  gnnplan compare --engine gnnplan $TASKS -o /work/le14/$set-shipped --timeout 60 > /work/le14/$set-shipped.log 2>&1
done
echo done

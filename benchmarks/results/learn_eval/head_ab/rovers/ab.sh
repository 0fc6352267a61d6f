#!/bin/bash
# A/B: does the value head beside the action head cost the action policy? Rovers' 30-minute learn labels.
export OMP_NUM_THREADS=1 PYTHONPATH=/work/g3
L=/work/le7/rovers/learn.onnx.learn/labels
D=/work/shared/benchmarks/ipc2023-learning/rovers
TRAIN="$L/p0*.npz $L/p1*.npz $L/p20.npz $L/p22.npz $L/p23.npz"
VAL="--validation-dataset $L/p24.npz --validation-dataset $L/p25.npz --validation-dataset $L/p26.npz --validation-dataset $L/p27.npz --validation-dataset $L/p28.npz"
cd /work/le8
for head in logits logits+value; do
  (python -m up_gnnplan.cli train $TRAIN $VAL -o /work/le8/$head.pt --head $head --patience 1000 --epoch-states 4096 \
     --timeout 900 > /work/le8/train-$head.log 2>&1 && python -m up_gnnplan.cli export /work/le8/$head.pt -o /work/le8/$head.onnx \
     > /work/le8/export-$head.log 2>&1 && python -m up_gnnplan.cli compare --engine gnnplan --model /work/le8/$head.onnx \
     --suite $D/testing/easy -o /work/le8/easy-$head --timeout 60 > /work/le8/easy-$head.log 2>&1) &
done
wait
echo done

#!/bin/bash
# A/B: does the value head beside the action head cost the action policy? Transport' 30-minute learn labels.
export OMP_NUM_THREADS=1 PYTHONPATH=/work/g3
L=/work/le7/transport/learn.onnx.learn/labels
D=/work/shared/benchmarks/ipc2023-learning/transport
TRAIN="$L/p0*.npz $L/p1[0-8].npz"
VAL="--validation-dataset $L/p19.npz --validation-dataset $L/p20.npz --validation-dataset $L/p21.npz --validation-dataset $L/p22.npz --validation-dataset $L/p23.npz"
cd /work/le9
for head in logits logits+value; do
  (python -m up_gnnplan.cli train $TRAIN $VAL -o /work/le9/$head.pt --head $head --patience 1000 --epoch-states 4096 \
     --timeout 900 > /work/le9/train-$head.log 2>&1 && python -m up_gnnplan.cli export /work/le9/$head.pt -o /work/le9/$head.onnx \
     > /work/le9/export-$head.log 2>&1 && python -m up_gnnplan.cli compare --engine gnnplan --model /work/le9/$head.onnx \
     --suite $D/testing/easy -o /work/le9/easy-$head --timeout 60 > /work/le9/easy-$head.log 2>&1) &
done
wait
echo done

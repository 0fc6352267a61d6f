#!/bin/bash
# Floortile: the learnt model (learn, 30 minutes, the action head alone, /work/le13) against the shipped hand-made model, one run each, same tasks, same load
export OMP_NUM_THREADS=1 PYTHONPATH=/work/g1
cd /work/g1
D=/work/shared/benchmarks/ipc2023-learning/floortile
gnnplan compare --engine gnnplan --model /work/le13/floortile/learn.onnx --suite $D/testing/easy -o /work/le15/easy-learn --timeout 60 > /work/le15/easy-learn.log 2>&1
gnnplan compare --engine gnnplan --suite $D/testing/easy -o /work/le15/easy-shipped --timeout 60 > /work/le15/easy-shipped.log 2>&1
echo done

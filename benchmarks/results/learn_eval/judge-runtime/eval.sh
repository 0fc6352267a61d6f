#!/bin/bash
# eval: the bw-jr model on Blocksworld's tier tasks and testing/easy, 60 s a task
B=/work/shared/benchmarks/ipc2023-learning/blocksworld
cd /work/bw-jr && ulimit -v 16000000
m=/work/bw-jr/learn.onnx
for t in medium hard-lower; do
  OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $m --suite /tmp/gnnplan-tiers/$t/blocksworld -o eval/jr/$t --timeout 60 --no-plots >> eval.log 2>&1
done
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $m --suite $B/testing/easy -o eval/jr/testing-easy --timeout 60 --no-plots >> eval.log 2>&1
echo done >> eval.log

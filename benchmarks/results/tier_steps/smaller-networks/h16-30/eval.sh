#!/bin/bash
# eval: the h16 (30-minute) model and the shipped one on Blocksworld's tier tasks, one after the other per tier; then testing/easy
B=/work/shared/benchmarks/ipc2023-learning/blocksworld
cd /work/bw-h16-30 && ulimit -v 16000000
for t in medium hard-lower hard; do
  for arm in h16 shipped; do
    m=/work/bw-h16-30/learn.onnx; [ $arm = shipped ] && m=/work/bw-h16-30/shipped-blocksworld.onnx
    OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $m --suite /tmp/gnnplan-tiers/$t/blocksworld -o eval/$arm/$t --timeout 60 --no-plots >> eval.log 2>&1
  done
done
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model /work/bw-h16-30/learn.onnx --suite $B/testing/easy -o eval/h16/testing-easy --timeout 60 --no-plots >> eval.log 2>&1
echo done >> eval.log

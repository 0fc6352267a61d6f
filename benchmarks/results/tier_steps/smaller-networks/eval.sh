#!/bin/bash
# eval: the h16 model and the shipped one on Blocksworld's tier tasks and testing/easy, 60 s a task, one after the other
B=/work/shared/benchmarks/ipc2023-learning/blocksworld
cd /work/bw-h16 && ulimit -v 16000000
for arm in h16 shipped; do
  m=/work/bw-h16/learn.onnx; [ $arm = shipped ] && m=/work/bw-h16/shipped-blocksworld.onnx
  for t in medium hard-lower hard; do
    OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $m --suite /tmp/gnnplan-tiers/$t/blocksworld -o eval/$arm/$t --timeout 60 --no-plots >> eval.log 2>&1
  done
done
for arm in h16 shipped; do
  m=/work/bw-h16/learn.onnx; [ $arm = shipped ] && m=/work/bw-h16/shipped-blocksworld.onnx
  OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $m --suite $B/testing/easy -o eval/$arm/testing-easy --timeout 60 --no-plots >> eval.log 2>&1
done
echo done >> eval.log

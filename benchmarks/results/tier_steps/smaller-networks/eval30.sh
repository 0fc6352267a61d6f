#!/bin/bash
# eval30.sh ARM (l15-30 or h16-30): the 30-minute model of /work/bw-ARM and the shipped one on Blocksworld's tier tasks,
# one after the other per tier; then the model on testing/easy. 60 s a task.
ARM=$1 W=/work/bw-$1
B=/work/shared/benchmarks/ipc2023-learning/blocksworld
cd $W && ulimit -v 16000000
for t in medium hard-lower hard; do
  for arm in ${ARM%-30} shipped; do
    m=$W/learn.onnx; [ $arm = shipped ] && m=$W/shipped-blocksworld.onnx
    OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $m --suite /tmp/gnnplan-tiers/$t/blocksworld -o eval/$arm/$t --timeout 60 --no-plots >> eval.log 2>&1
  done
done
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $W/learn.onnx --suite $B/testing/easy -o eval/${ARM%-30}/testing-easy --timeout 60 --no-plots >> eval.log 2>&1
echo done >> eval.log

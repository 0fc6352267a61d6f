#!/bin/bash
# Sokoban's medium and hard-lower tier tasks in the default mode, the shipped file before (old) and after (new) the usual-width tables, 60 s a task
cd /work/sok-ab && ulimit -v 16000000
for t in medium hard-lower; do
  for arm in old new; do
    m=/work/main/up_gnnplan/models_zoo/sokoban.onnx; [ $arm = old ] && m=/tmp/reexp/old-sokoban.onnx
    OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $m --suite /tmp/gnnplan-tiers/$t/sokoban -o $arm/$t --timeout 60 --no-plots >> ab.log 2>&1
  done
done
echo done >> ab.log

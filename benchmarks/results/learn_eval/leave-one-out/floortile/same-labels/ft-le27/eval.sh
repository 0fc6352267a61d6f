#!/bin/bash
# eval ARM MODEL: MODEL on Floortile testing/easy, 60 s a task, the engine's default mode (main's code)
arm=$1; model=$2; F=/work/shared/benchmarks/ipc2023-learning/floortile
mkdir -p /work/ft-le27/eval/$arm && cd /work/ft-le27/eval/$arm && ulimit -v 16000000 && OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $model --suite $F/testing/easy -o testing-easy --timeout 60 > eval.log 2>&1
echo "$arm done rc $?" >> eval.log

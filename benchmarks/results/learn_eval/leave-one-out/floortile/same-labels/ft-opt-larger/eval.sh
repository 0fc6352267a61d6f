#!/bin/bash
# eval ARM: the arm's learn.onnx on Floortile testing/easy, 60 s a task, the engine's default mode (main's code)
arm=$1; F=/work/shared/benchmarks/ipc2023-learning/floortile
cd /work/ab-ft/$arm && ulimit -v 16000000 && OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model learn.onnx --suite $F/testing/easy -o testing-easy --timeout 60 > eval.log 2>&1
echo "$arm done rc $?" >> eval.log

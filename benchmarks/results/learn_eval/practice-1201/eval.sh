#!/bin/bash
# eval.sh ARMDIR DOMAIN [ENGINES...]: the arm's learn.onnx on the practice domain's test set, 60 s a task
A=$1; D=$2; shift 2
P=/work/shared/benchmarks/learning-practice
E=""; for e in "${@:-gnnplan}"; do E="$E --engine $e"; done
cd $A && OMP_NUM_THREADS=1 gnnplan compare $E --model $PWD/learn.onnx --suite $P/$D/test -o test --timeout 60 > eval.log 2>&1

#!/bin/bash
# go.sh DOMAIN: gnnplan learn with the defaults (30 min), then the test set beside LAMA-first, 60 s a task
D=$1; P=/work/shared/benchmarks/learning-practice
mkdir -p /work/prac-b/$D && cd /work/prac-b/$D
export OMP_NUM_THREADS=1
date -u +%H:%M:%S > start
gnnplan learn $P/$D/domain.pddl $P/$D/train -o learn.onnx --timeout 1800 > learn.log 2>&1
date -u +%H:%M:%S > learned
gnnplan compare --engine gnnplan --engine fast-downward --model $PWD/learn.onnx --suite $P/$D/test -o test --timeout 60 > eval.log 2>&1
date -u +%H:%M:%S > done

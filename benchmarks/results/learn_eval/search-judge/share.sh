#!/bin/bash
F=/work/shared/benchmarks/ipc2023-learning/floortile
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model floortile --engine-param gnnplan:handoff_share=$1 --suite $F/testing/easy -o ft-share-$1 --timeout 60 > ft-share-$1.log 2>&1

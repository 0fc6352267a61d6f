#!/bin/bash
# The hand-off's search from the initial state joining the one from the walk's state (4a7bbab) against the code
# before it (9e3bbff), one after the other on each task (--jobs 1: the other core free, as a solve alone finds it),
# LAMA-first on the files beside them as a third arm; 60 s and 4 GB a task.
set -e
cd /work/main
P=/work/shared/benchmarks/learning-practice
ARMS="--arm before=/tmp/before-join --arm after=/tmp/after-join --lama --jobs 1"
export OMP_NUM_THREADS=1
python -m benchmarks.code_ab run \
    --set elevators=$P/elevators/domain.pddl:$P/elevators/test:/work/le-prac/elevators/learn.onnx \
    --set barman=$P/barman/domain.pddl:$P/barman/test:/work/le-prac/barman/learn.onnx $ARMS -o /work/ab-join
python -m benchmarks.code_ab run transport satellite rovers --tier medium $ARMS -o /work/ab-join
python -m benchmarks.code_ab table -o /work/ab-join

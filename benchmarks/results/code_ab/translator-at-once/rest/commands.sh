#!/bin/bash
# The four hard-lower domains the A/B left out, with the code of 6702dfd (head) and LAMA-first, one after the other
cd /work/main
export OMP_NUM_THREADS=1
python -m benchmarks.code_ab run childsnack floortile sokoban spanner --tier hard-lower --arm head=/tmp/wt-head --lama --jobs 1 -o /work/ab-rest
echo done

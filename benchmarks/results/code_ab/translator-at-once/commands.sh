#!/bin/bash
# A/B of 0742edd..HEAD (translator at once, free_core now) against 31fe44a, arms one after the other (--jobs 1)
cd /work/main
export OMP_NUM_THREADS=1
python -m benchmarks.code_ab run satellite transport miconic rovers blocksworld ferry --tier hard-lower --arm before=/tmp/wt-before --arm after=/tmp/wt-after --lama --jobs 1 -o /work/ab-early
python -m benchmarks.code_ab run satellite transport --tier medium --arm before=/tmp/wt-before --arm after=/tmp/wt-after --jobs 1 -o /work/ab-early
echo done
# The third arm: ed0c416 (the reserve kept for LAMA-first), on the tasks where a translation starts and hands over
cd /work/main
export OMP_NUM_THREADS=1
python -m benchmarks.code_ab run satellite transport --tier medium --arm before=/tmp/wt-before --arm after=/tmp/wt-after --arm reserve=/tmp/wt-reserve --jobs 1 -o /work/ab-early
python -m benchmarks.code_ab run satellite miconic rovers transport blocksworld ferry --tier hard-lower --arm before=/tmp/wt-before --arm after=/tmp/wt-after --arm reserve=/tmp/wt-reserve --lama --jobs 1 -o /work/ab-early
echo done

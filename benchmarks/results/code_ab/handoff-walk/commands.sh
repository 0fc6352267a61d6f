#!/bin/bash
# The hand-off from the walk's furthest state (01e5f94), on and off (engine param handoff_from_walk), the same
# checkout (/work/wt-after, a git worktree at 01e5f94); both arms at once, one core each, 60 s and 4 GB a task,
# default mode, shipped models. The medium tier ran first, through benchmarks.code_ab, the code before (9aa569c,
# /work/wt-before) against it:
#   OMP_NUM_THREADS=1 python -m benchmarks.code_ab run --tier medium --arm before=/work/wt-before \
#       --arm after=/work/wt-after -o /work/ab-walk
export OMP_NUM_THREADS=1
C=/work/wt-after
OUT=${OUT:-/work/ab-walk-sets}
mkdir -p $OUT
run_set() { # name args...
  local name=$1; shift
  for arm in off on; do
    flag=$([ $arm = off ] && echo "--engine-param gnnplan:handoff_from_walk=False")
    ( cd $C && PYTHONPATH=$C python -m up_gnnplan.cli compare --engine gnnplan $flag "$@" --timeout 60 --jobs 1 \
        --memory-mb 4000 --no-plots --resume -o $OUT/$arm/$name > $OUT/$arm-$name.log 2>&1 ) &
  done
  wait
}
for d in rovers transport satellite sokoban floortile; do
  run_set $d-scaled --suite /tmp/gnnplan-standing/$d-scaled
done
S=/work/shared/benchmarks/ipc2023-learning
for d in rovers transport; do
  run_set $d-easy --suite $S/$d/testing/easy
done
echo done > $OUT/DONE

#!/bin/bash
# The walk beside LAMA-first's translator (c461317, /work/wt-after) against the code before it (81e3e98,
# /work/wt-base), both git worktrees; both arms of a set at once, one core each, 60 s and 4 GB a task, default
# mode, shipped models. The tiers ran first, through benchmarks.code_ab:
#   OMP_NUM_THREADS=1 python -m benchmarks.code_ab run --tier hard-lower --arm before=/work/wt-base \
#       --arm after=/work/wt-after -o /work/ab-tr     # then --tier medium, then --tier between
export OMP_NUM_THREADS=1
OUT=${OUT:-/work/ab-tr-sets}
mkdir -p $OUT
run_set() { # name args...
  local name=$1; shift
  for arm in before after; do
    C=$([ $arm = before ] && echo /work/wt-base || echo /work/wt-after)
    ( cd $C && PYTHONPATH=$C python -m up_gnnplan.cli compare --engine gnnplan "$@" --timeout 60 --jobs 1 \
        --memory-mb 4000 --no-plots --resume -o $OUT/$arm/$name > $OUT/$arm-$name.log 2>&1 ) &
  done
  wait
}
for d in rovers transport satellite sokoban childsnack; do
  run_set $d-scaled --suite /tmp/gnnplan-standing/$d-scaled
done
echo done > $OUT/DONE

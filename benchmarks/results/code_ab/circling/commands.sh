#!/bin/bash
# A/B of the circling walk and the fallback's pace (fa3802f) against the code before (ffaada9):
# before=/work/ab-before, after=/work/ab11 (git worktrees); both arms at once, one core each, 60 s and 4 GB a task.
export OMP_NUM_THREADS=1
S=/work/shared/benchmarks/ipc2023-learning
OUT=${OUT:-/work/ab-circling}
mkdir -p $OUT
run_set() { # name domain problems...
  local name=$1 dom=$2; shift 2
  for arm in before:/work/ab-before after:/work/ab11; do
    a=${arm%%:*}; c=${arm#*:}
    ( cd $c && PYTHONPATH=$c python -m up_gnnplan.cli compare $dom "$@" --engine gnnplan --timeout 60 --jobs 1 --memory-mb 4000 --no-plots --resume -o $OUT/$a/$name > $OUT/$a-$name.log 2>&1 ) &
  done
  wait
}
for d in /tmp/gnnplan-tiers/medium/*/; do
  n=$(basename $d); run_set medium-$n $d/domain.pddl $d/p-*.pddl
done
for d in transport satellite rovers floortile; do
  run_set $d $S/$d/domain.pddl $S/$d/testing/easy/p*.pddl
done
echo done > $OUT/DONE

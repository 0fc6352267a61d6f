#!/bin/bash
# A/B of the one-step shortcuts before greedy action elimination (26cef79) against the code before (3604312):
# before=/work/ab-before-sc, after=/work/ab-after-sc (git worktrees); both arms at once, one core each, 60 s and 4 GB a task,
# default mode, shipped models; Navig-xy also with its learn model (/work/le-eval/navig-xy/learn.onnx).
export OMP_NUM_THREADS=1
S=/work/shared/benchmarks/ipc2023-learning
OUT=${OUT:-/work/ab-shortcuts}
mkdir -p $OUT
run_set() { # name args...
  local name=$1; shift
  for arm in before:/work/ab-before-sc after:/work/ab-after-sc; do
    a=${arm%%:*}; c=${arm#*:}
    ( cd $c && PYTHONPATH=$c python -m up_gnnplan.cli compare "$@" --timeout 60 --jobs 1 --memory-mb 4000 --no-plots --resume -o $OUT/$a/$name > $OUT/$a-$name.log 2>&1 ) &
  done
  wait
}
N=/tmp/gnnplan-zoo/gen/navig-xy/test
run_set navig-xy-learn --engine gnnplan --model /work/le-eval/navig-xy/learn.onnx $N/domain.pddl $N/p-*.pddl
run_set navig-xy --engine gnnplan $N/domain.pddl $N/p-*.pddl
for d in satellite transport rovers; do
  run_set $d --engine gnnplan --suite $S/$d/testing/easy
done
echo done > $OUT/DONE

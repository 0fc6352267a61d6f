#!/bin/bash
# the stall rule, before/after, on IPC 2023 testing/easy of the domains where it can fire, one domain after the other
S=/work/shared/benchmarks/ipc2023-learning
for d in satellite transport rovers floortile; do
  for arm in before after; do
    out=/tmp/ab-stall/$arm/easy-$d
    [ -f $out/summary.md ] && continue
    (cd /tmp/wt-$arm && PYTHONPATH=/tmp/wt-$arm OMP_NUM_THREADS=1 python -m up_gnnplan.cli compare --engine gnnplan \
      --suite $S/$d/testing/easy --timeout 60 --jobs 1 --memory-mb 4000 --no-plots -o $out > $out.log 2>&1)
    echo "$(date +%T) $arm $d done"
  done
done

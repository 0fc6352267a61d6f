#!/bin/bash
# A/B of the bounded seeding: before=/work/ab7 (f35b1e7), after=/work/ab8 (ffef08e); both arms at once, one core each.
export OMP_NUM_THREADS=1
S=/work/shared/benchmarks/ipc2023-learning
OUT=/work/ab-seed
mkdir -p $OUT
run_set() { # name domain problems...
  local name=$1 dom=$2; shift 2
  for arm in before:/work/ab7 after:/work/ab8; do
    a=${arm%%:*}; c=${arm#*:}
    ( cd $c && PYTHONPATH=$c python -m up_gnnplan.cli compare $dom "$@" --engine gnnplan --timeout 60 --jobs 1 --memory-mb 4000 --no-plots -o $OUT/$a/$name > $OUT/$a-$name.log 2>&1 ) &
  done
  wait
}
run_set medium-transport /tmp/gnnplan-tiers/medium/transport/domain.pddl /tmp/gnnplan-tiers/medium/transport/p-*.pddl
run_set medium-satellite /tmp/gnnplan-tiers/medium/satellite/domain.pddl /tmp/gnnplan-tiers/medium/satellite/p-*-1.pddl
run_set transport $S/transport/domain.pddl $(for p in 17 18 19 20 21 23 24 25 26 27 28 30; do echo $S/transport/testing/easy/p$p.pddl; done)
run_set satellite $S/satellite/domain.pddl $(for p in 17 18 19 20 21 22 24 25 26 27 28 29 30; do echo $S/satellite/testing/easy/p$p.pddl; done)
run_set rovers $S/rovers/domain.pddl $(for p in 15 16 18 19 20 21 22 23 25 26 27 30; do echo $S/rovers/testing/easy/p$p.pddl; done)
echo done > $OUT/DONE

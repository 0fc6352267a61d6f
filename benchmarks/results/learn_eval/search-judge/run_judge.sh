#!/bin/bash
# usage: run_judge.sh MODEL TAG PROBLEMS...
F=/work/shared/benchmarks/ipc2023-learning/floortile
M=$1; T=$2; shift 2
for p in "$@"; do
  s=$(date +%s.%N)
  OMP_NUM_THREADS=1 timeout 60 gnnplan solve $F/domain.pddl $F/training/easy/$p.pddl --model $M --fallback model+ff --timeout 30 > /dev/null 2> $T-$p.err
  rc=$?
  e=$(date +%s.%N)
  echo "$T $p rc=$rc $(echo "$e - $s" | bc) s: $(tail -1 $T-$p.err)"
done

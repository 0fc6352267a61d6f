# keep_goals A/B, first arm (default: keep) on the sets where walks circle; code: /work/main working tree
set -x
export PYTHONPATH=CHECKOUT; cd /tmp/wt-keep
S=/work/shared/benchmarks/ipc2023-learning
for D in transport satellite; do
  OMP_NUM_THREADS=1 python -m up_gnnplan.cli compare --engine gnnplan --suite $S/$D/testing/easy --timeout 60 --memory-mb 4000 --jobs 1 --no-plots -o /work/kg/keep/easy-$D
done
for T in medium hard-lower; do for D in transport satellite blocksworld; do
  OMP_NUM_THREADS=1 python -m up_gnnplan.cli compare --engine gnnplan --suite /tmp/gnnplan-tiers/$T/$D --timeout 60 --memory-mb 4000 --jobs 1 --no-plots -o /work/kg/keep/$T-$D
done; done
export PYTHONPATH=CHECKOUT; cd /tmp/wt-keep
for D in transport satellite; do
  OMP_NUM_THREADS=1 python -m up_gnnplan.cli compare --engine gnnplan --suite /tmp/gnnplan-standing/$D-scaled --timeout 60 --memory-mb 4000 --jobs 1 --no-plots -o /work/kg/keep/scaled-$D
done

# handoff_reduced A/B, first arm (default: on): the medium and hard-lower tiers, all ten domains
set -x
export PYTHONPATH=CHECKOUT; cd /tmp/wt-red
for T in medium hard-lower; do for D in blocksworld childsnack ferry floortile miconic rovers satellite sokoban spanner transport; do
  OMP_NUM_THREADS=1 python -m up_gnnplan.cli compare --engine gnnplan --suite /tmp/gnnplan-tiers/$T/$D --timeout 60 --memory-mb 4000 --jobs 1 --no-plots -o /work/rd/on/$T-$D
done; done

# keep_goals A/B, second arm (keep_goals=False) on the tasks whose walks circled in the first arm
set -x
export PYTHONPATH=CHECKOUT; cd /tmp/wt-keep
S=/work/shared/benchmarks/ipc2023-learning
run() { OMP_NUM_THREADS=1 python -m up_gnnplan.cli compare --engine gnnplan --engine-param gnnplan:keep_goals=False "$2" "$3" --timeout 60 --memory-mb 4000 --jobs 1 --no-plots -o /work/kg/nokeep/$1; }
run easy-transport-p24 $S/transport/domain.pddl $S/transport/testing/easy/p24.pddl
run easy-transport-p27 $S/transport/domain.pddl $S/transport/testing/easy/p27.pddl
for P in /tmp/gnnplan-tiers/medium/transport/p-*.pddl; do run medium-transport-$(basename $P .pddl) /tmp/gnnplan-tiers/medium/transport/domain.pddl $P; done
run hard-lower-blocksworld-232 /tmp/gnnplan-tiers/hard-lower/blocksworld/domain.pddl /tmp/gnnplan-tiers/hard-lower/blocksworld/p-b232-61-0.pddl
run hard-lower-transport-108 /tmp/gnnplan-tiers/hard-lower/transport/domain.pddl /tmp/gnnplan-tiers/hard-lower/transport/p-v15p108l80c2-61-0.pddl

# handoff_reduced A/B on the tasks where the reduced hand-off fired in the sweep: both arms, one after the other,
# with the final rule (fluent atoms the goal does not ask for keep an object)
set -x
export PYTHONPATH=CHECKOUT; cd /tmp/wt-red2
run() { OMP_NUM_THREADS=1 python -m up_gnnplan.cli compare --engine gnnplan $4 /tmp/gnnplan-tiers/$2/domain.pddl /tmp/gnnplan-tiers/$2/$3 --timeout 60 --memory-mb 4000 --jobs 1 --no-plots -o /work/rd/$1/$(echo $2 | tr / -)-$3; }
for task in "medium/transport p-v10p44l40c2-61-0.pddl" "hard-lower/blocksworld p-b232-61-0.pddl" "hard-lower/ferry p-c316l112-61-0.pddl" "hard-lower/transport p-v15p108l80c2-61-0.pddl" "hard-lower/transport p-v20p172l120c2-61-0.pddl"; do
  set -- $task
  run ab-on $1 $2 ""
  run ab-off $1 $2 "--engine-param gnnplan:handoff_reduced=False"
done

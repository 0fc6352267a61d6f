#!/bin/bash
# One call on each tier task's initial state: the shipped file before (OLD: the zoo at 21d785b) and after (the zoo now),
# interleaved, one thread. OLD=/tmp/reexp (old-NAME.onnx, copied from the zoo before `gnnplan export --ship`).
cd "$(dirname "$0")"
Z=../../../../up_gnnplan/models_zoo
for t in medium hard-lower hard; do
  for d in blocksworld childsnack ferry floortile miconic rovers satellite sokoban spanner transport; do
    m=$d; [ $d = rovers ] && [ $t != medium ] && continue   # a Rovers call near 1 s: the medium task only
    [ $d = sokoban ] && [ $t = hard ] && continue
    [ $d = childsnack ] && [ $t != medium ] && continue   # calls of 2-3 s (hard-lower); hard: a memout before any call
    inner=3; [ $d = rovers ] || [ $d = sokoban ] && inner=1
    echo "$t/$d: $(REPS=21 INNER=$inner OMP_NUM_THREADS=1 python ab.py /tmp/gnnplan-tiers/$t/$d $OLD/old-$m.onnx $Z/$m.onnx 2>/dev/null | tr '\n' ' ')"
  done
done

for T in medium hard-lower hard; do D=/tmp/gnnplan-tiers/$T/blocksworld
for P in $D/p-*.pddl; do for M in up_gnnplan/models_zoo/blocksworld.onnx /tmp/bw20.onnx /tmp/bw15.onnx; do
  echo "$T $(basename $P) $(basename $M): $(OMP_NUM_THREADS=1 gnnplan solve $D/domain.pddl $P --model $M --mode action-policy --timeout 100 2>&1 >/dev/null | tail -1 | cut -c1-250)"
done; done; done

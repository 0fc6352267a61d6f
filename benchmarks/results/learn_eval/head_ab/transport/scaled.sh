#!/bin/bash
export OMP_NUM_THREADS=1 PYTHONPATH=/work/g3
cd /work/g3
run() {  # DIR DOMAIN ARM
  args=$(python -c "from benchmarks.standing import scaled_tests; d, ps = scaled_tests('$2-scaled'); print(d, *ps)")
  python -m up_gnnplan.cli compare --engine gnnplan --model /work/$1/$3.onnx $args -o /work/$1/scaled-$3 --timeout 60 > /work/$1/scaled-$3.log 2>&1
}
(run le8 rovers logits; run le9 transport logits) &
(run le8 rovers logits+value; run le9 transport logits+value) &
wait
echo done

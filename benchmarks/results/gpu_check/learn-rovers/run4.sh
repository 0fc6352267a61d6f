#!/bin/bash
# Batch and learning rate on a GPU: gnnplan train on the Rovers labels, same data and wall time per arm, all at once.
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
began=$(date +%s)
if [ -z "${LOCAL:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
  export PYTHONPATH=/tmp/site:$PWD
fi
L=.gpu/rovers/run/labels
TRAIN="$L/p0*.npz $L/p1*.npz $L/p20.npz $L/p22.npz $L/p23.npz"
VAL="--validation-dataset $L/p24.npz --validation-dataset $L/p25.npz --validation-dataset $L/p26.npz --validation-dataset $L/p27.npz --validation-dataset $L/p28.npz"
arm() {
  name=$1; shift
  timeout ${ARM_KILL:-300} python3 -m up_gnnplan.cli train $TRAIN $VAL -o /tmp/$name.pt --head logits+value --patience 1000 \
    --epoch-states 4096 --timeout ${ARM_SECONDS:-270} "$@" > $OUT/$name.log 2>&1; echo "$name: exit $? at $(( $(date +%s) - began )) s"
}
arm b32-cpu --device cpu &
arm b32-cuda --device ${GPU:-cuda} &
arm b256-lr1e-3-cuda --device ${GPU:-cuda} --batch-size 256 &
arm b256-lr3e-3-cuda --device ${GPU:-cuda} --batch-size 256 --lr 0.003 &
arm b256-lr8e-3-cuda --device ${GPU:-cuda} --batch-size 256 --lr 0.008 &
wait
python3 - <<'PY'
import glob, json, os, torch
out = {}
for path in sorted(glob.glob("/tmp/*.pt")):
    r = torch.load(path, weights_only=True)["record"]
    out[os.path.basename(path)[:-3]] = {k: r.get(k) for k in ("seconds", "epochs", "steps", "best_epoch", "train", "validation",
        "curve", "train_states_per_second", "states_trained", "device", "validation_states", "train_states")}
json.dump(out, open(os.environ["OUT"] + "/records.json", "w"), indent=1)
PY
echo "all done at $(( $(date +%s) - began )) s"

#!/bin/bash
# One short call: gnnplan train at batch 256, lr 8e-3 (learn's GPU recipe), float32 against --amp (bfloat16), on the
# Floortile labels of the learn run (held-out problems as validation). Seed 0 of each alone (states/s), then seeds
# 1 and 2 of both at once (errors only).
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
began=$(date +%s)
if [ -z "${LOCAL:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
  export PYTHONPATH=/tmp/site:$PWD
fi
L=$PWD/.gpu/floortile/run/labels
TRAIN=$(ls $L/*.npz | grep -v -E '/p(31|28|36|34|25)\.npz$')
HELD=""; for p in 31 28 36 34 25; do HELD="$HELD --validation-dataset $L/p$p.npz"; done
one() {
  tag=$1; seed=$2; shift 2
  timeout ${KILL:-150} python3 -m up_gnnplan.cli train $TRAIN $HELD -o $OUT/$tag-s$seed.pt --head logits \
    --batch-size 256 --lr 8e-3 --epoch-states ${EPOCH:-16384} --max-epochs ${EPOCHS:-8} --patience 1000 \
    --device ${GPU:-cuda} --threads 1 --seed $seed --timeout ${TRAIN_S:-120} "$@" > $OUT/$tag-s$seed.log 2>&1
  echo "$tag seed $seed: exit $? at $(( $(date +%s) - began )) s"
}
one fp32 0
one amp 0 ${AMP:---amp}
for s in 1 2; do one fp32 $s & one amp $s ${AMP:---amp} & done
wait
python3 - <<'PY'
import glob, os, json
from up_gnnplan.training.checkpoint import load_checkpoint
rows = {}
for path in sorted(glob.glob(os.environ["OUT"] + "/*.pt")):
    r = load_checkpoint(path)[3]["record"]
    keep = {k: r.get(k) for k in ("train_states_per_second", "epochs", "steps", "seconds", "best_epoch",
                                  "best_validation_mae", "validation", "train")}
    rows[os.path.basename(path)] = keep
    print(os.path.basename(path), keep["train_states_per_second"], keep["best_epoch"], keep["best_validation_mae"])
json.dump(rows, open(os.environ["OUT"] + "/amp.json", "w"), indent=1, default=str)
PY
rm -f $OUT/*.pt
echo "all done at $(( $(date +%s) - began )) s"

#!/usr/bin/env bash
# The IPC 2023 Learning Track evaluation on all 30 testing/easy tasks of each of the ten domains,
# 60 s per task, with the shipped models, in two parts:
#  1. the greedy policy (gnnplan:policy) against LAMA-first on every task, into
#     benchmarks/zoo/eval/NAME (tasks already recorded there are kept: --resume);
#  2. the default mode (gnnplan:auto: the policy, then GBFS on the learned V with the time left)
#     on the tasks where the policy gave up before the time limit (dead end or step limit), into
#     benchmarks/zoo/eval/NAME-auto. Elsewhere auto's first phase is that same deterministic
#     policy run, so these are the tasks on which the GBFS fallback can change the outcome.
# Then the combined report (python -m benchmarks.zoo_report).
#   OMP_NUM_THREADS=1 nohup bash benchmarks/ipc_full_eval.sh > /tmp/ipc_full_eval.log 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
DOMAINS=${DOMAINS:-"spanner blocksworld miconic ferry sokoban childsnack floortile satellite rovers transport"}
JOBS=${JOBS:-2}
for name in $DOMAINS; do
  python -m benchmarks.build_zoo "$name" --skip-train --eval-count 30 --resume --jobs "$JOBS"
done
for name in $DOMAINS; do
  mapfile -t files < <(python - "$name" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(f"benchmarks/zoo/eval/{sys.argv[1]}/results.jsonl") if line.strip()]
gave_up = [r for r in rows if r["engine"] == "gnnplan:policy" and r["status"] == "unsolvable_incompletely"]
if gave_up:
    print(gave_up[0]["domain_file"])
    print("\n".join(r["problem_file"] for r in gave_up))
PY
)
  if [ "${#files[@]}" -gt 0 ]; then
    echo "$(date '+%F %T')  gnnplan compare ${files[*]} --engine gnnplan:auto --timeout 60 --jobs $JOBS -o benchmarks/zoo/eval/$name-auto --resume" >> benchmarks/zoo/commands.log
    gnnplan compare "${files[@]}" --engine gnnplan:auto --timeout 60 --jobs "$JOBS" \
      -o "benchmarks/zoo/eval/$name-auto" --resume
  fi
done
python -m benchmarks.zoo_report

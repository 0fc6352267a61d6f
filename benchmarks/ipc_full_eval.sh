#!/usr/bin/env bash
# The IPC 2023 Learning Track evaluation on all 30 testing/easy tasks of each of the ten domains,
# 60 s per task, with the shipped models: first the greedy policy against LAMA-first, then the
# default mode (gnnplan:auto, the policy and then GBFS with the time left) added to the same runs.
# Tasks already recorded in benchmarks/zoo/eval/NAME are kept (--resume). Then the combined report.
#   OMP_NUM_THREADS=1 nohup bash benchmarks/ipc_full_eval.sh > /tmp/ipc_full_eval.log 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
DOMAINS="spanner blocksworld miconic ferry sokoban childsnack floortile satellite rovers transport"
JOBS=${JOBS:-2}
for name in $DOMAINS; do
  python benchmarks/build_zoo.py "$name" --skip-train --eval-count 30 --resume --jobs "$JOBS"
done
if [ "${AUTO:-1}" = 1 ]; then
  for name in $DOMAINS; do
    python benchmarks/build_zoo.py "$name" --skip-train --eval-count 30 --resume --jobs "$JOBS" \
      --engine gnnplan:policy --engine gnnplan:auto --engine fast-downward
  done
fi
python benchmarks/zoo_report.py

#!/usr/bin/env bash
# Navig-xy: R-GNN[1] trained on exactly the data and budget of the shipped R-GNN model
# (python -m benchmarks.build_zoo navig-xy, see benchmarks/zoo/commands.log), then its greedy policy on
# the same 10 generated test problems, 60 s each. Not shipped (one model per domain ships).
#   OMP_NUM_THREADS=1 bash benchmarks/navig_rgnn_t.sh
set -euo pipefail
Z=/tmp/gnnplan-zoo
G=$Z/gen/navig-xy
gnnplan train $Z/navig-xy.npz $Z/navig-xy-opt-p-9x5b20-1-{0,1,2}.npz -o $Z/navig-xy-rgnn_t1.pt --arch rgnn_t --t 1 \
    --seed 0 --max-seconds 300 $(for i in 0 1 2; do echo --validation-dataset $Z/navig-xy-opt-p-10x6b20-1-$i.npz; done)
gnnplan export $Z/navig-xy-rgnn_t1.pt -o $Z/navig-xy-rgnn_t1.onnx
gnnplan compare $G/train/domain.pddl $G/test/p-*.pddl --engine gnnplan:policy --model $Z/navig-xy-rgnn_t1.onnx \
    --timeout 60 --jobs 1 -o benchmarks/zoo/eval-rgnn_t/navig-xy

#!/bin/bash
B=/work/shared/benchmarks/ipc2023-learning/blocksworld
cd /work/bw-l15-30 && ulimit -v 16000000 && OMP_NUM_THREADS=1 PYTHONPATH=/work/wt-jr gnnplan learn $B/domain.pddl $B/training/easy -o /work/bw-l15-30/learn.onnx --timeout 1800 --labels optimal --head logits+value --layers 15 --labels-from /work/bw-h16/learn.onnx.learn > learn.log 2>&1
echo "rc $?" >> learn.log

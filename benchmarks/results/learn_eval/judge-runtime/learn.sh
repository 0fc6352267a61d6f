#!/bin/bash
B=/work/shared/benchmarks/ipc2023-learning/blocksworld
cd /work/bw-jr && ulimit -v 16000000 && OMP_NUM_THREADS=1 gnnplan learn $B/domain.pddl $B/training/easy -o /work/bw-jr/learn.onnx --minutes 15 --labels optimal --head logits+value --labels-from /work/bw-h16/learn.onnx.learn > learn.log 2>&1
echo "rc $?" >> learn.log

#!/bin/bash
# usage: go.sh NAME DOMAIN_FILE TRAIN_DIR TEST_DIR [learn args...]  (run from anywhere; code of /work/ema/code)
set -u
NAME=$1 DOM=$2 TRAIN=$3 TEST=$4; shift 4
W=/work/ema/$NAME
mkdir -p $W
cd /work/ema/code
export PYTHONPATH=/work/ema/code OMP_NUM_THREADS=1
echo "start $(date -u +%H:%M:%S) $(git rev-parse --short HEAD): gnnplan learn $DOM $TRAIN -o $W/learn.onnx --timeout 1800 $*" >> $W/times.txt
( ulimit -v 16000000; gnnplan learn $DOM $TRAIN -o $W/learn.onnx --timeout 1800 "$@" ) >> $W/learn.log 2>&1
echo "learnt $(date -u +%H:%M:%S) rc $?" >> $W/times.txt
if [ -f $W/learn.onnx ]; then
  gnnplan compare --engine gnnplan --model $W/learn.onnx --suite $TEST -o $W/test --timeout 60 --memory-mb 4000 --no-plots > $W/test.log 2>&1
  echo "tested $(date -u +%H:%M:%S)" >> $W/times.txt
fi

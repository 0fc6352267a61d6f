F=/work/shared/benchmarks/ipc2023-learning/floortile; W=W
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $W/learn.onnx --suite $F/testing/easy -o $W/easy-learn --timeout 60 --no-plots > $W/easy-learn.log 2>&1 &
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model floortile --suite $F/testing/easy -o $W/easy-shipped --timeout 60 --no-plots > $W/easy-shipped.log 2>&1 &
wait

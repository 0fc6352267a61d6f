F=/work/shared/benchmarks/ipc2023-learning/floortile; W=W
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $W/learn.onnx --suite $F/testing/easy -o $W/easy-e14 --timeout 60 --no-plots > $W/easy-e14.log 2>&1 &
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $W/learn.onnx.learn/epoch-13.onnx --engine-param gnnplan:handoff_share=0.5 --suite $F/testing/easy -o $W/easy-e13 --timeout 60 --no-plots > $W/easy-e13.log 2>&1 &
wait
F=/work/shared/benchmarks/ipc2023-learning/floortile; W=W
OMP_NUM_THREADS=1 gnnplan compare --engine gnnplan --model $W/learn.onnx.learn/epoch-6.onnx --engine-param gnnplan:handoff_share=0.5 --suite $F/testing/easy -o $W/easy-e6 --timeout 60 --no-plots > $W/easy-e6.log 2>&1

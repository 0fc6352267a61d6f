cd /work/main
export PYTHONPATH=/work/main OMP_NUM_THREADS=1
G=/tmp/gnnplan-zoo/gen/logistics-large/test
gnnplan compare $G/domain.pddl $G/p-*.pddl --engine gnnplan --model /work/le-log30/logistics/learn.onnx --timeout 60 --memory-mb 4000 -o /work/le-log30/large-learn
gnnplan compare $G/domain.pddl $G/p-*.pddl --engine gnnplan --timeout 60 --memory-mb 4000 -o /work/le-log30/large-shipped

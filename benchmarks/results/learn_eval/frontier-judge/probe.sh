F=/work/shared/benchmarks/ipc2023-learning/floortile/training/easy
for m in weak:LE_1202/learn.onnx good1201:LE_1201/learn.onnx shipped:floortile; do
 for p in p45 p46 p47 p48 p55 p56 p57 p58; do echo "${m%%:*} ${m#*:} $p"; done; done | \
 xargs -P 2 -n 3 sh -c 'OMP_NUM_THREADS=1 prlimit --as=4000000000 gnnplan solve '$F'/../../domain.pddl '$F'/$2.pddl --model $1 --fallback model+ff --timeout 20 2>&1 >/dev/null | tail -1 | sed "s|^|$0 |"' > out.txt

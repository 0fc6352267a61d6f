# The arms: checkouts of the code before and after the change (git worktree add /tmp/before 19cb700; /tmp/after 08bff69).
for t in "medium transport" "hard-lower blocksworld transport" "hard blocksworld"; do
  set -- $t; tier=$1; shift
  OMP_NUM_THREADS=1 python -m benchmarks.code_ab run "$@" --tier $tier --arm before=/tmp/before --arm after=/tmp/after --jobs 1 -o benchmarks/results/code_ab/fallback-skip
done
python -m benchmarks.code_ab table -o benchmarks/results/code_ab/fallback-skip

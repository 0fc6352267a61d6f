# The arms: checkouts of the code before and after the change (git worktree add /tmp/wt-before 0c09b95; /tmp/wt-after 6cb5ee0,
# the done view with its static groups precomputed: 834f1e6 + the commit after it).
for t in hard hard-lower; do
  OMP_NUM_THREADS=1 python -m benchmarks.code_ab run --tier $t --arm before=/tmp/wt-before --arm after=/tmp/wt-after --jobs 1 \
      -o benchmarks/results/code_ab/done-view/$t
  python -m benchmarks.code_ab table -o benchmarks/results/code_ab/done-view/$t
done

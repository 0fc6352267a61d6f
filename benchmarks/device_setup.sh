#!/bin/bash
# The set-up of a script run on a lent GPU machine (the `device` tool), which reaches no package registry.
#
# Here, before the lease: fill .whl/ (git-ignored: add /.whl/ and /.gpu/ to .git/info/exclude) with the wheels of the
# package's dependencies that the machine lacks (it has torch with CUDA, onnxruntime for the CPU and onnx):
#
#     bash benchmarks/device_setup.sh --fetch [PYTHON_VERSION ...]   # default 3.12 (the H100's, the H200's); 5 MB
#
# On the machine, first thing in the script the call runs:
#
#     . benchmarks/device_setup.sh        # installs .whl/ into /tmp/site, sets PYTHONPATH, writes $OUT/env.txt
#
# A call carries at most 64 MiB of the working tree, and the tracked files alone are more (benchmarks/results and
# the shipped models): move benchmarks/results out of the tree for the call and back after it. The CUDA provider's
# onnxruntime-gpu wheel (255 MB) cannot travel, so on the machine onnxruntime runs on its CPU; torch has the GPU.
# With LOCAL set (a dry run on this machine) nothing is installed.

DEVICE_WHEELS=(pymimir unified-planning ConfigSpace more-itertools)  # fetched at the versions installed here

if [ "${1:-}" = "--fetch" ]; then
  set -e
  shift
  mkdir -p .whl
  pinned=$(python -c "import importlib.metadata as m, sys
print(' '.join(f'{n}=={m.version(n)}' for n in sys.argv[1:]))" "${DEVICE_WHEELS[@]}")
  for py in "${@:-3.12}"; do
    python -m pip download -q --no-deps --only-binary=:all: --python-version "$py" -d .whl $pinned
  done
  ls -l .whl
  du -sh .whl
  exit 0
fi

export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
if [ -z "${LOCAL:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --find-links .whl --target /tmp/site \
    "${DEVICE_WHEELS[@]}" 2>&1 | tail -2  # the wheels of this machine's Python among those in .whl
  export PYTHONPATH=/tmp/site:$PWD
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$OUT/env.txt"
fi
python3 -c "import sys, torch, pymimir, unified_planning, onnxruntime
print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available(),
      'onnxruntime', onnxruntime.__version__)" | tee -a "$OUT/env.txt"

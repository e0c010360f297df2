#!/usr/bin/env bash
# GPU check: build ASMR with its CUDA kernels in place, then in one run compare
# the CUDA results with the CPU ones and time them against cuSPARSE, torch and
# CuPy (bench/gpu_check.py), then run tests/kernels/test_cuda.py if pytest is there.
# Meant for a machine with a GPU, nvcc, CuPy, torch, Cython, CMake and ninja,
# and no network; finishes in well under 5 minutes.
#
#   bench/gpu_check.sh [options of bench/gpu_check.py]
#   ASMR_GPU_CHECK_TESTS=0 bench/gpu_check.sh     # without the pytest step
#
# Build: `setup.py build_ext --inplace` with ASMR_CUDA=on. It needs no pip, no
# network and no build isolation (the image's Cython, CMake and ninja are used
# as they are); CMake compiles csrc/ and the Cython modules and the extension
# modules land in asmr_kernels/, which PYTHONPATH then points at. Logs and
# gpu_check.json go to $OUT when it is set.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
LOGDIR=${OUT:-$(mktemp -d)}
mkdir -p "$LOGDIR"
status=0

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "(no nvidia-smi)"
if command -v nvcc >/dev/null; then nvcc --version | tail -n 2; else echo "nvcc not on PATH"; fi
"$PY" --version
"$PY" -c "import cupy; print('cupy', cupy.__version__)" || echo "(no cupy)"
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" || echo "(no torch)"
echo "cores: $(nproc)"

echo "== build (log: $LOGDIR/gpu_check_build.log)"
t0=$SECONDS
if ! ASMR_CUDA=on MAX_JOBS="${MAX_JOBS:-$(nproc)}" "$PY" setup.py build_ext --inplace \
    >"$LOGDIR/gpu_check_build.log" 2>&1; then
  tail -n 60 "$LOGDIR/gpu_check_build.log"
  echo "BUILD FAILED after $((SECONDS - t0)) s"
  exit 1
fi
grep -E "ASMR:|CUDA compiler identification" "$LOGDIR/gpu_check_build.log" || true
echo "built in $((SECONDS - t0)) s"
# python/: the mask-apply tests compare with asmr.decoding's CPU path.
export PYTHONPATH="$PWD:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -c "import asmr_kernels as ak; print('backend:', ak.backend_info())"

echo "== bench/gpu_check.py"
"$PY" bench/gpu_check.py "$@" || status=$?

echo "== tests/kernels/test_cuda.py"
if [ "${ASMR_GPU_CHECK_TESTS:-1}" = 0 ]; then
  echo "skipped (ASMR_GPU_CHECK_TESTS=0)"
elif "$PY" -c "import pytest" 2>/dev/null; then
  # --noconftest: tests/conftest.py needs hypothesis, which test_cuda.py does not.
  timeout 120 "$PY" -m pytest tests/kernels/test_cuda.py -q -rs --noconftest -p no:cacheprovider --maxfail=20 \
    || { s=$?; echo "tests/kernels/test_cuda.py exited with $s"; [ "$status" -ne 0 ] || status=$s; }
else
  echo "pytest is not installed: skipped (bench/gpu_check.py ran its own checks above)"
fi
echo "== done in ${SECONDS} s, status $status"
exit "$status"

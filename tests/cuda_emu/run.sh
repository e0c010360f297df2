#!/usr/bin/env bash
# Runs tests/kernels/test_cuda.py with the CUDA kernels emulated on the CPU (see README.md).
#   tests/cuda_emu/run.sh [pytest options]      e.g. -k spread
#   EMU_FLAGS="-fsanitize=address" tests/cuda_emu/run.sh   (AddressSanitizer; preloaded)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-$repo/.venv/bin/python}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2086
"$PY" "$repo/tests/cuda_emu/build.py" "$repo" "$out" ${EMU_FLAGS:-}
preload=""
case "${EMU_FLAGS:-}" in *sanitize=address*) preload=$(g++ -print-file-name=libasan.so);; esac
cd "$out"  # not the repository: its asmr_kernels must not shadow the copy
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} LD_PRELOAD="$preload" \
  PYTHONPATH="$out:$repo/tests/cuda_emu/fake" "$PY" -m pytest "$repo/tests/kernels/test_cuda.py" -q -p no:cacheprovider "$@"

#!/usr/bin/env bash
# One command for a lent GPU machine (torch preinstalled, nothing downloadable): build myops
# from source with the machine's python3, run the whole pytest suite (CUDA tests included),
# then the benchmarks and the demo. Everything lands under $OUT (or ./gpu-out) in at most
# 8 files (the device tool's limit).
#   bash benchmarks/gpu_session.sh            # build + tests + bench + demo: session.log, the
#                                             # runner's .md/.json/.png, demo-results.md
#   bash benchmarks/gpu_session.sh tests      # build + tests: session.log, pytest.log (whole)
#   bash benchmarks/gpu_session.sh memcheck   # build + the CUDA tests of each family under
#                                             # compute-sanitizer memcheck: session.log, memcheck.log
# The CPU suite passes on torch 2.14.1 (CI) and on 2.11.0 with Python 3.12 (the GPU machine's).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
export PYTHON="${PYTHON:-python3}" PYTHONUNBUFFERED=1 MAX_JOBS="${MAX_JOBS:-16}"
stage="${1:-all}"
case "$stage" in all | tests | memcheck) ;; *) echo "unknown stage '$stage' (all, tests, memcheck)"; exit 2 ;; esac
{
  nvidia-smi
  "$PYTHON" -c "import torch, setuptools; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'setuptools', setuptools.__version__)"
  time make PYTHON="$PYTHON" build || exit 1
  if [ "$stage" = memcheck ]; then
    # no caching allocator, so that an out-of-bounds access lands outside any allocation
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 \
      "$PYTHON" -m pytest tests/test_nonzero.py tests/test_elementwise.py tests/test_max_pool2d_add.py \
      tests/test_diagonal.py -q -p no:cacheprovider -k cuda -x >"$OUT/memcheck.log" 2>&1
    echo "memcheck: exit $? (99: compute-sanitizer found an error)"
    grep -E "^=========|passed|failed|skipped|error" "$OUT/memcheck.log" | tail -n 60
    exit 0
  fi
  if [ "$stage" = tests ]; then
    "$PYTHON" -m pytest tests -q -p no:cacheprovider >"$OUT/pytest.log" 2>&1
    echo "pytest: exit $?"
    tail -n 60 "$OUT/pytest.log"
    exit 0
  fi
  "$PYTHON" -m pytest tests -q -p no:cacheprovider 2>&1 | tail -n 60
  "$PYTHON" benchmarks/runner.py --device cuda --out "$OUT"
  "$PYTHON" benchmarks/demo.py --out "$OUT/demo-results.md" | tail -n 40
} 2>&1 | tee "$OUT/session.log" | tail -n 80

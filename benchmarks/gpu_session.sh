#!/usr/bin/env bash
# One command per device call on a lent GPU machine (torch preinstalled, nothing downloadable):
# build myops from source with the machine's python3 (CUDA kernels required), then one stage.
# Each stage fits one call of the device tool (600 s) with its steps under `timeout`, and
# leaves at most 8 files under $OUT (or ./gpu-out), the tool's limit:
#   bash benchmarks/gpu_session.sh tests     # the whole pytest suite (CUDA tests included):
#                                            # session.log, pytest.log (whole)
#   bash benchmarks/gpu_session.sh memcheck  # the CUDA tests of each family under
#                                            # compute-sanitizer memcheck: session.log, memcheck.log
#   bash benchmarks/gpu_session.sh bench     # runner.py --device cuda, then demo.py --device cuda:
#                                            # session.log, the runner's .md/.json (written after
#                                            # every family), demo-results.md; no plots (draw
#                                            # them here: python benchmarks/plot.py <json>)
# Run them in that order (correctness first); `tests` is the default. The build is reused when
# the machine is still warm. The CPU suite passes on torch 2.14.1 (CI) and on 2.11.0 with
# Python 3.12 (the GPU machine's).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
export PYTHON="${PYTHON:-python3}" PYTHONUNBUFFERED=1 MAX_JOBS="${MAX_JOBS:-16}" FORCE_CUDA=1
stage="${1:-tests}"
case "$stage" in tests | memcheck | bench) ;; *) echo "unknown stage '$stage' (tests, memcheck, bench)"; exit 2 ;; esac
# seconds left of the call's 600 (the tool's limit), keeping 30 for the summary and the copy back
left() { echo $((570 - SECONDS)); }
# a test that hangs fails alone (pytest-timeout, where installed) instead of using up the call
PYTEST_TIMEOUT=()
if "$PYTHON" -c "import pytest_timeout" 2>/dev/null; then PYTEST_TIMEOUT=(-p timeout --timeout 120); fi
{
  nvidia-smi
  "$PYTHON" -c "import torch, setuptools; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'setuptools', setuptools.__version__)"
  # FORCE_CUDA=1: a build without the CUDA kernels is an error, not a CPU-only build
  time timeout 300 make PYTHON="$PYTHON" build || { echo "build failed"; exit 1; }
  PYTHONPATH=python "$PYTHON" -c "import myops, sys; myops.show_config(); sys.exit(0 if myops.BUILD_CONFIG['with_cuda'] else 1)" \
    || { echo "myops was built without its CUDA kernels"; exit 1; }
  case "$stage" in
    tests)
      timeout -s INT "$(left)" "$PYTHON" -m pytest tests -q -p no:cacheprovider "${PYTEST_TIMEOUT[@]}" >"$OUT/pytest.log" 2>&1
      echo "pytest: exit $? (124: cut at the call's time limit; the log has what ran)"
      tail -n 60 "$OUT/pytest.log"
      ;;
    memcheck)
      # no caching allocator, so that an out-of-bounds access lands outside any allocation
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout -s INT "$(left)" compute-sanitizer --tool memcheck --error-exitcode 99 \
        --print-limit 20 "$PYTHON" -m pytest tests/test_nonzero.py tests/test_elementwise.py \
        tests/test_max_pool2d_add.py tests/test_diagonal.py -q -p no:cacheprovider -k cuda -x \
        "${PYTEST_TIMEOUT[@]}" >"$OUT/memcheck.log" 2>&1
      echo "memcheck: exit $? (99: compute-sanitizer found an error; 124: cut at the call's time limit)"
      grep -E "^=========|passed|failed|skipped|error" "$OUT/memcheck.log" | tail -n 60
      ;;
    bench)
      timeout -s INT $(($(left) - 120)) "$PYTHON" benchmarks/runner.py --device cuda --out "$OUT" --no-plots
      echo "runner: exit $? (124: cut to leave the demo 120 s; the .md/.json hold every family finished)"
      timeout -s INT "$(left)" "$PYTHON" benchmarks/demo.py --device cuda --out "$OUT/demo-results.md"
      echo "demo: exit $?"
      ;;
  esac
} 2>&1 | tee "$OUT/session.log" | tail -n 100

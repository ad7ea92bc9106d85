#!/usr/bin/env bash
# One command for a lent GPU machine (torch preinstalled, nothing downloadable): build myops
# from source with the machine's python3, run the whole pytest suite (CUDA tests included),
# then the benchmarks and the demo, leaving logs and tables under $OUT (or ./gpu-out).
#   bash benchmarks/gpu_session.sh            # build + tests + bench + demo
#   bash benchmarks/gpu_session.sh tests      # build + tests only
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
export PYTHON="${PYTHON:-python3}" PYTHONUNBUFFERED=1 MAX_JOBS="${MAX_JOBS:-16}"
stage="${1:-all}"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
time make PYTHON="$PYTHON" build 2>&1 | tail -n 40 | tee "$OUT/build.log" || exit 1
"$PYTHON" -m pytest tests -q -x --timeout=600 -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log" | tail -n 30
[ "$stage" = tests ] && exit 0
"$PYTHON" benchmarks/runner.py --device cuda --out "$OUT" 2>&1 | tail -n 60 | tee "$OUT/bench.log"
"$PYTHON" benchmarks/demo.py --out "$OUT/demo-results.md" 2>&1 | tail -n 40

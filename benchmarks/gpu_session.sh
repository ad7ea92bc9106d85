#!/usr/bin/env bash
# One command for a lent GPU machine (torch preinstalled, nothing downloadable): build myops
# from source with the machine's python3, run the whole pytest suite (CUDA tests included),
# then the benchmarks and the demo. Everything lands under $OUT (or ./gpu-out) in at most
# 8 files: session.log, the runner's .md/.json/.png and demo-results.md.
#   bash benchmarks/gpu_session.sh            # build + tests + bench + demo
#   bash benchmarks/gpu_session.sh tests      # build + tests only
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
export PYTHON="${PYTHON:-python3}" PYTHONUNBUFFERED=1 MAX_JOBS="${MAX_JOBS:-16}"
stage="${1:-all}"
{
  nvidia-smi
  time make PYTHON="$PYTHON" build || exit 1
  "$PYTHON" -m pytest tests -q -p no:cacheprovider 2>&1 | tail -n 60
  [ "$stage" = tests ] && exit 0
  "$PYTHON" benchmarks/runner.py --device cuda --out "$OUT"
  "$PYTHON" benchmarks/demo.py --out "$OUT/demo-results.md" | tail -n 40
} 2>&1 | tee "$OUT/session.log" | tail -n 80

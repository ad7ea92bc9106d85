#!/usr/bin/env bash
# The GPU session in one call of the device tool (gpu/gpu_session.py says what it runs;
# benchmarks/README.md, "GPU", gives the exact calls):
#
#   bash gpu/gpu_session.sh all             # build check, CUDA tests + sanitizer, then the bench
#   bash gpu/gpu_session.sh rerun           # only what failed or was cut in the last call
#   bash gpu/gpu_session.sh sweep           # build check, then every kernel variant timed
#   bash gpu/gpu_session.sh --dry-run all   # every part on the CPU against the CPU build (CI)
#   bash gpu/gpu_session.sh --dry-run sweep # the sweep through the CUDA emulation (CI)
#   GPU_SESSION_FAMILIES="..." bash gpu/gpu_session.sh tune  # sources that passed `all`:
#                                                  # the changed families' tests, sweep, bench
#   bash gpu/gpu_session.sh graph           # build check, the static detector in one CUDA graph
#
# Everything printed goes to $OUT/session.log too (the tee). At the end it checks what the device
# tool brings back from $OUT (at most 8 files of 16 MiB): over it, it says so and exits 3.
set -uo pipefail
cd "$(dirname "$0")/.."
case "${*: -1}" in all | rerun | sweep | tune | graph) ;; *) echo "usage: gpu_session.sh [--dry-run] all|rerun|sweep|tune|graph (got '$*')"; exit 2 ;; esac
export OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
PYTHON="${PYTHON:-python3}"
PYTHONUNBUFFERED=1 "$PYTHON" gpu/gpu_session.py "$@" 2>&1 | tee -a "$OUT/session.log"
rc=${PIPESTATUS[0]}
n=$(find "$OUT" -type f | wc -l)
big=$(find "$OUT" -type f -size +16M | wc -l)
echo "\$OUT: $n files, $big over 16 MiB"
if [ "$n" -gt 8 ] || [ "$big" -gt 0 ]; then echo "OVER THE DEVICE TOOL'S LIMITS: files will not come back"; rc=3; fi
exit "$rc"

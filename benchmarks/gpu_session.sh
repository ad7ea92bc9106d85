#!/usr/bin/env bash
# The GPU session: one stage per call of the device tool, each under its limits (600 s, a bare
# machine, at most 8 files of 16 MiB back from $OUT, a command of 2,000 characters).
#
#   bash benchmarks/gpu_session.sh cuda       # build, then every test marked `cuda`, family by family
#   bash benchmarks/gpu_session.sh sanitize   # compute-sanitizer memcheck + initcheck, one family per process
#   bash benchmarks/gpu_session.sh bench      # runner.py --device cuda, each family in its own time share
#   bash benchmarks/gpu_session.sh --dry-run all   # every stage on the CPU against the CPU build (CI)
#
# Run them in that order: correctness first. benchmarks/README.md gives the exact calls and their
# `carry` lists. Every stage:
#   - builds with setup.py (no make), or reuses a build archive from gpu-build/ whose name holds a
#     hash of the sources, torch's version and the arch list; the build it makes comes back as
#     $OUT/myops-build-<hash>.tar.xz(.partNN), to be carried into the next call as gpu-build/;
#   - gives each family a fair share of the call's time left (a slow family cannot starve the rest)
#     and records each family's exit status (124: cut by its share);
#   - writes $OUT/<gpu>-<date>-tests.md (benchmarks/gpu_results.py: device, driver, torch, CUDA,
#     tests passed/failed/skipped by family, each sanitizer tool's ERROR SUMMARY), merging the
#     sections of earlier stages found in benchmarks/results/; and session.log.
# Environment: GPU_SESSION_FAMILIES (test files' families, default: every tests/test_*.py but the
# emulation), GPU_SESSION_BENCH (runner families, default: all), SANITIZE_TOOLS (default
# "memcheck initcheck"), GPU_SESSION_SECONDS (the call's budget, default 570 of the tool's 600).
set -uo pipefail
cd "$(dirname "$0")/.."
DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
stage="${1:-cuda}"
case "$stage" in cuda | sanitize | bench | all) ;; *) echo "unknown stage '$stage' (cuda, sanitize, bench, all)"; exit 2 ;; esac
OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
WORK="$(mktemp -d)"
RECORDS="$WORK/records.tsv"
: >"$RECORDS"
# an importable myops on PYTHONPATH (make sanitize's build, say) comes before the in-place build
export PYTHON="${PYTHON:-python3}" PYTHONUNBUFFERED=1 PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD/python"
BUDGET="${GPU_SESSION_SECONDS:-570}"
left() { echo $((BUDGET - SECONDS)); }
if [ "$DRY" = 1 ]; then
  DEVICE=cpu
  export CUDA_VISIBLE_DEVICES=""
else
  DEVICE=cuda
  export FORCE_CUDA=1 MAX_JOBS="${MAX_JOBS:-16}"
fi

# ---- one family's run under its share: run_share <n families left> <stage> <family> <tool> <log> cmd...
run_share() {
  local n="$1" st="$2" fam="$3" tool="$4" log="$5"
  shift 5
  local share=$(($(left) / n))
  if [ "$share" -lt 5 ]; then
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$st" "$fam" "$tool" 124 "" "$log" >>"$RECORDS"
    echo "$st $fam $tool: no time left"
    return
  fi
  timeout -s INT -k 10 "$share" "$@" >"$log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$st" "$fam" "$tool" "$rc" "$share" "$log" >>"$RECORDS"
  echo "$st $fam $tool: exit $rc in a share of ${share}s$([ "$rc" = 124 ] && echo ' (CUT)')"
}

PYTEST=("$PYTHON" -m pytest -q -p no:cacheprovider -rfE)
"$PYTHON" -c "import pytest_timeout" 2>/dev/null && PYTEST+=(-p timeout --timeout 120)
XDIST=()
if [ "$DRY" = 0 ] && "$PYTHON" -c "import xdist" 2>/dev/null; then XDIST=(-n 4); fi

# test families: every test file but the CPU emulation (CI runs that); a new file is picked up here
test_families() {
  if [ -n "${GPU_SESSION_FAMILIES:-}" ]; then echo "$GPU_SESSION_FAMILIES"; return; fi
  for f in tests/test_*.py; do f="${f#tests/test_}"; f="${f%.py}"; [ "$f" = cuda_emulation ] || echo "$f"; done
}

# compute-sanitizer, or (dry run) a stand-in that runs the command and prints the same summary line
sanitizer() {
  local tool="$1"
  shift
  if [ "$DRY" = 1 ]; then
    "$@"
    local rc=$?
    echo "========= ERROR SUMMARY: 0 errors (dry run: no compute-sanitizer, tool $tool)"
    return $rc
  fi
  compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 "$@"
}

build() {
  local key
  key=$( (find csrc cmake setup.py pyproject.toml -type f -print0 | sort -z | xargs -0 sha256sum
          "$PYTHON" -c "import torch; print(torch.__version__, torch.version.cuda)"
          echo "${TORCH_CUDA_ARCH_LIST:-}" "$DRY") | sha256sum | cut -c1-16)
  echo "build key $key"
  if [ "$DRY" = 1 ] && "$PYTHON" -c "import myops" 2>/dev/null; then
    echo "dry run: the CPU build in python/myops is used as it is"
  elif ls gpu-build/myops-build-"$key".tar.xz* >/dev/null 2>&1; then
    cat gpu-build/myops-build-"$key".tar.xz* | tar -xJf - && echo "build reused from gpu-build/ (hash matches)"
  else
    ls gpu-build/ 2>/dev/null | sed 's/^/(no match: gpu-build\/)/'
    timeout 400 "$PYTHON" setup.py build_ext --inplace >"$WORK/build.log" 2>&1 || {
      tail -n 40 "$WORK/build.log"; echo "build failed"; return 1; }
    grep -iE "warning.*(spill|lmem|local memory)" "$WORK/build.log" | sort -u | head -n 20
    # the build comes back through $OUT (parts under the 16 MiB limit) to be carried next time
    tar -cJf "$WORK/b.tar.xz" python/myops/*.so python/myops/lib python/myops/include python/myops/share \
      python/myops/_build_config.py 2>/dev/null
    if [ "$(stat -c %s "$WORK/b.tar.xz")" -le $((15 << 20)) ]; then
      cp "$WORK/b.tar.xz" "$OUT/myops-build-$key.tar.xz"
    else
      split -b 15M -d "$WORK/b.tar.xz" "$OUT/myops-build-$key.tar.xz.part"
    fi
  fi
  "$PYTHON" -c "import myops, sys; myops.show_config(); sys.exit(0 if myops.BUILD_CONFIG['with_cuda'] or $DRY else 1)" ||
    { echo "myops was built without its CUDA kernels"; return 1; }
}

stage_cuda() {
  local fams=($(test_families)) i=0
  for fam in "${fams[@]}"; do
    run_share $((${#fams[@]} - i)) cuda "$fam" pytest "$WORK/cuda-$fam.log" \
      "${PYTEST[@]}" "${XDIST[@]}" "tests/test_$fam.py" -m cuda --junitxml "$WORK/cuda-$fam.xml"
    i=$((i + 1))
  done
}

stage_sanitize() {
  local fams=($(test_families)) tools=(${SANITIZE_TOOLS:-memcheck initcheck}) i=0 n
  n=$((${#fams[@]} * (${#tools[@]} + 1)))
  for fam in "${fams[@]}"; do
    for tool in "${tools[@]}"; do
      # no caching allocator, so that an out-of-bounds access lands outside any allocation;
      # graph captures are run apart: that allocator's cudaFree is forbidden inside a capture
      run_share $((n - i)) sanitize "$fam" "$tool" "$WORK/san-$fam-$tool.log" \
        env PYTORCH_NO_CUDA_MEMORY_CACHING=1 bash -c "$(declare -f sanitizer); DRY=$DRY sanitizer $tool $(printf '%q ' \
        "${PYTEST[@]}" "tests/test_$fam.py" -m "cuda and not cuda_graph" --junitxml "$WORK/san-$fam-$tool.xml")"
      i=$((i + 1))
    done
    run_share $((n - i)) sanitize "$fam" memcheck-graphs "$WORK/san-$fam-graphs.log" \
      bash -c "$(declare -f sanitizer); DRY=$DRY sanitizer memcheck $(printf '%q ' \
      "${PYTEST[@]}" "tests/test_$fam.py" -m "cuda and cuda_graph" --junitxml "$WORK/san-$fam-graphs.xml")"
    i=$((i + 1))
  done
}

stage_bench() {
  local fams=(${GPU_SESSION_BENCH:-$(cd benchmarks && "$PYTHON" -c "import runner; print(*runner.FAMILIES)")}) i=0
  local extra=()
  [ "$DRY" = 1 ] && extra=(--quick)
  for fam in "${fams[@]}"; do
    # one share more than the families: the demo runs last
    run_share $((${#fams[@]} + 1 - i)) bench "$fam" runner "$WORK/bench-$fam.log" \
      "$PYTHON" benchmarks/runner.py --family "$fam" --device "$DEVICE" --out "$OUT" --append --no-plots "${extra[@]}"
    i=$((i + 1))
  done
  [ "$DRY" = 1 ] && return  # the demo is make demo's job on the CPU
  run_share 1 bench demo demo "$WORK/bench-demo.log" \
    "$PYTHON" benchmarks/demo.py --device cuda --out "$OUT/demo-results.md"
}

{
  date -u
  if [ "$DRY" = 0 ]; then nvidia-smi; fi
  "$PYTHON" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)"
  build || exit 1
  if [ "$stage" = all ]; then stages=(cuda sanitize bench); else stages=("$stage"); fi
  for st in "${stages[@]}"; do "stage_$st"; done
  # failures' lines (the logs stay on the machine; these come back in session.log)
  for log in "$WORK"/*.log; do
    [ -f "$log" ] || continue
    grep -E "^(FAILED|ERROR) |========= (ERROR SUMMARY: [1-9]|Invalid|Uninitialized)|Error|Traceback" "$log" |
      head -n 20 | sed "s|^|$(basename "$log" .log): |"
  done
  "$PYTHON" benchmarks/gpu_results.py --records "$RECORDS" --out "$OUT" --previous benchmarks/results \
    $([ "$DRY" = 1 ] && echo --dry-run)
} 2>&1 | tee "$OUT/session.log" | tail -n 150
rc=${PIPESTATUS[0]}
# the device tool brings back at most 8 files of 16 MiB each
n=$(find "$OUT" -type f | wc -l)
big=$(find "$OUT" -type f -size +16M | wc -l)
echo "\$OUT: $n files, $big over 16 MiB"
if [ "$n" -gt 8 ] || [ "$big" -gt 0 ]; then echo "OVER THE DEVICE TOOL'S LIMITS: files will not come back"; rc=3; fi
rm -rf "$WORK"
exit "$rc"

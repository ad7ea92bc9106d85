"""The CUDA build's sm_90 code, checked with no GPU: cuobjdump reads libmyops.so as CI builds it
(FORCE_CUDA=1, TORCH_CUDA_ARCH_LIST=9.0). The kernels have not always run on a GPU before they
land; these are the faults the compiled code itself shows:

- **spin-waits**: a myops kernel that pauses in a loop (``NANOSLEEP``, MYOPS_SPIN_PAUSE) waits on
  a value another block writes; every global load in that loop must be strong (volatile or
  atomic: ``.STRONG``, ``ATOM``), or it may be served from L1 forever;
- **two roundings**: the kernels tools/sass_floor.json gives a ``max_fma`` compute a torch
  reference that rounds a product before adding (core/cuda_rules.h's ``mul_rn`` / ``add_rn``):
  they hold no more ``FFMA`` / ``DFMA`` than that count (their other arithmetic's);
- **the floor**: each kernel tools/sass_floor.json lists keeps its registers, local memory and
  blocks per SM (sm_90's limits, its block size) within the committed figures.

A failure names the kernel (demangled) and the figure.
"""

import functools
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import myops

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from check_spills import demangle  # noqa: E402  (c++filt, the names ptxas' warnings carry too)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOOR = os.path.join(ROOT, "tools", "sass_floor.json")
# the library the suite imports, or another build's (MYOPS_SASS_LIB: e.g. make gpu-prebuilt's)
LIB = os.environ.get("MYOPS_SASS_LIB") or os.path.join(os.path.dirname(myops.__file__), "lib", "libmyops.so")
WITH_CUDA = bool(os.environ.get("MYOPS_SASS_LIB")) or bool(myops.BUILD_CONFIG.get("with_cuda"))
# CI builds the CUDA kernels (FORCE_CUDA=1): there a missing build or tool is a failure, not a skip
MUST = os.environ.get("FORCE_CUDA") == "1"

# sm_90 (H100 / H200): per SM
SM90 = dict(regs=65536, threads=2048, blocks=32, shared=233472, shared_per_block_reserved=1024, reg_unit=256)


def cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:  # torch's CUDA wheels bring Triton, which ships one
        import triton

        cands = glob.glob(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump"))
    except ImportError:
        cands = []
    return cands[0] if cands else None


def _need():
    if not WITH_CUDA:
        if MUST:
            pytest.fail("FORCE_CUDA=1 but myops was built without its CUDA kernels")
        pytest.skip("a CPU-only build: no device code to read")
    tool = cuobjdump()
    if tool is None:
        if MUST:
            pytest.fail("FORCE_CUDA=1 but no cuobjdump (the toolkit's, or Triton's) is found")
        pytest.skip("no cuobjdump")
    return tool


@functools.lru_cache(maxsize=None)
def sass(path=LIB, tool=None):
    """{demangled function: [(address, opcode with its modifiers, operands)], in order} of the
    sm_90 code."""
    text = subprocess.run([tool or _need(), "-sass", path], capture_output=True, text=True, check=True).stdout
    funcs, cur, names = {}, None, []
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = m.group(1)
            names.append(cur)
            funcs[cur] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);", line)
        if m and cur is not None:
            funcs[cur].append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    return dict(zip(demangle(names), (funcs[n] for n in names)))


def opcodes(code):
    return [op for _, op, _ in code]


def spin_loops(code):
    """The innermost loop around each pause (NANOSLEEP) of `code`: [(start, end)] address ranges,
    each the span of the shortest backward branch that encloses the pause."""
    branches = []
    for a, op, args in code:
        m = re.match(r"(0x[0-9a-f]+)", args) if op.startswith("BRA") else None
        if m and int(m.group(1), 16) < a:
            branches.append((int(m.group(1), 16), a))
    loops = set()
    for p in (a for a, op, _ in code if op.startswith("NANOSLEEP")):
        around = [(lo, hi) for lo, hi in branches if lo <= p <= hi]
        if around:
            loops.add(min(around, key=lambda r: r[1] - r[0]))
    return sorted(loops)


@functools.lru_cache(maxsize=None)
def resources(path=LIB, tool=None):
    """{demangled function: {"REG": n, "SHARED": bytes, "LOCAL": bytes, "STACK": bytes, ...}}."""
    text = subprocess.run([tool or _need(), "-res-usage", path], capture_output=True, text=True, check=True).stdout
    raw = re.findall(r"Function (\S+):\s*\n\s*(REG:.*)", text)
    names = demangle([n for n, _ in raw])
    return {d: {k: int(v) for k, v in re.findall(r"(\w+):(\d+)", figs)} for d, (_, figs) in zip(names, raw)}


def blocks_per_sm(regs, shared, threads, sm=SM90):
    """Resident blocks of `threads` threads on one SM, by registers, threads, blocks and shared
    memory (registers are allocated per warp in units of 256)."""
    warps = -(-threads // 32)
    per_warp = -(-max(regs, 1) * 32 // sm["reg_unit"]) * sm["reg_unit"]
    by_regs = (sm["regs"] // per_warp) // warps
    by_shared = sm["shared"] // (shared + sm["shared_per_block_reserved"]) if shared else sm["blocks"]
    return min(sm["blocks"], sm["threads"] // threads, by_regs, by_shared)


def floor_entries():
    with open(FLOOR) as f:
        return json.load(f)["kernels"]


def matching(names, pattern):
    return sorted(n for n in names if re.search(pattern, n))


def test_blocks_per_sm_formula():
    # sm_90's occupancy calculator: 256 threads at 64 registers -> 4 blocks, at 75 -> 3; shared
    # memory and the thread limit take over where they are tighter
    assert blocks_per_sm(64, 0, 256) == 4
    assert blocks_per_sm(75, 0, 256) == 3
    assert blocks_per_sm(32, 0, 256) == 8
    assert blocks_per_sm(16, 0, 64) == 32
    assert blocks_per_sm(32, 100 * 1024, 256) == 2


def test_spin_waits_load_strongly():
    """In every loop around a pause, the global loads are strong (volatile or atomic: the value
    another block writes), and there is one: a weak load may be served from L1 forever."""
    funcs = sass()
    seen, weak = 0, []
    for name, code in funcs.items():
        if not name.startswith("void myops::"):
            continue  # CUB's look-back waits are CUB's (not simple loops: the test cannot delimit them)
        for lo, hi in spin_loops(code):
            seen += 1
            body = [op for a, op, _ in code if lo <= a <= hi]
            loads = [op for op in body if op.startswith(("LDG", "LD.")) or op == "LD"]
            strong = [op for op in loads if ".STRONG" in op] + [op for op in body if op.startswith("ATOM")]
            if not strong or len(strong) < len(loads) + sum(op.startswith("ATOM") for op in body):
                weak.append(f"{name}: the spin loop at {lo:#x}-{hi:#x} loads {loads or 'nothing'}")
    assert seen, "no spin loop found: the look-back kernels are gone, or so is MYOPS_SPIN_PAUSE"
    assert weak == [], "spin-waits without a strong load:\n" + "\n".join(weak[:20])


def test_no_fused_multiply_add_where_torch_rounds_twice():
    """The kernels that compute a product and a sum torch rounds apart hold no more fused
    multiply-adds than the committed count (`max_fma`; those of their other arithmetic, e.g. an
    IoU that torchvision's CUDA kernel contracts alike): one more is a fusion of a product that
    must be rounded first."""
    funcs = sass()
    checked = 0
    for entry in floor_entries():
        if "max_fma" not in entry:
            continue
        names = matching(funcs, entry["pattern"])
        assert names, f"tools/sass_floor.json: no kernel matches {entry['pattern']!r}"
        for n in names:
            fused = sum(op.startswith(("FFMA", "DFMA", "HFMA")) for op in opcodes(funcs[n]))
            assert fused <= entry["max_fma"], (
                f"{n}: {fused} fused multiply-adds, at most {entry['max_fma']} (tools/sass_floor.json): "
                "a product torch rounds before adding is fused (core/cuda_rules.h: mul_rn / add_rn)"
            )
            checked += 1
    assert checked > 0


def test_kernels_within_their_floor():
    res = resources()
    bad = []
    for entry in floor_entries():
        names = matching(res, entry["pattern"])
        assert names, f"tools/sass_floor.json: no kernel matches {entry['pattern']!r}"
        for n in names:
            r = res[n]
            blocks = blocks_per_sm(r["REG"], r.get("SHARED", 0), entry["threads"])
            if blocks < entry["min_blocks_per_sm"]:
                bad.append(f"{n}: {blocks} blocks per SM at {r['REG']} registers (floor {entry['min_blocks_per_sm']})")
            if r.get("LOCAL", 0) > entry.get("max_local", 0) or r.get("STACK", 0) > entry.get("max_stack", 0):
                bad.append(f"{n}: {r.get('LOCAL', 0)} bytes of local memory, stack {r.get('STACK', 0)}")
    assert bad == [], "\n".join(bad)

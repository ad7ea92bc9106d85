"""Speed-regression guard: instruction counts, not time (repeatable on a loaded, shared machine).

Runs one Python process under ``valgrind --tool=callgrind`` that calls every elementwise op of
the op table (python/myops/_table.py: every row, each float dtype it takes, 2^14 elements) and
one small case of every other family (nonzero, max_pool2d_add, diagonal, nms, roi_align_levels,
the bounded ops) through myops and through torch's own op for the same call. Only those calls
are counted: each is made through a small C trampoline (compiled here with ``cc``) that turns
callgrind's collection on for the call alone and dumps its counters after it (client requests),
so the import of torch and the set-up cost nothing. For each case the guard keeps
``torch instructions / myops instructions`` (the fewest of two calls each, after two warm-up
calls) and compares it with the committed baseline (tools/speed_guard.json): a case whose ratio
fell by more than MARGIN fails the check. The ratio
is what holds still across machines and versions of the toolchain; the counts themselves do not.

Valgrind presents a CPU without AVX-512, so both libraries run their AVX2 code here (myops' AVX2
build, torch's AVX2 kernels and oneDNN's AVX2 JIT); one thread each (OMP_NUM_THREADS=1).

    python tools/speed_guard.py              # measure and check against tools/speed_guard.json
    python tools/speed_guard.py --update     # measure and rewrite the baseline
    python tools/speed_guard.py --only gelu  # the cases whose name contains "gelu"
    python tools/speed_guard.py --update --only reciprocal  # a new op's cases into the baseline

Exit status 1 on a regression, 2 when it cannot run (no valgrind / cc). ``make speed-guard``
runs it (CI: .ci/run, which prints its time).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "speed_guard.json")
MARGIN = 0.15  # a ratio may fall this fraction below its baseline before the check fails
N = 1 << 14
# the calls are counted by callgrind's client requests (valgrind/callgrind.h): counters zeroed,
# collection on for the call only, then a dump (one file per call, in call order). Callgrind
# instruments nothing until the cases are set up (--instr-atstart=no, then
# myops_speed_guard_start): the import of torch runs at valgrind's plain speed, several times
# callgrind's, and no count changes, since none is collected before it
TRAMPOLINE = """#include <valgrind/callgrind.h>
void myops_speed_guard_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void myops_speed_guard_call(void (*f)(void)) {
  CALLGRIND_ZERO_STATS;
  CALLGRIND_TOGGLE_COLLECT;
  f();
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_DUMP_STATS;
}
"""


# ---- the cases (run in the measured process) ------------------------------------------------------


def elementwise_cases():
    """(name, myops call, torch call) for every row of the op table in each float dtype it takes."""
    import torch

    import myops
    from myops._table import EW_OPS

    aten = torch.ops.aten
    out = []
    g = torch.Generator().manual_seed(0)
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        out += dtype_cases(torch, myops, aten, EW_OPS, g, dt)
    return out


def dtype_cases(torch, myops, aten, EW_OPS, g, dt):
    """elementwise_cases for one dtype (a scope of its own: the calls bind these tensors)."""
    out = []
    x = torch.randn(N, generator=g).to(dt)
    y = torch.randn(N, generator=g).to(dt)
    z = torch.randn(N, generator=g).to(dt)
    pos = x.abs() + 0.5  # log / sqrt / rsqrt / pow's base: randn's negative half is NaN there
    lo, hi = torch.minimum(y, z), torch.maximum(y, z)
    m = torch.rand(N, generator=g) > 0.5
    two = torch.tensor(2.5, dtype=dt)
    other = torch.float32 if dt != torch.float32 else torch.float16
    # the operands by the op's C++ signature (SIG column), for the myops op and the aten overload
    # it stands in for (AT column); the other rows are spelled out below
    forms = {
        "unary": (x,),
        "binary": (x, y),
        "alpha": (x, y),
        "scalar_alpha": (x, 2.5),
        "scalar": (x, 0.5),
        "ternary": (m, x, y),
    }
    for fn, op in EW_OPS.items():
        if dt not in op.accepted:
            continue
        tag = f"{fn} {str(dt)[6:]}"
        call = op.packet
        if op.domain == "positive" and op.sig == "unary":  # on positive inputs (pos)
            out.append((tag, lambda c=call: c(pos), lambda fn=fn: getattr(torch, fn)(pos)))
        elif fn == "gelu":
            out.append((tag, lambda: myops.gelu(x), lambda: torch.nn.functional.gelu(x)))
            out.append(
                (
                    tag + " tanh",
                    lambda: myops.gelu(x, approximate="tanh"),
                    lambda: torch.nn.functional.gelu(x, approximate="tanh"),
                )
            )
        elif fn == "cast":
            out.append(
                (
                    f"cast {str(dt)[6:]}->{str(other)[6:]}",
                    lambda c=call: c(x, other),
                    lambda: aten._to_copy(x, dtype=other),
                )
            )
        elif fn == "pow":
            out.append((tag, lambda c=call: c(pos, y), lambda: torch.pow(pos, y)))
        elif fn == "pow_scalar":
            out.append((tag, lambda c=call: c(pos, 2.5), lambda: torch.pow(pos, 2.5)))
        elif fn == "add_scalar_self":
            out.append((tag, lambda c=call: c(2.5, x), lambda: aten.add.Tensor(two, x)))
        elif fn == "sub_scalar_self":
            out.append((tag, lambda c=call: c(2.5, x), lambda: aten.sub.Tensor(two, x)))
        elif fn == "mul_scalar_self":
            out.append((tag, lambda c=call: c(2.5, x), lambda: aten.mul.Tensor(two, x)))
        elif fn == "div_scalar_self":
            out.append((tag, lambda c=call: c(2.5, pos), lambda: aten.div.Tensor(two, pos)))
        elif fn == "where_scalar_self":
            out.append((tag, lambda c=call: c(m, 2.5, y), lambda: aten.where.ScalarSelf(m, 2.5, y)))
        elif fn == "where_scalar_other":
            out.append((tag, lambda c=call: c(m, x, 2.5), lambda: aten.where.ScalarOther(m, x, 2.5)))
        elif fn == "where_scalar":
            if dt == torch.float32:  # no tensor operand: one case
                out.append(("where_scalar", lambda c=call: c(m, 1.5, 2.5), lambda: aten.where.Scalar(m, 1.5, 2.5)))
        elif fn == "addcmul":
            out.append((tag, lambda c=call: c(x, y, z, value=0.5), lambda: torch.addcmul(x, y, z, value=0.5)))
        elif fn == "clamp":
            out.append((tag, lambda c=call: c(x, lo, hi), lambda: torch.clamp(x, lo, hi)))
        elif fn == "clamp_scalar":
            out.append((tag, lambda c=call: c(x, -0.5, 0.5), lambda: torch.clamp(x, -0.5, 0.5)))
        elif op.sig in forms and op.aten:
            name, _, overload = op.aten.partition(".")
            ref = getattr(getattr(aten, name), overload or "default")
            args = forms[op.sig]
            out.append((tag, lambda c=call, a=args: c(*a), lambda r=ref, a=args: r(*a)))
        else:
            raise SystemExit(f"speed_guard: no case for the op table's row {fn} (sig {op.sig}): add one")
    return out


def family_cases():
    """One small case of every other family, against the torch / torchvision call it replaces."""
    import torch
    import torch.nn.functional as F

    import myops

    g = torch.Generator().manual_seed(1)
    out = []
    mask = torch.rand(N, generator=g) > 0.5
    grid = torch.rand(16, 32, 32, generator=g) > 0.9
    out.append(("nonzero bool 50%", lambda: myops.nonzero(mask), lambda: torch.nonzero(mask)))
    out.append(("nonzero 3-d 10%", lambda: myops.nonzero(grid), lambda: torch.nonzero(grid)))
    out.append(
        ("nonzero_static", lambda: myops.nonzero_static(mask, size=4096), lambda: torch.nonzero_static(mask, size=4096))
    )
    vals = torch.randn(N, generator=g)
    out.append(
        (
            "masked_select_bounded",
            lambda: myops.masked_select_bounded(vals, mask, size=N),
            lambda: torch.masked_select(vals, mask),
        )
    )
    a = torch.randn(2, 16, 32, 32, generator=g)
    b = torch.randn(2, 1, 16, 16, generator=g)
    out.append(("max_pool2d_add", lambda: myops.max_pool2d_add(a, b), lambda: F.max_pool2d(a, 3, 2, 1) + b))
    cl = a.contiguous(memory_format=torch.channels_last)
    out.append(
        ("max_pool2d_add channels_last", lambda: myops.max_pool2d_add(cl, b), lambda: F.max_pool2d(cl, 3, 2, 1) + b)
    )
    d = torch.randn(64, 32, 32, generator=g)
    out.append(("diagonal", lambda: myops.diagonal(d, 0, -2, -1), lambda: torch.diagonal_copy(d, 0, -2, -1)))
    dg = torch.randn(64, 32, generator=g)
    out.append(
        (
            "diagonal_backward",
            lambda: myops.diagonal_backward(dg, d.shape, 0, -2, -1),
            lambda: torch.ops.aten.diagonal_backward(dg, d.shape, 0, -2, -1),
        )
    )
    try:
        import torchvision
    except ImportError:  # the vision families need it (as their tests do)
        return out
    xy = torch.rand(500, 2, generator=g) * 200
    boxes = torch.cat([xy, xy + torch.rand(500, 2, generator=g) * 40 + 1], 1)
    scores = torch.rand(500, generator=g)
    cls = torch.randint(0, 5, (500,), generator=g)
    out.append(("nms", lambda: myops.nms(boxes, scores, 0.5), lambda: torchvision.ops.nms(boxes, scores, 0.5)))
    out.append(
        (
            "batched_nms",
            lambda: myops.batched_nms(boxes, scores, cls, 0.5),
            lambda: torchvision.ops.batched_nms(boxes, scores, cls, 0.5),
        )
    )
    feats = [torch.randn(1, 8, 32, 32, generator=g), torch.randn(1, 8, 16, 16, generator=g)]
    scales = [1 / 4, 1 / 8]
    rois = torch.cat([torch.zeros(64, 1), boxes[:64] * 0.6], 1)
    levels = torch.randint(0, 2, (64,), generator=g)
    sel = [(levels == k).nonzero().flatten() for k in range(2)]

    def tv_levels():
        res = torch.zeros(64, 8, 7, 7)
        for k in range(2):
            res[sel[k]] = torchvision.ops.roi_align(feats[k], rois[sel[k]], 7, scales[k], 2, False)
        return res

    out.append(
        ("roi_align_levels", lambda: myops.roi_align_levels(feats, rois, levels, 7, scales, 2, False), tv_levels)
    )
    return out


def child(lib_path, order_path, only):
    import ctypes

    import torch

    torch.set_num_threads(1)
    import myops  # noqa: F401  (registers the ops)

    lib = ctypes.CDLL(lib_path)
    proto = ctypes.CFUNCTYPE(None)
    cases = [c for c in elementwise_cases() + family_cases() if only is None or only in c[0]]
    lib.myops_speed_guard_start()
    with open(order_path, "w") as order:
        order.write(
            json.dumps(
                {
                    "myops_cpu_isa": torch.ops.myops._cpu_isa(),
                    "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
                    "torch": torch.__version__,
                }
            )
            + "\n"
        )
        for name, mine, theirs in cases:
            for side, fn in (("myops", mine), ("torch", theirs)):
                for _ in range(2):
                    fn()  # warm-up: lazy initialisation, oneDNN's JIT, allocator
                cb = proto(fn)
                for _ in range(2):
                    lib.myops_speed_guard_call(cb)
                    order.write(json.dumps([name, side]) + "\n")
                    order.flush()


# ---- the parent: run, parse, compare ------------------------------------------------------------


def read_counts(out_dir, pid):
    """Instructions of each dump (cg.<pid>.<k>, k = 1, 2, ...) in dump order."""
    files = glob.glob(os.path.join(out_dir, f"cg.{pid}.*"))
    counts = []
    for path in sorted(files, key=lambda p: int(p.rsplit(".", 1)[1].split("-")[0])):
        total = None
        with open(path) as f:
            for line in f:
                if line.startswith(("totals:", "summary:")):
                    total = int(line.split()[1])
        counts.append(total or 0)
    return counts


def measure(only):
    for tool in ("valgrind", "cc"):
        if shutil.which(tool) is None:
            print(f"speed_guard: {tool} not found (the guard needs valgrind and a C compiler)", file=sys.stderr)
            sys.exit(2)
    with tempfile.TemporaryDirectory(prefix="myops-speed-guard-") as tmp:
        src, lib = os.path.join(tmp, "trampoline.c"), os.path.join(tmp, "libtrampoline.so")
        with open(src, "w") as f:
            f.write(TRAMPOLINE)
        built = subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", lib, src], capture_output=True, text=True)
        if built.returncode != 0:
            print(f"speed_guard: cannot build the trampoline (valgrind's headers?):\n{built.stderr}", file=sys.stderr)
            sys.exit(2)
        order_path = os.path.join(tmp, "order.jsonl")
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        env.pop("MYOPS_CPU_ISA", None)
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            "--collect-atstart=no",
            "--dump-line=no",
            f"--callgrind-out-file={os.path.join(tmp, 'cg.%p')}",
            sys.executable,
            os.path.abspath(__file__),
            "--child",
            lib,
            order_path,
        ]
        if only:
            cmd += ["--only", only]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            raise SystemExit(f"speed_guard: the measured process failed (exit {proc.returncode})")
        pid = int(proc.stderr.split("==", 2)[1])  # valgrind's "==PID== ..." lines
        with open(order_path) as f:
            meta = json.loads(f.readline())
            order = [tuple(json.loads(line)) for line in f]
        counts = read_counts(tmp, pid)
        if len(counts) < len(order):
            raise SystemExit(f"speed_guard: {len(order)} calls but {len(counts)} callgrind dumps")
    best = {}
    for (name, side), n in zip(order, counts):
        key = (name, side)
        best[key] = min(best.get(key, n), n)
    cases = {}
    for (name, side), n in best.items():
        cases.setdefault(name, {})[side] = n
    for name, c in cases.items():
        c["ratio"] = round(c["torch"] / c["myops"], 4)
    return meta, cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite the baseline with this run's ratios")
    ap.add_argument("--only", help="only the cases whose name contains this")
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--child", nargs=2, metavar=("LIB", "ORDER"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child, args.only)
    meta, cases = measure(args.only)
    if args.update:
        if args.only:  # a new op's cases (docs/contributing.md): merged into the baseline
            with open(args.baseline) as f:
                base = json.load(f)
            base["cases"].update(cases)
            meta, cases = {k: v for k, v in base.items() if k not in ("about", "margin", "cases")}, base["cases"]
        with open(args.baseline, "w") as f:
            json.dump(
                {
                    "about": "tools/speed_guard.py: torch / myops instructions per call (callgrind), "
                    f"{N} elements, one thread",
                    "margin": MARGIN,
                    **meta,
                    "cases": cases,
                },
                f,
                indent=1,
                sort_keys=False,
            )
            f.write("\n")
        print(f"speed_guard: wrote {len(cases)} cases to {args.baseline}")
        return 0
    base = {"cases": {}}
    if os.path.exists(args.baseline) and os.path.getsize(args.baseline):
        with open(args.baseline) as f:
            base = json.load(f)
    failed, missing = [], []
    print(f"{'case':40s} {'myops Ir':>10s} {'torch Ir':>10s} {'ratio':>7s} {'baseline':>8s}")
    for name, c in cases.items():
        b = base["cases"].get(name)
        ref = b["ratio"] if b else None
        flag = ""
        if ref is None:
            missing.append(name)
            flag = "  (no baseline: --update)"
        elif c["ratio"] < ref * (1 - MARGIN):
            failed.append(name)
            flag = f"  REGRESSION ({c['ratio'] / ref:.2f}x of its baseline)"
        elif c["ratio"] > ref * (1 + MARGIN):
            flag = "  (faster than its baseline: --update to keep it)"
        print(
            f"{name:40s} {c['myops']:10d} {c['torch']:10d} {c['ratio']:7.3f} "
            f"{ref if ref is not None else float('nan'):8.3f}{flag}"
        )
    gone = [] if args.only else [n for n in base["cases"] if n not in cases]
    if gone:
        print(f"speed_guard: baseline cases no longer measured: {', '.join(gone)} (--update)")
    if failed or missing or gone:
        print(
            f"speed_guard: FAILED: {len(failed)} case(s) more than {MARGIN:.0%} below their baseline ratio"
            + (f": {', '.join(failed)}" if failed else "")
            + (f"; {len(missing)} without a baseline" if missing else "")
        )
        return 1
    print(f"speed_guard: ok ({len(cases)} cases within {MARGIN:.0%} of their baseline ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

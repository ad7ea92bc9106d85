"""The variant sweep (issue #54): every CUDA kernel variant (csrc/core/variants.h) x its family's
headline cases, each result checked against torch, then timed in turn with torch and Inductor
(torch.compile of the same torch call, compiled once per case outside the timing; not for
`nonzero`, whose data-dependent shape Inductor hands back to eager; samples interleaved,
runner.measure_interleaved). Writes <gpu>-<date>-sweep.md / .json into --out: one
row per op, variant and case; a check that fails makes the row an error row (no time). The
composite ops' rows also list the time of each kernel they launch (torch.profiler).

    python benchmarks/sweep.py --out gpu-out                 # on the GPU
    python benchmarks/sweep.py --emulation --out /tmp/sweep   # on the CPU, through the emulation

Run through gpu/gpu_session.sh [--dry-run] sweep (benchmarks/README.md, "GPU"). With
--emulation the variants run through the CUDA emulation (tests/cuda_emulation/loader.py) at small
sizes: the plumbing and every variant's result are checked, the times mean nothing.
The ops are called through the dispatcher (torch.ops.myops.<op>), the variant set per row with
torch.ops.myops._set_cuda_variant (the emulation: myops_emu::_emu_variant).
"""

import argparse
import datetime
import json
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import runner  # noqa: E402

# the nonzero family's cases: (elements, dtype, density); the emulation's are smaller
NONZERO_SIZES = {"cuda": (10**3, 10**5, 10**7, 10**8), "emulation": (10**3, 10**4)}
DENSITIES = (0.01, 0.5, 0.99)
# max_pool2d_add: (self, other) shapes
MAX_POOL_SHAPES = {"cuda": ((32, 64, 112, 112), (32, 1, 56, 56)), "emulation": ((2, 16, 14, 14), (2, 1, 7, 7))}
# binary16: the broadcast headline of benchmarks/bench_elementwise.py, [N,C,H,W] op [1,C,1,1]
BINARY16_SHAPES = {"cuda": ((32, 64, 56, 56), (1, 64, 1, 1)), "emulation": ((2, 16, 6, 6), (1, 16, 1, 1))}
# no Inductor peer: a data-dependent output shape (Inductor runs it eagerly)
NO_INDUCTOR = ("nonzero",)


def nonzero_cases(where):
    for numel in NONZERO_SIZES[where]:
        for dtype in (torch.bool, torch.float32) if numel >= 10**7 else (torch.bool,):
            for density in DENSITIES:
                if dtype == torch.float32 and density != 0.01:
                    continue  # float32: the 1% case only
                yield numel, dtype, density


def make_input(numel, dtype, density, device):
    g = torch.Generator().manual_seed(numel ^ int(density * 1000))
    keep = torch.rand(numel, generator=g) < density
    x = keep if dtype == torch.bool else (torch.rand(numel, generator=g) + 0.5).to(dtype) * keep
    return x.to(device)


class Ops:
    """The ops and the variant setter: the CUDA build's, or the emulation's."""

    def __init__(self, emulation):
        if emulation:
            from cuda_emulation.loader import build  # noqa: PLC0415

            self.lib = build()
            self.set_variant = self.lib._emu_variant
            self.device = "cpu"
        else:
            import myops  # noqa: F401, PLC0415 (registers torch.ops.myops)

            self.lib = torch.ops.myops
            self.set_variant = torch.ops.myops._set_cuda_variant
            self.device = "cuda"


# every tunable op -> its family's rows: (case label, myops call, torch call) for one input
def family_rows(op, ops, where):
    if op in ("nonzero", "nonzero_static"):
        for numel, dtype, density in nonzero_cases(where):
            x = make_input(numel, dtype, density, ops.device)
            label = f"[{numel:.0e}] {'bool' if dtype == torch.bool else 'f32'} {round(density * 100)}%"
            if op == "nonzero":
                yield label, (lambda x=x: ops.lib.nonzero(x)), (lambda x=x: torch.nonzero(x))
            else:
                size = max(1, int(torch.count_nonzero(x)))  # the size a user would pass: the expected count
                yield (
                    label,
                    (lambda x=x, s=size: ops.lib.nonzero_static(x, size=s)),
                    (lambda x=x, s=size: torch.nonzero_static(x, size=s)),
                )
    elif op == "max_pool2d_add":
        # the headline (benchmarks/bench_max_pool2d_add.py): fp32 [32, 64, 112, 112] + [32, 1, 56, 56],
        # 3x3 / 2 / 1, both layouts; half as well (8-channel packs)
        shape, oshape = MAX_POOL_SHAPES[where]
        g = torch.Generator().manual_seed(7)
        for dtype in (torch.float32, torch.float16):
            x = torch.randn(shape, generator=g).to(dtype).to(ops.device)
            o = torch.randn(oshape, generator=g).to(dtype).to(ops.device)
            for layout in ("NCHW", "channels_last"):
                xl = x.contiguous(memory_format=torch.channels_last) if layout != "NCHW" else x
                label = f"{list(shape)}+{list(oshape)} {str(dtype)[6:]} {layout}"
                yield (
                    label,
                    (lambda x=xl, o=o: ops.lib.max_pool2d_add(x, o, [3, 3], [2, 2], [1, 1], False)),
                    (lambda x=xl, o=o: torch.nn.functional.max_pool2d(x, 3, 2, 1) + o),
                )
    elif op == "binary16":
        shape, bshape = BINARY16_SHAPES[where]
        g = torch.Generator().manual_seed(16)
        for dtype in (torch.float16, torch.bfloat16):
            x = torch.randn(shape, generator=g).to(dtype).to(ops.device)
            b = torch.randn(bshape, generator=g).to(dtype).to(ops.device)
            for layout in ("NCHW", "channels_last"):
                xl = x.contiguous(memory_format=torch.channels_last) if layout != "NCHW" else x
                for name in ("mul", "add"):
                    label = f"{name} {list(shape)}*{list(bshape)} {str(dtype)[6:]} {layout}"
                    mine, theirs = getattr(ops.lib, name), getattr(torch, name)
                    yield label, (lambda x=xl, b=b, f=mine: f(x, b)), (lambda x=xl, b=b, f=theirs: f(x, b))
    else:
        raise SystemExit(f"sweep.py: no cases for the tunable op {op}")


# composite ops: their rows also get the time of each kernel they launch (torch.profiler)
COMPOSITE = ("nonzero", "nonzero_static")


def kernel_breakdown(fn, where):
    """[(kernel, calls, microseconds per call of fn)] of one profiled call after a warm one: the
    device's kernels and copies on the GPU, the ops on the CPU (the emulation: plumbing only)."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    fn()
    cuda = where == "cuda"
    with profile(activities=[ProfilerActivity.CUDA if cuda else ProfilerActivity.CPU]) as prof:
        fn()
        if cuda:
            torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", 0) if cuda else e.self_cpu_time_total
        if t > 0:
            rows.append((e.key[:90], e.count, round(t, 1)))
    return sorted(rows, key=lambda r: -r[2])[:8]


def device_arch(where):
    """The tuning table's architecture: the GPU's, the emulated H100's (90) in the emulation."""
    if where != "cuda":
        return 90
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def sweep(ops, where, only=None, min_time=0.3, inductor=True, on_row=None):
    entries = [e.split(":") for e in torch.ops.myops._cuda_variants()]
    arch = device_arch(where)
    defaults = set(torch.ops.myops._cuda_variant_defaults(arch))
    rows = []
    for op in dict.fromkeys(op for op, _ in entries):
        if only and op not in only:
            continue
        variants = [v for o, v in entries if o == op]
        for label, mine, theirs in family_rows(op, ops, where):
            expected = theirs()
            compiled, inductor_error = None, None
            if inductor and op not in NO_INDUCTOR:
                compiled, inductor_error = runner.compile_peer(theirs)
            for v in variants:
                row = {"op": op, "variant": v, "case": label, "default": f"{op}:{v}" in defaults}
                old = ops.set_variant(f"{op}:{v}")
                try:
                    got = mine()
                    if not (got.shape == expected.shape and torch.equal(got.cpu(), expected.cpu())):  # every bit
                        raise AssertionError(f"differs from torch: {tuple(got.shape)} vs {tuple(expected.shape)}")
                    fns = [mine, theirs] + ([compiled] if compiled else [])
                    times = runner.measure_interleaved(
                        fns, ops.device, min_time=min_time, warmup=1 if where == "emulation" else 3
                    )
                    row.update(myops_s=times[0], torch_s=times[1], speedup=times[1] / times[0])
                    if compiled:
                        row.update(inductor_s=times[2], vs_inductor=times[2] / times[0])
                    elif inductor_error:
                        row["inductor_error"] = inductor_error
                    if op in COMPOSITE:
                        try:
                            row["kernels"] = kernel_breakdown(mine, where)
                        except Exception as e:  # noqa: BLE001 - the timing stands without it
                            row["kernels"] = [(f"profiler failed: {runner.error_text(e)}", 0, 0)]
                except Exception as e:  # noqa: BLE001 - an error row, the sweep goes on
                    row["error"] = runner.error_text(e)
                finally:
                    ops.set_variant(old)
                rows.append(row)
                if on_row:
                    on_row(rows)
                print(f"{op:16s} {v:10s} {label:22s} " + (row.get("error") or f"{row['speedup']:.2f}x"), flush=True)
    return rows, arch


def markdown(rows, meta):
    lines = [
        f"# Variant sweep: {meta['device']}, {meta['date']}",
        "",
        f"torch {meta['torch']}, myops {meta['commit']}, architecture sm_{meta['arch']}"
        + (" (the CUDA emulation on the CPU: times mean nothing)" if meta["emulation"] else "")
        + ". Default: the tuning table's choice (csrc/core/variants.h).",
        "",
        "Inductor: torch.compile of the torch call (- where not timed: "
        + ", ".join(f"`{op}`, a data-dependent shape" for op in NO_INDUCTOR)
        + ", or a sweep run with --no-inductor; an error names why). Speedups: the other's time / myops'.",
        "",
        "| op | variant | case | myops | torch | inductor | vs torch | vs inductor | default |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            cells = ["ERROR", "", "", r["error"].replace("|", "/"), ""]
        else:
            cells = [runner.fmt_time(r["myops_s"]), runner.fmt_time(r["torch_s"]), "-", f"{r['speedup']:.2f}x", ""]
            if "inductor_s" in r:
                cells[2], cells[4] = runner.fmt_time(r["inductor_s"]), f"{r['vs_inductor']:.2f}x"
            elif "inductor_error" in r:
                cells[2] = "error: " + r["inductor_error"].replace("|", "/")[:120]
        lines.append(
            f"| {r['op']} | {r['variant']} | {r['case']} | "
            + " | ".join(cells)
            + f" | {'yes' if r['default'] else ''} |"
        )
    lines += [
        "",
        "## Kernel breakdown of the composite ops",
        "",
        "One profiled call (torch.profiler): each kernel or copy, its launches, its time in µs"
        + (" (the emulation: CPU ops, plumbing only)." if meta["emulation"] else "."),
        "",
        "| op | variant | case | kernels |",
        "|---|---|---|---|",
    ]
    for r in rows:
        if r.get("kernels"):
            ks = "; ".join(f"{name.replace('|', '/')} x{n}: {t}" for name, n, t in r["kernels"])
            lines.append(f"| {r['op']} | {r['variant']} | {r['case']} | {ks} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--emulation", action="store_true", help="the variants through the CUDA emulation (CPU)")
    p.add_argument("--ops", nargs="*", help="only these tunable ops")
    p.add_argument("--min-time", type=float, default=0.3, help="seconds of samples per row")
    p.add_argument("--no-inductor", action="store_true", help="leave out the Inductor column (it compiles each case)")
    args = p.parse_args(argv)
    where = "emulation" if args.emulation else "cuda"
    ops = Ops(args.emulation)
    device = "cpu-dryrun" if args.emulation else torch.cuda.get_device_name()
    meta = dict(
        device=device,
        date=datetime.date.today().isoformat(),
        torch=torch.__version__,
        commit=runner.git_commit(),
        arch=device_arch(where),
        emulation=args.emulation,
    )
    stem = os.path.join(args.out, f"{re.sub(r'[^A-Za-z0-9._-]+', '-', device)}-{meta['date']}-sweep")
    os.makedirs(args.out, exist_ok=True)

    def write(rows):  # after every row: a sweep cut by its deadline keeps what it measured
        with open(stem + ".json", "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        with open(stem + ".md", "w") as f:
            f.write(markdown(rows, meta))

    rows, _ = sweep(ops, where, args.ops, args.min_time, inductor=not args.no_inductor, on_row=write)
    write(rows)
    errors = sum(1 for r in rows if "error" in r)
    print(f"sweep: {len(rows)} rows, {errors} error rows -> {stem}.md / .json")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

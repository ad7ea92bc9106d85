"""`make demo`: myops against torch on every device present.

For each device: one table row per op (shape, dtype, exact or max error against torch, myops
time, torch time, ratio torch/myops), then an unmodified torchvision Faster R-CNN on torch's
kernels and under myops.enable() (the dispatcher drop-in): times interleaved, medians, the ratio,
detections equal or not, and the calls routed per run. Then the deploy step (issue #28, CPU;
--no-deploy skips it): the detector made static, exported, compiled by AOTInductor and run
by examples/cpp's myops_detect with no Python, its detections compared with eager torchvision's.
The same tables are written as markdown to the file named by --out (default: demo-results.md).
"""

import argparse
import datetime
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from runner import cpu_builds, cpu_model, device_name, error_text, fmt_time, measure_interleaved  # noqa: E402

import myops  # noqa: E402


def cases(device):
    """(op, shape text, dtype, myops call, torch call). Sizes are chosen so the whole demo
    takes a few minutes on 2 CPU cores."""
    big = device != "cpu"
    n = 1 << (24 if big else 22)
    f32 = dict(device=device, dtype=torch.float32)
    x = torch.randn(n, **f32)
    y = torch.randn(n, **f32)
    h = x.half()
    mask = torch.rand(n, device=device) < 0.5
    grid = torch.rand(256, 4096, device=device) < 0.01
    nb = 32 if big else 8
    act = torch.randn(nb, 64, 56, 56, **f32)
    bias = torch.randn(1, 64, 1, 1, **f32)
    src = torch.randn(nb, 64, 112, 112, **f32)
    oth = torch.randn(nb, 1, 56, 56, **f32)
    mats = torch.randn(256 if big else 64, 256, 256, **f32)
    lo, hi = -y.abs(), y.abs()  # made once: the timed calls are the clamps alone
    s1 = f"[{n}]"
    yield ("nonzero", s1 + " 50%", "bool", lambda: myops.nonzero(mask), lambda: torch.nonzero(mask))
    yield ("nonzero", "[256,4096] 1%", "bool", lambda: myops.nonzero(grid), lambda: torch.nonzero(grid))
    yield (
        "nonzero_static",
        "[256,4096] 1%",
        "bool",
        lambda: myops.nonzero_static(grid, size=12000),
        lambda: torch.nonzero_static(grid, size=12000),
    )
    yield ("where(cond)", s1 + " 50%", "bool", lambda: myops.where(mask), lambda: torch.where(mask))
    yield ("argwhere", "[256,4096] 1%", "bool", lambda: myops.argwhere(grid), lambda: torch.argwhere(grid))
    yield ("relu", s1, "float32", lambda: myops.relu(x), lambda: torch.relu(x))
    yield ("gelu", s1, "float32", lambda: myops.gelu(x), lambda: F.gelu(x))
    yield ("silu", s1, "float32", lambda: myops.silu(x), lambda: F.silu(x))
    yield ("sigmoid", s1, "float16", lambda: myops.sigmoid(h), lambda: torch.sigmoid(h))
    yield ("cast", s1 + " -> f16", "float32", lambda: myops.cast(x, torch.float16), lambda: x.to(torch.float16))
    yield ("add", s1, "float32", lambda: myops.add(x, y), lambda: torch.add(x, y))
    yield ("add", "[%d,64,56,56]+[1,64,1,1]" % nb, "float32", lambda: myops.add(act, bias), lambda: act + bias)
    yield ("mul", s1, "float32", lambda: myops.mul(x, y), lambda: x * y)
    yield ("div", s1, "float32", lambda: myops.div(x, y), lambda: x / y)
    yield ("maximum", s1, "float32", lambda: myops.maximum(x, y), lambda: torch.maximum(x, y))
    yield ("where", s1, "float32", lambda: myops.where(mask, x, y), lambda: torch.where(mask, x, y))
    yield (
        "addcmul",
        s1,
        "float32",
        lambda: myops.addcmul(x, x, y, value=0.5),
        lambda: torch.addcmul(x, x, y, value=0.5),
    )
    yield ("clamp", s1, "float32", lambda: myops.clamp(x, lo, hi), lambda: torch.clamp(x, lo, hi))
    yield (
        "max_pool2d_add",
        "[%d,64,112,112]+[%d,1,56,56]" % (nb, nb),
        "float32",
        lambda: myops.max_pool2d_add(src, oth),
        lambda: F.max_pool2d(src, 3, 2, 1) + oth,
    )
    yield (
        "diagonal",
        "[%d,256,256] (-2,-1)" % mats.shape[0],
        "float32",
        lambda: myops.diagonal(mats, 0, -2, -1),
        lambda: torch.diagonal(mats, 0, -2, -1).contiguous(),
    )


def compare(a, b):
    if isinstance(a, tuple):
        results = [compare(u, v) for u, v in zip(a, b)]
        return "exact" if all(r == "exact" for r in results) else "; ".join(results)
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"MISMATCH {tuple(a.shape)} {a.dtype} vs {tuple(b.shape)} {b.dtype}"
    if torch.equal(a, b) or (
        a.is_floating_point() and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    ):
        return "exact"
    return "max err %.3g" % (a.double() - b.double()).abs().max().item()


def op_table(device):
    rows = []
    for op, shape, dtype, mine, ref in cases(device):
        try:
            err = compare(mine(), ref())
            # samples interleaved (myops, torch, ...): a GPU's clocks still ramping up, or a busy
            # neighbour, land on both alike
            tm, tt = measure_interleaved([mine, ref], device, min_time=0.1, max_reps=30)
            row = [op, shape, dtype, err, fmt_time(tm), fmt_time(tt), f"{tt / tm:.2f}x"]
        except Exception as e:  # an op that fails is reported, not hidden
            row = [op, shape, dtype, f"ERROR: {error_text(e, 100)}", "-", "-", "-"]
        print("  " + " | ".join(row), flush=True)
        rows.append(row)
    return rows


def detector(device, reps=7):
    """The detector on torch's kernels and under myops.enable(): their runs interleaved
    (torch, myops, torch, ...), median of each, so a neighbour's load lands on both alike."""
    from bench_detector import build, identical, routed_per_run

    run_torch, run_myops = build(device)
    equal = identical(run_myops(), run_torch())
    t_torch, t_myops = measure_interleaved([run_torch, run_myops], device, min_time=1e6, max_reps=reps)
    routed, back = routed_per_run(run_torch)
    ndet = sum(len(o["boxes"]) for o in run_torch())
    return [
        "fasterrcnn_resnet50_fpn, 2 images 320x320",
        fmt_time(t_torch),
        fmt_time(t_myops),
        f"{t_torch / t_myops:.2f}x",
        "equal" if equal else "DIFFERENT",
        str(ndet),
        ", ".join(f"{k} {v}" for k, v in routed.items()) + (f"; handed back: {back}" if back else ""),
    ]


def deploy_step():
    """Issue #28: fasterrcnn_resnet50_fpn (tests/test_detection.py's seeded model and images)
    made static, exported, compiled by AOTInductor and run from C++, against eager torchvision.
    The package and the program are cached in build/deploy/ (benchmarks/bench_deploy.py). Its
    markdown lines; a step that cannot run (no cmake, no compiler, no pytest for the tests'
    helpers) says why and the demo goes on."""
    head = ["## deploy: a detector exported and run from C++ (no Python in that process)", ""]
    try:
        from bench_deploy import (
            MODEL,
            aoti_package,
            box_gap,
            cpu,
            detect_program,
            eager,
            model_and_images,
            run_from_cpp,
            tests,
            verdict,
        )

        td, _ = tests()
        program = detect_program()
    except (ImportError, RuntimeError) as e:
        line = f"deploy step skipped: {error_text(e, 200)}"
        print("  " + line, flush=True)
        return head + [line, ""]
    from myops import detection

    model, x = model_and_images("cpu", 1)
    #   static = myops.detection.make_static(model, portable=True)   # no torchvision op
    #   ep = torch.export.export(static, (x,), strict=False)           # static shapes throughout
    #   torch._inductor.aoti_compile_and_package(ep, package_path=...)
    #   myops_detect package.pt2 images.pt out.pt 1                    # C++: run it, time 1 run
    package = aoti_package(model, x, log=lambda m: print(m, flush=True))
    with torch.no_grad():
        portable = detection.make_static(model, portable=True)(x)
    got, seconds = run_from_cpp(program, package, x, list(portable), repeats=1)
    ref = eager(model, x)
    md = head + [
        f"`{MODEL}`, seeded random weights, batch {x.shape[0]} of {tuple(x.shape[-2:])}: package "
        f"`{os.path.relpath(package)}`, run by `{os.path.relpath(program)}` (one timed run there, "
        f"after one untimed: {fmt_time(seconds)})",
        "",
        "| image | eager torchvision | AOTI from C++ | eager boxes with one of the same label within "
        "0.5 px | median / largest gap (px) |",
        "|---|---|---|---|---|",
    ]
    for i, (n, m, gaps) in enumerate(box_gap(ref, detection.unpad(got))):
        spread = f"{gaps.median().item():.3g} / {gaps.max().item():.3g}" if n else "-"
        md.append(f"| {i} | {n} detections | {m} detections | {int((gaps <= 0.5).sum())} of {n} | {spread} |")
    # the verdicts: tests/test_detection.py's own rule for Inductor's outputs
    md += [
        "",
        f"- same detections as eager torchvision: {verdict(td.assert_matches_inductor, ref, got)}",
        f"- same detections as the portable module it was made from, run in Python: "
        f"{verdict(td.assert_matches_inductor, cpu(detection.unpad(portable)), got)}",
        "",
    ]
    print("\n".join("  " + line for line in md[2:]), flush=True)
    return md


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="demo-results.md")
    p.add_argument("--no-detector", action="store_true")
    p.add_argument(
        "--no-deploy",
        action="store_true",
        help="skip the deploy step (export + AOTInductor + C++; minutes the first time)",
    )
    p.add_argument(
        "--device", nargs="+", default=None, help="devices to run (default: cpu, and cuda when a GPU is visible)"
    )
    args = p.parse_args()
    myops.show_config()
    devices = args.device or (["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    md = [
        "# myops demo",
        "",
        f"{datetime.date.today().isoformat()}, torch {torch.__version__}; ratio = torch time / myops time "
        "(> 1: myops faster), both measured in this run (median).",
        "",
    ]
    for device in devices:
        name = device_name(device)
        print(f"\n== {device}: {name}", flush=True)
        md += [f"## {device}: {name}", ""]
        if device == "cpu":  # which CPU builds ran (MYOPS_CPU_ISA / ATEN_CPU_CAPABILITY pick them)
            mine, theirs = cpu_builds()
            line = f"CPU {cpu_model()}: myops CPU build `{mine}`, torch CPU capability `{theirs}`"
            print("  " + line, flush=True)
            md += [line, ""]
        md += ["| op | shape | dtype | vs torch | myops | torch | ratio |", "|---|---|---|---|---|---|---|"]
        md += ["| " + " | ".join(r) + " |" for r in op_table(device)]
        md.append("")
        write(args.out, md)  # after every table: a run cut short keeps what it measured
        if not args.no_detector:
            print("  detector ...", flush=True)
            try:
                row = detector(device)
            except Exception as e:  # reported, not hidden, and the tables above are kept
                row = ["fasterrcnn_resnet50_fpn, 2 images 320x320", f"ERROR: {error_text(e, 100)}"] + ["-"] * 5
            print("  " + " | ".join(row), flush=True)
            md += [
                "| model | torch | myops.enable() | ratio | detections | count | calls routed per run |",
                "|---|---|---|---|---|---|---|",
                "| " + " | ".join(row) + " |",
                "",
            ]
            write(args.out, md)
    if not args.no_deploy:
        print("\n== deploy (cpu) ...", flush=True)
        try:
            md += deploy_step()
        except Exception as e:  # reported, not hidden, and the tables above are kept
            print(f"  deploy step ERROR: {error_text(e)}", flush=True)
            md += ["## deploy", "", f"ERROR: {error_text(e)}", ""]
        write(args.out, md)
    print("\n" + "\n".join(md))
    print(f"\nwrote {args.out}")


def write(path, md):
    with open(path, "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()

"""The one benchmark runner shared by every op family.

A family is a module ``benchmarks/bench_<family>.py`` with a function
``cases(device: str, quick: bool) -> list[Case]``. The runner times every case's myops
function and its torch baselines in the same process, their samples interleaved (median of
many runs after warm-up; CUDA events on a GPU), measures the device's copy bandwidth once, and writes a markdown
table (and JSON) with time, ratio against torch, achieved GB/s, fraction of the bandwidth
floor and, on CUDA, peak memory.

    python benchmarks/runner.py --family nonzero --device cpu cuda --quick
    python benchmarks/runner.py --out benchmarks/results/   # every family, every device
    python benchmarks/runner.py --family elementwise --cpu-isa avx2 avx512 --out benchmarks/results/

Every CPU report names the myops CPU build that ran (baseline / avx2 / avx512 / avx512_bf16:
torch.ops.myops._cpu_isa()), torch's own CPU capability and the CPU model. --cpu-isa runs the
CPU families once per myops build, each in a fresh process with MYOPS_CPU_ISA=<build> and torch
held to the matching level (ATEN_CPU_CAPABILITY=avx2 + ONEDNN_MAX_CPU_ISA=AVX2 for avx2,
ATEN_CPU_CAPABILITY=avx512 for the AVX-512 builds, default for baseline), as on a machine whose
best ISA is that one, and writes one report per build plus a side-by-side table.
"""

import argparse
import dataclasses
import datetime
import importlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import warnings
from typing import Callable, Dict, Optional

import torch

# Inductor's own deprecation notes, once per compiled case, would bury the table
warnings.filterwarnings("ignore", category=FutureWarning, module=r"torch\._inductor")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
FAMILIES = [
    "nonzero",
    "elementwise",
    "max_pool2d_add",
    "diagonal",
    "latency",
    "detector",
    "nms",
    "postprocess",
    "deploy",
]


@dataclasses.dataclass
class Case:
    label: str  # op name, e.g. "nonzero"
    sub_label: str  # shape / dtype / variant, e.g. "[1e6] bool 50%"
    myops: Callable[[], object]  # the myops call to time (no arguments)
    torch: Dict[str, Callable[[], object]]  # baselines: name -> call; the first is the reference
    bytes: int = 0  # fewest bytes that must move (inputs read once + outputs written once)
    numel: int = 0  # elements, for the latency rows
    memory: bool = False  # report peak memory of each call (CUDA)
    target: Optional[float] = None  # target (docs/performance.md, "Targets") for the ratio torch/myops, if any
    floor_target: Optional[float] = None  # ... and for the fraction of the bandwidth floor, if any
    series: str = ""  # curve this case belongs to in the size plots, e.g. "float32 contiguous"
    inductor: bool = True  # also time torch.compile (Inductor) of the reference torch call
    # peers that time themselves (e.g. a program in another process): name -> call returning
    # seconds per run; called once each after the interleaved samples, reported after `torch`'s
    timed: Dict[str, Callable[[], float]] = dataclasses.field(default_factory=dict)
    # one of the family's headline cases (the cases its speed targets are read from): --headline runs only these
    # (the GPU session's bench part, gpu/gpu_session.py)
    headline: bool = False


# The second peer of every row: torch.compile (Inductor) of the same torch call as the first
# baseline, compiled once per case outside the timed region. Off with --no-inductor.
INDUCTOR = "inductor"
USE_INDUCTOR = True


def reference(row):
    """The row's first baseline (eager torch), or None for an error row: every reader of a
    ratio goes through here, so an error row (no baselines) never breaks a reader."""
    for b in row.get("baselines", {}).values():
        return b if "ratio" in b else None
    return None


def compile_peer(fn):
    """torch.compile(fn) warmed up (compiled) outside any timing; (callable, None) or
    (None, error text) when Inductor cannot compile it. Dynamo's caches are reset first: the
    cases' closures share code objects, and past its recompile limit Dynamo would silently run
    eager and the column would time eager under Inductor's name."""
    try:
        torch._dynamo.reset()
        compiled = torch.compile(fn)
        for _ in range(2):
            compiled()
        return compiled, None
    except Exception as e:  # noqa: BLE001 - reported in the cell, the row goes on
        return None, error_text(e)


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def measure(fn, device, min_time=0.2, max_reps=200, warmup=3):
    """Median seconds per call. Small calls are batched so one sample lasts >= ~1 ms."""
    return measure_interleaved([fn], device, min_time=min_time, max_reps=max_reps, warmup=warmup)[0]


def measure_interleaved(fns, device, min_time=0.3, max_reps=200, warmup=3, min_reps=5):
    """Median seconds per call of each of `fns`, their samples taken in turn (myops, torch,
    myops, torch, ...) so that a drift of the machine (frequency, a neighbour on a shared
    host) lands on every function alike rather than on whichever ran first."""
    batches = []
    for fn in fns:
        for _ in range(warmup):
            fn()
        sync(device)
        t0 = time.perf_counter()
        fn()
        sync(device)
        one = max(time.perf_counter() - t0, 1e-7)
        batches.append((one, max(1, min(1000, int(1e-3 / one)))))
    per_round = sum(one * batch for one, batch in batches)
    reps = max(min_reps, min(max_reps, int(min_time / per_round)))
    samples = [[] for _ in fns]
    for _ in range(reps):
        for k, fn in enumerate(fns):
            samples[k].append(_sample(fn, batches[k][1], device))
    return [statistics.median(s) for s in samples]


def _sample(fn, batch, device):
    if device.startswith("cuda"):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / batch
    t0 = time.perf_counter()
    for _ in range(batch):
        fn()
    return (time.perf_counter() - t0) / batch


def peak_memory(fn, device):
    """Peak bytes allocated during one call beyond what was allocated before (CUDA only)."""
    if not device.startswith("cuda"):
        return None
    sync(device)
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = fn()
    sync(device)
    peak = torch.cuda.max_memory_allocated() - before
    del out
    return peak


def copy_bandwidth(device, nbytes=256 << 20):
    """Device-to-device copy bandwidth in bytes/s (bytes read + bytes written)."""
    src = torch.randn(nbytes // 4, device=device)
    dst = torch.empty_like(src)
    t = measure(lambda: dst.copy_(src), device, min_time=0.3, max_reps=50)
    return 2 * nbytes / t


def device_name(device):
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(device)
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu} ({torch.get_num_threads()} threads)"


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or what platform knows)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_builds():
    """(myops CPU build that runs, torch's CPU capability): recorded in every CPU report."""
    try:
        mine = torch.ops.myops._cpu_isa()
    except Exception as e:  # a bad MYOPS_CPU_ISA: say so in the report
        mine = f"error: {e}".splitlines()[0]
    try:
        theirs = torch.backends.cpu.get_cpu_capability()
    except Exception:
        theirs = "unknown"
    return mine, theirs


# torch held to the ISA of each myops build (see the module docstring)
TORCH_ENV_FOR_ISA = {
    "baseline": {"ATEN_CPU_CAPABILITY": "default"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512"},
    "avx512_bf16": {"ATEN_CPU_CAPABILITY": "avx512"},
}


def git_commit():
    try:
        return subprocess.check_output(
            ["git", "rev-parse", "--short", "HEAD"], cwd=HERE, stderr=subprocess.DEVNULL, text=True
        ).strip()
    except Exception:
        return "unknown"


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_bytes(b):
    if b is None:
        return "-"
    return f"{b / 2**20:.1f} MiB"


def error_text(e, limit=300):
    """An exception in one line: its type and the first line of its message."""
    first = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {first}"[:limit]


def error_row(family, device, label, sub_label, e):
    """A case (or a whole family) that raised: reported in its place, the run goes on."""
    return {
        "family": family,
        "device": device,
        "label": label,
        "sub_label": sub_label,
        "error": error_text(e),
        "baselines": {},
    }


def run_family(family, device, quick, bw, ops=None, headline=False):
    """One row per case. A case that raises (a kernel that fails, a result that differs) becomes
    an error row and the family goes on: one failure never costs the other measurements. `ops`:
    only the cases whose op (the row's first column) it names; `headline`: only the headline cases."""
    mod = importlib.import_module(f"bench_{family}")
    rows = []
    try:
        cases = mod.cases(device, quick)
        if ops:
            cases = [c for c in cases if c.label in ops]
        if headline:
            cases = [c for c in cases if c.headline]
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        rows.append(error_row(family, device, family, "(cases)", e))
        print(f"  {family}: ERROR building the cases: {rows[-1]['error']}", flush=True)
        return rows
    for case in cases:
        try:
            rows.append(measure_case(family, case, device, bw))
        except Exception as e:  # noqa: BLE001
            rows.append(error_row(family, device, case.label, case.sub_label, e))
        print(format_row(rows[-1]), flush=True)
    return rows


def measure_case(family, case, device, bw):
    peers = dict(case.torch)
    inductor_error = None
    if USE_INDUCTOR and case.inductor and peers:
        compiled, inductor_error = compile_peer(next(iter(peers.values())))
        if compiled is not None:
            peers[INDUCTOR] = compiled
    try:
        times = measure_interleaved([case.myops] + list(peers.values()), device)
    except Exception as e:  # noqa: BLE001 - the compiled peer may fail only when timed (a mode
        if INDUCTOR not in peers:  # it was not compiled under): the eager row still counts
            raise
        del peers[INDUCTOR]
        inductor_error = error_text(e)
        times = measure_interleaved([case.myops] + list(peers.values()), device)
    t_my = times[0]
    timed = {}
    for name, fn in case.timed.items():
        try:
            timed[name] = {"s": fn()}
        except Exception as e:  # noqa: BLE001 - reported in the cell, the row goes on
            timed[name] = {"error": error_text(e)}
    row = {
        "family": family,
        "device": device,
        "label": case.label,
        "sub_label": case.sub_label,  # read after every peer ran: a peer set up lazily may add to it
        "myops_s": t_my,
        "bytes": case.bytes,
        "numel": case.numel,
        "target": case.target,
        "floor_target": case.floor_target,
        "series": case.series or default_series(case),
        "baselines": {},
    }
    if case.bytes:
        row["myops_GBps"] = case.bytes / t_my / 1e9
        row["floor_s"] = case.bytes / bw
        row["floor_frac"] = row["floor_s"] / t_my
    if case.memory:
        row["myops_peak_bytes"] = peak_memory(case.myops, device)
    for (name, fn), t in zip(peers.items(), times[1:]):
        b = {"s": t, "ratio": t / t_my}
        if case.memory:
            b["peak_bytes"] = peak_memory(fn, device)
        row["baselines"][name] = b
    if inductor_error:
        row["baselines"][INDUCTOR] = {"error": inductor_error}
    for name, b in timed.items():
        row["baselines"][name] = dict(b, ratio=b["s"] / t_my) if "s" in b else b
    return row


def default_series(case):
    """The curve of a case in the size plots: its label and sub_label without the leading
    shape/size token and without per-size parameters ("[2^20] f32" -> "add f32")."""
    rest = re.sub(r"^\[[^\]]*\]\s*", "", case.sub_label)
    rest = re.sub(r"\s*size=\d+", "", rest)
    return f"{case.label} {rest}".strip()


def meets(row):
    """The row's target (docs/performance.md, "Targets"): the ratio against the first baseline and, where one is
    set, the fraction of the bandwidth floor."""
    ok = reference(row)["ratio"] >= row["target"]
    if row.get("floor_target"):
        ok = ok and row.get("floor_frac", 0.0) >= row["floor_target"]
    return ok


def format_row(row):
    if row.get("error"):
        return f"  {row['label']:<16} {row['sub_label']:<36} ERROR {row['error']}"
    base = "; ".join(
        f"{n} ERROR {b['error']}" if "error" in b else f"{n} {fmt_time(b['s'])} ({b['ratio']:.2f}x)"
        for n, b in row["baselines"].items()
    )
    return f"  {row['label']:<16} {row['sub_label']:<36} myops {fmt_time(row['myops_s'])}  {base}"


def target_summary(rows):
    """One line per (family, op) with a target (docs/performance.md): the range of measured ratios
    (against the first baseline) and how many cases meet the target."""
    groups = {}
    for r in rows:
        if not r.get("target") or reference(r) is None:
            continue
        key = (r["family"], r["label"], r["target"], r.get("floor_target"))
        groups.setdefault(key, []).append(r)
    if not groups:
        return []
    out = [
        "## Targets",
        "",
        "| family | op | target (torch ÷ myops) | measured | cases meeting it |",
        "|---|---|---|---|---|",
    ]
    for (fam, label, target, floor_target), grows in groups.items():
        ratios = [reference(r)["ratio"] for r in grows]
        met = sum(meets(r) for r in grows)
        mark = "met" if met == len(grows) else "NOT met"
        rng = f"{min(ratios):.2f}x" if len(ratios) == 1 else f"{min(ratios):.2f}x – {max(ratios):.2f}x"
        goal = f"≥ {target}x" + (f" and ≥ {100 * floor_target:.0f}% of floor" if floor_target else "")
        if floor_target:
            fr = [r.get("floor_frac", 0.0) for r in grows]
            rng += f" ({100 * min(fr):.0f}%" + (f" – {100 * max(fr):.0f}%" if len(fr) > 1 else "") + " of floor)"
        out.append(f"| {fam} | {label} | {goal} | {rng} | {met} / {len(grows)}: {mark} |")
    return out + [""]


def markdown(rows, meta):
    out = [
        f"# myops benchmarks — {meta['device_name']}",
        "",
        f"- date: {meta['date']}; torch {meta['torch']} (CUDA {meta['torch_cuda']}); commit {meta['commit']}",
        f"- device: `{meta['device']}` — {meta['device_name']}",
    ]
    if meta.get("cpu_isa"):
        out.append(
            f"- CPU: {meta.get('cpu_model', '?')}; myops CPU build `{meta['cpu_isa']}`, torch CPU capability "
            f"`{meta.get('torch_cpu_capability', '?')}`" + (f" ({meta['env']})" if meta.get("env") else "")
        )
    if meta.get("note"):
        out.append(f"- {meta['note']}")
    out += [
        f"- measured copy bandwidth: {meta['copy_GBps']:.1f} GB/s (read + write, 256 MiB); floor = bytes ÷ that. "
        "A case whose data fits in the caches can beat that floor (over 100%)",
        "- ratio = torch time ÷ myops time, measured in the same run (> 1: myops is faster); two peers: "
        "`torch` (eager) and `inductor` (torch.compile of the same torch call, compiled before timing)",
        "",
    ]
    families = []
    for r in rows:
        if r["family"] not in families:
            families.append(r["family"])
    out += target_summary(rows)
    for fam in families:
        frows = [r for r in rows if r["family"] == fam]
        names = []
        for r in frows:
            for n in r["baselines"]:
                if n not in names:
                    names.append(n)
        mem = any("myops_peak_bytes" in r for r in frows)
        head = ["op", "case", "myops"] + [f"{n}" for n in names] + [f"ratio vs {n}" for n in names]
        head += ["GB/s", "floor", "% of floor", "target"]
        if mem:
            head += ["peak myops"] + [f"peak {n}" for n in names]
        out += [f"## {fam}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in frows:
            if r.get("error"):
                cells = [r["label"], r["sub_label"], "ERROR: " + r["error"].replace("|", "/")]
                out.append("| " + " | ".join(cells + ["-"] * (len(head) - len(cells))) + " |")
                continue
            cells = [r["label"], r["sub_label"], fmt_time(r["myops_s"])]
            cells += [baseline_cell(r["baselines"].get(n), "s") for n in names]
            cells += [baseline_cell(r["baselines"].get(n), "ratio") for n in names]
            cells += [
                f"{r['myops_GBps']:.1f}" if "myops_GBps" in r else "-",
                fmt_time(r.get("floor_s")),
                f"{100 * r['floor_frac']:.0f}%" if "floor_frac" in r else "-",
            ]
            if r["target"]:
                ok = "met" if meets(r) else "NOT met"
                floor = f", ≥ {100 * r['floor_target']:.0f}% of floor" if r.get("floor_target") else ""
                cells.append(f"≥ {r['target']}x{floor}: {ok}")
            else:
                cells.append("-")
            if mem:
                cells.append(fmt_bytes(r.get("myops_peak_bytes")))
                cells += [fmt_bytes(r["baselines"].get(n, {}).get("peak_bytes")) for n in names]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def baseline_cell(b, key):
    """One baseline's time or ratio cell: '-' when absent, 'ERROR' when it could not run (the
    message is in the JSON and the console line)."""
    if b is None:
        return "-"
    if "error" in b:
        return "ERROR"
    return fmt_time(b["s"]) if key == "s" else f"{b['ratio']:.2f}x"


def available_devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", nargs="+", default=None, help=f"families to run (default: all of {FAMILIES})")
    p.add_argument("--device", nargs="+", default=None, help="devices (default: cpu and cuda if present)")
    p.add_argument("--quick", action="store_true", help="fewer and smaller cases")
    p.add_argument("--out", default=None, help="folder for <device>-<date>.md and .json")
    p.add_argument(
        "--render",
        nargs="+",
        default=None,
        metavar="JSON",
        help="only rewrite the .md (and plots) of earlier runs from their .json",
    )
    p.add_argument(
        "--cpu-isa",
        nargs="+",
        default=None,
        metavar="BUILD",
        help="run the CPU benchmarks once per myops CPU build (baseline avx2 avx512 avx512_bf16), "
        "torch held to the same ISA, and write a side-by-side table",
    )
    p.add_argument("--tag", default=None, help=argparse.SUPPRESS)  # file name part, set by --cpu-isa
    p.add_argument("--note", default=None, help="a line for the report's header (e.g. the host)")
    p.add_argument(
        "--no-plots",
        action="store_true",
        help="write the .md and .json only (benchmarks/plot.py draws the plots from the .json)",
    )
    p.add_argument(
        "--ops",
        nargs="+",
        default=None,
        metavar="OP",
        help="only the cases of these ops (the table's first column, e.g. exp log 'gelu tanh')",
    )
    p.add_argument(
        "--no-inductor",
        action="store_true",
        help="leave out the torch.compile (Inductor) peer (it compiles every case once)",
    )
    p.add_argument(
        "--headline",
        action="store_true",
        help="only each family's headline cases (Case.headline: the ones its targets are read on)",
    )
    p.add_argument(
        "--append",
        action="store_true",
        help="add to the report of the same device and date in --out, replacing the rows of "
        "the families run now (one process per family, e.g. each under its own timeout)",
    )
    args = p.parse_args(argv)
    global USE_INDUCTOR
    USE_INDUCTOR = not args.no_inductor
    if args.cpu_isa:
        return run_cpu_isas(args)
    if args.render:
        for path in args.render:
            with open(path) as f:
                data = json.load(f)
            stem = os.path.splitext(path)[0]
            with open(stem + ".md", "w") as f:
                f.write(markdown(data["rows"], data["meta"]) + "\n")
            print(f"wrote {stem}.md")
        return [os.path.splitext(p)[0] + ".md" for p in args.render]

    import myops  # noqa: F401

    families = args.family or FAMILIES
    devices = args.device or available_devices()
    written = []
    for device in devices:
        if device.startswith("cuda") and not torch.cuda.is_available():
            print(f"skipping {device}: no CUDA device visible")
            continue
        bw = copy_bandwidth(device)
        meta = {
            "device": device,
            "device_name": device_name(device),
            "date": datetime.date.today().isoformat(),
            "torch": torch.__version__,
            "torch_cuda": torch.version.cuda,
            "commit": git_commit(),
            "copy_GBps": bw / 1e9,
            "quick": args.quick,
            "headline": args.headline,
        }
        if device == "cpu":
            meta["cpu_model"] = cpu_model()
            meta["cpu_isa"], meta["torch_cpu_capability"] = cpu_builds()
            meta["env"] = " ".join(
                f"{k}={os.environ[k]}"
                for k in ("MYOPS_CPU_ISA", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "OMP_NUM_THREADS")
                if os.environ.get(k)
            )
        if args.note:
            meta["note"] = args.note
        print(
            f"== {device}: {meta['device_name']}, copy bandwidth {bw / 1e9:.1f} GB/s"
            + (f"; myops CPU build {meta['cpu_isa']}, torch {meta['torch_cpu_capability']}" if device == "cpu" else ""),
            flush=True,
        )
        rows = []
        stem = None
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            tag = "cpu" if device == "cpu" else re.sub(r"[^A-Za-z0-9._-]+", "-", meta["device_name"])
            if device == "cpu" and args.tag:
                tag = f"cpu-{args.tag}"
            stem = os.path.join(args.out, f"{tag}-{meta['date']}")
            if args.append and os.path.exists(stem + ".json"):
                with open(stem + ".json") as f:
                    rows = [r for r in json.load(f)["rows"] if r["family"] not in families]
        for fam in families:
            try:
                importlib.import_module(f"bench_{fam}")
            except ModuleNotFoundError:
                print(f"  (no benchmarks for {fam} yet)")
                continue
            rows += run_family(fam, device, args.quick, bw, args.ops, args.headline)
            if stem:  # after every family: a run cut short keeps what it measured
                write_report(stem, rows, meta)
        if not stem:
            print(markdown(rows, meta))
            continue
        written.append(stem + ".md")
        print(f"wrote {stem}.md and .json")
        if args.no_plots:
            print(f"no plots (--no-plots): python benchmarks/plot.py {stem}.json draws them")
            continue
        try:
            import plot

            plot.plot(stem + ".json")
        except ImportError as e:  # matplotlib is optional for the tables
            print(f"no plots: {e}")
    return written


def write_report(stem, rows, meta):
    with open(stem + ".md", "w") as f:
        f.write(markdown(rows, meta) + "\n")
    with open(stem + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)


def run_cpu_isas(args):
    """--cpu-isa: one fresh process per myops CPU build (MYOPS_CPU_ISA, torch held to the same ISA
    before it is imported), then one table with every build's ratio side by side."""
    out = args.out or os.path.join(HERE, "results")
    jsons = []
    for isa in args.cpu_isa:
        env = dict(os.environ, MYOPS_CPU_ISA=isa, **TORCH_ENV_FOR_ISA.get(isa, {}))
        env.pop("MYOPS_CPU_BASELINE", None)
        if "ONEDNN_MAX_CPU_ISA" not in TORCH_ENV_FOR_ISA.get(isa, {}):
            env.pop("ONEDNN_MAX_CPU_ISA", None)
        cmd = [sys.executable, os.path.abspath(__file__), "--device", "cpu", "--out", out, "--tag", isa]
        cmd += ["--family"] + (args.family or FAMILIES)
        if args.quick:
            cmd.append("--quick")
        if args.no_inductor:
            cmd.append("--no-inductor")
        if args.ops:
            cmd += ["--ops"] + args.ops
        if args.note:
            cmd += ["--note", args.note]
        print(
            f"### myops CPU build {isa}: " + " ".join(f"{k}={env[k]}" for k in sorted(TORCH_ENV_FOR_ISA.get(isa, {}))),
            flush=True,
        )
        subprocess.run(cmd, env=env, check=True)
        jsons.append(os.path.join(out, f"cpu-{isa}-{datetime.date.today().isoformat()}.json"))
    path = os.path.join(out, f"cpu-builds-{datetime.date.today().isoformat()}.md")
    with open(path, "w") as f:
        f.write(side_by_side(jsons) + "\n")
    print(f"wrote {path}")
    return [path]


def side_by_side(jsons):
    """One row per case, one ratio column (torch ÷ myops, first baseline) per CPU build."""
    runs = []
    for path in jsons:
        with open(path) as f:
            runs.append(json.load(f))
    isas = [r["meta"].get("cpu_isa", "?") for r in runs]
    m0 = runs[0]["meta"]
    out = [
        f"# myops CPU builds side by side — {m0.get('cpu_model', m0['device_name'])}",
        "",
        f"- date: {m0['date']}; torch {m0['torch']}; commit {m0['commit']}",
    ]
    if m0.get("note"):
        out.append(f"- {m0['note']}")
    for r in runs:
        m = r["meta"]
        out.append(
            f"- `{m.get('cpu_isa')}`: myops CPU build `{m.get('cpu_isa')}` against torch at "
            f"`{m.get('torch_cpu_capability')}` ({m.get('env', '')})"
        )
    out += [
        "- ratio = torch time ÷ myops time, each build against torch held to the same ISA, samples "
        "interleaved in one process (> 1: myops is faster)",
        "",
    ]
    keys, rows = [], {}
    for k, r in enumerate(runs):
        for row in r["rows"]:
            if reference(row) is None:
                continue
            key = (row["family"], row["label"], row["sub_label"])
            if key not in rows:
                keys.append(key)
                rows[key] = [None] * len(runs)
            rows[key][k] = reference(row)["ratio"]
    head = ["family", "op", "case"] + [f"ratio `{i}`" for i in isas]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in keys:
        cells = list(key) + [("-" if v is None else (f"**{v:.2f}x**" if v < 1.0 else f"{v:.2f}x")) for v in rows[key]]
        out.append("| " + " | ".join(cells) + " |")
    below = {i: sum(1 for key in keys if rows[key][k] is not None and rows[key][k] < 1.0) for k, i in enumerate(isas)}
    out += ["", "Cases below 1.0× (bold): " + ", ".join(f"`{i}` {n} of {len(keys)}" for i, n in below.items()), ""]
    return "\n".join(out)


if __name__ == "__main__":
    main()

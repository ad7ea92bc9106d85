"""The `deploy` family (issue #28): a torchvision detector through each way to deploy it.

`fasterrcnn_resnet50_fpn` with seeded random weights on 320x416 images, built by
tests/test_detection.py's own `build` and `images` (the model and inputs its tests check), at
batch 1 and 4. Per batch, one row:

- `myops`: `myops.detection.make_static(model)` run eagerly (the static form);
- `torchvision`: the unmodified model, eager (the reference: the static form's overhead is
  myops ÷ torchvision − 1, docs/performance.md: at most 5%, so ratio ≥ 1/1.05). These two are timed
  interleaved (runner.measure_interleaved);
- `compile(static)`: `torch.compile(static, fullgraph=True, dynamic=False)`, compiled before
  timing, then timed alone with runner.measure;
- `AOTI from C++`: the AOTInductor package of `make_static(model, portable=True)` (no torchvision
  op: what a C++ program can load) run by examples/cpp's `myops_detect`, which times its own
  runs (one untimed run, then REPEATS timed ones, the median). Process start, package loading
  and reading the images are not timed.

The last two time themselves after the interleaved pair (runner.Case.timed), each set up the
first time it runs: a compile or a CMake build that fails leaves an ERROR cell, the row stands.
Each setup checks its detections against eager torchvision with tests/test_detection.py's
`assert_matches_inductor` (and the package also against the portable module it was made from,
as test_aoti_package_runs_from_cpp does), and the row's case text says what it found.

Export and AOTInductor compilation take minutes on 2 cores: packages are cached in
build/deploy/, keyed by model, device, batch, image size, torch version and a hash of
myops/detection.py and myops/_static_steps.py; `myops_detect` is built once into build/deploy/cpp (CMake, as the tests
build it). `--quick`: batch 1 only.

    python benchmarks/runner.py --family deploy --device cpu --out benchmarks/results --append
    python benchmarks/bench_deploy.py --profile --batch 1   # where the static form spends its time
"""

import copy
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import torch

from runner import Case, measure, measure_interleaved

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(ROOT, "build", "deploy")
MODEL = "fasterrcnn_resnet50_fpn"
BATCHES = (1, 4)
REPEATS = 5  # timed runs of the C++ program (after one untimed run)
MAX_OVERHEAD = 0.05  # docs/performance.md, Targets: the static form at most 5% over eager torchvision


def tests():
    """tests/test_detection.py (the model, the images, the comparison rules, the C++ runner)
    and tests/test_cpp.py (how the C++ example is configured), imported from the tests."""
    path = os.path.join(ROOT, "tests")
    if path not in sys.path:
        sys.path.insert(0, path)
    import test_cpp
    import test_detection

    return test_detection, test_cpp


def model_and_images(device, batch, seed=1):
    """The model (tests/test_detection.py's build: seeded weights, its score threshold and image
    sizes) on `device`, and a batch of its test images [batch, 3, 320, 416]."""
    td, _ = tests()
    model = td.build(MODEL)  # cached there: never moved, a copy goes to other devices
    if device != "cpu":
        model = copy.deepcopy(model).to(device)
    gen = torch.random.fork_rng()
    with gen:
        torch.manual_seed(seed)
        x = torch.stack(td.images(*[td.SIZE] * batch))
    return model, x.to(device)


def eager(model, x):
    """torchvision's forward on the batch (a list of images): its list of dicts."""
    with torch.no_grad():
        return model(list(x))


def verdict(check, *args):
    """'ok' or the first line of what the check (one of tests/test_detection.py's) found."""
    try:
        check(*args)
        return "ok"
    except AssertionError as e:
        return "DIFFERS (" + str(e).splitlines()[0] + ")"


def box_gap(ref, got):
    """Per image: (eager count, deployed count, for each eager box the distance (px, max over the
    4 coordinates) to the nearest deployed box of the same label, inf when there is none). A
    display number: the pass/fail rule is tests/test_detection.py's assert_matches_inductor."""
    out = []
    for r, g in zip(ref, got):
        d = (r["boxes"][:, None].double() - g["boxes"][None].double()).abs().amax(-1)
        d[r["labels"][:, None] != g["labels"][None]] = float("inf")
        gaps = torch.cat([d, torch.full((d.shape[0], 1), float("inf"), dtype=d.dtype)], 1).amin(1)
        out.append((r["boxes"].shape[0], g["boxes"].shape[0], gaps))
    return out


# ---- the C++ program and the package -----------------------------------------------------------


def detect_program():
    """examples/cpp's myops_detect, configured and built with CMake as tests/test_detection.py
    does (Release, against this myops and LibTorch), once into build/deploy/cpp. Raises
    RuntimeError saying why when it cannot be built (no cmake, no compiler, a failed build)."""
    import myops

    _, tc = tests()
    if shutil.which("cmake") is None:
        raise RuntimeError("cmake not installed")
    if shutil.which(os.environ.get("CXX", "c++")) is None and shutil.which("g++") is None:
        raise RuntimeError("no C++ compiler (c++ / g++ / $CXX)")
    import pytest

    try:
        cuda_args = tc._cuda_cmake_args()
    except pytest.skip.Exception as e:  # a CUDA build of torch with no CUDA toolkit
        raise RuntimeError(str(e)) from None
    build = os.path.join(CACHE, "cpp")
    prefix = torch.utils.cmake_prefix_path + ";" + myops.cmake_prefix_path
    for cmd in (
        ["cmake", "-S", tc.EXAMPLE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"]
        + cuda_args,
        ["cmake", "--build", build, "--target", "myops_detect", "-j", os.environ.get("MAX_JOBS", "2")],
    ):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:3])} failed: {(r.stdout + r.stderr)[-2000:]}")
    return os.path.join(build, "myops_detect")


def package_path(device, x, name=MODEL):
    """The cache file of the package for this model, device and input shape."""
    from myops import _static_steps, detection

    digest = hashlib.sha1()
    for module in (detection, _static_steps):  # the static module's code
        with open(module.__file__, "rb") as f:
            digest.update(f.read())
    code = digest.hexdigest()[:10]
    shape = "x".join(map(str, x.shape))
    return os.path.join(CACHE, f"{name}-{device}-{shape}-torch{torch.__version__}-detection{code}.pt2")


def aoti_package(model, x, log=print, name=MODEL):
    """The AOTInductor package of make_static(model, portable=True) for inputs shaped like `x`
    (torch.export, then aoti_compile_and_package), from the cache when it is there."""
    from torch._inductor import aoti_compile_and_package

    from myops import detection

    path = package_path(x.device.type, x, name)
    if os.path.exists(path):
        log(f"  AOTInductor package (cached): {os.path.relpath(path, ROOT)}")
        return path
    os.makedirs(CACHE, exist_ok=True)
    log(f"  exporting and compiling the AOTInductor package (minutes) -> {os.path.relpath(path, ROOT)}")
    static = detection.make_static(model, portable=True)
    ep = torch.export.export(static, (x,), strict=False)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:  # written whole, then moved in place
        made = aoti_compile_and_package(ep, package_path=os.path.join(tmp, "package.pt2"))
        os.replace(made, path)
    return path


def run_from_cpp(program, package, x, keys, repeats=0):
    """The package run by `program` in its own process (no Python there): the static module's
    padded output dict (`keys`: its keys in order, the order of the program's tensors), and the
    median seconds of `repeats` timed runs (None for 0)."""
    td, _ = tests()
    with tempfile.TemporaryDirectory() as tmp:
        flat, stdout = td.run_package_from_cpp(program, package, x.cpu(), tmp, repeats)
    if len(flat) != len(keys):
        raise RuntimeError(f"the package gave {len(flat)} outputs, the module {len(keys)}")
    runs = [float(v) for v in re.search(r"^run_ms(.*)$", stdout, re.M).group(1).split()] if repeats else []
    return dict(zip(keys, flat)), (statistics.median(runs) / 1e3 if runs else None)


# ---- the family --------------------------------------------------------------------------------


def cpu(detections):
    return [{k: v.cpu() for k, v in d.items()} for d in detections]


def compile_peer(case, static, x, ref, device):
    """The `compile(static)` peer: compiles on its first call (Dynamo reset first, shapes
    static), checks against eager torchvision, then seconds per run (runner.measure)."""
    td, _ = tests()

    def timed():
        torch._dynamo.reset()
        compiled = torch.compile(static, fullgraph=True, dynamic=False)

        def run():
            with torch.no_grad():
                return compiled(x)

        case.sub_label += f", compile {verdict(td.assert_matches_inductor, ref, run())}"
        return measure(run, device)

    return timed


def aoti_peer(case, model, x, ref, repeats):
    """The `AOTI from C++` peer: builds myops_detect and the package (or takes them from
    build/deploy/), runs the package there, checks its detections against eager torchvision and
    against the portable module it was made from; the program's median seconds per run."""
    td, _ = tests()
    from myops import detection

    def timed():
        program = detect_program()
        package = aoti_package(model, x)
        with torch.no_grad():
            portable = detection.make_static(model, portable=True)(x)
        got, seconds = run_from_cpp(program, package, x, list(portable), repeats)
        case.sub_label += (
            f", AOTI {verdict(td.assert_matches_inductor, cpu(ref), got)}"
            f" (vs its portable module: {verdict(td.assert_matches_inductor, cpu(detection.unpad(portable)), got)})"
        )
        return seconds

    return timed


def cases(device, quick):
    td, _ = tests()
    from myops import detection

    out = []
    for batch in BATCHES[:1] if quick else BATCHES:
        model, x = model_and_images(device, batch)
        static = detection.make_static(model)
        ref = eager(model, x)
        with torch.no_grad():
            same = verdict(td.assert_matches, ref, static(x))

        def run_static(static=static, x=x):
            with torch.no_grad():
                return static(x)

        h, w = x.shape[-2:]
        # torch.compile of eager torchvision (the runner's `inductor` peer) breaks its graph at
        # every data-dependent step: compile(static) is the compiled form this family reports
        case = Case(
            label=MODEL,
            sub_label=f"batch {batch}, {h}x{w}; vs torchvision: static {same}",
            myops=run_static,
            torch={"torchvision": lambda model=model, x=x: eager(model, x)},
            target=round(1 / (1 + MAX_OVERHEAD), 3),
            inductor=False,
            headline=batch == BATCHES[0],
        )
        case.timed = {
            "compile(static)": compile_peer(case, static, x, ref, device),
            "AOTI from C++": aoti_peer(case, model, x, ref, 3 if quick else REPEATS),
        }
        out.append(case)
    return out


# ---- every model's cost: time and peak memory, each form in its own process --------------------
#
# The runner's family above times one model in one process; a form's peak memory (RSS) needs a
# process of its own. `--cost` runs, for every model and image size asked, each form in a fresh
# process (build the model, one untimed forward, then RUNS timed ones: the minimum; the peak RSS
# of the process, which holds the model alike for every form), the forms one after another per
# round (eager, static, ... then again: a drift of the shared machine lands on both), and writes
# the table with ratios: eager ÷ form for time (>= 1/1.05 is the bar) and form ÷ eager for the
# peak RSS (the bar: <= 1.2x eager's + 1 GB).
#
#     python benchmarks/bench_deploy.py --cost --sizes 320x416 --batches 1 4 --out benchmarks/results
#     python benchmarks/bench_deploy.py --cost --models maskrcnn_resnet50_fpn --sizes 800x1088
#     python benchmarks/bench_deploy.py --cost --forms eager static compile aoti   # minutes per model
#     python benchmarks/bench_deploy.py --cost --forms eager static onnx --sizes 320x416 --batches 1

FORMS = ("eager", "static", "compile", "aoti", "onnx")  # onnx: myops.onnx.export, ONNX Runtime (CPU)
RUNS = 5  # timed runs of each form in an interleaved process (cost_pair)
RSS_RUNS = 1  # timed runs of a lone process, which is there for its peak RSS


def cost_model(name, h, w):
    """The model for the cost table: at the tests' size (320x416) tests/test_detection.py's own
    (its thresholds); at any other size torchvision's defaults (the transform's 800 / 1333) with
    the tests' threshold, R-CNNs at box_score_thresh=0.05 (the issue's setting)."""
    import torchvision

    td, _ = tests()
    if (h, w) == td.SIZE:
        return td.build(name)
    key, thresh = td.MODELS[name]
    if key == "box_score_thresh":
        thresh = 0.05
    gen = torch.random.fork_rng()
    with gen:
        torch.manual_seed(0)
        model = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None, **{key: thresh})
    model.eval()
    if name in td.TRAINED_LIKE:
        td._trained_like(model, td.TRAINED_LIKE[name])
    return model


def _cost_fn(name, h, w, batch, form, threads):
    """(forward function, model) of one form of one model at batch x 3 x h x w, in this process."""
    from myops import detection

    torch.set_num_threads(threads)
    model = cost_model(name, h, w)
    gen = torch.random.fork_rng()
    with gen:
        torch.manual_seed(1)
        x = torch.rand(batch, 3, h, w)
    if form == "eager":
        return (lambda: eager(model, x)), x, model
    static = detection.make_static(model)
    if form == "static":
        return (lambda: static(x)), x, model
    if form == "compile":
        compiled = torch.compile(static, fullgraph=True, dynamic=False)
        return (lambda: compiled(x)), x, model
    if form == "onnx":
        return onnx_fn(static, x, threads), x, model
    raise ValueError(form)


def onnx_fn(static, x, threads):
    """The static module exported with myops.onnx.export (not timed) and run by ONNX Runtime's
    CPU execution provider with ``threads`` intra-op threads: a function returning the output
    dict (as tensors)."""
    import numpy as np
    import onnxruntime

    import myops.onnx

    program = myops.onnx.export(static, (x,))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        program.model_proto.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    names = [o.name for o in session.get_outputs()]
    feed = {session.get_inputs()[0].name: x.numpy()}

    def run():
        return {k: torch.from_numpy(np.asarray(v)) for k, v in zip(names, session.run(None, feed))}

    return run


def _count(out):
    return [len(d["boxes"]) for d in out] if isinstance(out, list) else out["count"].tolist()


def cost_one(name, h, w, batch, form, runs=RSS_RUNS, threads=2):
    """One form of one model alone in this process: {'seconds': [...], 'maxrss': bytes, 'count'}.
    The process's peak RSS is that form's (the model and the images included)."""
    import resource
    import time

    if form == "aoti":
        from myops import detection

        torch.set_num_threads(threads)
        model = cost_model(name, h, w)
        with torch.random.fork_rng():
            torch.manual_seed(1)
            x = torch.rand(batch, 3, h, w)
        package = aoti_package(model, x, log=lambda *a: None, name=name)
        program = detect_program()
        with torch.no_grad():
            keys = list(detection.make_static(model)(x))
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        _, seconds = run_from_cpp(program, package, x, keys, repeats=RUNS)
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        return {"seconds": [seconds], "maxrss": max(child, before) * 1024, "note": "median of the C++ runs"}
    fn, _, _ = _cost_fn(name, h, w, batch, form, threads)
    with torch.no_grad():
        out = fn()
        seconds = []
        for _ in range(runs):
            t = time.perf_counter()
            out = fn()
            seconds.append(time.perf_counter() - t)
    return {
        "seconds": seconds,
        "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "count": _count(out),
    }


def cost_pair(name, h, w, batch, form, runs=RUNS, threads=2):
    """Eager torchvision and `form` of the same model in one process, timed in turn `runs` times
    each after one untimed run each, so that load drifting over the run hits both alike:
    {'eager': [...], form: [...]}."""
    import time

    fn, x, model = _cost_fn(name, h, w, batch, form, threads)
    fns = {"eager": lambda: eager(model, x), form: fn}
    seconds = {f: [] for f in fns}
    with torch.no_grad():
        for f in fns.values():
            f()
        for _ in range(runs):
            for f, run in fns.items():
                t = time.perf_counter()
                run()
                seconds[f].append(time.perf_counter() - t)
    return seconds


def _child(args):
    """Runs this file with `args` in a new process: (its COST json, None) or (None, error line)."""
    import json

    r = subprocess.run([sys.executable, os.path.abspath(__file__), *args], capture_output=True, text=True)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("COST ")]
    if r.returncode != 0 or not line:
        return None, (r.stdout + r.stderr).strip().splitlines()[-1:] or ["failed"]
    return json.loads(line[-1][5:]), None


def cost_table(models, sizes, batches, forms, rounds=2, threads=2, log=print):
    """Per (model, size, batch), `rounds` times: each form alone in its own process (its peak RSS),
    then each form but eager and aoti in one process with eager, timed in turn (cost_pair). A
    cell's time is the minimum of the interleaved runs (aoti: of its C++ medians), its RSS the
    largest of the lone processes'. With no form to pair eager with (eager and aoti only), eager's
    time comes from its lone processes."""
    paired = [f for f in forms if f not in ("eager", "aoti")]  # each timed in turn with eager
    rows = []
    for name in models:
        for h, w in sizes:
            for batch in batches:
                cell = {f: {"seconds": [], "maxrss": 0, "error": None} for f in forms}
                common = [name, f"{h}x{w}", str(batch)]
                for _ in range(rounds):
                    for form in forms:
                        if cell[form]["error"]:
                            continue
                        got, err = _child(["--cost-one", *common, form, "--threads", str(threads)])
                        if err:
                            cell[form]["error"] = err
                            continue
                        cell[form]["maxrss"] = max(cell[form]["maxrss"], got["maxrss"])
                        cell[form]["count"] = got.get("count")
                        if form == "aoti" or (form == "eager" and not paired):
                            cell[form]["seconds"] += got["seconds"]
                    for form in paired:
                        if cell[form]["error"]:
                            continue
                        got, err = _child(["--cost-pair", *common, form, "--threads", str(threads)])
                        if err:
                            cell[form]["error"] = err
                            continue
                        for f, secs in got.items():
                            if f in cell:
                                cell[f]["seconds"] += secs
                row = {"model": name, "size": f"{h}x{w}", "batch": batch, "cells": cell}
                rows.append(row)
                log(format_row(row, forms))
    return rows


def format_row(row, forms):
    """One table row: per form its minimum time, its peak RSS and, against eager, the ratio of
    the interleaved runs' medians (the bar's statistic: a lone lucky run on a shared VM moves a
    minimum, not a median) with the ratio of minimums beside it, and its RSS ratio."""
    cell = row["cells"]
    ref = cell.get("eager")
    parts = [row["model"], row["size"], str(row["batch"])]
    for f in forms:
        c = cell[f]
        if c["error"] or not c["seconds"]:
            parts += ["ERROR " + " ".join(c["error"] or [])[:60], "", "", ""]
            continue
        t, rss = min(c["seconds"]), c["maxrss"] / 2**30
        parts += [f"{t:.3f} s", f"{rss:.2f} GB"]
        if f != "eager" and ref and ref["seconds"] and not ref["error"]:
            med = statistics.median(ref["seconds"]) / statistics.median(c["seconds"])
            tr, rr = min(ref["seconds"]) / t, c["maxrss"] / ref["maxrss"]
            ok = med >= 1 / (1 + MAX_OVERHEAD) and c["maxrss"] <= 1.2 * ref["maxrss"] + 2**30
            parts += [f"{med:.2f}x ({tr:.2f}x)", f"{rr:.2f}x" + ("" if ok else " **over**")]
        else:
            parts += ["", ""]
    return "| " + " | ".join(parts) + " |"


def table_header(forms):
    cols = ["model", "image", "batch"]
    for f in forms:
        cols += [f"{f} time", f"{f} peak RSS"] + (
            [f"eager ÷ {f}: time, median (min)", f"{f} ÷ eager: RSS"] if f != "eager" else ["", ""]
        )
    return "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols)


# ---- the whole static detector in one CUDA graph (issue #59) ----------------------------------
#
# `--graph`: per model and batch, on one CUDA device, in one process, timed in turn
# (runner.measure_interleaved): eager torchvision, the static module eager, the static module
# captured whole in one CUDA graph and replayed on new images (myops.detection.capture_graph), and
# torch.compile(static, mode="reduce-overhead"), Inductor's own CUDA-graph form. Each form's
# detections are checked against eager's (tests/test_detection.py's assert_matches, not exact: on
# CUDA the heads' cuBLAS calls over padded rows round float32 differently, see
# test_cuda_graph_whole_forward) and, with `--check64`, in float64 once per model. The target:
# graph >= GRAPH_TARGET x eager at batch 1 (docs/performance.md, Targets, says it once).
#
#     python benchmarks/bench_deploy.py --graph --out $OUT                      # the lease's call
#     python benchmarks/bench_deploy.py --graph --device cpu --forms eager static --sizes 320x416
#                                                        # the same code on the CPU (no graph)

GRAPH_MODELS = ("fasterrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn", "retinanet_resnet50_fpn")
GRAPH_FORMS = ("eager", "static", "graph", "compile")
GRAPH_TARGET = 1.5


def graph_forms(model, x, forms):
    """{form: a function of the images} for the forms asked (see GRAPH_FORMS)."""
    from myops import detection

    static = detection.make_static(model)
    made = {}
    for form in forms:
        if form == "eager":
            made[form] = lambda images: eager(model, images)
        elif form == "static":
            made[form] = static
        elif form == "graph":
            try:
                made[form] = detection.capture_graph(static, x)
            except RuntimeError as e:
                made[form] = e
        elif form == "compile":
            torch._dynamo.reset()
            made[form] = torch.compile(static, mode="reduce-overhead", fullgraph=True, dynamic=False)
        else:
            raise ValueError(form)
    return made


def graph_row(name, h, w, batch, device, forms, check64=False, log=print, reps=5):
    """One model and batch: {'model', 'size', 'batch', 'seconds': {form: median s or None},
    'check': {form: verdict}} with every form timed in turn and checked against eager on a second
    batch of images (not the one a graph was captured with)."""
    td, _ = tests()
    model = cost_model(name, h, w).to(device)
    gen = torch.Generator().manual_seed(1)
    x, y = (torch.rand(batch, 3, h, w, generator=gen).to(device) for _ in range(2))
    made = graph_forms(model, x, forms)
    row = {"model": name, "size": f"{h}x{w}", "batch": batch, "seconds": {}, "check": {}}
    with torch.no_grad():
        ref = eager(model, y)
        runs = {}
        for form, fn in made.items():
            if isinstance(fn, Exception):
                row["check"][form] = "ERROR " + str(fn).splitlines()[0]
                continue
            try:
                out = fn(y)
                if form != "eager":
                    out = {k: v.clone() for k, v in out.items()}
                    row["check"][form] = verdict(lambda r, o: td.assert_matches(r, o, exact=False), ref, out)
                runs[form] = lambda fn=fn: fn(y)
            except Exception as e:  # a compile that fails leaves an ERROR cell, the row stands
                row["check"][form] = "ERROR " + (str(e).splitlines() or [type(e).__name__])[0][:120]
        medians = measure_interleaved(list(runs.values()), device, warmup=min(3, reps), min_reps=reps) if runs else []
    row["seconds"] = {f: (dict(zip(runs, medians)).get(f)) for f in forms}
    if check64 and "graph" in runs:
        row["check"]["graph float64"] = graph_check64(model, y)
    log(graph_format_row(row, forms))
    return row


def graph_check64(model, y):
    """The graph form against eager in float64 on `y` (where cuBLAS's rounding stays far below
    the comparison's tolerance): the verdict."""
    td, _ = tests()
    from myops import detection

    m64 = copy.deepcopy(model).double()
    y64 = y.double()
    run = detection.capture_graph(detection.make_static(m64), y64)
    with torch.no_grad():
        ref = eager(m64, y64)
        out = {k: v.clone() for k, v in run(y64).items()}
    return verdict(lambda r, o: td.assert_matches(r, o, exact=False), ref, out)


def graph_header(forms):
    cols = ["model", "image", "batch"] + [f"{f}" for f in forms]
    cols += [f"eager ÷ {f}" for f in forms if f != "eager"] + ["checks against eager"]
    return "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols)


def graph_format_row(row, forms):
    sec = row["seconds"]
    parts = [row["model"], row["size"], str(row["batch"])]
    parts += [f"{sec[f] * 1e3:.2f} ms" if sec.get(f) else "—" for f in forms]
    for f in forms:
        if f == "eager":
            continue
        ratio = sec.get("eager") / sec[f] if sec.get("eager") and sec.get(f) else None
        mark = "" if ratio is None or f != "graph" or row["batch"] != 1 or ratio >= GRAPH_TARGET else " **miss**"
        parts.append("—" if ratio is None else f"{ratio:.2f}x{mark}")
    parts.append("; ".join(f"{f}: {v}" for f, v in row["check"].items()) or "—")
    return "| " + " | ".join(parts) + " |"


def graph_table(models, sizes, batches, forms, device, check64=False, out=None, log=print, reps=5):
    """Every (model, size, batch) row; with `out`, the table goes to <device>-<date>-graph.md
    there. Returns the rows."""
    import datetime

    from runner import device_name, git_commit

    dev = device_name(device)
    head = (
        f"whole static detector, one CUDA graph: {datetime.date.today()}, commit {git_commit()}, {dev}, "
        f"torch {torch.__version__}; float32, median of runs timed in turn (runner.measure_interleaved); "
        f"target: eager ÷ graph >= {GRAPH_TARGET} at batch 1"
    )
    log(head)
    log(graph_header(forms))
    rows = [
        graph_row(name, h, w, batch, device, forms, check64=check64 and batch == batches[0], log=log, reps=reps)
        for name in models
        for h, w in sizes
        for batch in batches
    ]
    if out:
        os.makedirs(out, exist_ok=True)
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", dev)
        path = os.path.join(out, f"{stem}-{datetime.date.today()}-graph.md")
        with open(path, "a") as f:
            f.write(head + "\n\n" + graph_header(forms) + "\n")
            f.write("\n".join(graph_format_row(r, forms) for r in rows) + "\n\n")
        log(f"-> {path}")
    return rows


# ---- where the static form spends its time -----------------------------------------------------


def profile(batch, device="cpu", runs=3, top=20):
    """torch.profiler over `runs` forwards of eager torchvision and of the static module: the
    ops whose self time differs most between them (ms per forward), and the totals."""
    from torch.profiler import ProfilerActivity, profile as torch_profile

    from myops import detection

    model, x = model_and_images(device, batch)
    static = detection.make_static(model)
    calls = {"torchvision": lambda: eager(model, x), "static": lambda: static(x)}
    per_op, totals = {}, {}
    for name, fn in calls.items():
        with torch.no_grad():
            for _ in range(2):
                fn()
            with torch_profile(activities=[ProfilerActivity.CPU]) as p:
                for _ in range(runs):
                    fn()
        for e in p.key_averages():
            per_op.setdefault(e.key, {})[name] = e.self_cpu_time_total / runs / 1e3
        totals[name] = sum(e.self_cpu_time_total for e in p.key_averages()) / runs / 1e3
    print(f"{MODEL}, batch {batch}, {device}: self CPU time per forward (ms), {runs} forwards each")
    print(
        f"  total: torchvision {totals['torchvision']:.1f}, static {totals['static']:.1f} "
        f"({100 * (totals['static'] / totals['torchvision'] - 1):+.1f}%)"
    )
    rows = sorted(per_op.items(), key=lambda kv: -abs(kv[1].get("static", 0) - kv[1].get("torchvision", 0)))
    print(f"  {'op':<48} {'torchvision':>11} {'static':>9} {'diff':>8}")
    for op, t in rows[:top]:
        a, b = t.get("torchvision", 0.0), t.get("static", 0.0)
        print(f"  {op[:48]:<48} {a:>11.2f} {b:>9.2f} {b - a:>+8.2f}")


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser(description="the deploy family's profile (the family runs from runner.py)")
    p.add_argument("--profile", action="store_true", help="where the static form's time goes, against eager")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--device", default=None, help="--profile: default cpu; --graph: default cuda")
    p.add_argument("--cost", action="store_true", help="every model's time and peak RSS per form (processes)")
    p.add_argument("--cost-one", nargs=4, metavar=("MODEL", "HxW", "BATCH", "FORM"), help=argparse.SUPPRESS)
    p.add_argument("--cost-pair", nargs=4, metavar=("MODEL", "HxW", "BATCH", "FORM"), help=argparse.SUPPRESS)
    p.add_argument("--models", nargs="*", default=None, help="default: the seven of tests/test_detection.py")
    p.add_argument("--sizes", nargs="*", default=None, help="--cost: default 320x416 800x1088; --graph: 800x1088")
    p.add_argument("--batches", nargs="*", type=int, default=[1, 4])
    p.add_argument("--forms", nargs="*", default=["eager", "static", "compile", "aoti"], choices=FORMS)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=None, help="a folder: the table goes to cpu-<date>-deploy-cost.md there")
    p.add_argument("--graph", action="store_true", help="the static detector in one CUDA graph against eager")
    p.add_argument("--graph-forms", nargs="*", default=list(GRAPH_FORMS), choices=GRAPH_FORMS)
    p.add_argument("--check64", action="store_true", help="--graph: also check the graph in float64")
    p.add_argument(
        "--reps", type=int, default=5, help="--graph: at least this many timed rounds (and warm-up calls, up to 3)"
    )
    args = p.parse_args()
    import myops  # noqa: F401

    if args.profile:
        profile(args.batch, args.device or "cpu")
    elif args.graph:
        sizes = [tuple(map(int, s.split("x"))) for s in args.sizes or ["800x1088"]]
        models = args.models or list(GRAPH_MODELS)
        graph_table(
            models, sizes, args.batches, args.graph_forms, args.device or "cuda", args.check64, args.out, reps=args.reps
        )
    elif args.cost_one:
        import json

        name, hw, batch, form = args.cost_one
        h, w = map(int, hw.split("x"))
        print("COST " + json.dumps(cost_one(name, h, w, int(batch), form, threads=args.threads)))
    elif args.cost_pair:
        import json

        name, hw, batch, form = args.cost_pair
        h, w = map(int, hw.split("x"))
        print("COST " + json.dumps(cost_pair(name, h, w, int(batch), form, threads=args.threads)))
    elif args.cost:
        import datetime

        td, _ = tests()
        models = args.models or list(td.MODELS)
        sizes = [tuple(map(int, s.split("x"))) for s in args.sizes or ["320x416", "800x1088"]]
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        head = (
            f"deploy cost: {datetime.date.today()}, commit {commit}, CPU, {args.threads} threads, "
            f"torch {torch.__version__}; time: the minimum of {RUNS} runs x {args.rounds} rounds, each form "
            f"timed in turn with eager in one process; peak RSS: each form alone in its own process"
        )
        if args.out:  # made before the hours of runs, not after them
            os.makedirs(args.out, exist_ok=True)
        print(head)
        print(table_header(args.forms))
        rows = cost_table(models, sizes, args.batches, args.forms, args.rounds, args.threads)
        if args.out:
            path = os.path.join(args.out, f"cpu-{datetime.date.today()}-deploy-cost.md")
            with open(path, "a") as f:
                f.write(head + "\n\n" + table_header(args.forms) + "\n")
                f.write("\n".join(format_row(r, args.forms) for r in rows) + "\n\n")
            print("->", path)
    else:
        p.print_help()

"""A torchvision detector end to end under the dispatcher drop-in, against plain torch.

An unmodified `fasterrcnn_resnet50_fpn` (random weights, eval, no_grad) runs on torch's kernels
and under `myops.enable()`, which routes torch's own aten calls (nonzero, where, + - * /,
relu, clamp, ...) to the myops kernels from C++. The myops call includes enabling and
disabling (registering and deregistering the kernels) each run. Target (docs/performance.md): never slower
than torch (ratio >= 1.0). Then its box stages alone (RPN box decoding and proposal filtering,
the ROI heads' post-processing), where the routed ops are a visible share of the time.
"""

import torch

import myops
from runner import Case, sync


def model_and_images(device, size=320, n_images=2):
    """The model and its input images (random weights: nothing is downloaded)."""
    import torchvision

    torch.manual_seed(0)
    model = (
        torchvision.models.detection.fasterrcnn_resnet50_fpn(
            weights=None, weights_backbone=None, box_score_thresh=0.0, min_size=size, max_size=size
        )
        .eval()
        .to(device)
    )
    g = torch.Generator().manual_seed(1)
    images = [torch.rand(3, size, size, generator=g).to(device) for _ in range(n_images)]
    return model, images


def build(device, size=320, n_images=2):
    """run_torch(), run_myops(): one forward pass on torch's kernels, and under myops.enable()."""
    model, images = model_and_images(device, size, n_images)

    def run_torch():
        with torch.no_grad():
            return model(images)

    def run_myops():
        with myops.enable(), torch.no_grad():
            return model(images)

    return run_torch, run_myops


def stages(device, size=320):
    """The detector's box stages alone, where the routed ops (nonzero, where, + - * /, clamp)
    are a visible share of the time: RPN box decoding + proposal filtering, and the ROI
    heads' post-processing, on the inputs they get in one run of the model above."""
    model, images = model_and_images(device, size)
    captured = {}

    def capture(obj, name):
        orig = getattr(obj, name)

        def wrapper(*args, **kwargs):
            captured[name] = (orig, args, kwargs)
            return orig(*args, **kwargs)

        setattr(obj, name, wrapper)

    capture(model.rpn, "filter_proposals")
    capture(model.rpn.box_coder, "decode")
    capture(model.roi_heads, "postprocess_detections")
    with torch.no_grad():
        model(images)
    out = {}
    for name, (fn, args, kwargs) in captured.items():

        def call(fn=fn, args=args, kwargs=kwargs):
            with torch.no_grad():
                return fn(*args, **kwargs)

        out[name] = call
    return out


def repeated(call, device, seconds=0.05):
    """`call` looped so one run lasts about `seconds` (a stage can take well under a
    millisecond: enabling once around the loop then costs little beside it)."""
    import time

    call()
    one = float("inf")
    for _ in range(3):  # the fastest of three: a busy neighbour makes single timings long
        sync(device)  # on CUDA, the device's time, not the time to queue the kernels
        t0 = time.perf_counter()
        call()
        sync(device)
        one = min(one, time.perf_counter() - t0)
    n = max(1, int(seconds / max(one, 1e-6)))

    def loop():
        for _ in range(n):
            r = call()
        return r

    return loop, n


def identical(a, b):
    return all(torch.equal(x[k], y[k]) for x, y in zip(a, b) for k in ("boxes", "scores", "labels"))


def routed_per_run(run_torch):
    """The calls one run routes to myops and hands back to torch, per op."""
    with myops.enable() as stats:
        run_torch()
    return dict(stats.routed), dict(stats.handed_back)


def cases(device, quick):
    size = 224 if quick else 320
    run_torch, run_myops = build(device, size)
    # a difference is reported in the label (the timings are still worth having), not raised
    same = "" if identical(run_myops(), run_torch()) else " DETECTIONS DIFFER"
    out = [
        Case(
            label="fasterrcnn_resnet50_fpn",
            sub_label=f"2 images {size}x{size}, eval, enable(){same}",
            myops=run_myops,
            torch={"torch": run_torch},
            target=1.0,
            headline=True,
        )
    ]
    for name, call in stages(device, size).items():
        loop, n = repeated(call, device)

        def enabled(loop=loop):
            with myops.enable():
                return loop()

        # no Inductor peer: the stage runs n times in one call to last long enough, and Inductor
        # computes the n identical, pure repeats once (measured: decode 0.36 ms for 106 repeats)
        out.append(
            Case(
                label="fasterrcnn stage",
                sub_label=f"{name} x{n}, enable()",
                myops=enabled,
                torch={"torch": loop},
                inductor=False,
            )
        )
    return out

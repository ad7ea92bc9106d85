"""A torchvision detector end to end under the dispatcher drop-in, against plain torch.

An unmodified `fasterrcnn_resnet50_fpn` (random weights, eval, no_grad) runs on torch's kernels
and under `myops.enable()`, which routes torch's own aten calls (nonzero, where, + - * /,
relu, clamp, ...) to the myops kernels from C++. The myops call includes enabling and
disabling (registering and deregistering the kernels) each run. DESIGN.md §5: never slower
than torch (ratio >= 1.0).
"""
import torch

import myops
from runner import Case


def build(device, size=320, n_images=2):
    """The model and its input images (random weights: nothing is downloaded)."""
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, box_score_thresh=0.0, min_size=size, max_size=size
    ).eval().to(device)
    g = torch.Generator().manual_seed(1)
    images = [torch.rand(3, size, size, generator=g).to(device) for _ in range(n_images)]

    def run_torch():
        with torch.no_grad():
            return model(images)

    def run_myops():
        with myops.enable(), torch.no_grad():
            return model(images)

    return run_torch, run_myops


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
    if not identical(run_myops(), run_torch()):
        raise AssertionError("detections under myops.enable() differ from torch's")
    return [
        Case(label="fasterrcnn_resnet50_fpn", sub_label=f"2 images {size}x{size}, eval, enable()",
             myops=run_myops, torch={"torch": run_torch}, target=1.0)
    ]

"""postprocess family: myops.multiclass_nms_static (a single-stage detector's whole
post-processing, padded outputs, no host sync) against the same computation written with
torchvision ops, at YOLO's sizes: N = 1, 8, 32 images, A = 8,400 (640x640) and 25,200 (640x640,
three anchors a cell) anchors, C = 80 classes; C = 1 (a single-class detector) at N = 1 and 32;
and a dense case (every (anchor, class) pair over the threshold: the pre-NMS cut at 30,000 and
torchvision's per-class path) at N = 1 and 8.

Peers (the first is the reference whose ratio the table reports; the runner adds Inductor's
torch.compile of it):
  * ``torchvision reference``: the op's definition (tests/test_multiclass_nms.py): per image,
    ``nonzero(scores > thr)``, a stable sort, the pre-NMS cut, ``torchvision.ops.batched_nms``,
    the top K, written into padded outputs;
  * ``YOLO per-image loop``: the common YOLO post-processing (Ultralytics' non_max_suppression
    with ``multi_label=True``): per image the candidates, an ``argsort`` cut at ``max_nms``,
    boxes shifted by ``class * 7680`` and one ``torchvision.ops.nms``, ``[:max_det]``, a list
    of variable-size tensors;
  * ``YOLO loop (inductor)``: torch.compile of that loop;
  * ``torchvision batched_nms (one call)``, at N = 1: ``torchvision.ops.batched_nms`` alone on the
    image's candidates, already selected and cut (what the op's whole pipeline is held to at N = 1).

Inputs are YOLO-like: scores sigmoid(N(-4.5, 1.5)) (about 1% of the (anchor, class) pairs
above 0.25: ~7,800 candidates an image at 8,400 anchors), boxes in a 640x640 image clustered
around objects (NMS suppresses most).

    python benchmarks/runner.py --family postprocess --device cpu --quick
"""

import torch

import myops
from runner import Case

CONF, IOU, MAX_DET, MAX_NMS, MAX_WH = 0.25, 0.45, 300, 30000, 7680.0
CLASSES = 80


def inputs(n, a, device, dtype=torch.float32, classes=CLASSES, dense=False):
    g = torch.Generator().manual_seed(1000 * n + a + classes)
    objects = torch.rand(n, 60, 2, generator=g) * 640
    centers = objects.gather(1, torch.randint(0, 60, (n, a, 1), generator=g).expand(n, a, 2))
    centers = centers + torch.randn(n, a, 2, generator=g) * 12
    wh = 20 + torch.rand(n, a, 2, generator=g) * 160
    boxes = torch.cat([centers - wh / 2, centers + wh / 2], -1)
    scores = torch.sigmoid(torch.randn(n, a, classes, generator=g) * 1.5 - 4.5)
    if dense:  # every pair a candidate
        scores = CONF + (1 - CONF) * torch.rand(n, a, classes, generator=g).clamp_min(1e-3)
    return boxes.to(device, dtype), scores.to(device, dtype)


def torchvision_reference(boxes, scores, conf=CONF, iou=IOU, max_det=MAX_DET, max_nms=MAX_NMS):
    """multiclass_nms_static's definition with torchvision ops, padded outputs."""
    import torchvision

    n_img = scores.shape[0]
    num = torch.zeros(n_img, dtype=torch.int64, device=scores.device)
    out_boxes = boxes.new_zeros(n_img, max_det, 4)
    out_scores = scores.new_zeros(n_img, max_det)
    out_classes = torch.full((n_img, max_det), -1, dtype=torch.int64, device=scores.device)
    out_anchors = out_classes.clone()
    for i in range(n_img):
        a, c = torch.nonzero(scores[i] > conf, as_tuple=True)
        sc = scores[i][a, c]
        order = sc.sort(descending=True, stable=True).indices[:max_nms]
        a, c, sc = a[order], c[order], sc[order]
        b = boxes[i][a]
        keep = torchvision.ops.batched_nms(b, sc, c, iou).sort().values[:max_det]
        m = keep.numel()
        num[i] = m
        out_boxes[i, :m] = b[keep]
        out_scores[i, :m] = sc[keep]
        out_classes[i, :m] = c[keep]
        out_anchors[i, :m] = a[keep]
    return num, out_boxes, out_scores, out_classes, out_anchors


def yolo_loop(boxes, scores, conf=CONF, iou=IOU, max_det=MAX_DET, max_nms=MAX_NMS):
    """The common YOLO post-processing (multi-label), one image at a time: [n, 6] per image
    (x1, y1, x2, y2, score, class)."""
    import torchvision

    out = []
    for i in range(scores.shape[0]):
        a, c = (scores[i] > conf).nonzero(as_tuple=True)
        x = torch.cat([boxes[i][a], scores[i][a, c, None], c[:, None].to(boxes.dtype)], 1)
        if x.shape[0] > max_nms:
            x = x[x[:, 4].argsort(descending=True)[:max_nms]]
        keep = torchvision.ops.nms(x[:, :4] + x[:, 5:6] * MAX_WH, x[:, 4], iou)[:max_det]
        out.append(x[keep])
    return out


def _myops(boxes, scores):
    return myops.multiclass_nms_static(
        boxes, scores, score_threshold=CONF, iou_threshold=IOU, max_detections=MAX_DET, pre_nms_top_k=MAX_NMS
    )


def one_batched_nms(boxes, scores, max_nms=MAX_NMS):
    """torchvision.ops.batched_nms alone on image 0's candidates (selected and cut here, untimed)."""
    import torchvision

    a, c = torch.nonzero(scores[0] > CONF, as_tuple=True)
    sc = scores[0][a, c]
    order = sc.sort(descending=True, stable=True).indices[:max_nms]
    b, sc, c = boxes[0][a[order]], sc[order], c[order]
    return lambda: torchvision.ops.batched_nms(b, sc, c, IOU)


def cases(device: str, quick: bool):
    # (N, A, C, dense)
    if quick:
        sizes = [(1, 8400, CLASSES, False), (8, 8400, CLASSES, False)]
    else:
        sizes = [(n, a, CLASSES, False) for a in (8400, 25200) for n in (1, 8, 32)]
        sizes += [(1, 8400, 1, False), (32, 8400, 1, False), (1, 8400, CLASSES, True), (8, 8400, CLASSES, True)]
    out = []
    for n, a, classes, dense in sizes:
        boxes, scores = inputs(n, a, device, classes=classes, dense=dense)
        num = _myops(boxes, scores)[0]
        cand = int((scores > CONF).sum()) // n
        compiled_loop = torch.compile(yolo_loop)
        compiled_loop(boxes, scores)  # compiled here, outside the timing
        peers = {
            "torchvision reference": lambda b=boxes, s=scores: torchvision_reference(b, s),
            "YOLO per-image loop": lambda b=boxes, s=scores: yolo_loop(b, s),
            "YOLO loop (inductor)": lambda b=boxes, s=scores, f=compiled_loop: f(b, s),
        }
        if n == 1:
            peers["torchvision batched_nms (one call)"] = one_batched_nms(boxes, scores)
        kind = " dense" if dense else ""
        out.append(
            Case(
                label="multiclass_nms_static",
                sub_label=f"N={n} A={a} C={classes}{kind} f32 (~{cand} candidates, ~{int(num.float().mean())} kept an image)",
                myops=lambda b=boxes, s=scores: _myops(b, s),
                torch=peers,
                bytes=scores.numel() * scores.element_size() + boxes.numel() * boxes.element_size(),
                numel=scores.numel(),
                headline=(n, a, classes, dense) == (8, 8400, CLASSES, False),  # a batch of YOLO's 640x640 anchors
            )
        )
    return out


def profile(n=8, a=8400, classes=CLASSES, dense=False, device="cuda", rows=25):
    """The per-kernel breakdown of one call (torch.profiler, kernels by device time), for the GPU
    session: ``python benchmarks/bench_postprocess.py --profile [--n 8] [--classes 80] [--dense]``."""
    from torch.profiler import ProfilerActivity, profile as prof

    boxes, scores = inputs(n, a, device, classes=classes, dense=dense)
    for _ in range(3):  # warm: CUB's temp storage, the caching allocator
        _myops(boxes, scores)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with prof(activities=acts) as p:
        for _ in range(10):
            _myops(boxes, scores)
        if device == "cuda":
            torch.cuda.synchronize()
    key = "self_device_time_total" if device == "cuda" else "self_cpu_time_total"
    print(p.key_averages().table(sort_by=key, row_limit=rows))


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", action="store_true", help="print the per-kernel breakdown of one case")
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--anchors", type=int, default=8400)
    ap.add_argument("--classes", type=int, default=CLASSES)
    ap.add_argument("--dense", action="store_true")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    if args.profile:
        profile(args.n, args.anchors, args.classes, args.dense, args.device)
    else:
        ap.print_help()

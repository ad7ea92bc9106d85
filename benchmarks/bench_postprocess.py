"""postprocess family: myops.multiclass_nms_static (a single-stage detector's whole
post-processing, padded outputs, no host sync) against the same computation written with
torchvision ops, at YOLO's sizes: N = 1, 8, 32 images, A = 8,400 (640x640) and 25,200 (640x640,
three anchors a cell) anchors, 80 classes.

Peers (the first is the reference whose ratio the table reports; the runner adds Inductor's
torch.compile of it):
  * ``torchvision reference``: the op's definition (tests/test_multiclass_nms.py): per image,
    ``nonzero(scores > thr)``, a stable sort, the pre-NMS cut, ``torchvision.ops.batched_nms``,
    the top K, written into padded outputs;
  * ``YOLO per-image loop``: the common YOLO post-processing (Ultralytics' non_max_suppression
    with ``multi_label=True``): per image the candidates, an ``argsort`` cut at ``max_nms``,
    boxes shifted by ``class * 7680`` and one ``torchvision.ops.nms``, ``[:max_det]``, a list
    of variable-size tensors;
  * ``YOLO loop (inductor)``: torch.compile of that loop.

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


def inputs(n, a, device, dtype=torch.float32):
    g = torch.Generator().manual_seed(1000 * n + a)
    objects = torch.rand(n, 60, 2, generator=g) * 640
    centers = objects.gather(1, torch.randint(0, 60, (n, a, 1), generator=g).expand(n, a, 2))
    centers = centers + torch.randn(n, a, 2, generator=g) * 12
    wh = 20 + torch.rand(n, a, 2, generator=g) * 160
    boxes = torch.cat([centers - wh / 2, centers + wh / 2], -1)
    scores = torch.sigmoid(torch.randn(n, a, CLASSES, generator=g) * 1.5 - 4.5)
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


def cases(device: str, quick: bool):
    sizes = [(1, 8400), (8, 8400)] if quick else [(n, a) for a in (8400, 25200) for n in (1, 8, 32)]
    out = []
    for n, a in sizes:
        boxes, scores = inputs(n, a, device)
        num = _myops(boxes, scores)[0]
        cand = int((scores > CONF).sum()) // n
        compiled_loop = torch.compile(yolo_loop)
        compiled_loop(boxes, scores)  # compiled here, outside the timing
        out.append(
            Case(
                label="multiclass_nms_static",
                sub_label=f"N={n} A={a} C={CLASSES} f32 (~{cand} candidates, ~{int(num.float().mean())} kept an image)",
                myops=lambda b=boxes, s=scores: _myops(b, s),
                torch={
                    "torchvision reference": lambda b=boxes, s=scores: torchvision_reference(b, s),
                    "YOLO per-image loop": lambda b=boxes, s=scores: yolo_loop(b, s),
                    "YOLO loop (inductor)": lambda b=boxes, s=scores, f=compiled_loop: f(b, s),
                },
                bytes=scores.numel() * scores.element_size() + boxes.numel() * boxes.element_size(),
                numel=scores.numel(),
                headline=(n, a) == (8, 8400),  # a batch of YOLO's 640x640 anchors
            )
        )
    return out

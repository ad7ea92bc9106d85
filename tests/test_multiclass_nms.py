"""myops.multiclass_nms_static against its reference written with torchvision ops (every element
of every output), in both of its forms: the CPU form (the image's real candidates) and the padded
form that CUDA runs (``torch.ops.myops._multiclass_nms_static_padded``, here on the CPU too);
static shapes under torch.export, no host sync and a CUDA graph on CUDA."""

import pytest
import torch
import torchvision
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.library import opcheck

import myops
from helpers import DEVICES, cuda_graph, cuda_only
from test_detection import detect_program  # noqa: F401  (fixture: examples/cpp's myops_detect)

FORMS = {"op": torch.ops.myops.multiclass_nms_static, "padded": torch.ops.myops._multiclass_nms_static_padded}
DTYPES = [torch.float32, torch.float64]


def reference(
    boxes,
    scores,
    *,
    score_threshold,
    iou_threshold,
    max_detections,
    pre_nms_top_k=None,
    class_agnostic=False,
    multi_label=True,
    nms=torchvision.ops.nms,
    batched_nms=torchvision.ops.batched_nms,
):
    """The op's definition, image by image, with torchvision's nms / batched_nms (python/myops/ops.py;
    `nms` / `batched_nms`: others in their place, e.g. the emulated CUDA ones)."""
    n_img, _, n_cls = scores.shape
    k = max_detections
    num = torch.zeros(n_img, dtype=torch.int64, device=scores.device)
    out_boxes = boxes.new_zeros(n_img, k, 4)
    out_scores = scores.new_zeros(n_img, k)
    out_classes = torch.full((n_img, k), -1, dtype=torch.int64, device=scores.device)
    out_anchors = out_classes.clone()
    for n in range(n_img):
        s = scores[n]
        if n_cls == 0:
            continue
        if multi_label:
            a, c = torch.nonzero(s > score_threshold, as_tuple=True)
        else:
            best = s.argmax(1)
            a = torch.nonzero(s.gather(1, best[:, None])[:, 0] > score_threshold)[:, 0]
            c = best[a]
        sc = s[a, c]
        order = sc.sort(descending=True, stable=True).indices
        if pre_nms_top_k is not None:
            order = order[:pre_nms_top_k]
        a, c, sc = a[order], c[order], sc[order]
        b = boxes[n][a] if boxes.dim() == 3 else boxes[n][a, c]
        keep = nms(b, sc, iou_threshold) if class_agnostic else batched_nms(b, sc, c, iou_threshold)
        keep = keep.sort().values[:k]
        m = keep.numel()
        num[n] = m
        out_boxes[n, :m] = b[keep]
        out_scores[n, :m] = sc[keep]
        out_classes[n, :m] = c[keep]
        out_anchors[n, :m] = a[keep]
    return num, out_boxes, out_scores, out_classes, out_anchors


def assert_same(got, want):
    names = ("num_detections", "boxes", "scores", "classes", "anchors")
    assert len(got) == len(want) == 5
    for name, g, w in zip(names, got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.device == w.device, (name, g, w)
        assert g.is_contiguous(), name
        torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True, msg=lambda m: f"{name}: {m}")


def random_boxes(shape, dtype, device, spread=100.0):
    """Boxes that overlap a lot (so NMS suppresses), in (x1, y1, x2, y2) form."""
    xy = torch.rand(shape + (2,), dtype=torch.float64) * spread
    wh = torch.rand(shape + (2,), dtype=torch.float64) * 30 + 1
    return torch.cat([xy, xy + wh], -1).to(dtype=dtype, device=device)


def run_both(boxes, scores, **kw):
    want = reference(boxes, scores, **kw)
    for form, op in FORMS.items():
        got = op(boxes, scores, **kw)
        assert_same(got, want)
    return want


CASES = [  # (N, A, C, score_threshold, pre_nms_top_k, max_detections)
    (2, 50, 3, 0.5, None, 20),
    (3, 120, 4, 0.3, None, 100),
    (2, 200, 5, 0.6, 64, 30),
    (1, 400, 4, 0.3, None, 300),  # > 1,000 candidates: torchvision's per-class path on the CPU
    (2, 300, 2, 0.1, 700, 50),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("multi_label", [True, False], ids=["multi", "single"])
@pytest.mark.parametrize("class_agnostic", [False, True], ids=["per_class_nms", "agnostic"])
@pytest.mark.parametrize("per_class_boxes", [False, True], ids=["boxes3d", "boxes4d"])
def test_matches_reference(device, dtype, case, multi_label, class_agnostic, per_class_boxes):
    n, a, c, thr, top_k, k = case
    boxes = random_boxes((n, a, c) if per_class_boxes else (n, a), dtype, device)
    scores = torch.rand(n, a, c, dtype=dtype, device=device)
    want = run_both(
        boxes,
        scores,
        score_threshold=thr,
        iou_threshold=0.5,
        max_detections=k,
        pre_nms_top_k=top_k,
        class_agnostic=class_agnostic,
        multi_label=multi_label,
    )
    assert want[0].sum() > 0  # the case detects something


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("multi_label", [True, False], ids=["multi", "single"])
@pytest.mark.parametrize("class_agnostic", [False, True], ids=["per_class_nms", "agnostic"])
def test_ties(device, multi_label, class_agnostic):
    """Scores of a few values (ties everywhere, at the pre-NMS cut and at K) and duplicate boxes."""
    n, a, c = 3, 150, 4
    boxes = random_boxes((n, a), torch.float32, device)
    boxes[:, 1::3] = boxes[:, ::3][:, : boxes[:, 1::3].shape[1]]  # every third box twice
    scores = (torch.randint(0, 5, (n, a, c), device=device) / 4).float()
    for top_k, k in [(None, 40), (37, 10), (500, 200)]:
        run_both(
            boxes,
            scores,
            score_threshold=0.3,
            iou_threshold=0.4,
            max_detections=k,
            pre_nms_top_k=top_k,
            class_agnostic=class_agnostic,
            multi_label=multi_label,
        )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("multi_label", [True, False], ids=["multi", "single"])
def test_nan_scores_and_boxes(device, multi_label):
    n, a, c = 2, 100, 3
    boxes = random_boxes((n, a), torch.float32, device)
    scores = torch.rand(n, a, c, device=device)
    scores[torch.rand(n, a, c, device=device) < 0.2] = float("nan")
    boxes[torch.rand(n, a, 4, device=device) < 0.05] = float("nan")
    for agnostic in (False, True):
        run_both(
            boxes,
            scores,
            score_threshold=0.2,
            iou_threshold=0.5,
            max_detections=60,
            class_agnostic=agnostic,
            multi_label=multi_label,
        )
    # a NaN among the candidates' boxes makes torchvision's class shift NaN: nothing is suppressed
    boxes[:, 0] = float("nan")
    scores[:, 0] = 0.99
    run_both(boxes, scores, score_threshold=0.2, iou_threshold=0.5, max_detections=60, multi_label=multi_label)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(2, 0, 3), (0, 5, 3), (2, 5, 0), (0, 0, 0)], ids=str)
@pytest.mark.parametrize("k", [0, 7])
def test_empty(device, shape, k):
    boxes = random_boxes(shape[:2], torch.float32, device)
    scores = torch.rand(shape, device=device)
    for multi_label in (True, False):
        num, b, s, c, a = run_both(
            boxes,
            scores,
            score_threshold=0.1,
            iou_threshold=0.5,
            max_detections=k,
            pre_nms_top_k=3,
            multi_label=multi_label,
        )
        assert num.sum() == 0 and b.shape == (shape[0], k, 4)


@pytest.mark.parametrize("device", DEVICES)
def test_all_below_threshold_and_padding(device):
    boxes = random_boxes((2, 30), torch.float64, device)
    scores = torch.rand(2, 30, 4, dtype=torch.float64, device=device) * 0.5
    num, b, s, c, a = run_both(boxes, scores, score_threshold=0.5, iou_threshold=0.5, max_detections=5)
    assert num.tolist() == [0, 0]
    assert (b == 0).all() and (s == 0).all() and (c == -1).all() and (a == -1).all()
    # a score equal to the threshold is not a candidate (strictly above, as torchvision's detectors)
    scores[0, 3, 1] = 0.5
    assert run_both(boxes, scores, score_threshold=0.5, iou_threshold=0.5, max_detections=5)[0].tolist() == [0, 0]


@pytest.mark.parametrize("device", DEVICES)
def test_k_larger_than_candidates(device):
    boxes = random_boxes((3, 10), torch.float32, device)
    scores = torch.rand(3, 10, 2, device=device)
    num, b, s, c, a = run_both(boxes, scores, score_threshold=0.2, iou_threshold=0.7, max_detections=50)
    assert (num < 50).all() and (num > 0).all()
    rows = torch.arange(50, device=device) < num[:, None]
    assert (c[rows] >= 0).all() and (c[~rows] == -1).all() and (a[~rows] == -1).all()
    assert (s[~rows] == 0).all() and (b[~rows] == 0).all()


def test_docstring_example():
    boxes = torch.tensor([[[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 10.0, 10.0], [20.0, 20.0, 30.0, 30.0]]])
    scores = torch.tensor([[[0.9, 0.1], [0.8, 0.7], [0.2, 0.6]]])
    n, b, s, c, a = myops.multiclass_nms_static(boxes, scores, score_threshold=0.5, iou_threshold=0.5, max_detections=4)
    assert n.tolist() == [3] and c.tolist() == [[0, 1, 1, -1]] and a.tolist() == [[0, 1, 2, -1]]
    assert s[0].tolist() == pytest.approx([0.9, 0.7, 0.6, 0.0])


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 3),
    a=st.integers(0, 40),
    c=st.integers(1, 4),
    levels=st.integers(1, 6),
    nan=st.booleans(),
    per_class_boxes=st.booleans(),
    multi_label=st.booleans(),
    class_agnostic=st.booleans(),
    thr=st.sampled_from([-1.0, 0.0, 0.25, 0.5]),
    iou=st.sampled_from([0.0, 0.3, 0.5, 1.0]),
    top_k=st.one_of(st.none(), st.integers(0, 30)),
    k=st.integers(0, 25),
    seed=st.integers(0, 2**31 - 1),
)
def test_properties(n, a, c, levels, nan, per_class_boxes, multi_label, class_agnostic, thr, iou, top_k, k, seed):
    """Small shapes, scores of a few levels (ties), NaN, every option: equal to the reference."""
    g = torch.Generator().manual_seed(seed)
    boxes = random_boxes((n, a, c) if per_class_boxes else (n, a), torch.float32, "cpu", spread=40.0)
    scores = torch.randint(0, levels, (n, a, c), generator=g) / levels
    if nan:
        scores[torch.rand(n, a, c, generator=g) < 0.1] = float("nan")
    run_both(
        boxes,
        scores,
        score_threshold=thr,
        iou_threshold=iou,
        max_detections=k,
        pre_nms_top_k=top_k,
        class_agnostic=class_agnostic,
        multi_label=multi_label,
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference_mode"])
def test_autograd_modes(device, mode):
    """Inputs that require grad, and inference tensors (the CPU form's images run in parallel, each
    worker in the caller's mode)."""
    boxes = random_boxes((4, 60), torch.float32, device)
    scores = torch.rand(4, 60, 3, device=device)
    want = reference(boxes, scores, score_threshold=0.4, iou_threshold=0.5, max_detections=30)
    if mode == "grad":
        got = myops.multiclass_nms_static(
            boxes.requires_grad_(), scores.requires_grad_(), score_threshold=0.4, iou_threshold=0.5, max_detections=30
        )
        with pytest.raises(RuntimeError, match="not implemented"):  # inference only: torch's rule for such ops
            got[2].sum().backward()
        got = [t.detach() for t in got]
    else:
        ctx = torch.no_grad() if mode == "no_grad" else torch.inference_mode()
        with ctx:
            if mode == "inference_mode":
                boxes, scores = boxes.clone(), scores.clone()  # inference tensors
            got = myops.multiclass_nms_static(boxes, scores, score_threshold=0.4, iou_threshold=0.5, max_detections=30)
    assert_same(got, want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("per_class_boxes", [False, True])
def test_opcheck(device, per_class_boxes):
    boxes = random_boxes((2, 30, 3) if per_class_boxes else (2, 30), torch.float32, device)
    scores = torch.rand(2, 30, 3, device=device)
    for kw in (
        {"pre_nms_top_k": None, "class_agnostic": False, "multi_label": True},
        {"pre_nms_top_k": 10, "class_agnostic": True, "multi_label": False},
    ):
        opcheck(
            torch.ops.myops.multiclass_nms_static.default,
            (boxes, scores),
            dict(score_threshold=0.3, iou_threshold=0.5, max_detections=8, **kw),
        )


def _assert_no_symbols(ep):
    symbolic = set()
    for node in ep.graph.nodes:
        vals = node.meta.get("val")
        for v in vals if isinstance(vals, (list, tuple)) else [vals]:
            if isinstance(v, torch.Tensor):
                symbolic |= {str(d) for d in v.shape if isinstance(d, torch.SymInt)}
            elif isinstance(v, (torch.SymInt, torch.SymBool, torch.SymFloat)):
                symbolic.add(str(v))
    assert symbolic == set(), sorted(symbolic)
    assert ep.range_constraints == {}, ep.range_constraints


class _Post(torch.nn.Module):
    def forward(self, boxes, scores):
        return myops.multiclass_nms_static(
            boxes, scores, score_threshold=0.3, iou_threshold=0.5, max_detections=16, pre_nms_top_k=64
        )


@pytest.mark.parametrize("device", DEVICES)
def test_export_no_unbacked_symbols(device):
    boxes = random_boxes((2, 40), torch.float32, device)
    scores = torch.rand(2, 40, 5, device=device)
    ep = torch.export.export(_Post(), (boxes, scores))
    _assert_no_symbols(ep)
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "myops.multiclass_nms_static.default" in targets, targets
    boxes2, scores2 = random_boxes((2, 40), torch.float32, device), torch.rand(2, 40, 5, device=device)
    assert_same(ep.module()(boxes2, scores2), _Post()(boxes2, scores2))


def test_compile_fullgraph():
    boxes = random_boxes((2, 40), torch.float32, "cpu")
    scores = torch.rand(2, 40, 5)
    compiled = torch.compile(_Post(), fullgraph=True, backend="aot_eager")
    assert_same(compiled(boxes, scores), _Post()(boxes, scores))


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    b, s = random_boxes((2, 5), torch.float32, device), torch.rand(2, 5, 3, device=device)
    kw = dict(score_threshold=0.5, iou_threshold=0.5, max_detections=4)
    f = myops.multiclass_nms_static
    with pytest.raises(RuntimeError, match="argument 'scores' must be a 3-D"):
        f(b, s[0], **kw)
    with pytest.raises(RuntimeError, match="argument 'boxes' must be a 3-D"):
        f(b[0], s, **kw)
    with pytest.raises(RuntimeError, match="4 elements in its last dim"):
        f(b[..., :3], s, **kw)
    with pytest.raises(RuntimeError, match="must agree in N, A"):
        f(b[:, :4], s, **kw)
    with pytest.raises(RuntimeError, match="must agree in N, A and C"):
        f(random_boxes((2, 5, 2), torch.float32, device), s, **kw)
    with pytest.raises(RuntimeError, match="must have the same dtype"):
        f(b.double(), s, **kw)
    with pytest.raises(RuntimeError, match="must have dtype in"):
        f(b.to(torch.int32), s.to(torch.int32), **kw)
    with pytest.raises(RuntimeError, match="'max_detections' must be >= 0"):
        f(b, s, score_threshold=0.5, iou_threshold=0.5, max_detections=-1)
    with pytest.raises(RuntimeError, match="'pre_nms_top_k' must be >= 0"):
        f(b, s, pre_nms_top_k=-2, **kw)
    with pytest.raises(TypeError):
        f(b, s, 0.5, 0.5, 4)  # keyword-only
    if device == "cuda":
        with pytest.raises(RuntimeError, match="same device"):
            f(b.cpu(), s, **kw)


def test_fake_matches_real():
    from torch._subclasses.fake_tensor import FakeTensorMode

    boxes, scores = random_boxes((2, 30, 3), torch.float32, "cpu"), torch.rand(2, 30, 3)
    real = torch.ops.myops.multiclass_nms_static(
        boxes, scores, score_threshold=0.3, iou_threshold=0.5, max_detections=9
    )
    with FakeTensorMode() as mode:
        fake = torch.ops.myops.multiclass_nms_static(
            mode.from_tensor(boxes), mode.from_tensor(scores), score_threshold=0.3, iou_threshold=0.5, max_detections=9
        )
    for r, f in zip(real, fake):
        assert (r.shape, r.dtype, r.stride()) == (f.shape, f.dtype, f.stride())


# ---- CUDA: no host sync, one CUDA graph (skipped without a device) ----------------------------


@cuda_only
@pytest.mark.parametrize("multi_label", [True, False])
@pytest.mark.parametrize("class_agnostic", [False, True])
def test_cuda_no_sync(multi_label, class_agnostic):
    boxes = random_boxes((4, 500), torch.float32, "cuda")
    scores = torch.rand(4, 500, 8, device="cuda")
    kw = dict(
        score_threshold=0.5,
        iou_threshold=0.5,
        max_detections=50,
        pre_nms_top_k=1000,
        multi_label=multi_label,
        class_agnostic=class_agnostic,
    )
    want = reference(boxes, scores, **kw)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        got = myops.multiclass_nms_static(boxes, scores, **kw)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert_same(got, want)


@cuda_only
def test_cuda_large_candidate_sets():
    """More than 25,000 candidates (torchvision's per-class path on CUDA) and fewer, float16 too."""
    for dtype, thr in [(torch.float32, 0.9), (torch.float32, 0.99), (torch.float16, 0.95)]:
        boxes = random_boxes((2, 8400), dtype, "cuda", spread=600.0)
        scores = torch.rand(2, 8400, 80, device="cuda").to(dtype)
        run_both(boxes, scores, score_threshold=thr, iou_threshold=0.45, max_detections=300, pre_nms_top_k=30000)


@cuda_only
@cuda_graph
def test_cuda_graph_capture():
    boxes = random_boxes((3, 400), torch.float32, "cuda")
    scores = torch.rand(3, 400, 6, device="cuda")
    kw = dict(score_threshold=0.4, iou_threshold=0.5, max_detections=40, pre_nms_top_k=800)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            myops.multiclass_nms_static(boxes, scores, **kw)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = myops.multiclass_nms_static(boxes, scores, **kw)
    for _ in range(2):
        boxes.copy_(random_boxes((3, 400), torch.float32, "cuda"))
        scores.copy_(torch.rand(3, 400, 6, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        assert_same([t.clone() for t in out], reference(boxes, scores, **kw))


# ---- the example: a tiny detector through torch.export, AOTInductor and C++ ------------------


@pytest.mark.slow  # AOTInductor's compile and the C++ build: minutes on a small machine
def test_example_aoti_from_cpp(tmp_path, detect_program):  # noqa: F811  (the fixture)
    """examples/multiclass_nms_detector.py: the package run by myops_detect (no Python in its
    process) gives eager's detections."""
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    try:
        import multiclass_nms_detector as example
    finally:
        sys.path.pop(0)
    model = example.build()
    path = example.package(model, torch.rand(2, 3, 64, 64), str(tmp_path / "tiny.pt2"))
    images = torch.rand(2, 3, 64, 64)
    with torch.no_grad():
        eager = model(images)
    assert eager[0].min() > 0  # every image detects something
    cpp, stdout = example.run_from_cpp(detect_program, path, images, str(tmp_path))
    assert "ok      no libpython in this process" in stdout, stdout
    assert example.compare(eager, cpp) == []

"""nms / batched_nms / nms_static / batched_nms_static against torchvision.ops (issue 27)."""

import pytest
import torch
from hypothesis import given, settings, strategies as st

import myops
from helpers import DEVICES, cuda_graph, cuda_only

torchvision = pytest.importorskip("torchvision")
tv_ops = torchvision.ops

DTYPES = {"cpu": [torch.float32, torch.float64], "cuda": [torch.float16, torch.float32, torch.float64]}


def make_boxes(n, dtype, device, scale=100.0, ties=False, nan_scores=False, dup=False, degenerate=False):
    """Random (x1, y1, x2, y2) boxes with heavy overlap, and scores; options add the hard cases."""
    xy = torch.rand(n, 2, dtype=torch.float64) * scale
    wh = torch.rand(n, 2, dtype=torch.float64) * scale * 0.3
    boxes = torch.cat([xy, xy + wh], 1)
    scores = torch.randint(0, 4, (n,)).double() if ties else torch.rand(n, dtype=torch.float64)
    if nan_scores and n:
        scores[torch.rand(n) < 0.15] = float("nan")
    if dup and n > 4:
        boxes[1::4] = boxes[0::4][: boxes[1::4].shape[0]]  # identical boxes
    if degenerate and n > 3:
        boxes[2::3, 2] = boxes[2::3, 0]  # zero width: zero area (0/0 IoU is NaN, never suppresses)
    return boxes.to(dtype).to(device), scores.to(dtype).to(device)


def check_nms(boxes, scores, thr):
    expected = tv_ops.nms(boxes, scores, thr)
    actual = myops.nms(boxes, scores, thr)
    assert actual.dtype == torch.int64 and actual.device == boxes.device
    assert torch.equal(actual, expected), (actual, expected)
    for size in (0, 1, max(expected.numel() - 1, 0), expected.numel(), expected.numel() + 3):
        keep, count = myops.nms_static(boxes, scores, thr, size=size)
        assert keep.shape == (size,) and keep.dtype == torch.int64
        assert count.dim() == 0 and count.dtype == torch.int64 and count.device == boxes.device
        assert int(count) == expected.numel()
        m = min(size, expected.numel())
        assert torch.equal(keep[:m], expected[:m]) and bool((keep[m:] == -1).all())
    return expected


def check_batched(boxes, scores, idxs, thr):
    expected = tv_ops.batched_nms(boxes, scores, idxs, thr)
    actual = myops.batched_nms(boxes, scores, idxs, thr)
    assert torch.equal(actual, expected), (actual, expected)
    for size in (0, expected.numel(), expected.numel() + 2):
        keep, count = myops.batched_nms_static(boxes, scores, idxs, thr, size=size)
        assert int(count) == expected.numel()
        m = min(size, expected.numel())
        assert torch.equal(keep[:m], expected[:m]) and bool((keep[m:] == -1).all())


def dtypes_of(device):
    return DTYPES["cuda" if device.startswith("cuda") else "cpu"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 65, 200, 1000])
@pytest.mark.parametrize("case", ["plain", "ties", "nan", "dup", "degenerate", "all"])
def test_nms_parity(device, n, case):
    for dtype in dtypes_of(device):
        kw = dict(
            ties=case in ("ties", "all"),
            nan_scores=case in ("nan", "all"),
            dup=case in ("dup", "all"),
            degenerate=case in ("degenerate", "all"),
        )
        boxes, scores = make_boxes(n, dtype, device, **kw)
        for thr in (0.0, 0.3, 0.5, 0.7, 1.0):
            check_nms(boxes, scores, thr)


@pytest.mark.parametrize("device", DEVICES)
def test_nms_thresholds_and_layouts(device):
    boxes, scores = make_boxes(300, torch.float32, device, ties=True)
    for thr in (-1.0, 0.1, 0.33333334, 1 / 3, 2.0, float("nan"), float("inf")):
        check_nms(boxes, scores, thr)
    check_nms(boxes.t().contiguous().t(), scores, 0.5)  # column-major boxes
    check_nms(torch.cat([boxes, boxes], 1)[:, ::2], scores[::1], 0.5)  # strided view
    wide = torch.zeros(300, 2, device=device)
    check_nms(boxes, torch.stack([scores, wide[:, 0]], 1)[:, 0], 0.5)  # strided scores


@pytest.mark.parametrize("device", DEVICES)
def test_nms_nan_boxes(device):
    boxes, scores = make_boxes(100, torch.float32, device)
    boxes[::7, 0] = float("nan")
    boxes[3::11, 3] = float("nan")
    check_nms(boxes, scores, 0.5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [0, 1, 50, 999, 1000, 1001, 3000])  # 4000 elements = 1000 boxes on CPU: both paths
@pytest.mark.parametrize("classes", [1, 3, 40])
def test_batched_nms_parity(device, n, classes):
    for dtype in dtypes_of(device):
        boxes, scores = make_boxes(n, dtype, device, ties=True)
        idxs = torch.randint(0, classes, (n,), device=device)
        check_batched(boxes, scores, idxs, 0.5)
        check_batched(boxes, scores, idxs.to(torch.int32) - 5, 0.3)  # other int dtype, negative ids
        check_batched(boxes, scores, idxs.to(dtype), 0.6)  # floating class ids


@cuda_only
def test_batched_nms_cuda_per_class_path():
    # above 100000 elements on CUDA torchvision goes per class; distinct scores keep the order exact
    boxes, scores = make_boxes(30000, torch.float32, "cuda")
    idxs = torch.randint(0, 20, (30000,), device="cuda")
    check_batched(boxes, scores, idxs, 0.5)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 80),
    thr=st.floats(-0.5, 1.5) | st.just(float("nan")),
    ties=st.booleans(),
    nan_scores=st.booleans(),
    scale=st.sampled_from([1.0, 10.0, 1000.0]),
    classes=st.integers(1, 5),
    seed=st.integers(0, 2**31 - 1),
)
def test_nms_properties(n, thr, ties, nan_scores, scale, classes, seed):
    torch.manual_seed(seed)
    boxes, scores = make_boxes(n, torch.float32, "cpu", scale=scale, ties=ties, nan_scores=nan_scores)
    kept = check_nms(boxes, scores, thr)
    assert kept.unique().numel() == kept.numel()  # no index twice
    check_batched(boxes, scores, torch.randint(0, classes, (n,)), thr)


@pytest.mark.parametrize("device", DEVICES)
def test_nms_bad_inputs(device):
    b, s = make_boxes(5, torch.float32, device)
    cases = [
        ((b[:, :3], s), "'boxes' must have 4 elements in dim 1, got 3"),
        ((b[None], s), "'boxes' must be a 2-D"),
        ((b, s[None]), "'scores' must be a 1-D"),
        ((b, s[:4]), "same number of boxes, got 5 and 4"),
        ((b, s.double()), "same dtype"),
        ((b.int(), s.int()), "argument 'boxes' must have dtype"),
    ]
    for args, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            myops.nms(*args, 0.5)
        with pytest.raises(RuntimeError, match=msg):
            myops.nms_static(*args, 0.5, size=3)
    with pytest.raises(RuntimeError, match="'size' must be >= 0"):
        myops.nms_static(b, s, 0.5, size=-1)
    with pytest.raises(RuntimeError, match="'idxs' must be a 1-D tensor of 5"):
        myops.batched_nms(b, s, torch.zeros(4, dtype=torch.int64, device=device), 0.5)
    with pytest.raises(RuntimeError, match="'idxs' must be a 1-D tensor of 5"):
        myops.batched_nms_static(b, s, torch.zeros(5, 1, dtype=torch.int64, device=device), 0.5, size=2)


def test_nms_inputs_not_modified():
    b, s = make_boxes(200, torch.float32, "cpu", ties=True)
    b0, s0 = b.clone(), s.clone()
    idxs = torch.randint(0, 3, (200,))
    myops.nms(b, s, 0.5)
    myops.batched_nms(b, s, idxs, 0.5)
    myops.nms_static(b, s, 0.5, size=10)
    assert torch.equal(b, b0) and torch.equal(s, s0)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_nms(device):
    b, s = make_boxes(70, torch.float32, device, ties=True)
    idxs = torch.randint(0, 3, (70,), device=device)
    torch.library.opcheck(torch.ops.myops.nms_static.default, (b, s, 0.5), {"size": 30})
    torch.library.opcheck(torch.ops.myops.batched_nms_static.default, (b, s, idxs, 0.5), {"size": 30})
    torch.library.opcheck(torch.ops.myops.nms.default, (b, s, 0.5))
    torch.library.opcheck(torch.ops.myops.batched_nms.default, (b, s, idxs, 0.5))


@pytest.mark.parametrize("device", DEVICES)
def test_compile_nms(device):
    torch._dynamo.reset()

    def f(b, s, i):
        k, c = myops.nms_static(b, s, 0.5, size=40)
        k2, c2 = myops.batched_nms_static(b, s, i, 0.5, size=40)
        return k, c, k2, c2

    cf = torch.compile(f, fullgraph=True)
    for n in (50, 80):
        b, s = make_boxes(n, torch.float32, device)
        i = torch.randint(0, 3, (n,), device=device)
        for a, e in zip(cf(b, s, i), f(b, s, i), strict=True):
            assert torch.equal(a, e)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        g = torch.compile(lambda b, s: myops.nms(b, s, 0.5) + 0, fullgraph=True)
        b, s = make_boxes(60, torch.float32, device)
        assert torch.equal(g(b, s), tv_ops.nms(b, s, 0.5))


def test_export_static_nms_has_no_unbacked_symbols():
    class Post(torch.nn.Module):
        def forward(self, boxes, scores, labels):
            keep, count = myops.batched_nms_static(boxes, scores, labels, 0.5, size=20)
            safe = keep.clamp_min(0)
            return boxes[safe], scores[safe], count, myops.nms_static(boxes, scores, 0.6, size=10)[0]

    b, s = make_boxes(100, torch.float32, "cpu")
    labels = torch.randint(0, 4, (100,))
    ep = torch.export.export(Post(), (b, s, labels), strict=False)
    for node in ep.graph.nodes:
        vals = node.meta.get("val")
        for v in vals if isinstance(vals, (tuple, list)) else [vals]:
            if isinstance(v, torch.Tensor):
                assert all(isinstance(d, int) for d in v.shape), (node, v.shape)
    b2, s2 = make_boxes(100, torch.float32, "cpu", ties=True)
    for a, e in zip(ep.module()(b2, s2, labels), Post()(b2, s2, labels), strict=True):
        assert torch.equal(a, e)


# ---- CUDA only --------------------------------------------------------------------------------


@cuda_only
@cuda_graph
def test_nms_static_cuda_graph_and_no_sync():
    n = 500
    b, s = make_boxes(n, torch.float32, "cuda")
    idxs = torch.randint(0, 4, (n,), device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            myops.nms_static(b, s, 0.5, size=200)
            myops.batched_nms_static(b, s, idxs, 0.5, size=200)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        keep, count = myops.nms_static(b, s, 0.5, size=200)
        bkeep, bcount = myops.batched_nms_static(b, s, idxs, 0.5, size=200)
    for _ in range(3):
        nb, ns = make_boxes(n, torch.float32, "cuda", ties=True)
        b.copy_(nb)
        s.copy_(ns)
        idxs.copy_(torch.randint(0, 4, (n,), device="cuda"))
        g.replay()
        torch.cuda.synchronize()
        exp = tv_ops.nms(b, s, 0.5)
        assert int(count) == exp.numel() and torch.equal(keep[: exp.numel()], exp[:200])
        bexp = tv_ops.batched_nms(b, s, idxs, 0.5)
        assert int(bcount) == bexp.numel() and torch.equal(bkeep[: bexp.numel()], bexp[:200])
    prev = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        keep, count = myops.nms_static(b, s, 0.5, size=100)
        bkeep, bcount = myops.batched_nms_static(b, s, idxs, 0.5, size=100)
    finally:
        torch.cuda.set_sync_debug_mode(prev)
    assert int(count) == tv_ops.nms(b, s, 0.5).numel()


@cuda_only
def test_nms_cuda_large():
    for n in (5000, 20000):
        b, s = make_boxes(n, torch.float32, "cuda", scale=1000.0)
        check_nms(b, s, 0.5)


# ---- drop-in: myops.enable() routes torchvision::nms ---------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_dropin_torchvision_nms(device):
    b, s = make_boxes(400, torch.float32, device, ties=True, nan_scores=True)
    idxs = torch.randint(0, 5, (400,), device=device)
    expected = tv_ops.nms(b, s, 0.5), tv_ops.batched_nms(b, s, idxs, 0.5)
    with myops.enable({"nms"}) as stats:
        actual = tv_ops.nms(b, s, 0.5), tv_ops.batched_nms(b, s, idxs, 0.5)
        # a call myops does not take (half boxes on the CPU) is handed back: torchvision raises
        if device == "cpu":
            with pytest.raises(RuntimeError, match="nms_kernel"):
                tv_ops.nms(b.half(), s.half(), 0.5)
    for a, e in zip(actual, expected, strict=True):
        assert torch.equal(a, e)
    assert stats.routed["nms"] == 2
    assert stats.handed_back.get("nms", 0) == (1 if device == "cpu" else 0)
    assert "nms" not in torch.ops.myops._override_enabled()


def test_dropin_torchvision_nms_under_tracing_hands_back():
    # FakeTensors (torch.export) take torchvision's fake kernel, above the override (BackendSelect)
    class M(torch.nn.Module):
        def forward(self, b, s):
            return tv_ops.nms(b, s, 0.5)

    b, s = make_boxes(50, torch.float32, "cpu")
    with myops.enable({"nms"}):
        ep = torch.export.export(M(), (b, s), strict=False)
        assert torch.equal(ep.module()(b, s), tv_ops.nms(b, s, 0.5))

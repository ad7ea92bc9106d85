"""roi_align_levels against torchvision.ops.roi_align / MultiScaleRoIAlign (issue 28)."""

import re

import pytest
import torch
from hypothesis import given, settings, strategies as st

import myops
from helpers import DEVICES, assert_same, cuda_only

torchvision = pytest.importorskip("torchvision")
tv_ops = torchvision.ops

DTYPES = [torch.float32, torch.float64, torch.float16]  # torchvision's CPU kernel's dtypes


def make_features(n, c, sizes, dtype, device="cpu"):
    return [(torch.randn(n, c, h, w, dtype=torch.float64) * 3).to(dtype).to(device) for h, w in sizes]


def make_rois(k, n, height, width, dtype, device="cpu"):
    """[K, 5] RoIs over an image of height x width: inside, across the border, outside, degenerate
    (zero width or height), reversed (x2 < x1), tiny and larger than the image, mixed."""
    img = torch.tensor([width, height, width, height], dtype=torch.float64)
    x1y1 = torch.rand(k, 2, dtype=torch.float64) * 1.6 - 0.3
    wh = torch.rand(k, 2, dtype=torch.float64) * 0.8
    boxes = torch.cat([x1y1, x1y1 + wh], 1)
    kind = torch.randint(0, 6, (k,))
    boxes[kind == 1, 2:] = boxes[kind == 1, :2]  # degenerate: a point
    boxes[kind == 2] = boxes[kind == 2][:, [2, 3, 0, 1]]  # reversed corners
    boxes[kind == 3, 2:] = boxes[kind == 3, :2] + 1e-3  # tiny
    boxes[kind == 4] = torch.tensor([-0.5, -0.4, 1.7, 1.5], dtype=torch.float64)  # covers the image
    boxes[kind == 5, :2] += 1.4  # entirely outside
    boxes = boxes * img
    batch = torch.randint(0, n, (k, 1)).to(torch.float64)
    return torch.cat([batch, boxes], 1).to(dtype).to(device)


def reference(features, rois, levels, output_size, scales, sampling_ratio, aligned):
    """torchvision per RoI: each RoI is pooled on its own level (one call per level; torchvision
    computes every RoI independently)."""
    f0 = features[0]
    out = torch.zeros(rois.shape[0], f0.shape[1], *output_size, dtype=f0.dtype, device=f0.device)
    for lvl, (f, s) in enumerate(zip(features, scales)):
        sel = (levels == lvl).nonzero().flatten()
        if sel.numel():
            out[sel] = tv_ops.roi_align(f, rois[sel], output_size, s, sampling_ratio, aligned)
    return out


def check(features, rois, levels, output_size, scales, sampling_ratio, aligned):
    before = [f.clone() for f in features] + [rois.clone(), levels.clone()]
    got = myops.roi_align_levels(features, rois, levels, output_size, scales, sampling_ratio, aligned)
    exp = reference(features, rois, levels, output_size, scales, sampling_ratio, aligned)
    assert_same(got, exp)  # dtype, shape, strides, every bit
    for a, b in zip(before, list(features) + [rois, levels]):
        assert_same(a, b)  # inputs untouched
    return got


FPN = [(32, 40), (16, 20), (8, 10), (4, 5)]
FPN_SCALES = [1 / 4, 1 / 8, 1 / 16, 1 / 32]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [2, 0, -1, 1, 3])
def test_matches_torchvision(dtype, aligned, sampling_ratio):
    feats = make_features(2, 3, FPN, dtype)
    rois = make_rois(300, 2, 128, 160, dtype)
    levels = torch.randint(0, len(FPN), (300,))
    check(feats, rois, levels, (7, 7), FPN_SCALES, sampling_ratio, aligned)


@pytest.mark.parametrize("output_size", [(1, 1), (7, 7), (14, 14), (3, 5), 4])
def test_output_sizes(output_size):
    feats = make_features(1, 2, FPN[:3], torch.float32)
    rois = make_rois(60, 1, 128, 160, torch.float32)
    levels = torch.randint(0, 3, (60,))
    size = (output_size, output_size) if isinstance(output_size, int) else output_size
    got = myops.roi_align_levels(feats, rois, levels, output_size, FPN_SCALES[:3], 2)
    assert_same(got, reference(feats, rois, levels, size, FPN_SCALES[:3], 2, False))


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(0, 40),
    n=st.integers(1, 3),
    c=st.integers(1, 4),
    sizes=st.lists(st.tuples(st.integers(1, 24), st.integers(1, 24)), min_size=1, max_size=8),
    scale=st.sampled_from([1.0, 0.5, 0.25, 0.3, 1 / 3, 2.0]),
    ph=st.integers(1, 8),
    pw=st.integers(1, 8),
    sampling_ratio=st.integers(-1, 4),
    aligned=st.booleans(),
    dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**31 - 1),
)
def test_matches_torchvision_hypothesis(k, n, c, sizes, scale, ph, pw, sampling_ratio, aligned, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    feats = make_features(n, c, sizes, dtype)
    scales = [scale / (2**i) for i in range(len(sizes))]
    h, w = max(s[0] for s in sizes) / scale, max(s[1] for s in sizes) / scale
    rois = make_rois(k, n, h, w, dtype)
    levels = torch.randint(0, len(sizes), (k,), generator=g)
    check(feats, rois, levels, (ph, pw), scales, sampling_ratio, aligned)


def test_hand_picked_rois():
    # RoIs at the border cases of the sampling: exactly on -1, 0, H - 1, H, past them; a zero /
    # negative / huge size; batch indices that truncate (1.9 -> 1, -0.5 -> 0)
    feats = make_features(2, 2, [(6, 7), (3, 4)], torch.float32)
    rows = [
        [0, -1, -1, 7, 6],
        [1, 0, 0, 6, 5],
        [0, 6, 5, 7, 6],
        [1, 7, 6, 8, 7],
        [0, -2, -2, -1, -1],
        [0, 2, 2, 2, 2],
        [1, 4, 4, 1, 1],
        [1.9, 1, 1, 3, 3],
        [-0.5, 1, 1, 3, 3],
        [0, 1.5, 1.5, 1.5, 4.5],
        [1, 0, 0, 1e9, 1e9],
    ]
    rois = torch.tensor(rows, dtype=torch.float32)
    for lvl in (0, 1):
        levels = torch.full((len(rows),), lvl, dtype=torch.int64)
        for sr in (2, 0):
            n = len(rows) if sr else len(rows) - 1  # the adaptive grid of 1e9: 3e8 x 3e8 points
            for aligned in (False, True):
                check(feats, rois[:n], levels[:n], (3, 3), [1.0, 0.5], sr, aligned)


@pytest.mark.parametrize("aligned", [False, True])
def test_non_finite_rois(aligned):
    # a NaN or infinite coordinate makes NaN sampling points, which are empty (torchvision's
    # current kernel; 0.29.1's installed one reads out of bounds there): the result is that of a
    # RoI whose points all fall outside the map, with the same grid
    feats = make_features(2, 2, [(6, 7)], torch.float64)
    nan, inf = float("nan"), float("inf")
    rois = torch.tensor(
        [
            [0, nan, 1, 3, 3],
            [1, 1, 1, nan, 3],
            [0, 1, 1, inf, 3],
            [1, -inf, 1, 3, 3],
            [0, 1, nan, 3, 3],
            [1, nan, nan, nan, nan],
        ],
        dtype=torch.float64,
    )
    outside = rois.clone()
    outside[:, 1:] = torch.tensor([50.0, 50.0, 60.0, 60.0], dtype=torch.float64)
    got = myops.roi_align_levels(feats, rois, torch.zeros(6, dtype=torch.int64), 3, [1.0], 2, aligned)
    assert_same(got, tv_ops.roi_align(feats[0], outside, 3, 1.0, 2, aligned))


def test_non_finite_features():
    # an empty point adds 0 * features[b, c, 0, 0] on the CPU: inf / NaN there reach the output
    feats = make_features(1, 2, [(5, 5)], torch.float64)
    feats[0][0, 0, 0, 0] = float("inf")
    feats[0][0, 1, 2, 2] = float("nan")
    rois = torch.tensor([[0, -10, -10, -5, -5], [0, 1, 1, 4, 4], [0, 0, 0, 1, 1]], dtype=torch.float64)
    check(feats, rois, torch.zeros(3, dtype=torch.int64), (2, 2), [1.0], 2, False)


def test_multiscale_roi_align_fpn():
    """The op with torchvision's LevelMapper equals MultiScaleRoIAlign on an FPN feature dict."""
    from collections import OrderedDict

    from torchvision.ops.poolers import _convert_to_roi_format, _setup_scales

    image_shapes = [(200, 256), (180, 240)]
    names = ["0", "1", "2", "3"]
    sizes = [(50, 64), (25, 32), (13, 16), (7, 8)]
    feats = OrderedDict((nm, f) for nm, f in zip(names, make_features(2, 8, sizes, torch.float32)))
    feats["pool"] = torch.randn(2, 8, 4, 4)
    boxes = []
    for h, w in image_shapes:
        xy = torch.rand(150, 2) * torch.tensor([w, h])
        wh = torch.rand(150, 2) ** 3 * torch.tensor([w, h])  # small and large: every level used
        boxes.append(torch.cat([xy, xy + wh], 1))
    # a small canonical scale, so that these small images use every level
    pooler = tv_ops.MultiScaleRoIAlign(names, 7, 2, canonical_scale=56)
    expected = pooler(feats, boxes, image_shapes)
    x = [feats[nm] for nm in names]
    scales, mapper = _setup_scales(x, image_shapes, 56, 4)
    levels = mapper(boxes)
    assert set(levels.tolist()) == {0, 1, 2, 3}
    got = myops.roi_align_levels(x, _convert_to_roi_format(boxes), levels, 7, scales, 2)
    assert_same(got, expected)


def test_empty_and_layouts():
    feats = make_features(2, 3, FPN[:2], torch.float32)
    empty = torch.zeros(0, 5)
    got = myops.roi_align_levels(feats, empty, torch.zeros(0, dtype=torch.int64), 7, FPN_SCALES[:2])
    assert_same(got, tv_ops.roi_align(feats[0], empty, 7, 0.25))
    got = myops.roi_align_levels(
        feats, make_rois(5, 2, 128, 160, torch.float32), torch.zeros(5, dtype=torch.int64), (0, 3), FPN_SCALES[:2]
    )
    assert got.shape == (5, 3, 0, 3)
    # channels_last features, rois and levels as strided views: made contiguous, same result
    rois = make_rois(50, 2, 128, 160, torch.float32)
    levels = torch.randint(0, 2, (50,))
    exp = reference(feats, rois, levels, (7, 7), FPN_SCALES[:2], 2, False)
    cl = [f.contiguous(memory_format=torch.channels_last) for f in feats]
    rois_t = rois.t().contiguous().t()
    levels_s = torch.stack([levels, levels], 1)[:, 0]
    assert not rois_t.is_contiguous() and not levels_s.is_contiguous()
    assert_same(myops.roi_align_levels(cl, rois_t, levels_s, 7, FPN_SCALES[:2], 2), exp)


def test_threads_do_not_change_the_result():
    feats = make_features(2, 4, FPN, torch.float32)
    rois = make_rois(200, 2, 128, 160, torch.float32)
    levels = torch.randint(0, 4, (200,))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = myops.roi_align_levels(feats, rois, levels, 7, FPN_SCALES, 0)
    finally:
        torch.set_num_threads(threads)
    assert_same(myops.roi_align_levels(feats, rois, levels, 7, FPN_SCALES, 0), one)


# ---- errors -----------------------------------------------------------------------------------


def _args(**kw):
    feats = make_features(2, 3, [(8, 8), (4, 4)], torch.float32)
    a = dict(
        features=feats,
        rois=make_rois(4, 2, 32, 32, torch.float32),
        levels=torch.tensor([0, 1, 1, 0]),
        spatial_scale=[0.25, 0.125],
        pooled_height=2,
        pooled_width=2,
    )
    a.update(kw)
    return a


def _call(a):
    return torch.ops.myops.roi_align_levels(
        a["features"], a["rois"], a["levels"], a["spatial_scale"], a["pooled_height"], a["pooled_width"]
    )


f32 = make_features(2, 3, [(8, 8)], torch.float32)
ERRORS = [
    (dict(features=[]), ValueError, "1 to 8 feature maps, got 0"),
    (dict(features=f32 * 9, spatial_scale=[1.0] * 9), ValueError, "1 to 8 feature maps, got 9"),
    (dict(spatial_scale=[0.25]), ValueError, "one scale per feature map (2), got 1"),
    (dict(pooled_height=-1), ValueError, "must be >= 0"),
    (dict(features=[torch.randn(3, 8, 8)], spatial_scale=[1.0]), ValueError, "4-D [N, C, H, W]"),
    (dict(features=f32 + [torch.randn(2, 4, 4, 4)]), ValueError, "the same N and C"),
    (dict(features=f32 + [torch.randn(2, 3, 4, 4, dtype=torch.float64)]), RuntimeError, "one dtype"),
    (dict(features=[f.bfloat16() for f in f32 * 2]), NotImplementedError, "must have dtype in"),
    (dict(rois=torch.zeros(4, 4)), ValueError, "[K, 5] tensor"),
    (dict(rois=torch.zeros(4, 5, dtype=torch.float64)), RuntimeError, "the features' dtype"),
    (dict(levels=torch.zeros(3, dtype=torch.int64)), ValueError, "1-D tensor of 4 levels"),
    (dict(levels=torch.zeros(4, dtype=torch.int32)), RuntimeError, "dtype int64"),
]


@pytest.mark.parametrize("device", ["cpu", "meta"])  # meta: the fake kernel's checks, the same errors
@pytest.mark.parametrize("kw, exc, msg", ERRORS, ids=[e[2] for e in ERRORS])
def test_errors(device, kw, exc, msg):
    a = _args(**kw)
    a["features"] = [f.to(device) for f in a["features"]]
    a["rois"], a["levels"] = a["rois"].to(device), a["levels"].to(device)
    with pytest.raises(exc, match="myops.roi_align_levels: .*" + re.escape(msg)):
        _call(a)


@pytest.mark.parametrize(
    "lvl, batch, msg",
    [
        (2, 0, r"levels\[3\] = 2 is out of range for 2 feature maps"),
        (-2, 0, r"levels\[3\] = -2 is out of range"),
        (0, 2, r"rois\[3, 0\] = 2 is not a batch index of the 2 images"),
        (0, -1, r"rois\[3, 0\] = -1 is not a batch index"),
        (0, float("nan"), r"rois\[3, 0\] = nan is not a batch index"),
    ],
)
def test_index_errors(lvl, batch, msg):
    a = _args()
    a["levels"][3] = lvl
    a["rois"][3, 0] = batch
    with pytest.raises(IndexError, match=msg):
        _call(a)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k, c", [(60, 3), (420, 64)])  # 420 x 64 x 7 x 7 floats: the CPU's fresh zeroed pages
def test_level_minus_one_is_padding(device, k, c):
    """A level of -1 marks a padded RoI: its output is 0 and its row of rois is not read (any
    batch index, NaN coordinates); the other RoIs are as before."""
    feats = make_features(2, c, FPN, torch.float32, device)
    rois = make_rois(k, 2, 128, 160, torch.float32, device)
    levels = torch.randint(0, len(FPN), (k,), device=device)
    pad = torch.rand(k, device=device) < 0.5
    pad[:3] = torch.tensor([True, False, True])
    rois[pad.nonzero()[::2, 0], 0] = 7.0  # not a batch index: never read
    rois[pad.nonzero()[1::2, 0], 1:] = float("nan")
    got = myops.roi_align_levels(feats, rois, torch.where(pad, -1, levels), 7, FPN_SCALES, 2)
    assert (got[pad] == 0).all() and not got[pad].signbit().any()
    real = (~pad).nonzero()[:, 0]
    assert_same(got[real], reference(feats, rois[real], levels[real], (7, 7), FPN_SCALES, 2, False))
    none = myops.roi_align_levels(feats, rois, torch.full_like(levels, -1), 7, FPN_SCALES, 2)
    assert_same(none, torch.zeros_like(got))


@pytest.mark.parametrize("device", DEVICES)
def test_padded_output_storage_is_an_ordinary_one(device):
    """The CPU's large padded outputs live in fresh zeroed pages: their storage still resizes as
    at::empty's does (values kept), and frees its pages with the tensor."""
    k, c = 420, 64  # 420 x 64 x 7 x 7 floats: past the zeroed-pages size
    feats = make_features(2, c, FPN, torch.float32, device)
    rois = make_rois(k, 2, 128, 160, torch.float32, device)
    levels = torch.where(torch.rand(k, device=device) < 0.5, -1, torch.randint(0, len(FPN), (k,), device=device))
    got = myops.roi_align_levels(feats, rois, levels, 7, FPN_SCALES, 2)
    assert got.untyped_storage().resizable() and got.is_contiguous()
    kept = got.clone()
    got.resize_(2 * k, c, 7, 7)
    assert_same(got[:k], kept)
    got[k:] = 1.0
    got.resize_(k // 2, c, 7, 7)
    assert_same(got, kept[: k // 2])


def test_device_mismatch_message():
    a = _args()
    a["levels"] = a["levels"].to("meta")
    with pytest.raises(RuntimeError, match="expected all tensors on the same device"):
        _call(a)


def test_no_gradient():
    """Inference only, as the bounded layers: the forward runs when an input requires grad (grad
    mode on: a model's tensors do under torch.export), the same values, and the backward raises."""
    for which in ("features", "rois"):
        a = _args()
        expected = _call(a)
        if which == "features":
            a["features"][1].requires_grad_()
        else:
            a["rois"].requires_grad_()
        got = _call(a)
        assert got.requires_grad
        assert_same(got.detach(), expected)
        with pytest.raises(RuntimeError, match="derivative for myops::roi_align_levels is not implemented"):
            got.sum().backward()
        with torch.no_grad():
            assert_same(_call(a), expected)
        with torch.inference_mode():
            assert_same(_call(a), expected)


# ---- tracing ----------------------------------------------------------------------------------


def test_opcheck():
    feats = make_features(2, 3, FPN, torch.float32)
    rois = make_rois(40, 2, 128, 160, torch.float32)
    levels = torch.randint(0, 4, (40,))
    torch.library.opcheck(torch.ops.myops.roi_align_levels.default, (feats, rois, levels, FPN_SCALES, 7, 7, 2, False))
    torch.library.opcheck(
        torch.ops.myops.roi_align_levels.default, (feats[:1], rois[:0], levels[:0], FPN_SCALES[:1], 3, 2, 0, True)
    )


def test_export_static_shapes():
    class Pool(torch.nn.Module):
        def forward(self, a, b, rois, levels):
            return myops.roi_align_levels([a, b], rois, levels, 7, [0.25, 0.125], 2)

    feats = make_features(2, 3, FPN[:2], torch.float32)
    rois = make_rois(30, 2, 128, 160, torch.float32)
    levels = torch.randint(0, 2, (30,))
    ep = torch.export.export(Pool(), (*feats, rois, levels))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert targets == ["myops.roi_align_levels.default"]
    assert not ep.range_constraints  # no symbol at all, backed or unbacked
    assert_same(ep.module()(*feats, rois, levels), Pool()(*feats, rois, levels))


# ---- CUDA: against torchvision's CUDA kernel ------------------------------------------------------


@cuda_only
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [2, 0])
def test_cuda_matches_torchvision(dtype, aligned, sampling_ratio):
    feats = make_features(2, 5, FPN, dtype, "cuda")
    rois = make_rois(500, 2, 128, 160, dtype, "cuda")
    levels = torch.randint(0, len(FPN), (500,), device="cuda")
    check(feats, rois, levels, (7, 7), FPN_SCALES, sampling_ratio, aligned)


@cuda_only
def test_cuda_invalid_indices_give_nan():
    feats = make_features(2, 3, FPN[:2], torch.float32, "cuda")
    rois = make_rois(4, 2, 128, 160, torch.float32, "cuda")
    rois[1, 0] = 2
    levels = torch.tensor([0, 1, 2, -2], device="cuda")
    out = myops.roi_align_levels(feats, rois, levels, 3, FPN_SCALES[:2], 2)
    assert out[1:].isnan().all() and not out[0].isnan().any()


@pytest.mark.parametrize("device", DEVICES)
def test_python_wrapper_forms(device):
    feats = make_features(1, 2, FPN[:2], torch.float64, device)
    rois = make_rois(10, 1, 128, 160, torch.float64, device)
    levels = torch.randint(0, 2, (10,), device=device)
    a = myops.roi_align_levels(tuple(feats), rois, levels, 5, (0.25, 0.125), sampling_ratio=2, aligned=True)
    b = torch.ops.myops.roi_align_levels(feats, rois, levels, [0.25, 0.125], 5, 5, 2, True)
    assert_same(a, b)

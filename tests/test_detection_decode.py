"""heatmaps_to_keypoints / paste_masks (issue 42): torchvision's per-detection loops
(roi_heads.heatmaps_to_keypoints, paste_masks_in_image) as one op over the real rows, bit for bit
on the CPU; the padding rows are not read and come out 0."""

import pytest
import torch
from torch.library import opcheck
from torchvision.models.detection.roi_heads import heatmaps_to_keypoints as tv_keypoints
from torchvision.models.detection.roi_heads import paste_mask_in_image, paste_masks_in_image

import myops  # noqa: F401
from myops import detection
from helpers import DEVICES

KP = torch.ops.myops.heatmaps_to_keypoints
PASTE = torch.ops.myops.paste_masks


def count_of(c, device="cpu"):
    return torch.tensor(c, dtype=torch.int64, device=device)


def make_rois(n, dtype, device="cpu", extent=120.0):
    """Boxes of every kind: random, at the image edge (x1 = 0, y1 = 0), degenerate (zero width or
    height, and both: torchvision's clamp to 1), sub-pixel, and whole-pixel sizes."""
    xy = torch.rand(n, 2, dtype=dtype, device=device) * 100
    wh = torch.rand(n, 2, dtype=dtype, device=device) * extent + 0.2
    rois = torch.cat([xy, xy + wh], dim=1)
    special = [
        [0.0, 0.0, 37.5, 12.25],
        [5.0, 7.0, 5.0, 30.0],
        [5.0, 7.0, 40.0, 7.0],
        [3.0, 3.0, 3.0, 3.0],
        [0.0, 0.0, 0.3, 0.6],
        [10.0, 20.0, 66.0, 76.0],
        [0.0, 0.0, 1.0, 1.0],
    ]
    k = min(n, len(special))
    if k:
        rois[:k] = torch.tensor(special[:k], dtype=dtype, device=device)
    return rois


def reference_keypoints(maps, rois, c):
    """torchvision on the real rows, zeros for the rest."""
    r, k = maps.shape[:2]
    real = max(0, min(c, r))
    xy = torch.zeros(r, k, 3, dtype=torch.float32, device=maps.device)
    sc = torch.zeros(r, k, dtype=torch.float32, device=maps.device)
    if real:
        xy[:real], sc[:real] = tv_keypoints(maps[:real], rois[:real])
    return xy, sc


class CudaNumberDivision(torch.overrides.TorchFunctionMode):
    """torch's CUDA true division of a floating tensor by a Python number, on the host: CUDA
    multiplies by the number's reciprocal (BinaryDivTrueKernel.cu: a * (1 / b), 1 / b in the
    compute type) where the CPU divides. a * (1.0 / b) here gives CUDA's bits (1 / b correctly
    rounded either way). For references of the CUDA emulation (torchvision's width / roi_map_width)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if (
            name in ("div", "__truediv__", "true_divide", "divide")
            and len(args) == 2
            and kwargs.get("rounding_mode") is None
            and isinstance(args[1], (int, float))
            and not isinstance(args[1], bool)
            and isinstance(args[0], torch.Tensor)
            and args[0].is_floating_point()
        ):
            return args[0] * (1.0 / args[1])
        return func(*args, **kwargs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("c", [0, 1, 9, 13, 20, -2])
def test_keypoints_match_torchvision(device, dtype, c):
    r, k = 13, 17
    maps = torch.randn(r, k, 56, 56, dtype=dtype, device=device)
    rois = make_rois(r, dtype, device)
    real = max(0, min(c, r))
    # padding rows are not read: NaN there changes nothing
    maps[real:] = float("nan")
    rois[real:] = float("nan")
    before = (maps.clone(), rois.clone())
    xy, sc = KP(maps, rois, count_of(c, device))
    ref_xy, ref_sc = reference_keypoints(maps, rois, c)
    assert xy.dtype == torch.float32 and sc.dtype == torch.float32
    assert xy.shape == (r, k, 3) and sc.shape == (r, k)
    if device == "cpu":  # the same resampling call as torchvision's: the same bits
        torch.testing.assert_close(xy, ref_xy, rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(sc, ref_sc, rtol=0, atol=0, equal_nan=True)
    else:  # torch's CUDA bicubic arithmetic, not its kernel: the same argmax, scores within rounding
        torch.testing.assert_close(xy, ref_xy, rtol=0, atol=0)
        # a 16-term bicubic sum in another order: assert_close's float32 default (see the
        # emulation test of heatmaps_to_keypoints for the measured spread)
        torch.testing.assert_close(sc, ref_sc)
    torch.testing.assert_close(maps, before[0], rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(rois, before[1], rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
def test_keypoints_ties_take_the_first_maximum(device):
    """Constant maps (every position ties: torch's argmax takes the first), a map with two equal
    peaks, and a NaN (torch's argmax: NaN is the maximum)."""
    r, k = 4, 3
    maps = torch.zeros(r, k, 56, 56, device=device)
    maps[1, 0, 10, 10] = maps[1, 0, 40, 40] = 5.0
    maps[1, 1] = 2.0
    maps[2, 2, 30, 20] = float("nan")
    maps[3, 0, :, 28:] = 1.0
    rois = torch.tensor(
        [[0.0, 0.0, 56.0, 56.0], [3.0, 4.0, 115.0, 116.0], [2.0, 2.0, 58.0, 58.0], [0.0, 0.0, 20.0, 90.0]],
        device=device,
    )
    xy, sc = KP(maps, rois, count_of(r, device))
    ref_xy, ref_sc = tv_keypoints(maps.cpu(), rois.cpu())
    torch.testing.assert_close(xy.cpu(), ref_xy, rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(sc.cpu(), ref_sc, rtol=0, atol=1e-6 if device == "cuda" else 0, equal_nan=True)


def test_keypoints_random_many():
    """Many random RoIs and sizes against torchvision (the wrapper detection.heatmaps_to_keypoints)."""
    for _ in range(5):
        r = int(torch.randint(1, 30, ()))
        maps = torch.randn(r, 5, 56, 56)
        rois = make_rois(r, torch.float32, extent=300.0)
        got = detection.heatmaps_to_keypoints(maps, rois)
        ref = tv_keypoints(maps, rois)
        for a, b in zip(got, ref):
            torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_keypoints_empty(device):
    xy, sc = KP(torch.empty(0, 17, 56, 56, device=device), torch.empty(0, 4, device=device), count_of(0, device))
    assert xy.shape == (0, 17, 3) and sc.shape == (0, 17)


def test_keypoints_errors():
    maps, rois, c = torch.randn(3, 2, 8, 8), torch.rand(3, 4), count_of(3)
    with pytest.raises(ValueError, match="must be a 4-D"):
        KP(maps[0], rois, c)
    with pytest.raises(ValueError, match=r"must be a \[3, 4\] tensor"):
        KP(maps, rois[:2], c)
    with pytest.raises(RuntimeError, match="must have the dtype of 'maps'"):
        KP(maps, rois.double(), c)
    with pytest.raises(NotImplementedError, match="must have dtype in"):
        KP(maps.half(), rois.half(), c)
    with pytest.raises(RuntimeError, match="must have dtype int64"):
        KP(maps, rois, c.int())
    with pytest.raises(ValueError, match="must be a 0-D tensor"):
        KP(maps, rois, c[None])
    bad = rois.clone()
    bad[1, 2] = float("inf")
    with pytest.raises(ValueError, match=r"rois\[1\] = .* is not a finite box"):
        KP(maps, bad, c)
    KP(maps, bad, count_of(1))  # a padding row is not read


# ---- paste_masks ------------------------------------------------------------------------------


def make_boxes(n, h, w):
    """Detections clipped to the image (as torchvision's postprocess gives them), some degenerate."""
    size = torch.tensor([w, h], dtype=torch.float32)
    xy = torch.rand(n, 2) * size
    boxes = torch.cat([xy, torch.minimum(xy + torch.rand(n, 2) * size, size)], dim=1)
    special = [
        [0.0, 0.0, float(w), float(h)],
        [3.0, 2.0, 3.0, 9.0],
        [0.0, 0.0, 0.0, 0.0],
        [float(w) - 1, float(h) - 1, float(w), float(h)],
    ]
    k = min(n, len(special))
    if k:
        boxes[:k] = torch.tensor(special[:k])
    return boxes


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m", [7, 28])
@pytest.mark.parametrize("sizes", [[(37, 51)], [(60, 45), (33, 70), (5, 3)]])
def test_paste_matches_torchvision(device, m, sizes):
    """Each image's real rows pasted as torchvision pastes them, on the canvas of the largest
    image; padding rows (NaN masks) not read, zero."""
    n, d = len(sizes), 9
    masks = torch.rand(n, d, 1, m, m)
    boxes = torch.stack([make_boxes(d, h, w) for h, w in sizes])
    counts = [d, 4, 0][:n]
    for i, c in enumerate(counts):
        masks[i, c:] = float("nan")
    padded, ib = detection._expanded(masks, boxes, 1)
    flat = [v for hw in sizes for v in hw]
    got = PASTE(padded.to(device), ib.to(device), torch.tensor(counts, device=device), flat).cpu()
    H, W = max(h for h, _ in sizes), max(w for _, w in sizes)
    assert got.shape == (n, d, H, W)
    for i, ((h, w), c) in enumerate(zip(sizes, counts)):
        ref = torch.zeros(d, H, W)
        if c:
            ref[:c, :h, :w] = paste_masks_in_image(masks[i, :c], boxes[i, :c], (h, w))[:, 0]
        atol = 0 if device == "cpu" else 1e-6  # CUDA: torch's CUDA bilinear arithmetic
        torch.testing.assert_close(got[i], ref, rtol=0, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_paste_wrapper_matches_torchvision(dtype):
    for _ in range(5):
        b, h, w = int(torch.randint(0, 8, ())), int(torch.randint(1, 70, ())), int(torch.randint(1, 70, ()))
        masks = torch.rand(b, 1, 28, 28, dtype=dtype)
        boxes = make_boxes(b, h, w).to(dtype)
        got = detection.paste_masks(masks, boxes, (h, w))
        ref = paste_masks_in_image(masks, boxes, (h, w))
        assert got.dtype == ref.dtype and got.shape == ref.shape
        torch.testing.assert_close(got, ref, rtol=0, atol=0)


def test_paste_large_canvas_touches_only_the_boxes():
    """A COCO-size canvas with 100 rows of which 2 are real: the padding costs no memory (fresh
    zeroed pages), and the result is right."""
    masks = torch.rand(1, 100, 30, 30)
    ib = torch.tensor([[10, 20, 300, 400], [0, 0, 1087, 799]] + [[0, 0, 0, 0]] * 98)[None]
    out = PASTE(masks, ib, torch.tensor([2]), [800, 1088])
    assert out.shape == (1, 100, 800, 1088)
    assert (out[0, 2:] == 0).all() and (out[0, 0, :20] == 0).all() and (out[0, 0, 20:401, 10:301] != 0).any()


@pytest.mark.parametrize("device", DEVICES)
def test_where_torchvision_is_undefined(device):
    """docs/ops/detection.md's cases where torchvision raises and myops is defined: K = 0
    keypoints give empty results; a box wholly outside the image (left, above, right, below)
    pastes nothing, and a box half outside what torchvision pastes."""
    kp, ks = KP(torch.randn(3, 0, 56, 56, device=device), make_rois(3, torch.float32, device), count_of(2, device))
    assert kp.shape == (3, 0, 3) and ks.shape == (3, 0)
    x = int(torch.randint(5, 30, ()))
    outside = [[-x - 10, 5, -x, 15], [5, -x - 10, 15, -x], [64 + x, 5, 74 + x, 15], [5, 48 + x, 15, 58 + x]]
    masks = torch.rand(1, 5, 30, 30, device=device)
    ib = torch.tensor([outside + [[-x, -3, 20, 11]]], device=device)
    got = PASTE(masks, ib, torch.tensor([5], device=device), [48, 64]).cpu()
    assert (got[0, :4] == 0).all()
    ref = paste_mask_in_image(masks[0, 4].cpu(), ib[0, 4].cpu(), 48, 64)
    torch.testing.assert_close(got[0, 4], ref, rtol=0, atol=0 if device == "cpu" else 1e-6)  # CUDA: as above


def test_paste_errors():
    masks, ib, c = torch.rand(1, 2, 30, 30), torch.zeros(1, 2, 4, dtype=torch.int64), torch.tensor([2])
    with pytest.raises(ValueError, match="must be a 4-D"):
        PASTE(masks[0], ib, c, [5, 5])
    with pytest.raises(RuntimeError, match="must have dtype int64"):
        PASTE(masks, ib.float(), c, [5, 5])
    with pytest.raises(ValueError, match=r"must hold \(height, width\)"):
        PASTE(masks, ib, c, [5])
    with pytest.raises(ValueError, match="must have 1 elements"):
        PASTE(masks, ib, torch.tensor([1, 1]), [5, 5])
    with pytest.raises(ValueError, match="must be >= 0"):
        PASTE(masks, ib, c, [5, -1])


# ---- opcheck, export --------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    maps = torch.randn(5, 3, 56, 56, device=device)
    rois = make_rois(5, torch.float32, device)
    opcheck(KP, (maps, rois, count_of(3, device)))
    masks = torch.rand(2, 4, 30, 30, device=device)
    ib = torch.tensor([[[1, 2, 20, 30]] * 4, [[0, 0, 9, 9]] * 4], device=device)
    opcheck(PASTE, (masks, ib, torch.tensor([3, 1], device=device), [40, 35, 20, 20]))


def test_export():
    class M(torch.nn.Module):
        def forward(self, maps, rois, count, masks, ib, counts):
            xy, sc = KP(maps, rois, count)
            return xy, sc, PASTE(masks, ib, counts, [40, 35])

    args = (
        torch.randn(5, 3, 56, 56),
        make_rois(5, torch.float32),
        count_of(3),
        torch.rand(1, 4, 30, 30),
        torch.tensor([[[1, 2, 20, 30]] * 4]),
        torch.tensor([2]),
    )
    ep = torch.export.export(M(), args)
    for a, b in zip(ep.module()(*args), M()(*args)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)

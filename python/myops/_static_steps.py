"""The steps of :class:`myops.detection.StaticDetector` that replace torchvision's data-dependent
ones: NMS and selection over a bounded number of candidates, multi-scale RoIAlign in one call,
and bounded twins of the RoI heads. Private: the public module is :mod:`myops.detection`."""

from __future__ import annotations

import copy
import math
from typing import Dict, List, Optional, Tuple, Union, cast, get_args

import torch
from torch import Tensor, nn

_NEG_INF = float("-inf")


# ---------------------------------------------------------------------------------------------
# Bounded selection ops.
# ---------------------------------------------------------------------------------------------

# torchvision.ops.batched_nms's path limit per device, as myops' kernels hold it (read once)
_VANILLA_ABOVE = {d: torch.ops.myops._batched_nms_vanilla_above(d) for d in ("cpu", "cuda")}


def _batched_nms_static(
    boxes: Tensor, scores: Tensor, idxs: Tensor, valid: Tensor, iou_threshold: float, size: int
) -> Tuple[Tensor, Tensor]:
    """``torchvision.ops.batched_nms`` over the real candidates (``valid``) only, as
    ``torch.ops.myops.batched_nms_static``: the first ``size`` survivors (padded with -1) and
    their count, on the device. The other rows are visited last (a ``-inf`` score).

    torchvision picks its path by the number of real boxes, which only the data knows: at or
    below the limit, one NMS over boxes shifted apart by class (``boxes + idxs * (max + 1)``,
    whose rounding changes the IoUs), above it one NMS per class on the boxes as they are. Both
    are computed here without a sync: the shifted boxes (shifted by the real boxes' maximum, as
    torchvision does) with a single class, or the boxes as they are with their classes. ``boxes``
    holds more than the limit's rows whenever there are more real ones, so the op itself takes
    its per-class path then.

    The other rows become one box of class 0, ``[0, 0, 1, 1]``: visited after every real one,
    they cannot change the real survivors, and the first of them suppresses the rest, so a
    sweep over mostly padded candidates costs O(n), not O(n^2)."""
    masked = torch.where(valid, scores, torch.full_like(scores, _NEG_INF))
    limit = _VANILLA_ABOVE["cpu" if boxes.device.type == "cpu" else "cuda"]
    trick = valid.sum() * boxes.shape[1] <= limit
    top = torch.where(valid[:, None], boxes, torch.full_like(boxes, _NEG_INF)).amax()
    top = torch.where(valid.any(), top, torch.zeros_like(top))
    shifted = boxes + (idxs.to(boxes) * (top + torch.ones_like(top)))[:, None]
    unit = torch.cat([torch.zeros_like(boxes[:1, :2]), torch.ones_like(boxes[:1, 2:])], 1)
    nms_boxes = torch.where(valid[:, None], torch.where(trick, shifted, boxes), unit)
    nms_idxs = torch.where(trick | ~valid, torch.zeros_like(idxs), idxs)
    return torch.ops.myops.batched_nms_static(nms_boxes, masked, nms_idxs, iou_threshold, size=size)


def _survivors(keep: Tensor, valid: Tensor) -> Tensor:
    """How many of the first ``len(keep)`` NMS survivors are real candidates. Candidates that are
    not real carry a ``-inf`` score, so NMS visits them after every real one: the real survivors
    are a prefix of ``keep``."""
    return (valid[keep.clamp(min=0)] & (keep >= 0)).sum(dtype=torch.int64)


def _select(
    boxes: Tensor, scores: Tensor, labels: Tensor, valid: Tensor, iou_threshold: float, size: int
) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Per-class NMS over the real candidates (``valid``), keeping the best ``size``: padded
    boxes, scores, labels, a row mask and the count."""
    keep, _ = _batched_nms_static(boxes, scores, labels, valid, iou_threshold, size)
    count = _survivors(keep, valid)
    rows = torch.arange(size, device=boxes.device) < count
    k = keep.clamp(min=0)
    out_boxes = torch.where(rows[:, None], boxes[k], torch.zeros_like(boxes[k]))
    out_scores = torch.where(rows, scores[k], torch.zeros_like(scores[k]))
    out_labels = torch.where(rows, labels[k], torch.full_like(labels[k], -1))
    return out_boxes, out_scores, out_labels, rows, count


def _clip(boxes: Tensor, size: Tuple[int, int]) -> Tensor:
    from torchvision.ops import boxes as box_ops

    return box_ops.clip_boxes_to_image(boxes, size)


def _big_enough(boxes: Tensor, min_size: float) -> Tensor:
    """``torchvision.ops.remove_small_boxes`` as a mask."""
    ws, hs = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    return (ws >= min_size) & (hs >= min_size)


# ---------------------------------------------------------------------------------------------
# torchvision's transform and box arithmetic without a copy from the host.
# ---------------------------------------------------------------------------------------------
# A CUDA graph cannot capture a copy from pageable host memory, and torchvision makes some of its
# constants that way (``torch.as_tensor(list, device=...)``, ``torch.tensor(0.5, device=...)``).
# The forms here make the same constants on the device with fills (the same values, dtypes and
# ops, so the same bits) and are otherwise torchvision's arithmetic, step for step.


def _filled(value: float, dtype: torch.dtype, device: torch.device) -> Tensor:
    """The 0-d tensor ``torch.tensor(value, dtype=dtype, device=device)`` as a fill on the device."""
    return torch.full((), value, dtype=dtype, device=device)


def _normalize(transform, image: Tensor) -> Tensor:
    """``GeneralizedRCNNTransform.normalize`` with its mean and std made on the image's device."""
    if not image.is_floating_point():
        raise TypeError(
            f"Expected input images to be of floating type (in range [0, 1]), but found type {image.dtype} instead"
        )
    mean = torch.stack([_filled(float(v), image.dtype, image.device) for v in transform.image_mean])
    std = torch.stack([_filled(float(v), image.dtype, image.device) for v in transform.image_std])
    return (image - mean[:, None, None]) / std[:, None, None]


def _transform_images(transform, images: List[Tensor]):
    """``GeneralizedRCNNTransform.forward(images)`` (inference, no targets) with
    :func:`_normalize`: torchvision's own ``resize`` and ``batch_images`` (which compute with the
    shapes only). Another transform class runs as it is."""
    from torchvision.models.detection.image_list import ImageList
    from torchvision.models.detection.transform import GeneralizedRCNNTransform

    if type(transform) is not GeneralizedRCNNTransform:
        return transform(images)[0]
    out = []
    for image in images:
        image, _ = transform.resize(_normalize(transform, image), None)
        out.append(image)
    sizes = [(img.shape[-2], img.shape[-1]) for img in out]
    return ImageList(transform.batch_images(out, size_divisible=transform.size_divisible), sizes)


def _decode_single(coder, rel_codes: Tensor, boxes: Tensor) -> Tensor:
    """``BoxCoder.decode_single`` with its constant 0.5 filled on the device."""
    boxes = boxes.to(rel_codes.dtype)
    widths = boxes[:, 2] - boxes[:, 0]
    heights = boxes[:, 3] - boxes[:, 1]
    ctr_x = boxes[:, 0] + 0.5 * widths
    ctr_y = boxes[:, 1] + 0.5 * heights
    wx, wy, ww, wh = coder.weights
    dx, dy = rel_codes[:, 0::4] / wx, rel_codes[:, 1::4] / wy
    dw = torch.clamp(rel_codes[:, 2::4] / ww, max=coder.bbox_xform_clip)
    dh = torch.clamp(rel_codes[:, 3::4] / wh, max=coder.bbox_xform_clip)
    cx = dx * widths[:, None] + ctr_x[:, None]
    cy = dy * heights[:, None] + ctr_y[:, None]
    half = _filled(0.5, cx.dtype, cx.device)
    half_w = half * (torch.exp(dw) * widths[:, None])
    half_h = half * (torch.exp(dh) * heights[:, None])
    return torch.stack((cx - half_w, cy - half_h, cx + half_w, cy + half_h), dim=2).flatten(1)


def _decode(coder, rel_codes: Tensor, boxes: List[Tensor]) -> Tensor:
    """``BoxCoder.decode`` (the boxes of every image at once) over :func:`_decode_single`."""
    total = sum(b.shape[0] for b in boxes)
    if total > 0:
        rel_codes = rel_codes.reshape(total, -1)
    pred = _decode_single(coder, rel_codes, torch.cat(boxes, dim=0))
    return pred.reshape(total, -1, 4) if total > 0 else pred


def _size_ratios(new_size, original_size, device: torch.device) -> List[Tensor]:
    """``resize_boxes``' float32 ratios ``new / original`` per dim, computed on the device."""
    return [
        _filled(s, torch.float32, device) / _filled(s_orig, torch.float32, device)
        for s, s_orig in zip(new_size, original_size)
    ]


def _resize_boxes(boxes: Tensor, original_size, new_size) -> Tensor:
    """``torchvision.models.detection.transform.resize_boxes`` with the ratios made on the device."""
    ratio_h, ratio_w = _size_ratios(new_size, original_size, boxes.device)
    x1, y1, x2, y2 = boxes.unbind(1)
    return torch.stack((x1 * ratio_w, y1 * ratio_h, x2 * ratio_w, y2 * ratio_h), dim=1)


def _resize_keypoints(keypoints: Tensor, original_size, new_size) -> Tensor:
    """``torchvision.models.detection.transform.resize_keypoints`` with the ratios made on the
    device."""
    ratio_h, ratio_w = _size_ratios(new_size, original_size, keypoints.device)
    out = keypoints.clone()
    out[..., 0] *= ratio_w
    out[..., 1] *= ratio_h
    return out


def _default_boxes(generator, wh_pairs: List[Tensor], image_list, feature_maps: List[Tensor]) -> List[Tensor]:
    """``DefaultBoxGenerator.forward`` (SSD) computed on the features' device: torchvision builds
    the boxes on the host and copies them over on every call. ``wh_pairs`` are the generator's
    ``_wh_pairs`` (float32), already on the device. The same ops in the same dtypes: the same
    bits."""
    dtype, device = feature_maps[0].dtype, feature_maps[0].device
    image_size = image_list.tensors.shape[-2:]
    per_level = []
    for k, fm in enumerate(feature_maps):
        fh, fw = fm.shape[-2:]
        if generator.steps is not None:
            x_f, y_f = image_size[1] / generator.steps[k], image_size[0] / generator.steps[k]
        else:
            y_f, x_f = fh, fw
        xs = ((torch.arange(0, fw, device=device) + 0.5) / x_f).to(dtype=dtype)
        ys = ((torch.arange(0, fh, device=device) + 0.5) / y_f).to(dtype=dtype)
        grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
        centers = torch.stack((grid_x.reshape(-1), grid_y.reshape(-1)) * len(wh_pairs[k]), dim=-1).reshape(-1, 2)
        wh = wh_pairs[k].clamp(min=0, max=1) if generator.clip else wh_pairs[k]
        per_level.append(torch.cat((centers, wh.repeat(fh * fw, 1)), dim=1))
    boxes = torch.cat(per_level, dim=0)
    scale = torch.stack([torch.full((), v, dtype=torch.int64, device=device) for v in (image_size[1], image_size[0])])
    corners = torch.cat([(boxes[:, :2] - 0.5 * boxes[:, 2:]) * scale, (boxes[:, :2] + 0.5 * boxes[:, 2:]) * scale], -1)
    return [corners for _ in image_list.image_sizes]


# ---------------------------------------------------------------------------------------------
# Multi-scale RoIAlign without the per-level gather.
# ---------------------------------------------------------------------------------------------


def _pooler_levels(pooler, features: List[Tensor], image_sizes: List[Tuple[int, int]]):
    """``MultiScaleRoIAlign``'s scales and level range for these static shapes, in Python (what
    ``torchvision.ops.poolers._setup_scales`` computes with tensors and ``.item()``)."""
    scales = []
    for f in features:
        approx = float(f.shape[-2]) / float(max(h for h, _ in image_sizes))
        scales.append(2.0 ** round(math.log2(approx)))
    lvl_min, lvl_max = int(-math.log2(scales[0])), int(-math.log2(scales[-1]))
    return scales, lvl_min, lvl_max


def _multiscale_roi_align(
    pooler, features: Dict[str, Tensor], rois: Tensor, image_sizes: List[Tuple[int, int]], count: Tensor
) -> Tensor:
    """``MultiScaleRoIAlign.forward`` over the first ``count`` of ``rois [R, 5]`` in one
    ``myops.roi_align_levels`` call: each RoI pooled on the level torchvision's ``LevelMapper``
    gives it (torchvision gathers each level's RoIs, a data-dependent size); the RoIs at or past
    ``count`` get the level -1 (padding: zeros, no work). Bit-identical to torchvision's CPU
    kernel; a myops op, so an AOTInductor package holds no torchvision op."""
    from torchvision.ops.poolers import LevelMapper

    x = [v for k, v in features.items() if k in pooler.featmap_names]
    ph, pw = tuple(pooler.output_size)
    scales, lvl_min, lvl_max = _pooler_levels(pooler, x, image_sizes)
    if len(x) == 1:
        levels = torch.zeros(rois.shape[0], dtype=torch.int64, device=rois.device)
    else:
        mapper = LevelMapper(lvl_min, lvl_max, pooler.canonical_scale, pooler.canonical_level)
        levels = mapper([rois[:, 1:]])
    real = torch.arange(rois.shape[0], device=rois.device) < count
    levels = torch.where(real, levels, torch.full_like(levels, -1))
    return torch.ops.myops.roi_align_levels(list(x), rois, levels, scales, ph, pw, pooler.sampling_ratio, False)


def _real_first(rows: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """For a row mask ``rows [R]`` (each image's real rows a prefix of its block): the order that
    puts the real rows first, in image order (eager torchvision's rows: each image's real
    proposals or detections, concatenated), its inverse, and the number of real rows (a 0-d
    int64 tensor). No sync: a stable sort."""
    order = torch.argsort((~rows).to(torch.int8), stable=True)
    return order, torch.argsort(order), rows.sum(dtype=torch.int64)


def _rois(boxes: Tensor) -> Tensor:
    """``[N, P, 4]`` per-image boxes -> ``[N * P, 5]`` RoIs (batch index first)."""
    n, p = boxes.shape[:2]
    ids = torch.arange(n, device=boxes.device, dtype=boxes.dtype).repeat_interleave(p)
    return torch.cat([ids[:, None], boxes.reshape(-1, 4)], dim=1)


# ---------------------------------------------------------------------------------------------
# The RoI heads on the real rows only.
# ---------------------------------------------------------------------------------------------


class _Rows:
    """The number of real rows (a 0-d int64 tensor) of the batch a head runs on: set by
    ``StaticDetector._head`` around each head call, read by the bounded layers."""

    def __init__(self) -> None:
        self.count: Optional[Tensor] = None


def _detached(t: Optional[Tensor]) -> Optional[Tensor]:
    # the model's own Parameters, detached: the bounded ops have no gradient (a result that
    # requires grad would only carry a grad_fn whose backward raises)
    return None if t is None else t.detach()


class _BoundedLinear(nn.Module):
    """``layer`` (the model's ``nn.Linear``, its Parameters shared) as ``myops.linear_bounded``
    over the first ``rows.count`` rows: the padding rows cost nothing (on the CPU) and are 0."""

    def __init__(self, layer: nn.Linear, rows: _Rows):
        super().__init__()
        self.layer = layer
        self.rows = rows

    def forward(self, x: Tensor) -> Tensor:
        return torch.ops.myops.linear_bounded(
            x, self.layer.weight.detach(), _detached(self.layer.bias), self.rows.count
        )


# the convolutions that have a bounded form (with zero padding)
_Conv = Union[nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d]
_CONVS = get_args(_Conv)


class _BoundedConv(nn.Module):
    """``layer`` (the model's ``nn.Conv*d`` / ``nn.ConvTranspose*d``, zero padding, its
    Parameters shared) as ``myops.conv_bounded`` over the first ``rows.count`` rows."""

    def __init__(self, layer: _Conv, rows: _Rows):
        super().__init__()
        self.layer = layer
        self.rows = rows

    def forward(self, x: Tensor) -> Tensor:
        m = self.layer
        return torch.ops.myops.conv_bounded(
            x,
            m.weight.detach(),
            _detached(m.bias),
            list(m.stride),
            list(m.padding),
            list(m.dilation),
            m.transposed,
            list(m.output_padding),
            m.groups,
            self.rows.count,
        )


def _bounded_twin(module: nn.Module, rows: _Rows) -> nn.Module:
    """``module`` with every ``nn.Linear`` and zero-padded convolution replaced by its bounded
    form (reading ``rows``), the model left as it is: a container is a shallow copy of its own
    (the same class, forward and Parameters) with twins for children; any other layer (ReLU,
    BatchNorm in eval, Flatten) is the model's own module."""
    if type(module) is nn.Linear:
        return _BoundedLinear(module, rows)
    if type(module) in _CONVS and module.padding_mode == "zeros" and not isinstance(module.padding, str):
        return _BoundedConv(cast(_Conv, module), rows)  # its exact type is one of them
    if not module._modules:
        return module
    twin = copy.copy(module)
    twin.__dict__["_modules"] = {
        name: None if child is None else _bounded_twin(child, rows) for name, child in module._modules.items()
    }
    return twin

"""Static-shape torchvision detectors: export, compile whole, run from C++.

``make_static(model)`` takes an unmodified torchvision detector (any weights) and returns a module
that runs the same model with static shapes from the image batch to the detections. Every step of
torchvision's inference whose output size depends on the data (``torch.where(mask)``, ``x[keep]``,
NMS, ``keep[:n]``, the per-level RoI gathers, the Python loops over boxes in mask pasting and
keypoint decoding) is replaced by the same computation over a size the model itself bounds:

======================================  =========================================================
torchvision step                        static form here
======================================  =========================================================
RPN ``filter_proposals``                top ``pre_nms_top_n`` per level (already a topk), small
                                        boxes and low scores masked to ``-inf``, per-level
                                        ``batched_nms_static`` keeping ``post_nms_top_n``
``MultiScaleRoIAlign``                  one ``myops.roi_align_levels`` call: each RoI pooled on
                                        its mapped level (torchvision's CPU kernel bit for bit);
                                        padded RoIs get the level -1 (zeros, no work)
RoI heads (``box_head``,                the real RoIs first, in eager's order (a stable sort of
``box_predictor``, mask and keypoint    the row mask), then bounded twins of the heads: their
heads)                                  ``Linear`` / ``Conv*d`` layers as ``myops.linear_bounded``
                                        / ``conv_bounded`` over the real rows only (on the CPU the
                                        same calls as eager's, so the same bits), the model's own
                                        Parameters; the outputs go back to each image's rows
``postprocess_detections`` (R-CNN)      score/small-box/padding mask, top ``max_candidates``
                                        by score, ``batched_nms_static`` keeping
                                        ``detections_per_img``
``postprocess_detections`` (RetinaNet,  per level top ``topk_candidates`` of the masked scores,
FCOS)                                   then the same NMS step
``postprocess_detections`` (SSD,        per class top ``topk_candidates`` of the masked scores,
SSDlite)                                then the same NMS step
``paste_masks_in_image``                one ``myops.paste_masks`` call over every image's real
                                        detections (torchvision's resize and copy per box; the
                                        padding rows and the pixels outside a box not written)
``heatmaps_to_keypoints``               one ``myops.heatmaps_to_keypoints`` call over the real
                                        detections (each heatmap resampled to its box's own size,
                                        as torchvision does; the padding rows not read)
======================================  =========================================================

The static module's ``forward(images)`` takes one ``[N, 3, H, W]`` float tensor of raw images
(what the torchvision model takes as a list, stacked) and returns a dict of padded tensors:
``boxes [N, D, 4]``, ``scores [N, D]``, ``labels [N, D]`` (padding ``-1``), ``count [N]`` (int64,
the number of real detections per image), plus ``masks [N, D, 1, H, W]`` (Mask R-CNN),
``keypoints [N, D, K, 3]`` and ``keypoints_scores [N, D, K]`` (Keypoint R-CNN), and
``overflow [N]`` (bool: an R-CNN image had more candidates than ``max_candidates``; only then can
the result differ from eager). ``D`` is the model's ``detections_per_img``. ``unpad(outputs)``
turns them into torchvision's list of dicts.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, Union, cast, get_args

if TYPE_CHECKING:  # the types only: torchvision is imported where it is used
    from torchvision.models.detection import FCOS, RetinaNet
    from torchvision.models.detection.generalized_rcnn import GeneralizedRCNN
    from torchvision.models.detection.ssd import SSD

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["make_static", "unpad", "StaticDetector"]

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


# ---------------------------------------------------------------------------------------------
# Mask pasting and keypoint decoding over the real detections only.
# ---------------------------------------------------------------------------------------------


def _expanded(masks: Tensor, boxes: Tensor, padding: int) -> Tuple[Tensor, Tensor]:
    """torchvision's ``expand_masks`` / ``expand_boxes`` for ``masks [..., 1, M, M]`` and
    ``boxes [..., 4]``: the padded masks ``[..., S, S]`` and the integer boxes."""
    from torchvision.models.detection.roi_heads import expand_boxes

    m = masks.shape[-1]
    lead = masks.shape[:-3]
    padded = F.pad(masks.reshape(-1, 1, m, m), (padding,) * 4)[:, 0]
    scale = float(m + 2 * padding) / m
    ib = expand_boxes(boxes.reshape(-1, 4), scale).to(torch.int64)
    return padded.reshape(*lead, *padded.shape[-2:]), ib.reshape(*lead, 4)


def paste_masks(masks: Tensor, boxes: Tensor, image_shape: Tuple[int, int], padding: int = 1) -> Tensor:
    """``torchvision.models.detection.roi_heads.paste_masks_in_image`` as one
    :func:`myops.paste_masks` call: the same bits. Inference only.

    Args:
        masks: ``[B, 1, M, M]`` mask probabilities (float32 / float64).
        boxes: ``[B, 4]`` boxes ``(x1, y1, x2, y2)`` in the image, the masks' dtype.
        image_shape: the image's ``(height, width)``.
        padding: the mask padding of torchvision's ``expand_masks`` (1 as in torchvision).

    Returns:
        ``[B, 1, height, width]``: each mask resized into its box, 0 elsewhere.

    Raises:
        ValueError, RuntimeError: shapes, dtypes or devices that disagree (as
        :func:`myops.paste_masks`).

    Example::

        >>> masks, boxes = torch.ones(1, 1, 2, 2), torch.tensor([[1., 1., 3., 3.]])
        >>> myops.detection.paste_masks(masks, boxes, (4, 4))[0, 0]
        tensor([[0.0000, 0.0000, 0.0000, 0.0000],
                [0.0000, 0.4900, 0.7000, 0.4900],
                [0.0000, 0.7000, 1.0000, 0.7000],
                [0.0000, 0.4900, 0.7000, 0.4900]])
    """
    padded, ib = _expanded(masks, boxes, padding)
    count = torch.full((1,), masks.shape[0], dtype=torch.int64, device=masks.device)
    out = torch.ops.myops.paste_masks(padded[None], ib[None], count, [int(image_shape[0]), int(image_shape[1])])
    return out[0][:, None]


def heatmaps_to_keypoints(maps: Tensor, rois: Tensor) -> Tuple[Tensor, Tensor]:
    """``torchvision.models.detection.roi_heads.heatmaps_to_keypoints`` as one
    :func:`myops.heatmaps_to_keypoints` call over every RoI: the same bits. Inference only.

    Args:
        maps: ``[R, K, H, W]`` keypoint heatmaps (float32 / float64).
        rois: ``[R, 4]`` boxes ``(x1, y1, x2, y2)``, the maps' dtype.

    Returns:
        ``(keypoints, scores)``: float32 ``[R, K, 3]`` (x, y, 1) and ``[R, K]``.

    Raises:
        ValueError, RuntimeError: shapes, dtypes or devices that disagree (as
        :func:`myops.heatmaps_to_keypoints`).

    Example::

        >>> maps = torch.zeros(1, 1, 4, 4)
        >>> maps[0, 0, 1, 2] = 1.0
        >>> myops.detection.heatmaps_to_keypoints(maps, torch.tensor([[0., 0., 8., 8.]]))
        (tensor([[[4.5000, 2.5000, 1.0000]]]), tensor([[0.7725]]))
    """
    count = torch.tensor(maps.shape[0], dtype=torch.int64, device=maps.device)
    return torch.ops.myops.heatmaps_to_keypoints(maps, rois, count)


# ---------------------------------------------------------------------------------------------
# The static module.
# ---------------------------------------------------------------------------------------------


def _kind(model: nn.Module) -> str:
    from torchvision.models.detection import FCOS, RetinaNet
    from torchvision.models.detection.generalized_rcnn import GeneralizedRCNN
    from torchvision.models.detection.ssd import SSD

    if isinstance(model, GeneralizedRCNN):
        return "rcnn"
    if isinstance(model, RetinaNet):
        return "retinanet"
    if isinstance(model, FCOS):
        return "fcos"
    if isinstance(model, SSD):
        return "ssd"
    raise TypeError(
        f"make_static: expected a torchvision R-CNN, RetinaNet, FCOS or SSD detector, got {type(model).__name__}"
    )


class StaticDetector(nn.Module):
    """A torchvision detector with static shapes end to end (see the module docstring); made by
    :func:`make_static`, which takes the same arguments and checks the model first.

    Args:
        model: a torchvision R-CNN (Faster, Mask, Keypoint), RetinaNet, FCOS or SSD / SSDlite
            detector in eval mode.
        max_candidates, portable, image_sizes: as :func:`make_static`.

    Raises:
        TypeError: another kind of model.

    Example::

        >>> import torchvision
        >>> model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
        ...     weights=None, weights_backbone=None, num_classes=3).eval()
        >>> static = myops.detection.StaticDetector(model)
        >>> static.kind
        'ssd'
    """

    def __init__(
        self,
        model: nn.Module,
        max_candidates: int = 4096,
        portable: bool = False,
        image_sizes: Optional[List[Tuple[int, int]]] = None,
    ):
        super().__init__()
        self.image_sizes = [tuple(s) for s in image_sizes] if image_sizes else None
        self.kind = _kind(model)
        self.model: Union[GeneralizedRCNN, RetinaNet, FCOS, SSD] = model
        self.max_candidates = int(max_candidates)
        del portable  # accepted for compatibility: every module is portable (see make_static)
        if self.kind == "rcnn":  # the RoI heads' bounded twins (the model's modules are not changed)
            self._rows = _Rows()
            rh = cast("GeneralizedRCNN", model).roi_heads  # kind "rcnn" is a GeneralizedRCNN
            names = ["box_head", "box_predictor"]
            names += ["mask_head", "mask_predictor"] if rh.has_mask() else []
            names += ["keypoint_head", "keypoint_predictor"] if rh.has_keypoint() else []
            self.heads = nn.ModuleDict({k: _bounded_twin(getattr(rh, k), self._rows) for k in names})

    # -- shared steps --------------------------------------------------------------------------
    def _transform(self, images: Tensor):
        """torchvision's transform (normalize, resize, pad to the size divisor) on each image, cut
        to its size when the module was made for images of several sizes."""
        if images.dim() != 4 or images.shape[1] != 3:
            raise ValueError(f"StaticDetector: expected images [N, 3, H, W], got {tuple(images.shape)}")
        n, _, hmax, wmax = images.shape
        originals = self.image_sizes or [(hmax, wmax)] * n
        if len(originals) != n or any(h > hmax or w > wmax for h, w in originals):
            raise ValueError(f"StaticDetector: made for image sizes {originals}, got images {tuple(images.shape)}")
        image_list, _ = self.model.transform([img[:, :h, :w] for img, (h, w) in zip(images.unbind(0), originals)])
        return image_list, [(int(h), int(w)) for h, w in originals]

    def _finish(
        self, out: Dict[str, Tensor], sizes: List[Tuple[int, int]], originals: List[Tuple[int, int]]
    ) -> Dict[str, Tensor]:
        """``transform.postprocess`` on the padded detections: boxes and keypoints scaled back to
        each image's size, masks pasted into it (on a ``[H, W]`` canvas, zero outside)."""
        from torchvision.models.detection.transform import resize_boxes, resize_keypoints

        rows = out.pop("rows")
        boxes, keypoints = [], []
        for i, (size, original) in enumerate(zip(sizes, originals)):
            b = torch.where(
                rows[i][:, None], resize_boxes(out["boxes"][i], size, original), torch.zeros_like(out["boxes"][i])
            )
            boxes.append(b)
            if "keypoints" in out:
                k = resize_keypoints(out["keypoints"][i], size, original)
                keypoints.append(torch.where(rows[i][:, None, None], k, torch.zeros_like(k)))
        out["boxes"] = torch.stack(boxes)
        if "masks" in out:  # every image's real rows in one call, on a canvas of the largest image
            padded, ib = _expanded(out["masks"], out["boxes"], 1)
            pasted = torch.ops.myops.paste_masks(padded, ib, out["count"], [v for hw in originals for v in hw])
            out["masks"] = pasted[:, :, None]
        if keypoints:
            out["keypoints"] = torch.stack(keypoints)
        return out

    # -- R-CNN -------------------------------------------------------------------------------
    def _proposals(self, image_list, features: Dict[str, Tensor]) -> Tuple[Tensor, Tensor]:
        """RPN proposals ``[N, post_nms_top_n, 4]`` and their row mask (``filter_proposals``)."""
        from torchvision.models.detection.rpn import concat_box_prediction_layers

        rpn = self.model.rpn
        feats = list(features.values())
        objectness, deltas = rpn.head(feats)
        anchors = rpn.anchor_generator(image_list, feats)
        n = len(anchors)
        per_level = [o[0].numel() for o in objectness]
        objectness, deltas = concat_box_prediction_layers(objectness, deltas)
        proposals = rpn.box_coder.decode(deltas.detach(), anchors).view(n, -1, 4)
        objectness = objectness.detach().reshape(n, -1)
        levels = torch.cat(
            [torch.full((c,), i, dtype=torch.int64, device=proposals.device) for i, c in enumerate(per_level)]
        )
        top = rpn._get_top_n_idx(objectness, per_level)
        batch = torch.arange(n, device=proposals.device)[:, None]
        objectness, proposals, levels = objectness[batch, top], proposals[batch, top], levels[top]
        prob = torch.sigmoid(objectness)
        size = rpn.post_nms_top_n()
        out, row_masks = [], []
        for i in range(n):
            boxes = _clip(proposals[i], image_list.image_sizes[i])
            valid = _big_enough(boxes, rpn.min_size) & (prob[i] >= rpn.score_thresh)
            keep, _ = _batched_nms_static(boxes, prob[i], levels[i], valid, rpn.nms_thresh, size)
            count = _survivors(keep, valid)
            rows = torch.arange(size, device=boxes.device) < count
            # padded proposals repeat the best one: harmless rows that are masked later
            kept = boxes[torch.where(rows, keep, torch.zeros_like(keep))]
            out.append(torch.where(rows[:, None], kept, kept[:1].expand_as(kept)))
            row_masks.append(rows)
        return torch.stack(out), torch.stack(row_masks)

    def _features(self, images: Tensor):
        """torchvision's transform and backbone: (image list, original sizes, feature dict)."""
        from collections import OrderedDict

        image_list, originals = self._transform(images)
        features = self.model.backbone(image_list.tensors)
        if isinstance(features, Tensor):
            features = OrderedDict([("0", features)])
        return image_list, originals, features

    def _head(self, name: str, x: Tensor, count: Tensor):
        """The bounded twin of ``roi_heads.<name>`` on ``x``, whose first ``count`` rows are real
        (the rest come out 0 from each bounded layer and are not computed on the CPU)."""
        self._rows.count = count
        y = self.heads[name](x)
        self._rows.count = None
        return y

    def _rcnn(self, images: Tensor) -> Dict[str, Tensor]:
        model = self.model
        rh = model.roi_heads
        image_list, originals, features = self._features(images)
        sizes = image_list.image_sizes
        proposals, prows = self._proposals(image_list, features)
        n, p = prows.shape
        # the RoI heads run on the real proposals, first (eager's rows in eager's order), and
        # only on them; their small outputs go back to each image's block of p rows
        order, inverse, count = _real_first(prows.reshape(-1))
        pooled = _multiscale_roi_align(rh.box_roi_pool, features, _rois(proposals)[order], sizes, count)
        class_logits, box_regression = self._head("box_predictor", self._head("box_head", pooled, count), count)
        class_logits, box_regression = class_logits[inverse], box_regression[inverse]
        pred_boxes = rh.box_coder.decode(box_regression, list(proposals.unbind(0)))
        pred_scores = F.softmax(class_logits, -1)
        c = pred_scores.shape[-1]
        size = rh.detections_per_img
        fields: Dict[str, List[Tensor]] = {k: [] for k in ("boxes", "scores", "labels", "rows", "count", "overflow")}
        for i in range(n):
            boxes = _clip(pred_boxes[i * p : (i + 1) * p], sizes[i])[:, 1:].reshape(-1, 4)
            scores = pred_scores[i * p : (i + 1) * p, 1:].reshape(-1)
            labels = torch.arange(1, c, device=scores.device).repeat(p)
            valid = (
                (scores > rh.score_thresh) & _big_enough(boxes, 1e-2) & prows[i][:, None].expand(p, c - 1).reshape(-1)
            )
            k = min(self.max_candidates, scores.numel())
            _, cand = torch.where(valid, scores, torch.full_like(scores, _NEG_INF)).topk(k)
            cand = cand.sort().values  # torchvision's order: NMS then breaks score ties alike
            selected = _select(boxes[cand], scores[cand], labels[cand], valid[cand], rh.nms_thresh, size)
            for name, value in zip(("boxes", "scores", "labels", "rows", "count"), selected):
                fields[name].append(value)
            fields["overflow"].append(valid.sum() > k)
        out = {name: torch.stack(values) for name, values in fields.items()}
        if rh.has_mask() or rh.has_keypoint():  # on the real detections, first, as above
            order, inverse, count = _real_first(out["rows"].reshape(-1))
            det_rois = _rois(out["boxes"])[order]
        if rh.has_mask():
            mf = _multiscale_roi_align(rh.mask_roi_pool, features, det_rois, sizes, count)
            logits = self._head("mask_predictor", self._head("mask_head", mf, count), count)
            lab = out["labels"].reshape(-1)[order].clamp(min=0)
            masks = logits[torch.arange(lab.shape[0], device=lab.device), lab][:, None].sigmoid()[inverse]
            out["masks"] = masks.reshape(n, size, *masks.shape[1:])
        if rh.has_keypoint():
            kf = _multiscale_roi_align(rh.keypoint_roi_pool, features, det_rois, sizes, count)
            maps = self._head("keypoint_predictor", self._head("keypoint_head", kf, count), count)
            xy, kscores = torch.ops.myops.heatmaps_to_keypoints(maps, det_rois[:, 1:], count)
            xy, kscores = xy[inverse], kscores[inverse]
            out["keypoints"] = xy.reshape(n, size, -1, 3)
            kscores = kscores.reshape(n, size, -1)
            out["keypoints_scores"] = torch.where(out["rows"][..., None], kscores, torch.zeros_like(kscores))
        return self._finish(out, sizes, originals)

    # -- RetinaNet / FCOS ----------------------------------------------------------------------
    def _dense(self, images: Tensor) -> Dict[str, Tensor]:
        model = self.model
        image_list, originals, features = self._features(images)
        sizes = image_list.image_sizes
        feats = list(features.values())
        head = model.head(feats)
        anchors = model.anchor_generator(image_list, feats)
        hw = [f.shape[2] * f.shape[3] for f in feats]
        a = head["cls_logits"].shape[1] // sum(hw)
        per_level = [x * a for x in hw]
        split = {k: v.split(per_level, dim=1) for k, v in head.items()}
        fields: Dict[str, List[Tensor]] = {k: [] for k in ("boxes", "scores", "labels", "rows", "count")}
        for i in range(len(anchors)):
            level_anchors = anchors[i].split(per_level)
            all_boxes, all_scores, all_labels, all_valid = [], [], [], []
            for lvl in range(len(per_level)):
                logits = split["cls_logits"][lvl][i]
                c = logits.shape[-1]
                if self.kind == "fcos":
                    ctr = split["bbox_ctrness"][lvl][i]
                    scores = torch.sqrt(torch.sigmoid(logits) * torch.sigmoid(ctr)).flatten()
                else:
                    scores = torch.sigmoid(logits).flatten()
                valid = scores > model.score_thresh
                k = min(model.topk_candidates, scores.numel())
                _, idx = torch.where(valid, scores, torch.full_like(scores, _NEG_INF)).topk(k)
                anchor_idx = torch.div(idx, c, rounding_mode="floor")
                regression = split["bbox_regression"][lvl][i][anchor_idx]
                if self.kind == "fcos":
                    boxes = model.box_coder.decode(regression, level_anchors[lvl][anchor_idx])
                else:
                    boxes = model.box_coder.decode_single(regression, level_anchors[lvl][anchor_idx])
                all_boxes.append(_clip(boxes, sizes[i]))
                all_scores.append(scores[idx])
                all_labels.append(idx % c)
                all_valid.append(valid[idx])
            selected = _select(
                torch.cat(all_boxes),
                torch.cat(all_scores),
                torch.cat(all_labels),
                torch.cat(all_valid),
                model.nms_thresh,
                model.detections_per_img,
            )
            for name, value in zip(("boxes", "scores", "labels", "rows", "count"), selected):
                fields[name].append(value)
        out = {name: torch.stack(values) for name, values in fields.items()}
        out["overflow"] = torch.zeros_like(out["count"], dtype=torch.bool)
        return self._finish(out, sizes, originals)

    # -- SSD / SSDlite -------------------------------------------------------------------------
    def _ssd(self, images: Tensor) -> Dict[str, Tensor]:
        """``SSD.postprocess_detections``: per class (background excluded) the top
        ``topk_candidates`` of the scores above ``score_thresh``, then one NMS over all classes."""
        model = self.model
        image_list, originals, features = self._features(images)
        sizes = image_list.image_sizes
        feats = list(features.values())
        head = model.head(feats)
        anchors = model.anchor_generator(image_list, feats)
        pred_scores = F.softmax(head["cls_logits"], dim=-1)
        fields: Dict[str, List[Tensor]] = {k: [] for k in ("boxes", "scores", "labels", "rows", "count")}
        for i in range(len(anchors)):
            boxes = _clip(model.box_coder.decode_single(head["bbox_regression"][i], anchors[i]), sizes[i])
            scores = pred_scores[i][:, 1:].t()  # [classes - 1, anchors]: eager's per-class loop, batched
            valid = scores > model.score_thresh
            k = min(model.topk_candidates, scores.shape[1])
            top, idx = torch.where(valid, scores, torch.full_like(scores, _NEG_INF)).topk(k, dim=1)
            labels = torch.arange(1, scores.shape[0] + 1, device=idx.device)[:, None].expand_as(idx)
            selected = _select(
                boxes[idx.reshape(-1)],
                scores.gather(1, idx).reshape(-1),
                labels.reshape(-1),
                valid.gather(1, idx).reshape(-1),
                model.nms_thresh,
                model.detections_per_img,
            )
            for name, value in zip(("boxes", "scores", "labels", "rows", "count"), selected):
                fields[name].append(value)
        out = {name: torch.stack(values) for name, values in fields.items()}
        out["overflow"] = torch.zeros_like(out["count"], dtype=torch.bool)
        return self._finish(out, sizes, originals)

    def forward(self, images: Tensor) -> Dict[str, Tensor]:
        """Detections for ``images [N, 3, H, W]`` (raw float images, as torchvision takes them):
        the padded dict of the module docstring. Raises ValueError for another image shape."""
        if self.kind == "rcnn":
            return self._rcnn(images)
        return self._ssd(images) if self.kind == "ssd" else self._dense(images)


def make_static(
    model: nn.Module,
    *,
    max_candidates: int = 4096,
    portable: bool = False,
    image_sizes: Optional[List[Tuple[int, int]]] = None,
) -> StaticDetector:
    """A static-shape form of the torchvision detector ``model`` (shares its modules and weights;
    the model must be in eval mode: inference only). An R-CNN's RoI heads run through bounded
    twins built here (their ``Linear`` / ``Conv*d`` layers over the real rows only, with the
    model's own Parameters); the model itself is not changed.

    ``max_candidates`` bounds the per-class candidates an R-CNN image sends to NMS (torchvision
    leaves that count unbounded); ``overflow`` in the output flags an image that had more.
    ``portable`` is accepted for compatibility and changes nothing: RoIAlign is always
    ``myops.roi_align_levels`` (torchvision's CPU kernel bit for bit), which an AOTInductor package
    run from C++ finds in libmyops, so every module is portable (no torchvision op in its graph).

    ``image_sizes`` (one ``(h, w)`` per image) makes a module for a batch of images of different
    sizes: the caller places image ``i`` at the top left of ``images[i]`` (any padding value) and
    each is transformed (resized, padded) as torchvision transforms it; the sizes are part of the
    static shapes, as the batch size is. Without it every image is the whole ``[H, W]``.

    Args:
        model: a torchvision R-CNN (Faster, Mask, Keypoint), RetinaNet, FCOS or SSD / SSDlite
            detector, any weights, in eval mode.
        max_candidates: the per-class candidates an R-CNN image sends to NMS, at most.
        portable: ignored (every module is portable).
        image_sizes: one ``(h, w)`` per image of the batch, or None (every image ``[H, W]``).

    Returns:
        A :class:`StaticDetector`: ``forward(images [N, 3, H, W])`` gives the padded dict of the
        module docstring (``boxes``, ``scores``, ``labels``, ``count``, ``overflow``, ...);
        :func:`unpad` turns it into torchvision's list of dicts.

    Raises:
        ValueError: a model in training mode.
        TypeError: a model that is not one of those detectors.

    Example::

        >>> import torchvision
        >>> model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
        ...     weights=None, weights_backbone=None, num_classes=3).eval()
        >>> out = myops.detection.make_static(model)(torch.rand(1, 3, 320, 320))
        >>> {k: tuple(v.shape) for k, v in out.items()}
        {'boxes': (1, 300, 4), 'scores': (1, 300), 'labels': (1, 300), 'count': (1,), 'overflow': (1,)}
    """
    if model.training:
        raise ValueError("make_static: the model must be in eval mode (call model.eval())")
    return StaticDetector(model, max_candidates=max_candidates, portable=portable, image_sizes=image_sizes)


def unpad(outputs: Dict[str, Tensor]) -> List[Dict[str, Tensor]]:
    """The static module's padded outputs as torchvision's list of per-image dicts.

    Args:
        outputs: the dict a :class:`StaticDetector` returns (``count`` and the padded
            ``boxes``, ``labels``, ``scores``, and ``masks`` / ``keypoints`` /
            ``keypoints_scores`` where the model has them).

    Returns:
        One dict per image with the first ``count[i]`` rows of each output, as the torchvision
        model returns them in eval mode.

    Raises:
        KeyError: an ``outputs`` without ``count``.

    Example::

        >>> out = {"boxes": torch.zeros(1, 2, 4), "scores": torch.tensor([[0.9, 0.]]),
        ...        "labels": torch.tensor([[1, -1]]), "count": torch.tensor([1])}
        >>> myops.detection.unpad(out)
        [{'boxes': tensor([[0., 0., 0., 0.]]), 'labels': tensor([1]), 'scores': tensor([0.9000])}]
    """
    counts = outputs["count"].tolist()
    keys = [k for k in ("boxes", "labels", "scores", "masks", "keypoints", "keypoints_scores") if k in outputs]
    return [{k: outputs[k][i, :c] for k in keys} for i, c in enumerate(counts)]

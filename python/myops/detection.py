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

The forward neither copies from the host nor reads a value back: torchvision's transform, box
coding, SSD default boxes and box resizing, which make small constants from Python data on the
device, run here with those constants filled on the device (the same bits). On CUDA the whole
forward can be captured in one CUDA graph (``capture_graph``), after warm-up calls on a side
stream (which also move the anchor generator's cached anchors to the device).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple, TypeVar, Union, cast

if TYPE_CHECKING:  # the types only: torchvision is imported where it is used
    from torchvision.models.detection import FCOS, RetinaNet
    from torchvision.models.detection.generalized_rcnn import GeneralizedRCNN
    from torchvision.models.detection.ssd import SSD

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._static_steps import (
    _NEG_INF,
    _batched_nms_static,
    _big_enough,
    _bounded_twin,
    _clip,
    _decode,
    _decode_single,
    _default_boxes,
    _multiscale_roi_align,
    _real_first,
    _resize_boxes,
    _resize_keypoints,
    _rois,
    _Rows,
    _select,
    _survivors,
    _transform_images,
)

__all__ = ["make_static", "unpad", "capture_graph", "StaticDetector"]


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
    count = torch.full((), maps.shape[0], dtype=torch.int64, device=maps.device)
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
        self._ssd_boxes = False
        if self.kind == "ssd":
            from torchvision.models.detection.anchor_utils import DefaultBoxGenerator

            gen = cast("SSD", model).anchor_generator
            self._ssd_boxes = type(gen) is DefaultBoxGenerator
            if self._ssd_boxes:  # on the model's device, moved with the module (see _default_boxes)
                device = next(model.parameters()).device
                for k, pairs in enumerate(gen._wh_pairs):
                    self.register_buffer(f"_wh_pairs_{k}", pairs.to(device), persistent=False)
        # inference only: the module and the bounded twins it made report eval mode (the model's
        # own modules are left as they are; make_static takes a model in eval mode only)
        own = {id(m) for m in model.modules()}
        for m in self.modules():
            if id(m) not in own:
                m.training = False

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
        image_list = _transform_images(
            self.model.transform, [img[:, :h, :w] for img, (h, w) in zip(images.unbind(0), originals)]
        )
        return image_list, [(int(h), int(w)) for h, w in originals]

    def _padded(
        self,
        selected: List[Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]],
        sizes: List[Tuple[int, int]],
        originals: List[Tuple[int, int]],
    ) -> Dict[str, Tensor]:
        """Each image's :func:`_select` (boxes, scores, labels, rows, count) stacked into the
        padded output, then :meth:`_finish`. No overflow: the one-stage heads bound their own
        candidates (``topk_candidates``)."""
        names = ("boxes", "scores", "labels", "rows", "count")
        out = {name: torch.stack([s[j] for s in selected]) for j, name in enumerate(names)}
        out["overflow"] = torch.zeros_like(out["count"], dtype=torch.bool)
        return self._finish(out, sizes, originals)

    def _finish(
        self, out: Dict[str, Tensor], sizes: List[Tuple[int, int]], originals: List[Tuple[int, int]]
    ) -> Dict[str, Tensor]:
        """``transform.postprocess`` on the padded detections: boxes and keypoints scaled back to
        each image's size, masks pasted into it (on a ``[H, W]`` canvas, zero outside)."""
        rows = out.pop("rows")
        boxes, keypoints = [], []
        for i, (size, original) in enumerate(zip(sizes, originals)):
            b = torch.where(
                rows[i][:, None], _resize_boxes(out["boxes"][i], size, original), torch.zeros_like(out["boxes"][i])
            )
            boxes.append(b)
            if "keypoints" in out:
                k = _resize_keypoints(out["keypoints"][i], size, original)
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
        proposals = _decode(rpn.box_coder, deltas.detach(), anchors).view(n, -1, 4)
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
        pred_boxes = _decode(rh.box_coder, box_regression, list(proposals.unbind(0)))
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
        selected: List[Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]] = []
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
                    boxes = _decode_single(model.box_coder, regression, level_anchors[lvl][anchor_idx])
                all_boxes.append(_clip(boxes, sizes[i]))
                all_scores.append(scores[idx])
                all_labels.append(idx % c)
                all_valid.append(valid[idx])
            selected.append(
                _select(
                    torch.cat(all_boxes),
                    torch.cat(all_scores),
                    torch.cat(all_labels),
                    torch.cat(all_valid),
                    model.nms_thresh,
                    model.detections_per_img,
                )
            )
        return self._padded(selected, sizes, originals)

    # -- SSD / SSDlite -------------------------------------------------------------------------
    def _ssd(self, images: Tensor) -> Dict[str, Tensor]:
        """``SSD.postprocess_detections``: per class (background excluded) the top
        ``topk_candidates`` of the scores above ``score_thresh``, then one NMS over all classes."""
        model = self.model
        image_list, originals, features = self._features(images)
        sizes = image_list.image_sizes
        feats = list(features.values())
        head = model.head(feats)
        if self._ssd_boxes:
            pairs = [getattr(self, f"_wh_pairs_{k}") for k in range(len(model.anchor_generator._wh_pairs))]
            anchors = _default_boxes(model.anchor_generator, pairs, image_list, feats)
        else:
            anchors = model.anchor_generator(image_list, feats)
        pred_scores = F.softmax(head["cls_logits"], dim=-1)
        selected: List[Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]] = []
        for i in range(len(anchors)):
            boxes = _clip(_decode_single(model.box_coder, head["bbox_regression"][i], anchors[i]), sizes[i])
            scores = pred_scores[i][:, 1:].t()  # [classes - 1, anchors]: eager's per-class loop, batched
            valid = scores > model.score_thresh
            k = min(model.topk_candidates, scores.shape[1])
            top, idx = torch.where(valid, scores, torch.full_like(scores, _NEG_INF)).topk(k, dim=1)
            labels = torch.arange(1, scores.shape[0] + 1, device=idx.device)[:, None].expand_as(idx)
            selected.append(
                _select(
                    boxes[idx.reshape(-1)],
                    scores.gather(1, idx).reshape(-1),
                    labels.reshape(-1),
                    valid.gather(1, idx).reshape(-1),
                    model.nms_thresh,
                    model.detections_per_img,
                )
            )
        return self._padded(selected, sizes, originals)

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
        A :class:`StaticDetector` in eval mode: ``forward(images [N, 3, H, W])`` gives the padded dict of the
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


_Out = TypeVar("_Out")


def capture_graph(module: Callable[[Tensor], _Out], example: Tensor, warmup: int = 2) -> Callable[[Tensor], _Out]:
    """``module`` captured whole in one CUDA graph for inputs shaped like ``example``, and a
    function that replays it on new inputs.

    torch's recipe: ``warmup`` calls on a side stream first (they allocate, pick the kernels and,
    for a :class:`StaticDetector`, move the anchor generator's cached anchors to the device: none
    of that may happen inside the capture), then one call captured under ``torch.no_grad()``. The
    graph reads its input from a copy of ``example`` and writes its outputs to the tensors that
    call returned; the returned function copies new images into that input, replays the graph and
    returns those outputs, which the next replay overwrites (clone what you keep). The module
    must not copy to or from the host nor read a value back (a :class:`StaticDetector` does not).

    Args:
        module: the forward to capture, e.g. ``make_static(model)``, on the CUDA device.
        example: an input on that device (its values do not matter; it is not kept).
        warmup: the calls before the capture (at least one; torch's recipe uses a few).

    Returns:
        ``run(images)``: copies ``images`` into the captured input, replays the graph and returns
        the captured outputs (for a :class:`StaticDetector`, its padded dict).

    Raises:
        RuntimeError: an ``example`` that is not on a CUDA device (no CUDA graph on the CPU).
        ValueError: ``warmup`` below 1; from ``run``, images of another shape, dtype or device
            than ``example``'s (the graph replays one shape only).

    Example::

        >>> static = torch.nn.Conv2d(3, 2, 3)   # a make_static(model) in real use
        >>> if torch.cuda.is_available():
        ...     run = myops.detection.capture_graph(static.cuda(), torch.zeros(1, 3, 32, 32, device="cuda"))
        ...     out = run(torch.rand(1, 3, 32, 32, device="cuda")).clone()
        >>> myops.detection.capture_graph(static.cpu(), torch.zeros(1, 3, 32, 32))
        Traceback (most recent call last):
        RuntimeError: a CUDA graph needs a CUDA device: capture_graph's example is on cpu
    """
    if warmup < 1:
        raise ValueError(f"capture_graph: warmup must be at least 1, got {warmup}")
    if example.device.type != "cuda":
        raise RuntimeError(f"a CUDA graph needs a CUDA device: capture_graph's example is on {example.device}")
    inp = example.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(side):
        for _ in range(warmup):
            module(inp)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        out = module(inp)

    def run(images: Tensor) -> _Out:
        if (images.shape, images.dtype, images.device) != (inp.shape, inp.dtype, inp.device):
            raise ValueError(
                f"capture_graph: the graph was captured for {tuple(inp.shape)} {inp.dtype} on {inp.device}, "
                f"got {tuple(images.shape)} {images.dtype} on {images.device}"
            )
        inp.copy_(images)
        graph.replay()
        return out

    return run

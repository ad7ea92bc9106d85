"""Non-maximum suppression: ``torchvision.ops.nms`` / ``batched_nms``, their static forms, and a
single-stage detector's whole post-processing (``multiclass_nms_static``)."""

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from ._common import _fake_kernel, _info, _NO_INFO, _ops, _rules

__all__ = ["nms", "batched_nms", "nms_static", "batched_nms_static", "multiclass_nms_static"]


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """:func:`torchvision.ops.nms`: greedy non-maximum suppression.

    The same indices in the same order as torchvision, ties and NaN scores included. A box is
    dropped when its IoU with a kept, higher-scored box is ``> iou_threshold``. Synchronizes with
    the host once on CUDA (the result size); see :func:`nms_static` for a sync-free form.
    Inference only (no gradient).

    Args:
        boxes: ``[N, 4]`` in ``(x1, y1, x2, y2)`` form, float32 / float64 (float16 too on CUDA).
        scores: ``[N]``, the dtype of ``boxes``.
        iou_threshold: the IoU above which a box is suppressed.

    Returns:
        The int64 indices of the kept boxes, in decreasing score order.

    Raises:
        RuntimeError: wrong shapes, different dtypes or devices, an unsupported dtype.

    Example::

        >>> boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
        >>> myops.nms(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5)
        tensor([0, 2])
    """
    return _ops.nms.default(boxes, scores, float(iou_threshold))


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """:func:`torchvision.ops.batched_nms`: NMS within each category, never across categories.

    Equal to torchvision's result, which takes one of two paths by input size; myops takes the
    same one. Inference only.

    Args:
        boxes: ``[N, 4]`` ``(x1, y1, x2, y2)``, as :func:`nms`.
        scores: ``[N]``, the dtype of ``boxes``.
        idxs: int64 ``[N]``, the category of each box.
        iou_threshold: the IoU above which a box is suppressed.

    Returns:
        The int64 indices of the kept boxes, in decreasing score order.

    Raises:
        RuntimeError: wrong shapes, different dtypes or devices, an unsupported dtype.

    Example::

        >>> boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
        >>> myops.batched_nms(boxes, torch.tensor([0.9, 0.8, 0.7]), torch.tensor([0, 1, 0]), 0.5)
        tensor([0, 1, 2])
    """
    return _ops.batched_nms.default(boxes, scores, idxs, float(iou_threshold))


def nms_static(boxes: Tensor, scores: Tensor, iou_threshold: float, *, size: int) -> Tuple[Tensor, Tensor]:
    """``(keep, count)``: :func:`nms` with a static output shape.

    No host sync on CUDA, graph-capturable, static shapes under torch.compile / torch.export.
    When ``size >= count``, ``keep[:count]`` equals ``torchvision.ops.nms(boxes, scores,
    iou_threshold)``. Inference only.

    Args:
        boxes: ``[N, 4]`` ``(x1, y1, x2, y2)``, as :func:`nms`.
        scores: ``[N]``, the dtype of ``boxes``.
        iou_threshold: the IoU above which a box is suppressed.
        size: the length of ``keep``, ``>= 0``.

    Returns:
        ``keep``, int64 ``[size]``: the first ``size`` survivors of :func:`nms` in the same
        order, padded with -1; ``count``, a 0-d int64 on the boxes' device holding the TRUE
        number of survivors (may exceed ``size``).

    Raises:
        RuntimeError: as :func:`nms`, and ``size < 0``.

    Example::

        >>> boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
        >>> myops.nms_static(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5, size=3)
        (tensor([ 0,  2, -1]), tensor(2))
    """
    return _ops.nms_static.default(boxes, scores, float(iou_threshold), size=size)


def batched_nms_static(
    boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float, *, size: int
) -> Tuple[Tensor, Tensor]:
    """``(keep, count)``: :func:`batched_nms` (``torchvision.ops.batched_nms``) in the static
    form of :func:`nms_static`. Inference only.

    Args:
        boxes: ``[N, 4]`` ``(x1, y1, x2, y2)``, as :func:`nms`.
        scores: ``[N]``, the dtype of ``boxes``.
        idxs: int64 ``[N]``, the category of each box.
        iou_threshold: the IoU above which a box is suppressed.
        size: the length of ``keep``, ``>= 0``.

    Returns:
        ``keep``, int64 ``[size]`` padded with -1, and the true survivor count ``count`` (0-d).

    Raises:
        RuntimeError: as :func:`batched_nms`, and ``size < 0``.

    Example::

        >>> boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
        >>> myops.batched_nms_static(boxes, torch.tensor([0.9, 0.8, 0.7]), torch.tensor([0, 0, 1]), 0.5, size=4)
        (tensor([ 0,  2, -1, -1]), tensor(2))
    """
    return _ops.batched_nms_static.default(boxes, scores, idxs, float(iou_threshold), size=size)


def multiclass_nms_static(
    boxes: Tensor,
    scores: Tensor,
    *,
    score_threshold: float,
    iou_threshold: float,
    max_detections: int,
    pre_nms_top_k: Optional[int] = None,
    class_agnostic: bool = False,
    multi_label: bool = True,
) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """A single-stage detector's post-processing for a batch of images, padded to a fixed size:
    score filter, optional pre-NMS top-k, per-class (or class-agnostic) NMS and the best
    ``K = max_detections`` detections, with no host sync and static output shapes (exportable with
    no unbacked symbol, CUDA-graph capturable).
    Inference only: the forward runs when an input requires grad, and a backward through
    the result raises (the op reference's "Inference-only ops").

    Args:
        boxes: ``[N, A, 4]`` (one box per anchor) or ``[N, A, C, 4]`` (one box per anchor and
            class), ``(x1, y1, x2, y2)``, the dtype of ``scores``: float32 / float64 (and float16
            on CUDA), as ``torchvision.ops.nms``.
        scores: ``[N, A, C]``, the final class scores (after any sigmoid).
        score_threshold: a candidate needs ``score > score_threshold`` (strictly, as torchvision's
            detectors and Ultralytics filter; a NaN score is never a candidate).
        iou_threshold: NMS drops a box whose IoU with a kept box of its class is ``> iou_threshold``.
        max_detections: ``K``, the number of output rows per image.
        pre_nms_top_k: when given, only the ``pre_nms_top_k`` best candidates of an image go to NMS
            (Ultralytics' ``max_nms``, EfficientNMS's top-k). The work follows the real candidates
            on the CPU and on CUDA (the padded composite other devices run pads each image to
            ``M = min(pre_nms_top_k, A*C)`` rows, ``A`` without ``multi_label``, with an IoU bit mask
            of ``M^2 / 8`` bytes).
        class_agnostic: one NMS over all classes (``torchvision.ops.nms``) instead of one per class.
        multi_label: every ``(anchor, class)`` pair above the threshold is a candidate (EfficientNMS,
            Ultralytics' ``multi_label=True``); ``False``: only each anchor's best class (the first
            one of the highest score, ``argmax``; Ultralytics' default).

    Returns:
        ``(num_detections, boxes, scores, classes, anchors)``: ``num_detections`` int64 ``[N]``
        (at most ``K``), ``boxes`` ``[N, K, 4]``, ``scores`` ``[N, K]`` (the inputs' dtype),
        ``classes`` int64 ``[N, K]`` and ``anchors`` int64 ``[N, K]``, the anchor index ``a`` of each
        detection (to gather masks, keypoints or features after it). Row ``j < num_detections[n]``
        is a detection; the rows after it are padding: boxes and scores 0, classes and anchors -1.

    What it equals, per image ``n`` (every output element; tests/test_multiclass_nms.py)::

        s = scores[n]                                              # [A, C]
        if multi_label:
            a, c = torch.nonzero(s > score_threshold, as_tuple=True)   # (anchor, class) order
        else:
            best = s.argmax(1)
            a = torch.nonzero(s.gather(1, best[:, None])[:, 0] > score_threshold)[:, 0]
            c = best[a]
        sc = s[a, c]
        order = sc.sort(descending=True, stable=True).indices[:pre_nms_top_k]
        a, c, sc = a[order], c[order], sc[order]
        b = boxes[n][a] if boxes.dim() == 3 else boxes[n][a, c]
        keep = (torchvision.ops.nms(b, sc, iou_threshold) if class_agnostic
                else torchvision.ops.batched_nms(b, sc, c, iou_threshold))
        keep = keep.sort().values[:max_detections]

    So the detections come in score order, ties (equal scores) by ``(anchor, class)`` ascending;
    torchvision's own order among equal kept scores (its per-class path sorts them unstably) is
    replaced by that rule, and NMS's decisions are torchvision's: its IoU arithmetic and its own
    choice between its two ``batched_nms`` paths (boxes shifted apart by class up to 1,000
    candidates on the CPU / 25,000 on CUDA, one NMS per class above), NaN boxes included.

    How it differs from the common variants:

    * Ultralytics' ``non_max_suppression`` takes the raw ``[N, 4 + C, A]`` head output with
      ``xywh`` boxes, keeps ``score > conf_thres`` as here, picks a single label with ``max``
      (here ``argmax``: the first best class), cuts at ``max_nms`` with an unstable sort (here
      stable), and runs one ``torchvision.ops.nms`` on boxes shifted by ``class * 7680`` (here
      torchvision's ``batched_nms``: the same survivors unless a shift's rounding moves an IoU
      across the threshold or boxes reach past 7680); it returns a list of variable-size tensors
      and may stop early on its time limit. ``multi_label`` and ``pre_nms_top_k=max_nms`` give its
      candidates.
    * TensorRT's EfficientNMS keeps ``score >= score_threshold`` (here ``>``), outputs int32 counts
      and classes padded with 0 (here int64, classes -1) and no anchor index, can decode boxes
      and apply a sigmoid itself (here the inputs are final ``xyxy`` boxes and scores), sorts
      candidates by radix sort in an order that is not specified among equal scores (in float16
      on a few score bits only), uses its own IoU arithmetic, and bounds the candidates it sorts
      internally; ``multi_label=True`` and ``pre_nms_top_k`` reproduce its candidate set.

    Raises:
        RuntimeError: ``boxes`` / ``scores`` of the wrong rank or shapes that disagree, different
            dtypes or devices, a dtype outside the list above, ``max_detections < 0`` or
            ``pre_nms_top_k < 0``.

    Example::

        >>> boxes = torch.tensor([[[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]]])
        >>> scores = torch.tensor([[[0.9, 0.1], [0.8, 0.7], [0.2, 0.6]]])
        >>> n, b, s, c, a = myops.multiclass_nms_static(
        ...     boxes, scores, score_threshold=0.5, iou_threshold=0.5, max_detections=4)
        >>> n, c, a
        (tensor([3]), tensor([[ 0,  1,  1, -1]]), tensor([[ 0,  1,  2, -1]]))
    """
    return _ops.multiclass_nms_static.default(
        boxes,
        scores,
        score_threshold=float(score_threshold),
        iou_threshold=float(iou_threshold),
        max_detections=max_detections,
        pre_nms_top_k=pre_nms_top_k,
        class_agnostic=bool(class_agnostic),
        multi_label=bool(multi_label),
    )


# ---- fake kernels: the result's shape, dtype and strides under a tracer, after the C++ checks ----
# (_fake_kernel collects them and myops._fake registers them; _rules runs the family's C++ rules)


def _nms_checks(op, boxes, scores, idxs=None, size=None):
    _rules("nms", op, *_info(boxes), *_info(scores), *(_NO_INFO if idxs is None else _info(idxs)), size)


def _nms_dynamic(boxes):
    n = boxes.shape[0]
    k: Union[int, torch.SymInt]
    if isinstance(n, int) and n == 0:
        k = 0
    else:
        k = torch.library.get_ctx().new_dynamic_size(max=n if isinstance(n, int) else None)
    return boxes.new_empty((k,), dtype=torch.int64)


@_fake_kernel("myops::nms")
def _nms_fake(boxes, scores, iou_threshold):
    _nms_checks("nms", boxes, scores)
    return _nms_dynamic(boxes)


@_fake_kernel("myops::batched_nms")
def _batched_nms_fake(boxes, scores, idxs, iou_threshold):
    _nms_checks("batched_nms", boxes, scores, idxs)
    return _nms_dynamic(boxes)


@_fake_kernel("myops::nms_static")
def _nms_static_fake(boxes, scores, iou_threshold, *, size):
    _nms_checks("nms_static", boxes, scores, size=size)
    return boxes.new_empty((size,), dtype=torch.int64), boxes.new_empty((), dtype=torch.int64)


@_fake_kernel("myops::batched_nms_static")
def _batched_nms_static_fake(boxes, scores, idxs, iou_threshold, *, size):
    _nms_checks("batched_nms_static", boxes, scores, idxs, size)
    return boxes.new_empty((size,), dtype=torch.int64), boxes.new_empty((), dtype=torch.int64)


@_fake_kernel("myops::multiclass_nms_static")
def _multiclass_nms_static_fake(
    boxes,
    scores,
    *,
    score_threshold,
    iou_threshold,
    max_detections,
    pre_nms_top_k=None,
    class_agnostic=False,
    multi_label=True,
):
    _rules("multiclass_nms", *_info(boxes), *_info(scores), max_detections, pre_nms_top_k)
    n, k = scores.shape[0], max_detections
    return (
        boxes.new_empty((n,), dtype=torch.int64),
        boxes.new_empty((n, k, 4)),
        boxes.new_empty((n, k)),
        boxes.new_empty((n, k), dtype=torch.int64),
        boxes.new_empty((n, k), dtype=torch.int64),
    )

"""Typed, documented wrappers over ``torch.ops.myops.*``.

Each wrapper calls the ``.default`` overload of the registered op; all checks and all work
happen in the C++/CUDA kernels. For the common call forms (plain tensors, default options) a
wrapper first tries the op's direct entry point in ``myops._C`` (csrc/python/fast.cpp): the
same dispatcher call without ``torch.ops``' Python-side argument matching, which costs more
than a small op itself. That entry point returns NotImplemented for anything else (tensor
subclasses, FakeTensor, an active ``__torch_function__`` mode), and under torch.compile the
wrappers go straight to ``torch.ops.myops``, so both paths behave the same.
"""
from typing import List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

# True while TorchDynamo traces a wrapper: the wrappers then call torch.ops.myops directly (the
# direct entry points are C functions it cannot trace). Other tracers pass FakeTensors or
# tensor subclasses, which the entry points hand back with NotImplemented.
_is_compiling = getattr(torch.compiler, "is_dynamo_compiling", torch.compiler.is_compiling)

from . import _C as _fast
from . import _table
from ._build_config import BUILD_CONFIG

# torch 2.14 changed clamp's gradients; the C++ autograd follows the torch it was built against
_CLAMP_GRAD_SPLITS_TIES = tuple(int(p) for p in BUILD_CONFIG["torch_version"].split(".")[:2]) >= (2, 14)

_ops = torch.ops.myops
_ONE = 1  # `alpha is _ONE`: the default (CPython shares the small int 1), not True or 1.0

__all__ = []

# =============================================================================================
# nonzero family: nonzero, where(cond), argwhere, nonzero_static
# =============================================================================================

def nonzero(input: Tensor, *, as_tuple: bool = False) -> Union[Tensor, Tuple[Tensor, ...]]:
    """Indices of the nonzero elements of ``input``, like :func:`torch.nonzero`.

    Returns an int64 tensor of shape ``[nnz, input.dim()]`` (same values and strides as torch on
    that device), or with ``as_tuple=True`` a tuple of ``input.dim()`` 1-D index tensors (one for a
    0-d input, as torch). NaN counts as nonzero, -0.0 as zero. Synchronizes with the host once on
    CUDA (the result size depends on the data); see :func:`nonzero_static` for a sync-free variant.
    """
    if as_tuple:
        return nonzero(input.unsqueeze(0) if input.dim() == 0 else input).unbind(1)
    if not _is_compiling():
        r = _fast.nonzero(input)
        if r is not NotImplemented:
            return r
    return _ops.nonzero.default(input)


def argwhere(input: Tensor) -> Tensor:
    """Indices of the nonzero elements as an ``[nnz, input.dim()]`` int64 tensor, like
    :func:`torch.argwhere` (the same as :func:`nonzero`)."""
    return nonzero(input)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """Like :func:`torch.nonzero_static`: an int64 ``[size, input.dim()]`` tensor holding the first
    ``size`` rows of ``nonzero(input)``, padded with ``fill_value`` when there are fewer nonzeros.

    The output shape does not depend on the data, so on CUDA it never synchronizes with the host
    and can be captured in a CUDA graph. ``size`` must be >= 0.
    """
    if not _is_compiling():
        r = _fast.nonzero_static(input, size, fill_value)
        if r is not NotImplemented:
            return r
    _check_int_args("nonzero_static", size=size, fill_value=fill_value)
    return _ops.nonzero_static.default(input, size=size, fill_value=fill_value)


def _check_int_args(op: str, **args) -> None:
    """int arguments as torch's argument parser takes them: TypeError for a bool, a float or
    another non-int, ValueError for an int outside int64 (SymInts and tensors pass on)."""
    for name, v in args.items():
        if isinstance(v, int) and not isinstance(v, bool):
            if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
                raise ValueError(f"myops.{op}: argument '{name}' must fit int64 (Overflow when unpacking "
                                 f"long long), got {v}")
        elif isinstance(v, (bool, float, complex, str, type(None))):
            raise TypeError(f"myops.{op}: argument '{name}' must be int, not {type(v).__name__}")


def _where_cond(condition: Tensor) -> Tuple[Tensor, ...]:
    """``torch.where(condition)``: a tuple of 1-D index tensors, one per dim of ``condition``."""
    return nonzero(condition, as_tuple=True)


def where(
    condition: Tensor,
    self: Optional[Union[Tensor, float, int, bool]] = None,
    other: Optional[Union[Tensor, float, int, bool]] = None,
) -> Union[Tensor, Tuple[Tensor, ...]]:
    """Like :func:`torch.where`.

    ``where(condition)`` returns the indices of the nonzero elements of ``condition`` as a tuple
    of 1-D tensors (``nonzero(condition, as_tuple=True)``). ``where(condition, self, other)``
    picks elements of ``self`` where ``condition`` is true and of ``other`` elsewhere
    (broadcasting; Python numbers promote like torch's), computed by ``torch.ops.myops.where``.
    """
    if self is None and other is None:
        return _where_cond(condition)
    if self is None or other is None:
        raise TypeError("myops.where: expected both 'self' and 'other', or neither")
    return _where_tensor(condition, self, other)


__all__ += ["nonzero", "argwhere", "nonzero_static", "where"]


# =============================================================================================
# bounded selection: static shapes plus the true count on the device (no host sync)
# =============================================================================================

def nonzero_bounded(input: Tensor, *, size: int, fill_value: int = -1) -> Tuple[Tensor, Tensor]:
    """``(indices, count)``: a bounded :func:`torch.nonzero`.

    ``indices`` is int64 ``[size, input.dim()]``; its first ``min(count, size)`` rows equal
    ``torch.nonzero(input)[:size]`` and the remaining rows hold ``fill_value`` (default -1).
    ``count`` is a 0-d int64 tensor on ``input``'s device holding the TRUE number of nonzeros,
    which may exceed ``size`` (overflow is detectable without a sync: ``count > size``).
    Both come from nonzero_static's one select pass: no host sync on CUDA, graph-capturable, and
    static output shapes under torch.compile / torch.export.
    """
    if not _is_compiling():
        r = _fast.nonzero_bounded(input, size, fill_value)
        if r is not NotImplemented:
            return r
    _check_int_args("nonzero_bounded", size=size, fill_value=fill_value)
    return _ops.nonzero_bounded.default(input, size=size, fill_value=fill_value)


def masked_select_bounded(
    input: Tensor, mask: Tensor, *, size: int, fill_value: Union[int, float, bool] = 0
) -> Tuple[Tensor, Tensor]:
    """``(values, count)``: a bounded :func:`torch.masked_select`. ``values`` is ``[size]``
    (``input``'s dtype): the first ``min(count, size)`` elements of ``input[mask]`` (``input``
    and ``mask`` broadcast, as torch.masked_select), the rest ``fill_value``; ``count`` is the
    true number of selected elements (0-d int64, on the device). Differentiable in ``input``."""
    return _ops.masked_select_bounded.default(input, mask, size=size, fill_value=fill_value)


def mask_rows_bounded(
    input: Tensor, mask: Tensor, *, size: int, fill_value: Union[int, float, bool] = 0
) -> Tuple[Tensor, Tensor]:
    """``(rows, count)``: a bounded ``input[mask]`` for a 1-D boolean ``mask`` over dim 0 (what
    detector code does with ``boxes[keep]``). ``rows`` is ``[size, *input.shape[1:]]``: the first
    ``min(count, size)`` rows of ``input[mask]``, the rest ``fill_value``; ``count`` is the true
    number of selected rows (0-d int64, on the device). Differentiable in ``input``."""
    return _ops.mask_rows_bounded.default(input, mask, size=size, fill_value=fill_value)


__all__ += ["nonzero_bounded", "masked_select_bounded", "mask_rows_bounded"]


# =============================================================================================
# non-maximum suppression: == torchvision.ops.nms / batched_nms, plus static forms
# =============================================================================================

def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Like :func:`torchvision.ops.nms`: the int64 indices of the boxes kept by greedy
    non-maximum suppression, in decreasing score order (the same indices in the same order as
    torchvision, ties and NaN scores included). ``boxes`` is ``[N, 4]`` in ``(x1, y1, x2, y2)``
    form, ``scores`` ``[N]`` of the same dtype (float32/float64; float16 too on CUDA); a box is
    dropped when its IoU with a kept, higher-scored box is ``> iou_threshold``. Synchronizes with
    the host once on CUDA (the result size); see :func:`nms_static` for a sync-free form."""
    return _ops.nms.default(boxes, scores, float(iou_threshold))


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """Like :func:`torchvision.ops.batched_nms`: NMS within each category ``idxs`` (``[N]``),
    never across categories; the kept indices in decreasing score order, equal to torchvision's
    (which takes one of two paths by input size; myops takes the same one)."""
    return _ops.batched_nms.default(boxes, scores, idxs, float(iou_threshold))


def nms_static(boxes: Tensor, scores: Tensor, iou_threshold: float, *, size: int) -> Tuple[Tensor, Tensor]:
    """``(keep, count)``: ``keep`` is int64 ``[size]``, the first ``size`` survivors of
    :func:`nms` in the same order, padded with -1; ``count`` is a 0-d int64 on the boxes' device
    holding the TRUE number of survivors (may exceed ``size``). When ``size >= count``,
    ``keep[:count]`` equals ``nms(boxes, scores, iou_threshold)``. No host sync on CUDA,
    graph-capturable, static shapes under torch.compile / torch.export."""
    return _ops.nms_static.default(boxes, scores, float(iou_threshold), size=size)


def batched_nms_static(
    boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float, *, size: int
) -> Tuple[Tensor, Tensor]:
    """``(keep, count)``: :func:`batched_nms` in the static form of :func:`nms_static`."""
    return _ops.batched_nms_static.default(boxes, scores, idxs, float(iou_threshold), size=size)


__all__ += ["nms", "batched_nms", "nms_static", "batched_nms_static"]


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
    no unbacked symbol, CUDA-graph capturable). Inference only (no gradient).

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
            (Ultralytics' ``max_nms``, EfficientNMS's top-k). On CUDA it also bounds the work and
            memory: the NMS there runs over ``M = min(pre_nms_top_k, A*C)`` rows per image (``A``
            without ``multi_label``), whose IoU bit mask takes ``M^2 / 8`` bytes.
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
        boxes, scores, score_threshold=float(score_threshold), iou_threshold=float(iou_threshold),
        max_detections=max_detections, pre_nms_top_k=pre_nms_top_k, class_agnostic=bool(class_agnostic),
        multi_label=bool(multi_label))


__all__ += ["multiclass_nms_static"]


# =============================================================================================
# multi-level RoIAlign: == torchvision.ops.roi_align per RoI, one call for every FPN level
# =============================================================================================

def roi_align_levels(
    features: Sequence[Tensor],
    rois: Tensor,
    levels: Tensor,
    output_size: Union[int, Tuple[int, int]],
    spatial_scale: Sequence[float],
    sampling_ratio: int = -1,
    aligned: bool = False,
) -> Tensor:
    """RoIAlign of every RoI on its own feature level, in one call: ``[K, C, PH, PW]``.

    ``features`` holds 1 to 8 maps ``[N, C, H_l, W_l]`` (one dtype: float16/32/64, one device);
    ``rois`` is ``[K, 5]`` (batch index, x1, y1, x2, y2) in their dtype; ``levels`` is int64
    ``[K]``. Row ``k`` of the result is ``torchvision.ops.roi_align(features[l], rois[k:k+1],
    output_size, spatial_scale[l], sampling_ratio, aligned)`` with ``l = levels[k]``: bit for bit
    on the CPU, and following torchvision's CUDA kernel on CUDA. What
    ``torchvision.ops.MultiScaleRoIAlign`` computes with a data-dependent gather per level, with
    static shapes (exportable, graph-capturable). A level of -1 marks a padded RoI (e.g. past
    the real ones of a static-shape batch): its row of ``rois`` is not read and its output is 0,
    at no cost. Any other level or batch index out of range raises IndexError on the CPU; on CUDA
    (no host sync) that RoI's output is NaN. Inference only: an input that requires grad (with
    grad mode on) raises."""
    if isinstance(output_size, int):
        ph = pw = output_size
    else:
        ph, pw = output_size
    return _ops.roi_align_levels.default(list(features), rois, levels, [float(s) for s in spatial_scale],
                                         int(ph), int(pw), int(sampling_ratio), bool(aligned))


__all__ += ["roi_align_levels"]


# =============================================================================================
# per-detection decoding over the real rows: torchvision's loops as one op, padding not read
# =============================================================================================

def heatmaps_to_keypoints(maps: Tensor, rois: Tensor, count: Tensor) -> Tuple[Tensor, Tensor]:
    """``torchvision.models.detection.roi_heads.heatmaps_to_keypoints`` on the first ``count``
    RoIs: ``maps [R, K, H, W]`` (float32/64), ``rois [R, 4]`` (x1, y1, x2, y2, the maps' dtype),
    ``count`` a 0-d int64 tensor on their device (clamped to ``[0, R]``) -> keypoints ``[R, K, 3]``
    (x, y, 1) and scores ``[R, K]``, float32; the rows at or past ``count`` are 0 and not read.
    Each heatmap is resampled (bicubic) to its RoI's own ceil size and its first maximum decoded,
    as torchvision does: bit for bit on the CPU (torchvision's own resampling call, one RoI's map
    at a time); on CUDA without storing the map (torch's CUDA bicubic arithmetic per position),
    no host sync. Inference only."""
    return _ops.heatmaps_to_keypoints.default(maps, rois, count)


def paste_masks(masks: Tensor, boxes: Tensor, count: Tensor, image_size: Sequence[int]) -> Tensor:
    """``torchvision.models.detection.roi_heads.paste_mask_in_image`` for each image ``n``'s first
    ``count[n]`` rows: ``masks [N, D, S, S']`` (already padded, as torchvision's ``expand_masks``
    gives them; float32/64), ``boxes`` int64 ``[N, D, 4]`` (``expand_boxes``'s integer boxes),
    ``count`` int64 ``[N]``, ``image_size`` ``[h0, w0, h1, w1, ...]`` -> ``[N, D, H, W]`` on a
    canvas of the largest image; every other pixel is 0 (on the CPU a large output's zeros are
    fresh pages, never written). Bit for bit on the CPU; no host sync on CUDA. Inference only.
    ``myops.detection.paste_masks`` takes torchvision's arguments."""
    return _ops.paste_masks.default(masks, boxes, count, [int(v) for v in image_size])


__all__ += ["heatmaps_to_keypoints", "paste_masks"]


# =============================================================================================
# layers over the first `count` rows: a padded batch whose padding costs no work
# =============================================================================================

def linear_bounded(input: Tensor, weight: Tensor, bias: Optional[Tensor], count: Tensor) -> Tensor:
    """:func:`torch.nn.functional.linear` on the first ``count`` rows of ``input [R, K]``:
    ``[R, N]`` whose rows ``[0, count)`` are ``F.linear(input[:count], weight, bias)`` (on the
    CPU the same call, so the same bits) and whose other rows are 0. ``count`` is a 0-d int64
    tensor on ``input``'s device (clamped to ``[0, R]``). The CPU runs the layer on the real rows
    only; CUDA (no host sync, graph-capturable) on every row, then zeroes the padding. The result
    is contiguous. Inference only: with an input that requires grad (grad mode on) the result's
    backward raises (the forward runs: AOTInductor calls it with a model's Parameters)."""
    return _ops.linear_bounded.default(input, weight, bias, count)


def _tuple(v: Union[int, Sequence[int]], n: int) -> List[int]:
    return [int(v)] * n if isinstance(v, int) else [int(x) for x in v]


def conv_bounded(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    count: Tensor,
    *,
    stride: Union[int, Sequence[int]] = 1,
    padding: Union[int, Sequence[int]] = 0,
    dilation: Union[int, Sequence[int]] = 1,
    transposed: bool = False,
    output_padding: Union[int, Sequence[int]] = 0,
    groups: int = 1,
) -> Tensor:
    """:func:`torch.convolution` (``F.conv1d/2d/3d``, ``F.conv_transpose*d`` with
    ``transposed=True``) on the first ``count`` rows (dim 0) of ``input [R, C, *spatial]``, as
    :func:`linear_bounded` does for ``F.linear``: rows ``[0, count)`` are the convolution of
    ``input[:count]``, the others 0. Integer arguments apply to every spatial dim."""
    n = weight.dim() - 2
    return _ops.conv_bounded.default(input, weight, bias, _tuple(stride, n), _tuple(padding, n), _tuple(dilation, n),
                                     bool(transposed), _tuple(output_padding, n), int(groups), count)


__all__ += ["linear_bounded", "conv_bounded"]


# =============================================================================================
# elementwise: unary, binary, ternary
# =============================================================================================

Number = Union[bool, int, float]


_INT64_MAX = 2**63 - 1


def _natural(x: Number) -> torch.dtype:
    """The dtype torch gives a Python number: bool, int64 (uint64 for an int in [2^63, 2^64),
    as c10::Scalar holds it) or float64."""
    if isinstance(x, bool):
        return torch.bool
    if isinstance(x, int):
        return torch.uint64 if x > _INT64_MAX else torch.int64
    return torch.float64


_REAL = (bool, int, float)


# what torch's argument parser takes for a Tensor-or-number operand
_OPERAND = (Tensor, bool, int, float, complex, torch.SymInt, torch.SymFloat, torch.SymBool)


def _check_operand(op: str, name: str, v) -> None:
    """TypeError (torch's) for an operand that is neither a Tensor nor a number."""
    if not isinstance(v, _OPERAND):
        raise TypeError(f"myops.{op}: argument '{name}' must be a Tensor or a Python number, got {type(v).__name__}")


def _ew_number(name: str, self, other, **kw) -> Tensor:
    """Binary op ``name`` with a Python number on either side, as aten takes it: the op's Scalar
    overload (``name.Scalar``: the number second; ``name.ScalarSelf``: the number first). The
    result dtype, the number's conversion and its range checks are the overloads' (C++:
    at::result_type(tensor, number), a number being a wrapped number)."""
    packet = getattr(_ops, name)
    for arg, v in (("self", self), ("other", other)):
        _check_operand(name, arg, v)
    if isinstance(self, Tensor):
        return packet.Scalar(self, other, **kw)
    if isinstance(other, Tensor):
        return packet.ScalarSelf(self, other, **kw)
    raise TypeError(f"myops.{name}: at least one of 'self' and 'other' must be a Tensor, got "
                    f"{type(self).__name__} and {type(other).__name__}")


def relu(self: Tensor) -> Tensor:
    """``torch.relu``: max(x, 0); NaN stays NaN. Integer and float dtypes (not bool)."""
    if not _is_compiling():
        r = _fast.relu(self)
        if r is not NotImplemented:
            return r
    return _ops.relu.default(self)


def gelu(self: Tensor, approximate: str = "none") -> Tensor:
    """``torch.nn.functional.gelu`` with ``approximate`` 'none' (erf) or 'tanh'; float dtypes."""
    if not _is_compiling():
        r = _fast.gelu(self) if approximate == "none" else _fast.gelu(self, approximate)
        if r is not NotImplemented:
            return r
    return _ops.gelu.default(self, approximate=approximate)


def silu(self: Tensor) -> Tensor:
    """``torch.nn.functional.silu``: x * sigmoid(x); float dtypes."""
    if not _is_compiling():
        r = _fast.silu(self)
        if r is not NotImplemented:
            return r
    return _ops.silu.default(self)


def sigmoid(self: Tensor) -> Tensor:
    """``torch.sigmoid``; integer and bool inputs give the default float dtype."""
    if not _is_compiling():
        r = _fast.sigmoid(self)
        if r is not NotImplemented:
            return r
    return _ops.sigmoid.default(self)


def mul_scalar(self: Tensor, other: Number) -> Tensor:
    """``self * other`` for a Python number ``other``; dtype ``torch.result_type(self, other)``.

    Kept for compatibility: the same as ``myops.mul(self, other)``, i.e.
    ``torch.ops.myops.mul.Scalar`` (``torch.ops.myops.mul_scalar`` remains as an alias of it)."""
    if not _is_compiling():
        r = _fast.mul_scalar(self, other)
        if r is not NotImplemented:
            return r
    if isinstance(other, Tensor):
        raise TypeError("myops.mul_scalar: argument 'other' must be a Python number, got Tensor")
    _check_operand("mul_scalar", "other", other)
    return _ops.mul.Scalar(self, other)


def cast(self: Tensor, dtype: torch.dtype) -> Tensor:
    """``self.to(dtype)`` as a new tensor (always a copy), keeping the layout as ``.to`` does."""
    if not _is_compiling():
        r = _fast.cast(self, dtype)
        if r is not NotImplemented:
            return r
    return _ops.cast.default(self, dtype)


def add(self: Union[Tensor, Number], other: Union[Tensor, Number], *, alpha: Number = 1) -> Tensor:
    """``torch.add(self, other, alpha=alpha)`` with broadcasting and type promotion; either
    operand may be a Python number (``add.Scalar`` / ``add.ScalarSelf``)."""
    if not _is_compiling():
        if isinstance(other, Tensor):
            r = _fast.add(self, other) if alpha is _ONE else _fast.add(self, other, alpha)
        else:
            r = _fast.add_scalar(self, other) if alpha is _ONE else _fast.add_scalar(self, other, alpha)
        if r is not NotImplemented:
            return r
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _ops.add.default(self, other, alpha=alpha)
    return _ew_number("add", self, other, alpha=alpha)


def sub(self: Union[Tensor, Number], other: Union[Tensor, Number], *, alpha: Number = 1) -> Tensor:
    """``torch.sub(self, other, alpha=alpha)`` with broadcasting and type promotion; either
    operand may be a Python number (``sub.Scalar`` / ``sub.ScalarSelf``)."""
    if not _is_compiling():
        if isinstance(other, Tensor):
            r = _fast.sub(self, other) if alpha is _ONE else _fast.sub(self, other, alpha)
        else:
            r = _fast.sub_scalar(self, other) if alpha is _ONE else _fast.sub_scalar(self, other, alpha)
        if r is not NotImplemented:
            return r
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _ops.sub.default(self, other, alpha=alpha)
    return _ew_number("sub", self, other, alpha=alpha)


def mul(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.mul`` with broadcasting and type promotion; either operand may be a Python
    number (``mul.Scalar`` / ``mul.ScalarSelf``)."""
    if not _is_compiling():
        r = _fast.mul(self, other) if isinstance(other, Tensor) else _fast.mul_scalar(self, other)
        if r is not NotImplemented:
            return r
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _ops.mul.default(self, other)
    return _ew_number("mul", self, other)


def div(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.div`` (true division: integer inputs give the default float dtype); either
    operand may be a Python number (``div.Scalar`` / ``div.ScalarSelf``)."""
    if not _is_compiling():
        r = _fast.div(self, other) if isinstance(other, Tensor) else _fast.div_scalar(self, other)
        if r is not NotImplemented:
            return r
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _ops.div.default(self, other)
    return _ew_number("div", self, other)


def maximum(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.maximum``: elementwise max, NaN in either operand gives NaN. With a Python
    number it is ``torch.clamp(tensor, min=number)``: values (NaN bits included) and gradient."""
    if not _is_compiling():
        r = _fast.maximum(self, other)
        if r is not NotImplemented:
            return r
    if isinstance(self, Tensor) != isinstance(other, Tensor) and isinstance(other if isinstance(self, Tensor) else self, _REAL):
        return clamp(self, min=other) if isinstance(self, Tensor) else clamp(other, min=self)
    return _ops.maximum.default(self, other)


def minimum(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.minimum``: elementwise min, NaN in either operand gives NaN. With a Python
    number it is ``torch.clamp(tensor, max=number)``: values (NaN bits included) and gradient."""
    if not _is_compiling():
        r = _fast.minimum(self, other)
        if r is not NotImplemented:
            return r
    if isinstance(self, Tensor) != isinstance(other, Tensor) and isinstance(other if isinstance(self, Tensor) else self, _REAL):
        return clamp(self, max=other) if isinstance(self, Tensor) else clamp(other, max=self)
    return _ops.minimum.default(self, other)


def _where_tensor(condition: Tensor, self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    # the three-argument form of ``myops.where`` (defined with the nonzero family above);
    # ``condition`` must be bool
    if not _is_compiling():
        r = _fast.where(condition, self, other)
        if r is not NotImplemented:
            return r
    if not isinstance(condition, Tensor):
        raise TypeError(f"myops.where: argument 'condition' must be a Tensor, got {type(condition).__name__}")
    # the number forms are aten's: where.ScalarOther / ScalarSelf / Scalar (result dtype and
    # the number's checked conversion in C++)
    for arg, v in (("self", self), ("other", other)):
        _check_operand("where", arg, v)
    if isinstance(self, Tensor):
        if isinstance(other, Tensor):
            return _ops.where.default(condition, self, other)
        return _ops.where.ScalarOther(condition, self, other)
    if isinstance(other, Tensor):
        return _ops.where.ScalarSelf(condition, self, other)
    return _ops.where.Scalar(condition, self, other)


def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """``torch.addcmul``: self + value * tensor1 * tensor2, broadcasting all three."""
    if not _is_compiling():
        r = _fast.addcmul(self, tensor1, tensor2) if value is _ONE else _fast.addcmul(self, tensor1, tensor2, value)
        if r is not NotImplemented:
            return r
    for name, v in (("self", self), ("tensor1", tensor1), ("tensor2", tensor2)):
        if not isinstance(v, Tensor):  # torch's TypeError (no number form), not the schema's RuntimeError
            raise TypeError(f"myops.addcmul: argument '{name}' must be a Tensor, got {type(v).__name__}")
    return _ops.addcmul.default(self, tensor1, tensor2, value=value)


def clamp(self: Tensor, min: Optional[Union[Tensor, Number]] = None,
          max: Optional[Union[Tensor, Number]] = None) -> Tensor:
    """``torch.clamp(self, min, max)``: min(max(self, min), max); NaN in any operand gives NaN.
    One bound may be None. A Python number that does not fit the result dtype raises torch's
    overflow error. Gradients are torch's, for the torch myops was built against (they changed
    in torch 2.14): with number bounds (``torch.ops.myops.clamp.Scalar``) only ``self`` has one;
    with tensor bounds ties are split between ``self`` and the bound (torch >= 2.14). A number
    with a 0-d tensor bound that needs no gradient takes the number overload, as in torch; a
    number with any other tensor bound (torch: TypeError) is taken as a 0-d tensor bound."""
    if not _is_compiling():
        r = _fast.clamp(self, min, max)
        if r is not NotImplemented:
            return r
    if min is None and max is None:
        raise RuntimeError("myops.clamp: at least one of 'min' and 'max' must not be None")
    if not isinstance(self, Tensor):
        raise TypeError(f"myops.clamp: argument 'self' must be a Tensor, got {type(self).__name__}")
    for name, v in (("min", min), ("max", max)):
        if v is not None and not isinstance(v, (Tensor, bool, int, float, torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise TypeError(f"myops.clamp: argument '{name}' must be a Tensor, None or a real Python number, "
                            f"got {type(v).__name__}")
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        # a number and a 0-d tensor that needs no gradient: torch.clamp's overload for numbers,
        # the tensor read as one (as torch's argument parser does; a weak number in promotion)
        t = min if isinstance(min, Tensor) else max
        if t.dim() == 0 and not t.requires_grad:
            min, max = (v.item() if v is t else v for v in (min, max))
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        # number bounds: torch.clamp's Scalar overload (its own gradient, self only)
        return _ops.clamp.Scalar(self, min, max)
    if min is None or max is None:
        bound = max if min is None else min
        if _CLAMP_GRAD_SPLITS_TIES:  # torch >= 2.14: one tensor bound is maximum / minimum
            return minimum(self, bound) if min is None else maximum(self, bound)
        dt = torch.result_type(self, bound)
        if not dt.is_floating_point:  # no gradient: the values are maximum's / minimum's
            return minimum(self, bound) if min is None else maximum(self, bound)
        # torch <= 2.13: clamp_max.Tensor's gradient is clamp.Tensor's with min = -inf (and
        # clamp_min's with max = +inf, except for a bound of +inf itself, which gets none here)
        inf = torch.tensor(float("inf"), dtype=dt)
        return _ops.clamp.default(self, -inf, bound) if min is None else _ops.clamp.default(self, bound, inf)
    if isinstance(min, Tensor) and isinstance(max, Tensor):
        return _ops.clamp.default(self, min, max)
    # a number and a dimensioned tensor bound (or one that needs a gradient): clamp.Tensor, the
    # number a 0-d tensor bound of torch.result_type(self, bound, number), made by where.ScalarOther
    # (aten's promotion for a number beside the 0-d result type, its checked conversion)
    bound = min if isinstance(min, Tensor) else max
    like = torch.empty((), dtype=torch.result_type(self, bound))
    lo, hi = (v if isinstance(v, Tensor) else _ops.where.ScalarOther(torch.tensor(False), like, v) for v in (min, max))
    return _ops.clamp.default(self, lo, hi)


__all__ += [
    "relu", "gelu", "silu", "sigmoid", "mul_scalar", "cast",
    "add", "sub", "mul", "div", "maximum", "minimum",
    "addcmul", "clamp",
]


def pow(self: Tensor, exponent: Union[Tensor, Number]) -> Tensor:
    """``torch.pow`` on floating tensors: ``exponent`` a floating tensor (broadcasting, type
    promotion) or a Python number (``pow.Scalar``: the result keeps ``self``'s dtype)."""
    if isinstance(exponent, Tensor):
        if not _is_compiling():
            r = _fast.pow(self, exponent)
            if r is not NotImplemented:
                return r
        return _ops.pow.default(self, exponent)
    if not _is_compiling():
        r = _fast.pow_scalar(self, exponent)
        if r is not NotImplemented:
            return r
    return _ops.pow.Scalar(self, exponent)


__all__ += ["pow"]


def _table_unary(op):
    """The Python function of a plain unary op of the table (myops._table): the fast entry
    point, else the dispatcher (torch.compile traces the latter)."""
    fast, packet = getattr(_fast, op.fn), op.packet

    def fn(self: Tensor) -> Tensor:
        if not _is_compiling():
            r = fast(self)
            if r is not NotImplemented:
                return r
        return packet(self)

    fn.__name__ = fn.__qualname__ = op.fn
    fn.__doc__ = (f"``torch.{op.fn}`` (dtypes {', '.join(str(d)[6:] for d in op.accepted)}; result dtype: rule "
                  f"{op.rule} of the op table).")
    return fn


# every plain unary op of the table without a function above
for _op in _table.EW_OPS.values():
    if _op.sig == "unary" and _op.fn not in __all__:
        globals()[_op.fn] = _table_unary(_op)
        __all__.append(_op.fn)
del _op


# =============================================================================================
# max_pool2d_add
# =============================================================================================

IntOrPair = Union[int, Sequence[int]]


def _pool_pair(v: IntOrPair, name: str) -> List[int]:
    if isinstance(v, int):
        return [v, v]
    v = [int(x) for x in v]
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(
            f"myops.max_pool2d_add: argument '{name}' must be a single int or a list of two ints, got {v}"
        )
    return v


_K3, _S2, _P1 = (3, 3), (2, 2), (1, 1)  # the defaults (the fast entry point's fixed arguments)


def max_pool2d_add(
    self: Tensor,
    other: Tensor,
    kernel_size: IntOrPair = _K3,
    stride: Optional[IntOrPair] = _S2,
    padding: IntOrPair = _P1,
    ceil_mode: bool = False,
) -> Tensor:
    """``F.max_pool2d(self, kernel_size, stride, padding, ceil_mode=ceil_mode) + other`` in one pass.

    ``self`` is ``[N, C, H, W]`` or unbatched ``[C, H, W]`` (float32, float64, float16, bfloat16);
    ``other`` must broadcast to the pooled shape (e.g. ``[N, 1, Ho, Wo]``, ``[1, C, 1, 1]``,
    ``[Wo]``, a 0-d tensor, or the full shape) and is never expanded in memory. The result has
    dtype ``torch.result_type(self, other)``, the pooled shape, and is channels_last when
    ``self`` is. Bit-identical to PyTorch: padding is -inf, NaN anywhere in a window gives NaN,
    ties (and -0.0 vs +0.0) resolve like torch's max_pool2d, output size follows torch's formula
    including ``ceil_mode``. Dilation is not supported (always 1).

    ``kernel_size``, ``stride`` and ``padding`` take an int or two ints. Unlike
    ``F.max_pool2d`` (whose ``stride`` defaults to ``kernel_size``) the default stride is
    ``(2, 2)``, matching the default ``kernel_size=(3, 3), padding=(1, 1)`` fast path; pass
    ``stride=None`` or ``[]`` to get ``F.max_pool2d``'s behaviour (stride = kernel_size).
    ``other`` may be an integer or bool tensor or a Python number (the result keeps ``self``'s
    floating dtype, as ``torch.result_type`` gives). Values past a C int raise torch's
    overflow error. Twice differentiable (the second derivative gathers by the same argmax).
    Differentiable in ``self`` and ``other``.
    """
    if kernel_size is _K3 and stride is _S2 and padding is _P1 and ceil_mode is False and not _is_compiling():
        r = _fast.max_pool2d_add(self, other)
        if r is not NotImplemented:
            return r
    k = _pool_pair(kernel_size, "kernel_size")
    # stride None or [] (as torch.ops.aten.max_pool2d): stride = kernel_size
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _pool_pair(stride, "stride")
    p = _pool_pair(padding, "padding")
    if not isinstance(other, Tensor):
        if not isinstance(self, Tensor):
            raise TypeError(f"myops.max_pool2d_add: argument 'self' must be a Tensor, got {type(self).__name__}")
        if not isinstance(other, (bool, int, float)):
            raise TypeError(
                f"myops.max_pool2d_add: argument 'other' must be a Tensor or a Python number, got {type(other).__name__}"
            )
        try:
            other = _pool_number(other, self)
        except OverflowError:
            # torch's composition pools first: its errors (rank, dtype, sizes) come before the
            # number's; with none, the number's own OverflowError
            with torch.no_grad():
                _ops.max_pool2d_add.default(self, torch.zeros((), dtype=torch.bool, device=self.device), k, s, p, ceil_mode)
            raise
    return _ops.max_pool2d_add.default(self, other, k, s, p, ceil_mode)


def _float32_of(u: int) -> float:
    """A non-negative int rounded once to float32 (to nearest, ties to even), as C++'s
    static_cast<float> of a uint64 rounds it (not through double: no double rounding)."""
    shift = u.bit_length() - 24
    if shift <= 0:
        return float(u)
    q, r = divmod(u, 1 << shift)
    if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
        q += 1
    return float(q << shift)


def _pool_number(v: Number, self: Tensor) -> Tensor:
    """A Python number ``other`` as the 0-d tensor that gives ``pooled + v`` (the result keeps
    self's floating dtype) in the number's own precision, made on the device by a fill
    (torch.tensor would copy from the host: a sync, and no CUDA graph capture). An int in
    [2^63, 2^64) (a uint64 to c10, a dtype the kernel does not take) is converted as torch's add
    converts it: to double for a float64 self, to float for the others. Past int64 / uint64:
    torch's OverflowError."""
    dt = _natural(v)
    if dt == torch.uint64 and v < 2**64:
        v, dt = (float(v) if self.dtype == torch.float64 else _float32_of(v)), torch.float64
    return torch.full((), v, dtype=dt, device=self.device)


__all__ += ["max_pool2d_add"]


# =============================================================================================
# diagonal
# =============================================================================================

def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of ``self`` over dims ``dim1`` and ``dim2`` as a new contiguous tensor.

    Equals ``torch.diagonal(self, offset, dim1, dim2)`` (``torch.diagonal_copy`` semantics): the
    two dims are removed and the diagonal is appended as the last dim. ``offset > 0`` selects a
    diagonal above the main one, ``offset < 0`` one below; an offset past the matrix gives an
    empty last dim. Any rank >= 2, any strides, any dtype. Differentiable.
    """
    if not _is_compiling():
        r = _fast.diagonal(self, offset, dim1, dim2)
        if r is not NotImplemented:
            return r
    return _ops.diagonal.default(self, offset, dim1, dim2)


def diagonal_backward(
    grad: Tensor, input_sizes: Sequence[int], offset: int, dim1: int, dim2: int
) -> Tensor:
    """A zero tensor of shape ``input_sizes`` (contiguous, dtype of ``grad``) with ``grad``
    written onto its diagonal ``(offset, dim1, dim2)``: the gradient of :func:`diagonal`.
    ``grad`` must have the shape of that diagonal. Differentiable (its gradient is
    :func:`diagonal` of the incoming gradient).
    """
    return _ops.diagonal_backward.default(grad, list(input_sizes), offset, dim1, dim2)


__all__ += ["diagonal", "diagonal_backward"]

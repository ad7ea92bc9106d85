"""Fake (meta) kernels: output shape, dtype and strides without computing anything, so every
op works under torch.compile, torch.export and FakeTensor. The torch._check calls repeat the
C++ input checks."""
import torch
from torch.library import register_fake

from ._table import DTYPES, EW_OPS

# ---- nonzero family -------------------------------------------------------------------------

_NONZERO_DTYPES = (
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
)
_NONZERO_CUDA_MAX_RANK = 64


def _nonzero_checks(self, op):
    torch._check_not_implemented(
        self.dtype in _NONZERO_DTYPES or self.dtype.is_complex,
        lambda: f"myops.{op}: argument 'self' must have dtype in {{bool, uint8, int8, int16, int32, "
        f"int64, float16, bfloat16, float32, float64}}, got {self.dtype}",
    )
    if self.device.type == "cuda":
        torch._check(
            self.dim() <= _NONZERO_CUDA_MAX_RANK,
            lambda: f"myops.{op}: argument 'self' must have at most {_NONZERO_CUDA_MAX_RANK} dims "
            f"on CUDA, got {self.dim()}",
        )


@register_fake("myops::nonzero")
def _nonzero_fake(self):
    _nonzero_checks(self, "nonzero")
    numel = self.numel()
    if isinstance(numel, int) and numel == 0:
        nnz = 0
    else:
        ctx = torch.library.get_ctx()
        nnz = ctx.new_dynamic_size(max=numel if isinstance(numel, int) else None)
    # [nnz, ndim] with strides (1, nnz): a column-major buffer, as the CPU and CUDA kernels
    # (and torch) return it.
    return self.new_empty_strided((nnz, self.dim()), (1, nnz), dtype=torch.int64)


@register_fake("myops::nonzero_static")
def _nonzero_static_fake(self, *, size, fill_value=-1):
    _nonzero_checks(self, "nonzero_static")
    torch._check(size >= 0, lambda: f"myops.nonzero_static: argument 'size' must be >= 0, got {size}")
    if self.device.type == "cuda":
        # CUDA: the transpose of a contiguous [ndim, size] buffer
        return self.new_empty((self.dim(), size), dtype=torch.int64).t()
    return self.new_empty((size, self.dim()), dtype=torch.int64)


# ---- bounded selection and nms: static shapes, no unbacked symbols ---------------------------


def _check_size(size, op):
    torch._check(size >= 0, lambda: f"myops.{op}: argument 'size' must be >= 0, got {size}")


@register_fake("myops::nonzero_bounded")
def _nonzero_bounded_fake(self, *, size, fill_value=-1):
    _nonzero_checks(self, "nonzero_bounded")
    _check_size(size, "nonzero_bounded")
    if self.device.type == "cuda":
        indices = self.new_empty((self.dim(), size), dtype=torch.int64).t()
    else:
        indices = self.new_empty((size, self.dim()), dtype=torch.int64)
    return indices, self.new_empty((), dtype=torch.int64)


_NMS_DTYPES = {"cpu": (torch.float32, torch.float64), "cuda": (torch.float16, torch.float32, torch.float64)}


def _nms_checks(boxes, scores, op, idxs=None):
    torch._check(boxes.dim() == 2, lambda: f"myops.{op}: argument 'boxes' must be a 2-D [N, 4] tensor, got {boxes.dim()}-D")
    torch._check(boxes.shape[1] == 4, lambda: f"myops.{op}: argument 'boxes' must have 4 elements in dim 1, got {boxes.shape[1]}")
    torch._check(scores.dim() == 1, lambda: f"myops.{op}: argument 'scores' must be a 1-D tensor, got {scores.dim()}-D")
    torch._check(
        boxes.shape[0] == scores.shape[0],
        lambda: f"myops.{op}: arguments 'boxes' and 'scores' must have the same number of boxes, "
        f"got {boxes.shape[0]} and {scores.shape[0]}",
    )
    torch._check(
        boxes.dtype == scores.dtype,
        lambda: f"myops.{op}: arguments 'boxes' and 'scores' must have the same dtype, got {boxes.dtype} and {scores.dtype}",
    )
    allowed = _NMS_DTYPES.get(boxes.device.type, _NMS_DTYPES["cuda"])
    torch._check(
        boxes.dtype in allowed,
        lambda: f"myops.{op}: argument 'boxes' must have dtype in {{{', '.join(str(d) for d in allowed)}}}, got {boxes.dtype}",
    )
    if idxs is not None:
        torch._check(
            idxs.dim() == 1 and idxs.shape[0] == boxes.shape[0],
            lambda: f"myops.{op}: argument 'idxs' must be a 1-D tensor of {boxes.shape[0]} class indices, "
            f"got shape {list(idxs.shape)}",
        )


def _nms_dynamic(boxes):
    n = boxes.shape[0]
    if isinstance(n, int) and n == 0:
        k = 0
    else:
        k = torch.library.get_ctx().new_dynamic_size(max=n if isinstance(n, int) else None)
    return boxes.new_empty((k,), dtype=torch.int64)


@register_fake("myops::nms")
def _nms_fake(boxes, scores, iou_threshold):
    _nms_checks(boxes, scores, "nms")
    return _nms_dynamic(boxes)


@register_fake("myops::batched_nms")
def _batched_nms_fake(boxes, scores, idxs, iou_threshold):
    _nms_checks(boxes, scores, "batched_nms", idxs)
    return _nms_dynamic(boxes)


@register_fake("myops::nms_static")
def _nms_static_fake(boxes, scores, iou_threshold, *, size):
    _nms_checks(boxes, scores, "nms_static")
    _check_size(size, "nms_static")
    return boxes.new_empty((size,), dtype=torch.int64), boxes.new_empty((), dtype=torch.int64)


@register_fake("myops::batched_nms_static")
def _batched_nms_static_fake(boxes, scores, idxs, iou_threshold, *, size):
    _nms_checks(boxes, scores, "batched_nms_static", idxs)
    _check_size(size, "batched_nms_static")
    return boxes.new_empty((size,), dtype=torch.int64), boxes.new_empty((), dtype=torch.int64)


@register_fake("myops::multiclass_nms_static")
def _multiclass_nms_static_fake(boxes, scores, *, score_threshold, iou_threshold, max_detections,
                                pre_nms_top_k=None, class_agnostic=False, multi_label=True):
    op = "myops.multiclass_nms_static"
    torch._check(scores.dim() == 3, lambda: f"{op}: argument 'scores' must be a 3-D [N, A, C] tensor, got {scores.dim()}-D")
    torch._check(boxes.dim() in (3, 4),
                 lambda: f"{op}: argument 'boxes' must be a 3-D [N, A, 4] or 4-D [N, A, C, 4] tensor, got {boxes.dim()}-D")
    torch._check(boxes.shape[-1] == 4, lambda: f"{op}: argument 'boxes' must have 4 elements in its last dim, got {boxes.shape[-1]}")
    n_a_c = 3 if boxes.dim() == 4 else 2
    torch._check(list(boxes.shape[:n_a_c]) == list(scores.shape[:n_a_c]),
                 lambda: f"{op}: arguments 'boxes' {list(boxes.shape)} and 'scores' {list(scores.shape)} must agree in "
                 f"N, A{' and C' if n_a_c == 3 else ''} (boxes [N, A, 4] or [N, A, C, 4], scores [N, A, C])")
    torch._check(boxes.dtype == scores.dtype,
                 lambda: f"{op}: arguments 'boxes' and 'scores' must have the same dtype, got {boxes.dtype} and {scores.dtype}")
    allowed = _NMS_DTYPES.get(boxes.device.type, _NMS_DTYPES["cuda"])
    torch._check(boxes.dtype in allowed,
                 lambda: f"{op}: argument 'boxes' must have dtype in {{{', '.join(str(d) for d in allowed)}}}, got {boxes.dtype}")
    torch._check(max_detections >= 0, lambda: f"{op}: argument 'max_detections' must be >= 0, got {max_detections}")
    torch._check(pre_nms_top_k is None or pre_nms_top_k >= 0,
                 lambda: f"{op}: argument 'pre_nms_top_k' must be >= 0 or None, got {pre_nms_top_k}")
    n, k = scores.shape[0], max_detections
    return (boxes.new_empty((n,), dtype=torch.int64), boxes.new_empty((n, k, 4)), boxes.new_empty((n, k)),
            boxes.new_empty((n, k), dtype=torch.int64), boxes.new_empty((n, k), dtype=torch.int64))


# ---- roi_align_levels ------------------------------------------------------------------------

_ROI_ALIGN_MAX_LEVELS = 8  # kMaxLevels in csrc/common/roi_align_common.h


@register_fake("myops::roi_align_levels")
def _roi_align_levels_fake(features, rois, levels, spatial_scale, pooled_height, pooled_width,
                           sampling_ratio=-1, aligned=False):
    op = "myops.roi_align_levels"
    n = len(features)
    torch._check_value(1 <= n <= _ROI_ALIGN_MAX_LEVELS,
                       lambda: f"{op}: argument 'features' must hold 1 to {_ROI_ALIGN_MAX_LEVELS} feature maps, got {n}")
    torch._check_value(len(spatial_scale) == n,
                       lambda: f"{op}: argument 'spatial_scale' must have one scale per feature map ({n}), "
                       f"got {len(spatial_scale)}")
    torch._check_value(pooled_height >= 0 and pooled_width >= 0,
                       lambda: f"{op}: arguments 'pooled_height' and 'pooled_width' must be >= 0, got "
                       f"{pooled_height} and {pooled_width}")
    f0 = features[0]
    for lvl, f in enumerate(features):
        torch._check_value(f.dim() == 4, lambda: f"{op}: argument 'features' must hold 4-D [N, C, H, W] "
                           f"tensors, got {f.dim()}-D at level {lvl}")
        torch._check_value(f.shape[:2] == f0.shape[:2], lambda: f"{op}: the feature maps must have the same "
                           f"N and C, got {list(f0.shape)} at level 0 and {list(f.shape)} at level {lvl}")
        torch._check(f.dtype == f0.dtype, lambda: f"{op}: the feature maps must have one dtype, got "
                     f"{f0.dtype} at level 0 and {f.dtype} at level {lvl}")
    _ew_dtype(f0, (torch.float16, torch.float32, torch.float64), "roi_align_levels", "features")
    torch._check_value(rois.dim() == 2 and rois.shape[1] == 5, lambda: f"{op}: argument 'rois' must be a "
                       f"[K, 5] tensor (batch index, x1, y1, x2, y2), got shape {list(rois.shape)}")
    torch._check(rois.dtype == f0.dtype, lambda: f"{op}: argument 'rois' must have the features' dtype "
                 f"{f0.dtype}, got {rois.dtype}")
    torch._check_value(levels.dim() == 1 and levels.shape[0] == rois.shape[0], lambda: f"{op}: argument "
                       f"'levels' must be a 1-D tensor of {rois.shape[0]} levels (one per RoI), got shape "
                       f"{list(levels.shape)}")
    torch._check(levels.dtype == torch.int64, lambda: f"{op}: argument 'levels' must have dtype int64, got "
                 f"{levels.dtype}")
    _ew_device("roi_align_levels", list(features) + [rois, levels],
               [f"features[{i}]" for i in range(n)] + ["rois", "levels"])
    return f0.new_empty((rois.shape[0], f0.shape[1], pooled_height, pooled_width))


# ---- heatmaps_to_keypoints / paste_masks (common/detection_decode.h) -------------------------

def _decode_count(op, count, dim, ref, ref_name):
    torch._check(count.dtype == torch.int64, lambda: f"myops.{op}: argument 'count' must have dtype int64, got "
                 f"{count.dtype}")
    torch._check_value(count.dim() == dim, lambda: f"myops.{op}: argument 'count' must be a {dim}-D tensor, got "
                       f"shape {list(count.shape)}")
    torch._check(count.device == ref.device, lambda: f"myops.{op}: expected all tensors on the same device, got "
                 f"'{ref_name}' on {ref.device} and 'count' on {count.device}")


@register_fake("myops::heatmaps_to_keypoints")
def _heatmaps_to_keypoints_fake(maps, rois, count):
    op = "heatmaps_to_keypoints"
    torch._check_value(maps.dim() == 4, lambda: f"myops.{op}: argument 'maps' must be a 4-D [R, K, H, W] tensor, "
                       f"got shape {list(maps.shape)}")
    _ew_dtype(maps, (torch.float32, torch.float64), op, "maps")
    torch._check_value(rois.dim() == 2 and rois.shape[0] == maps.shape[0] and rois.shape[1] == 4,
                       lambda: f"myops.{op}: argument 'rois' must be a [{maps.shape[0]}, 4] tensor (maps' R), got "
                       f"shape {list(rois.shape)}")
    torch._check(rois.dtype == maps.dtype, lambda: f"myops.{op}: argument 'rois' must have the dtype of 'maps' "
                 f"({maps.dtype}), got {rois.dtype}")
    _ew_device(op, [maps, rois], ["maps", "rois"])
    _decode_count(op, count, 0, maps, "maps")
    r, k = maps.shape[:2]
    return maps.new_empty((r, k, 3), dtype=torch.float32), maps.new_empty((r, k), dtype=torch.float32)


@register_fake("myops::paste_masks")
def _paste_masks_fake(masks, boxes, count, image_size):
    op = "paste_masks"
    torch._check_value(masks.dim() == 4, lambda: f"myops.{op}: argument 'masks' must be a 4-D [N, D, S, S] tensor, "
                       f"got shape {list(masks.shape)}")
    _ew_dtype(masks, (torch.float32, torch.float64), op, "masks")
    n, d = masks.shape[:2]
    torch._check_value(boxes.dim() == 3 and boxes.shape[0] == n and boxes.shape[1] == d and boxes.shape[2] == 4,
                       lambda: f"myops.{op}: argument 'boxes' must be a [{n}, {d}, 4] tensor, got shape "
                       f"{list(boxes.shape)}")
    torch._check(boxes.dtype == torch.int64, lambda: f"myops.{op}: argument 'boxes' must have dtype int64, got "
                 f"{boxes.dtype}")
    _ew_device(op, [masks, boxes], ["masks", "boxes"])
    _decode_count(op, count, 1, masks, "masks")
    torch._check_value(count.shape[0] == n, lambda: f"myops.{op}: argument 'count' must have {n} elements (one per "
                       f"image), got {count.shape[0]}")
    torch._check_value(len(image_size) == 2 * n, lambda: f"myops.{op}: argument 'image_size' must hold (height, "
                       f"width) for each of the {n} images, got {len(image_size)} values")
    torch._check_value(all(v >= 0 for v in image_size), lambda: f"myops.{op}: argument 'image_size' must be >= 0, "
                       f"got {list(image_size)}")
    h = max(image_size[0::2], default=0)
    w = max(image_size[1::2], default=0)
    return masks.new_empty((n, d, h, w))


# ---- linear_bounded / conv_bounded (common/bounded_layers.h) --------------------------------

def _bounded(op, input, count, dims_ok, expected, layer):
    """The ops' own checks, then the layer's (torch's, on the fake input): a contiguous result
    of the layer's shape."""
    torch._check_value(dims_ok, lambda: f"myops.{op}: argument 'input' must be {expected}, got shape "
                       f"{list(input.shape)}")
    torch._check_value(count.dim() == 0, lambda: f"myops.{op}: argument 'count' must be a 0-d tensor (the number "
                       f"of real rows), got shape {list(count.shape)}")
    torch._check(count.dtype == torch.int64, lambda: f"myops.{op}: argument 'count' must have dtype int64, got "
                 f"{count.dtype}")
    torch._check(count.device == input.device, lambda: f"myops.{op}: expected all tensors on the same device, got "
                 f"'input' on {input.device} and 'count' on {count.device}")
    out = layer()
    return out.new_empty(out.shape)


@register_fake("myops::linear_bounded")
def _linear_bounded_fake(input, weight, bias, count):
    return _bounded("linear_bounded", input, count, input.dim() == 2, "a 2-D [R, K] tensor (rows, features)",
                    lambda: torch.nn.functional.linear(input, weight, bias))


@register_fake("myops::conv_bounded")
def _conv_bounded_fake(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, count):
    return _bounded("conv_bounded", input, count, input.dim() >= 3, "a batched [R, C, *spatial] tensor (rows first)",
                    lambda: torch.ops.aten.convolution.default(input, weight, bias, stride, padding, dilation,
                                                               transposed, output_padding, groups))


# ---- elementwise ----------------------------------------------------------------------------

# The op table (csrc/include/myops/op_table.h): the dtype sets, and the ops whose fake kernel is
# generic (_register_generic_fakes, at the end of this section)
_EW_ALL = DTYPES["All"]
_EW_CUSTOM = set()  # the ops with a fake kernel of their own (below)


def _ew_fake(qualname):
    _EW_CUSTOM.add(qualname)
    return register_fake("myops::" + qualname)


def _ew_dtype(t, allowed, op, arg, not_implemented=True):
    # NotImplementedError as the C++ check (common/checks.h), RuntimeError for where's condition
    (torch._check_not_implemented if not_implemented else torch._check)(
        t.dtype in allowed,
        lambda: f"myops.{op}: argument '{arg}' must have dtype in {{{', '.join(str(d) for d in allowed)}}}, "
        f"got {t.dtype}",
    )


def _ew_device(op, ts, names):
    # a 0-d CPU tensor may accompany tensors on another device (as in the C++ kernels)
    main = [(t, n) for t, n in zip(ts, names) if not (t.dim() == 0 and t.device.type == "cpu")]
    if not main:
        return ts[0].device
    t0, n0 = main[0]
    for t, n in main[1:]:
        torch._check(
            t.device == t0.device,
            lambda: f"myops.{op}: expected all tensors on the same device, got '{n0}' on {t0.device} "
            f"and '{n}' on {t.device}",
        )
    return t0.device


def _ew_broadcast(op, ts, names):
    nd = max(t.dim() for t in ts)
    out = [1] * nd
    for t in ts:
        off = nd - t.dim()
        for i, b in enumerate(t.shape):
            a = out[off + i]
            if b == 1:
                continue
            if a == 1:
                out[off + i] = b
                continue
            got = ", ".join(f"'{n}' {list(x.shape)}" for x, n in zip(ts, names))
            torch._check(a == b, lambda: f"myops.{op}: shapes do not broadcast: {got}")
    return out


# The layout rules are the kernels' own (csrc/common/output_strides.h), read through control ops
# on the (symbolic) sizes and strides. torch's own rules differ: FakeTensor's empty_like follows
# torch._prims_common's, which orders size-1 and empty dims otherwise.
def _ew_preserve_strides(t):
    """Strides of ``t.to(other_dtype)`` (memory_format=preserve), as the kernels give them."""
    return torch.ops.myops._ew_preserve_strides(t.shape, t.stride())


def _ew_out_strides(shape, ops):
    """The output strides the kernels give (TensorIterator's rule) for inputs broadcast to
    `shape`; `ops` is a list of (sizes, strides) of the inputs."""
    return torch.ops.myops._ew_out_strides(
        shape, [s for sizes, _ in ops for s in sizes], [s for _, st in ops for s in st], [len(sz) for sz, _ in ops])


def _ew_result_type(*ts):
    """at::result_type over tensors: dimensioned operands outrank 0-d ones of the same category."""
    dim = zero = None
    for t in ts:
        if t.dim() == 0:
            zero = t.dtype if zero is None else torch.promote_types(zero, t.dtype)
        else:
            dim = t.dtype if dim is None else torch.promote_types(dim, t.dtype)
    if dim is None:
        return zero
    if zero is None:
        return dim
    if dim.is_floating_point:
        return dim
    if dim == torch.bool or zero.is_floating_point:
        return torch.promote_types(dim, zero)
    return dim


def _ew_out(op, ins, in_dtypes, out_dtype, names, cast_first=None):
    device = _ew_device(op, ins, names)
    shape = _ew_broadcast(op, ins, names)
    if cast_first is None:
        cast_first = device.type == "cpu"
    ops = []
    for t, dt in zip(ins, in_dtypes):
        folded = t.device.type == "cpu" and t.numel() == 1
        if cast_first and not folded and t.dtype != dt:
            ops.append((list(t.shape), _ew_preserve_strides(t)))
        else:
            ops.append((list(t.shape), list(t.stride())))
    return torch.empty_strided(shape, _ew_out_strides(shape, ops), dtype=out_dtype, device=device)


def _ew_unary(op, self, out_dtype):
    return _ew_out(op, [self], [out_dtype], out_dtype, ["self"], cast_first=self.device.type == "cpu")


@_ew_fake("gelu")
def _gelu_fake(self, *, approximate="none"):
    _ew_dtype(self, EW_OPS["gelu"].accepted, "gelu", "self")
    torch._check(
        approximate in ("none", "tanh"),
        lambda: f"myops.gelu: argument 'approximate' must be 'none' or 'tanh', got '{approximate}'",
    )
    return _ew_unary("gelu", self, self.dtype)


@_ew_fake("cast")
def _cast_fake(self, dtype):
    _ew_dtype(self, _EW_ALL, "cast", "self")
    torch._check(dtype in _EW_ALL, lambda: f"myops.cast: argument 'dtype' must be one of {_EW_ALL}, got {dtype}")
    return torch.empty_strided(self.shape, _ew_preserve_strides(self), dtype=dtype, device=self.device)


def _ew_binary_dtype(op, self, other):
    _ew_dtype(self, _EW_ALL, op, "self")
    _ew_dtype(other, _EW_ALL, op, "other")
    return _ew_result_type(self, other)


def _ew_check_alpha(op, dt, alpha):
    torch._check(
        not isinstance(alpha, bool) or dt == torch.bool,
        lambda: f"myops.{op}: argument 'alpha' may be a bool only for a bool result, got result dtype {dt}",
    )
    torch._check(
        dt.is_floating_point or not isinstance(alpha, float),
        lambda: f"myops.{op}: argument 'alpha' must not be a floating point number for integral inputs "
        f"(result dtype {dt}), got {alpha}",
    )


def _ew_binary(op, self, other, dt):
    return _ew_out(op, [self, other], [dt, dt], dt, ["self", "other"])


@_ew_fake("add")
def _add_fake(self, other, *, alpha=1):
    dt = _ew_binary_dtype("add", self, other)
    _ew_check_alpha("add", dt, alpha)
    return _ew_binary("add", self, other, dt)


@_ew_fake("sub")
def _sub_fake(self, other, *, alpha=1):
    dt = _ew_binary_dtype("sub", self, other)
    torch._check(
        self.dtype != torch.bool and other.dtype != torch.bool,
        lambda: f"myops.sub: arguments 'self' and 'other' must not be bool tensors (use logical_xor / "
        f"logical_not), got {self.dtype} and {other.dtype}",
    )
    _ew_check_alpha("sub", dt, alpha)
    return _ew_binary("sub", self, other, dt)


def _ew_not_complex(op, self, other):
    torch._check(
        not self.dtype.is_complex and not other.dtype.is_complex,
        lambda: f"myops.{op}: not implemented for complex tensors (arguments 'self' and 'other'), got "
        f"{self.dtype} and {other.dtype}",
    )


@_ew_fake("maximum")
def _maximum_fake(self, other):
    _ew_not_complex("maximum", self, other)
    return _ew_binary("maximum", self, other, _ew_binary_dtype("maximum", self, other))


@_ew_fake("minimum")
def _minimum_fake(self, other):
    _ew_not_complex("minimum", self, other)
    return _ew_binary("minimum", self, other, _ew_binary_dtype("minimum", self, other))


@_ew_fake("where")
def _where_fake(condition, self, other):
    _ew_dtype(condition, (torch.bool, torch.uint8), "where", "condition", not_implemented=False)
    _ew_dtype(self, _EW_ALL, "where", "self")
    _ew_dtype(other, _EW_ALL, "where", "other")
    dt = _ew_result_type(self, other)
    return _ew_out(
        "where", [condition, self, other], [torch.bool, dt, dt], dt, ["condition", "self", "other"], cast_first=True
    )


def _ew_ternary(op, a, b, c, names):
    for t, n in zip((a, b, c), names):
        _ew_dtype(t, _EW_ALL, op, n)
    dt = _ew_result_type(a, b, c)
    if dt == torch.bool:
        raise NotImplementedError(f"myops.{op}: not implemented for a bool result")
    return _ew_out(op, [a, b, c], [dt, dt, dt], dt, names)


@_ew_fake("addcmul")
def _addcmul_fake(self, tensor1, tensor2, *, value=1):
    return _ew_ternary("addcmul", self, tensor1, tensor2, ["self", "tensor1", "tensor2"])


@_ew_fake("clamp")
def _clamp_fake(self, min, max):
    return _ew_ternary("clamp", self, min, max, ["self", "min", "max"])


@_ew_fake("clamp.Scalar")
def _clamp_scalar_fake(self, min=None, max=None):
    # common/elementwise_ops.h: the numbers (a missing one +-inf or the integer limit) become
    # 0-d CPU tensors of the result dtype
    if min is None and max is None:
        raise RuntimeError("myops.clamp: at least one of 'min' and 'max' must not be None")
    dt = self.dtype
    for v in (min, max):
        if v is not None and not dt.is_floating_point:  # a floating self keeps its dtype
            dt = torch.result_type(torch.empty((), dtype=dt, device="meta"), v)
    w = torch.empty((), dtype=dt)
    return _ew_ternary("clamp", self, w, w, ["self", "min", "max"])


def _generic_unary_fake(op):
    # rule Same: the operand's dtype, one of the kernel's; IntToFloat: any dtype, an integral
    # one giving the default float dtype
    def fake(self):
        _ew_dtype(self, op.accepted, op.fn, "self")
        same = op.rule == "Same" or self.dtype.is_floating_point
        return _ew_unary(op.fn, self, self.dtype if same else torch.get_default_dtype())
    return fake


def _generic_binary_fake(op):
    # rule Promote: torch.result_type; PromoteIntToFloat: an integral result is the default float
    def fake(self, other):
        _ew_dtype(self, op.accepted, op.fn, "self")
        _ew_dtype(other, op.accepted, op.fn, "other")
        dt = _ew_result_type(self, other)
        if op.rule == "PromoteIntToFloat" and not dt.is_floating_point:
            dt = torch.get_default_dtype()
        return _ew_binary(op.fn, self, other, dt)
    return fake


def _ew_number_dtype(op, t, tname, number, nname, allowed=_EW_ALL):
    # common/elementwise_ops.h, number_dtype: at::result_type(tensor, number), a real number
    _ew_dtype(t, allowed, op, tname)
    torch._check_not_implemented(
        not isinstance(number, complex),
        lambda: f"myops.{op}: argument '{nname}' must be a real number (no complex results), got {number}")
    return torch.result_type(t, number)


def _ew_with_number(op, t, number, number_first, dt):
    # the number is a 0-d CPU operand (folded into the kernel), first or second as in the call
    w = torch.empty((), dtype=torch.float64 if isinstance(number, float) else torch.int64)
    ins, names = ([w, t], ["self", "other"]) if number_first else ([t, w], ["self", "other"])
    return _ew_out(op, ins, [dt, dt], dt, names)


def _generic_number_fake(op, number_first, alpha):
    # rule PromoteNumber: at::result_type(tensor, number); PromoteNumberIntToFloat: an integral
    # result is the default float dtype; sub refuses bool operands; alpha checked as add's
    def compute(t, number, alpha_v):
        if op.name == "sub":
            torch._check_not_implemented(
                t.dtype != torch.bool and not isinstance(number, bool),
                lambda: "myops.sub: arguments 'self' and 'other' must not be bool")
        names = ("other", "self") if number_first else ("self", "other")
        dt = _ew_number_dtype(op.name, t, names[0], number, names[1], op.accepted)
        if alpha:
            _ew_check_alpha(op.name, dt, alpha_v)
        if op.rule == "PromoteNumberIntToFloat" and not dt.is_floating_point:
            dt = torch.get_default_dtype()
        return _ew_with_number(op.name, t, number, number_first, dt)

    if number_first and alpha:
        return lambda self, other, *, alpha=1: compute(other, self, alpha)
    if number_first:
        return lambda self, other: compute(other, self, 1)
    if alpha:
        return lambda self, other, alpha=1: compute(self, other, alpha)
    return lambda self, other: compute(self, other, 1)


def _where_number_fake(number_first):
    def fake(condition, a, b):
        t, number = (b, a) if number_first else (a, b)
        _ew_dtype(condition, (torch.bool, torch.uint8), "where", "condition", not_implemented=False)
        dt = _ew_number_dtype("where", t, "other" if number_first else "self", number,
                              "self" if number_first else "other")
        w = torch.empty((), dtype=dt)
        ins = [condition, w, t] if number_first else [condition, t, w]
        return _ew_out("where", ins, [torch.bool, dt, dt], dt, ["condition", "self", "other"], cast_first=True)
    return fake


_ew_fake("where.ScalarSelf")(_where_number_fake(True))
_ew_fake("where.ScalarOther")(_where_number_fake(False))


@_ew_fake("where.Scalar")
def _where_scalar_fake(condition, self, other):
    _ew_dtype(condition, (torch.bool, torch.uint8), "where", "condition", not_implemented=False)
    torch._check_not_implemented(not isinstance(self, complex) and not isinstance(other, complex),
                                 lambda: "myops.where: arguments 'self' and 'other' must be real numbers")
    dt = torch.result_type(self, other)
    w = torch.empty((), dtype=dt)
    return _ew_out("where", [condition, w, w], [torch.bool, dt, dt], dt, ["condition", "self", "other"],
                   cast_first=True)


_GENERIC_FAKES = {
    "unary": _generic_unary_fake,
    "binary": _generic_binary_fake,
    "scalar": lambda op: _generic_number_fake(op, False, False),
    "scalar_alpha": lambda op: _generic_number_fake(op, False, True),
    "rscalar": lambda op: _generic_number_fake(op, True, False),
    "rscalar_alpha": lambda op: _generic_number_fake(op, True, True),
}


def _register_generic_fakes():
    for op in EW_OPS.values():
        if op.qualname in _EW_CUSTOM:
            continue
        if op.sig not in _GENERIC_FAKES:
            raise RuntimeError(f"myops: the op table's {op.qualname} needs a fake kernel of its own (signature {op.sig})")
        register_fake("myops::" + op.qualname)(_GENERIC_FAKES[op.sig](op))


_register_generic_fakes()


# ---- max_pool2d_add -------------------------------------------------------------------------

_POOL_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _pool_pair_arg(v, name, op, empty=None):
    v = list(v)
    if not v and empty is not None:
        return empty
    torch._check(
        len(v) in (1, 2),
        lambda: f"myops.{op}: argument '{name}' must be a single int or a list of two ints, got {v}",
    )
    return [v[0], v[-1]]


def _pooled_size(n, k, p, s, ceil_mode):
    # torch's pooling_output_shape with dilation 1 (// is floor division, like div_rtn)
    out = (n + 2 * p - (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool2d_meta(self, kernel_size, stride, padding, ceil_mode, op):
    """Repeats the C++ checks (csrc/common/max_pool2d_add_shape.h); returns (pooled sizes,
    memory format)."""
    torch._check_not_implemented(
        self.dtype in _POOL_FLOATS,
        lambda: f"myops.{op}: argument 'self' must have dtype in {{Float, Double, Half, BFloat16}}, got {self.dtype}",
    )
    torch._check(
        self.dim() in (3, 4),
        lambda: f"myops.{op}: argument 'self' must be a 3-D [C, H, W] or 4-D [N, C, H, W] tensor, got {self.dim()}-D",
    )
    k = _pool_pair_arg(kernel_size, "kernel_size", op)
    s = _pool_pair_arg(stride, "stride", op, empty=k)
    p = _pool_pair_arg(padding, "padding", op)
    for name, v in (("kernel_size", k), ("stride", s), ("padding", p)):
        for x in v:
            torch._check(
                -(2**31) <= x < 2**31,
                lambda: f"myops.{op}: argument '{name}' value {x} cannot be converted to type int without overflow",
            )
    torch._check(k[0] > 0 and k[1] > 0, lambda: f"myops.{op}: argument 'kernel_size' must be positive, got {k}")
    torch._check(s[0] > 0 and s[1] > 0, lambda: f"myops.{op}: argument 'stride' must be positive, got {s}")
    torch._check(p[0] >= 0 and p[1] >= 0, lambda: f"myops.{op}: argument 'padding' must be non-negative, got {p}")
    torch._check(
        p[0] <= k[0] // 2 and p[1] <= k[1] // 2,
        lambda: f"myops.{op}: argument 'padding' must be at most half of kernel_size, got padding {p} for kernel_size {k}",
    )
    C, H, W = self.shape[-3:]
    torch._check(
        C > 0 and H > 0 and W > 0,
        lambda: f"myops.{op}: argument 'self' must have non-zero C, H and W (only the batch dim may be 0), got shape {tuple(self.shape)}",
    )
    Ho = _pooled_size(H, k[0], p[0], s[0], ceil_mode)
    Wo = _pooled_size(W, k[1], p[1], s[1], ceil_mode)
    torch._check(
        Ho >= 1 and Wo >= 1,
        lambda: f"myops.{op}: argument 'self' gives a pooled output of [{Ho}, {Wo}]: the pooled output must be at least 1 x 1",
    )
    sizes = list(self.shape[:-2]) + [Ho, Wo]
    fmt = torch.contiguous_format
    if self.dim() == 4 and torch._prims_common.suggest_memory_format(self) == torch.channels_last:
        fmt = torch.channels_last
    return sizes, fmt


@register_fake("myops::max_pool2d_add")
def _max_pool2d_add_fake(self, other, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=False):
    op = "max_pool2d_add"
    torch._check(
        self.device == other.device,
        lambda: f"myops.{op}: expected all tensors on the same device, got 'self' on {self.device} and 'other' on {other.device}",
    )
    sizes, fmt = _pool2d_meta(self, kernel_size, stride, padding, ceil_mode, op)
    torch._check_not_implemented(
        other.dtype in _POOL_FLOATS or not (other.dtype.is_floating_point or other.dtype.is_complex),
        lambda: f"myops.{op}: argument 'other' must have dtype in {{Bool, Byte, Char, Short, Int, Long, Float, "
        f"Double, Half, BFloat16}}, got {other.dtype}",
    )
    ok = other.dim() <= len(sizes) and all(
        other.shape[-i] == 1 or other.shape[-i] == sizes[-i] for i in range(1, other.dim() + 1)
    )
    torch._check(
        ok,
        lambda: f"myops.{op}: argument 'other' of shape {list(other.shape)} must broadcast to the pooled shape {sizes}",
    )
    dtype = torch.result_type(self, other)
    return torch.empty(sizes, dtype=dtype, device=self.device, memory_format=fmt)


@register_fake("myops::max_pool2d_add_backward")
def _max_pool2d_add_backward_fake(grad_output, self, kernel_size, stride, padding, ceil_mode):
    op = "max_pool2d_add_backward"
    torch._check(
        self.device == grad_output.device,
        lambda: f"myops.{op}: expected all tensors on the same device, got 'self' on {self.device} and 'grad_output' on {grad_output.device}",
    )
    sizes, fmt = _pool2d_meta(self, kernel_size, stride, padding, ceil_mode, op)
    torch._check_not_implemented(
        grad_output.dtype in _POOL_FLOATS,
        lambda: f"myops.{op}: argument 'grad_output' must have dtype in {{Float, Double, Half, BFloat16}}, got {grad_output.dtype}",
    )
    torch._check(
        list(grad_output.shape) == sizes,
        lambda: f"myops.{op}: argument 'grad_output' must have the pooled shape {sizes}, got {list(grad_output.shape)}",
    )
    return torch.empty(self.shape, dtype=self.dtype, device=self.device, memory_format=fmt)


# ---- diagonal -------------------------------------------------------------------------------

def _diagonal_shape(sizes, offset, dim1, dim2, op, tensor_arg):
    """Output shape of the diagonal; repeats the checks of csrc/common/diagonal_shape.h."""
    ndim = len(sizes)
    if ndim < 2:  # torch's error types (see csrc/common/diagonal_shape.h)
        n = max(ndim, 1)
        torch._check(
            not all(-n <= d < n for d in (dim1, dim2)),
            lambda: f"myops.{op}: argument 'dim2' must refer to a different dim than 'dim1', got dim1={dim1} "
            f"and dim2={dim2}",
        )
        torch._check_index(
            False, lambda: f"myops.{op}: argument '{tensor_arg}' must have at least 2 dims, got a {ndim}-D tensor"
        )
    wrapped = []
    for name, d in (("dim1", dim1), ("dim2", dim2)):
        torch._check_index(
            -ndim <= d < ndim,
            lambda: f"myops.{op}: argument '{name}' must be in the range [{-ndim}, {ndim - 1}] "
            f"for a {ndim}-D tensor, got {d}",
        )
        wrapped.append(d % ndim)
    d1, d2 = wrapped
    torch._check(
        d1 != d2,
        lambda: f"myops.{op}: argument 'dim2' must refer to a different dim than 'dim1', "
        f"got dim1={dim1} and dim2={dim2}",
    )
    if offset >= 0:
        n = torch.sym_max(torch.sym_min(sizes[d1], sizes[d2] - offset), 0)
    else:
        n = torch.sym_max(torch.sym_min(sizes[d1] + offset, sizes[d2]), 0)
    return [s for i, s in enumerate(sizes) if i != d1 and i != d2] + [n]


@register_fake("myops::diagonal")
def _diagonal_fake(self, offset=0, dim1=0, dim2=1):
    return self.new_empty(_diagonal_shape(list(self.shape), offset, dim1, dim2, "diagonal", "self"))


@register_fake("myops::diagonal_backward")
def _diagonal_backward_fake(grad, input_sizes, offset, dim1, dim2):
    for s in input_sizes:
        torch._check(
            s >= 0,
            lambda: f"myops.diagonal_backward: argument 'input_sizes' must be non-negative, got {input_sizes}",
        )
    shape = _diagonal_shape(list(input_sizes), offset, dim1, dim2, "diagonal_backward", "input_sizes")
    torch._check(
        grad.dim() == len(shape) and all(g == s for g, s in zip(grad.shape, shape)),
        lambda: f"myops.diagonal_backward: argument 'grad' must have the shape of the diagonal "
        f"{list(shape)}, got {list(grad.shape)}",
    )
    return grad.new_empty(list(input_sizes))

"""ONNX forms of the myops ops: export a model that calls them with ``torch.onnx.export``'s
exporter (``dynamo=True``) to a ``.onnx`` file of standard ONNX ops (the default domain, opset
:data:`OPSET`) that runs in a plain ONNX Runtime, with no myops installed.

``myops.onnx.export(module, args, path)`` is the one call; :data:`TRANSLATIONS` (or
:func:`translation_table`) is the table for a caller of ``torch.onnx.export`` itself, passed as
its ``custom_translation_table``. Each op's ONNX form, and where it differs from the op, is in the
op reference (``docs/ops``). An op or argument with no ONNX form is refused at export
(:class:`UnsupportedError`, naming the op and the argument).

Besides the myops ops, the table holds forms of the aten ops that the static detectors meet and
onnxscript's own table leaves out or translates otherwise: ``aten.amax`` over every dimension,
``aten.sort.stable`` (``TopK``, whose ties keep the lower index first, as a stable sort),
``aten.squeeze.dims`` and ``aten._assert_tensor_metadata`` (a check at export, nothing at run
time).

Requires the ``onnx``, ``onnxscript`` and ``onnxruntime`` packages (imported here, not by
``import myops``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import onnx_ir as ir
import torch
from onnxscript import opset18 as _opset18

# the ops are called on symbolic values under the exporter's recorder (typed loosely here)
op: Any = _opset18

__all__ = ["OPSET", "TRANSLATIONS", "UnsupportedError", "export", "translation_table"]

#: The ONNX opset of every exported model (the default domain only).
OPSET = 18

# torchvision.ops.batched_nms's path limit on the CPU: the exported model follows the CPU's rule
_VANILLA_ABOVE = int(torch.ops.myops._batched_nms_vanilla_above(torch.device("cpu")))


class UnsupportedError(ValueError):
    """An op or argument that has no ONNX form here (raised at export)."""


def _refuse(opname: str, argument: str, why: str):
    raise UnsupportedError(f"myops.onnx: {opname}: {argument}: no ONNX form for {why}")


# ---------------------------------------------------------------------------------------------
# small helpers (run under the exporter's recorder: the tensors are symbolic, shapes static)
# ---------------------------------------------------------------------------------------------

_NP = {
    ir.DataType.FLOAT: np.float32,
    ir.DataType.DOUBLE: np.float64,
    ir.DataType.FLOAT16: np.float16,
    ir.DataType.INT64: np.int64,
    ir.DataType.INT32: np.int32,
    ir.DataType.INT16: np.int16,
    ir.DataType.INT8: np.int8,
    ir.DataType.UINT8: np.uint8,
    ir.DataType.BOOL: np.bool_,
}


def _dtype(x) -> ir.DataType:
    return x.dtype


def _const(value, dtype: ir.DataType):
    """A constant of ``dtype`` (a scalar, or a list for a 1-d constant)."""
    if dtype == ir.DataType.BFLOAT16:
        return op.Cast(op.Constant(value=ir.tensor(np.asarray(value, np.float32))), to=dtype)
    return op.Constant(value=ir.tensor(np.asarray(value, _NP[dtype])))


def _i64(value):
    return _const(value, ir.DataType.INT64)


def _shape(x) -> List[int]:
    """``x``'s static shape (export takes static shapes: make_static's modules have them)."""
    dims = list(x.shape) if x.shape is not None else None
    if dims is None or not all(isinstance(d, int) for d in dims):
        raise UnsupportedError(f"myops.onnx: a tensor of shape {x.shape}: the ONNX forms need static shapes")
    return dims


def _rank(x) -> int:
    return len(x.shape)


def _rows_below(count, rows: int, rank: int):
    """A bool mask ``[rows, 1, ..., 1]`` (``rank`` dims): row index < ``count`` (0-d int64)."""
    mask = op.Less(op.Range(_i64(0), _i64(rows), _i64(1)), count)
    return op.Reshape(mask, _i64([rows] + [1] * (rank - 1)))


# ---------------------------------------------------------------------------------------------
# Loop bodies: built as ONNX IR graphs (a Loop's body is a graph attribute)
# ---------------------------------------------------------------------------------------------

_counter = [0]


class _Body:
    """A Loop body graph: ``inputs`` are (name, dtype, shape); ``node(...)`` adds a node and gives
    its outputs; outer values may be used directly (ONNX's outer scope)."""

    def __init__(self, inputs: Sequence[Tuple[str, ir.DataType, Optional[Sequence[Optional[int]]]]]):
        _counter[0] += 1
        self.prefix = f"myops_loop{_counter[0]}_"
        self.inputs = [
            ir.Value(
                name=self.prefix + n,
                type=ir.TensorType(t),
                shape=ir.Shape(list(s)) if s is not None else None,
            )
            for n, t, s in inputs
        ]
        self.nodes: List[ir.Node] = []
        self._n = 0

    def node(self, op_type: str, inputs: Sequence, num_outputs: int = 1, **attributes):
        outs = []
        for _ in range(num_outputs):
            self._n += 1
            outs.append(ir.Value(name=f"{self.prefix}v{self._n}"))
        attrs = [a for a in ir.convenience.convert_attributes(attributes)]
        node = ir.Node("", op_type, inputs=list(inputs), attributes=attrs, outputs=outs, version=OPSET)
        self.nodes.append(node)
        return outs[0] if num_outputs == 1 else outs

    def const(self, value, dtype: ir.DataType):
        return self.node("Constant", [], value=ir.tensor(np.asarray(value, _NP[dtype])))

    def graph(self, outputs: Sequence) -> ir.Graph:
        return ir.Graph(self.inputs, list(outputs), nodes=self.nodes, opset_imports={"": OPSET}, name=self.prefix)


def _loop(trip, cond, states: Sequence, body: ir.Graph, num_outputs: int):
    """An ONNX ``Loop`` node with ``num_outputs`` outputs (the final states, then the scan
    outputs), recorded into the graph under construction (the recorder counts one output for
    an op with variadic outputs)."""
    from onnxscript import evaluator

    recorder: Any = evaluator.default()
    outs = [ir.Value() for _ in range(num_outputs)]
    node = ir.Node(
        "", "Loop", inputs=[trip, cond, *states], attributes=[ir.AttrGraph("body", body)], outputs=outs, version=OPSET
    )
    recorder.nodes.append(node)
    return outs


# ---------------------------------------------------------------------------------------------
# NMS: torchvision's greedy sweep, its IoU arithmetic, its order
# ---------------------------------------------------------------------------------------------


def _score_order(scores, n: int):
    """The indices of a stable descending sort of ``scores [n]`` (NaN first, ties by index), as
    myops' NMS visits them. ``TopK`` keeps the lower index first among equal values (ONNX's
    rule); NaN goes first by a second, stable, pass on ``isnan``."""
    k = _i64([n])
    nan = op.IsNaN(scores)
    key = op.Where(nan, op.CastLike(_const(np.inf, ir.DataType.DOUBLE), scores), scores)
    _, first = op.TopK(key, k, axis=0, largest=1, sorted=1)
    nan_sorted = op.Cast(op.Gather(nan, first, axis=0), to=ir.DataType.INT32)
    _, second = op.TopK(nan_sorted, k, axis=0, largest=1, sorted=1)
    return op.Gather(first, second, axis=0)


def _greedy_nms(boxes, n: int, dt: ir.DataType, iou_threshold: float, classes=None, start=None):
    """The positions (int64 ``[T]``, in visiting order) that survive torchvision's greedy NMS over
    ``boxes [n, 4]`` taken in their order: a box is kept unless a kept earlier box (of the same
    class, with ``classes``) overlaps it with ``IoU > iou_threshold``, the IoU computed as
    torchvision's kernel does (``inter / (area_i + area_j - inter)`` in the boxes' dtype, the
    comparison in double). One Loop iteration per survivor."""
    x1, y1, x2, y2 = (op.Squeeze(v, _i64([1])) for v in op.Split(boxes, num_outputs=4, axis=1))
    areas = op.Mul(op.Sub(x2, x1), op.Sub(y2, y1))
    positions = op.Range(_i64(0), _i64(n), _i64(1))
    zero = _const(0, dt)
    thr = _const(float(iou_threshold), ir.DataType.DOUBLE)
    body = _Body([("iter", ir.DataType.INT64, []), ("cond", ir.DataType.BOOL, []), ("avail", ir.DataType.BOOL, [n])])
    _, _, avail = body.inputs
    i = body.node("ArgMax", [body.node("Cast", [avail], to=ir.DataType.INT32)], axis=0, keepdims=1)  # [1]
    g = [body.node("Gather", [v, i], axis=0) for v in (x1, y1, x2, y2, areas)]
    w = body.node("Max", [zero, body.node("Sub", [body.node("Min", [g[2], x2]), body.node("Max", [g[0], x1])])])
    h = body.node("Max", [zero, body.node("Sub", [body.node("Min", [g[3], y2]), body.node("Max", [g[1], y1])])])
    inter = body.node("Mul", [w, h])
    iou = body.node("Div", [inter, body.node("Sub", [body.node("Add", [g[4], areas]), inter])])
    sup = body.node("Greater", [body.node("Cast", [iou], to=ir.DataType.DOUBLE), thr])
    if classes is not None:
        sup = body.node("And", [sup, body.node("Equal", [classes, body.node("Gather", [classes, i], axis=0)])])
    sup = body.node("Or", [sup, body.node("Equal", [positions, i])])
    left = body.node("And", [avail, body.node("Not", [sup])])
    more = body.node(
        "Greater",
        [
            body.node("ReduceMax", [body.node("Cast", [left], to=ir.DataType.INT32)], keepdims=0),
            body.const(0, ir.DataType.INT32),
        ],
    )
    i_out = body.node("Identity", [i])
    graph = body.graph([more, left, i_out])
    if start is None:  # every row a candidate
        start, cond = op.Expand(_const(True, ir.DataType.BOOL), _i64([n])), _const(n > 0, ir.DataType.BOOL)
    else:  # the rows of ``start`` only
        cond = op.Greater(op.ReduceMax(op.Cast(start, to=ir.DataType.INT32), keepdims=0), _const(0, ir.DataType.INT32))
    _, kept = _loop(_i64(n), cond, [start], graph, 2)
    return op.Reshape(kept, _i64([-1]))


def _offset_boxes(boxes, idxs):
    """torchvision's coordinate trick: ``boxes + idxs * (boxes.max() + 1)`` per row."""
    top = op.ReduceMax(boxes, keepdims=0)
    offsets = op.Mul(op.CastLike(idxs, boxes), op.Add(top, op.CastLike(_const(1, ir.DataType.FLOAT), boxes)))
    return op.Add(boxes, op.Unsqueeze(offsets, _i64([1])))


def _nms_keep(boxes, scores, iou_threshold: float, idxs=None):
    """All survivors (original indices, int64 ``[T]``) of ``nms`` (``idxs`` None) or
    ``batched_nms`` (torchvision's path for these static sizes on the CPU: the coordinate trick
    up to its limit, one NMS per class above)."""
    n, dt = _shape(boxes)[0], _dtype(boxes)
    if n == 0:
        return op.Constant(value=ir.tensor(np.zeros(0, np.int64)))
    classes = None
    if idxs is not None:
        if n * 4 <= _VANILLA_ABOVE:
            boxes = _offset_boxes(boxes, idxs)
        else:
            classes = idxs
    order = _score_order(scores, n)
    sorted_boxes = op.Gather(boxes, order, axis=0)
    sorted_classes = None if classes is None else op.Gather(classes, order, axis=0)
    return op.Gather(order, _greedy_nms(sorted_boxes, n, dt, iou_threshold, sorted_classes), axis=0)


def _padded(values, dt: ir.DataType, size: int, fill, rest: Sequence[int] = ()):
    """``values [T, *rest]`` (``dt``) cut or padded (with ``fill``) to ``[size, *rest]`` along
    dim 0."""
    rest = list(rest)
    pad = op.Expand(_const(fill, dt), _i64([size] + rest))
    both = op.Concat(values, pad, axis=0)
    return op.Slice(both, _i64([0]), _i64([size]), _i64([0]))


def _count(values):
    return op.Squeeze(op.Slice(op.Shape(values), _i64([0]), _i64([1])), _i64([0]))


def myops_nms(boxes, scores, iou_threshold: float):
    return _nms_keep(boxes, scores, iou_threshold)


def myops_batched_nms(boxes, scores, idxs, iou_threshold: float):
    return _nms_keep(boxes, scores, iou_threshold, idxs)


def myops_nms_static(boxes, scores, iou_threshold: float, size: int):
    keep = _nms_keep(boxes, scores, iou_threshold)
    return _padded(keep, ir.DataType.INT64, size, -1), _count(keep)


def myops_batched_nms_static(boxes, scores, idxs, iou_threshold: float, size: int):
    keep = _nms_keep(boxes, scores, iou_threshold, idxs)
    return _padded(keep, ir.DataType.INT64, size, -1), _count(keep)


def myops_multiclass_nms_static(
    boxes,
    scores,
    score_threshold: float,
    iou_threshold: float,
    max_detections: int,
    pre_nms_top_k: Optional[int] = None,
    class_agnostic: bool = False,
    multi_label: bool = True,
):
    n, a, c = _shape(scores)
    dt = _dtype(scores)
    per_class = len(_shape(boxes)) == 4
    k = int(max_detections)
    width = a * c if multi_label else a
    m = width if pre_nms_top_k is None else min(int(pre_nms_top_k), width)
    neg = _const(-np.inf, dt)
    thr = _const(float(score_threshold), ir.DataType.DOUBLE)
    outs: List[List[Any]] = [[], [], [], [], []]
    for i in range(n):
        s = op.Gather(scores, _i64(i), axis=0)  # [A, C]
        b = op.Gather(boxes, _i64(i), axis=0)  # [A, 4] or [A, C, 4]
        if multi_label:
            flat = op.Reshape(s, _i64([a * c]))
        else:
            best = op.ArgMax(s, axis=1, keepdims=1)  # [A, 1], the first of equal maxima
            flat = op.Reshape(op.GatherElements(s, best, axis=1), _i64([a]))
        valid = op.Greater(op.Cast(flat, to=ir.DataType.DOUBLE), thr)
        masked = op.Where(valid, flat, neg)
        order = op.Slice(_score_order(masked, width), _i64([0]), _i64([m]))  # [M]
        real = op.ReduceSum(op.Cast(valid, to=ir.DataType.INT64), keepdims=0)
        rows = op.Less(op.Range(_i64(0), _i64(m), _i64(1)), real)
        if multi_label:
            anchor, cls = op.Div(order, _i64(c)), op.Mod(order, _i64(c))
        else:
            anchor, cls = order, op.Gather(op.Reshape(best, _i64([a])), order, axis=0)
        sc = op.Gather(masked, order, axis=0)
        if per_class:
            cand = op.GatherND(b, op.Concat(op.Unsqueeze(anchor, _i64([1])), op.Unsqueeze(cls, _i64([1])), axis=1))
        else:
            cand = op.Gather(b, anchor, axis=0)  # [M, 4]
        if class_agnostic:
            nms_boxes, classes = cand, None
        else:  # torchvision's path by the number of real candidates, chosen at run time
            top = op.ReduceMax(op.Where(op.Unsqueeze(rows, _i64([1])), cand, op.Expand(neg, _i64([m, 4]))), keepdims=0)
            top = op.Where(op.Greater(real, _i64(0)), top, _const(0, dt))
            shifted = op.Add(cand, op.Unsqueeze(op.Mul(op.CastLike(cls, cand), op.Add(top, _const(1, dt))), _i64([1])))
            trick = op.LessOrEqual(op.Mul(op.Min(real, _i64(m)), _i64(4)), _i64(_VANILLA_ABOVE))
            nms_boxes = op.Where(trick, shifted, cand)
            classes = op.Where(trick, op.Expand(_i64(0), _i64([m])), cls)
        pos = _greedy_nms(nms_boxes, m, dt, iou_threshold, classes, start=rows)
        found = _count(pos)
        pos = _padded(pos, ir.DataType.INT64, k, -1)
        here = op.GreaterOrEqual(pos, _i64(0))
        p = op.Where(here, pos, _i64(0))
        outs[0].append(op.Min(found, _i64(k)))
        outs[1].append(op.Where(op.Unsqueeze(here, _i64([1])), op.Gather(cand, p, axis=0), _const(0, dt)))
        outs[2].append(op.Where(here, op.Gather(sc, p, axis=0), _const(0, dt)))
        outs[3].append(op.Where(here, op.Gather(cls, p, axis=0), _i64(-1)))
        outs[4].append(op.Where(here, op.Gather(anchor, p, axis=0), _i64(-1)))
    return tuple(op.Concat(*[op.Unsqueeze(v, _i64([0])) for v in vs], axis=0) for vs in outs)


# ---------------------------------------------------------------------------------------------
# Detection layers
# ---------------------------------------------------------------------------------------------


def myops_roi_align_levels(
    features,
    rois,
    levels,
    spatial_scale: Sequence[float],
    pooled_height: int,
    pooled_width: int,
    sampling_ratio: int = -1,
    aligned: bool = False,
):
    """One ``RoiAlign`` per level over every RoI, each RoI's level kept (-1: zeros)."""
    r = _shape(rois)[0]
    c = _shape(features[0])[1]
    dt = _dtype(rois)
    coords = op.Slice(rois, _i64([1]), _i64([5]), _i64([1]))
    batch = op.Cast(op.Reshape(op.Slice(rois, _i64([0]), _i64([1]), _i64([1])), _i64([r])), to=ir.DataType.INT64)
    out = op.Expand(_const(0, dt), _i64([r, c, int(pooled_height), int(pooled_width)]))
    for level, (feat, scale) in enumerate(zip(features, spatial_scale)):
        pooled = op.RoiAlign(
            feat,
            coords,
            batch,
            mode="avg",
            output_height=int(pooled_height),
            output_width=int(pooled_width),
            sampling_ratio=max(int(sampling_ratio), 0),
            spatial_scale=float(scale),
            coordinate_transformation_mode="half_pixel" if aligned else "output_half_pixel",
        )
        here = op.Reshape(op.Equal(levels, _i64(level)), _i64([r, 1, 1, 1]))
        out = op.Where(here, pooled, out)
    return out


def myops_linear_bounded(input, weight, bias, count):
    rank = _rank(input)
    rows = _shape(input)[0]
    dt = _dtype(input)
    if rank == 2:
        y = op.Gemm(input, weight, bias, transB=1) if bias is not None else op.Gemm(input, weight, transB=1)
    else:
        y = op.MatMul(input, op.Transpose(weight, perm=[1, 0]))
        if bias is not None:
            y = op.Add(y, bias)
    return op.Where(_rows_below(count, rows, rank), y, _const(0, dt))


def myops_conv_bounded(
    input,
    weight,
    bias,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    count,
):
    rank = _rank(input)
    rows = _shape(input)[0]
    dt = _dtype(input)
    kernel = _shape(weight)[2:]
    attrs: Dict[str, Any] = dict(
        kernel_shape=list(kernel),
        strides=list(stride),
        pads=list(padding) * 2,
        dilations=list(dilation),
        group=int(groups),
    )
    args = [input, weight] + ([bias] if bias is not None else [])
    if transposed:
        y = op.ConvTranspose(*args, output_padding=list(output_padding), **attrs)
    else:
        y = op.Conv(*args, **attrs)
    return op.Where(_rows_below(count, rows, rank), y, _const(0, dt))


def _linear_source(dst, in_size: int, out_size, dt: ir.DataType):
    """torch's bilinear source index (align_corners=False) for destination indices ``dst``
    (int64) of an axis resized from ``in_size`` to ``out_size`` (int64, per row): the two source
    indices and their weights, in torch's arithmetic (``upsample_bilinear2d`` on the CPU)."""
    scale = op.Div(_const(float(in_size), dt), op.Cast(out_size, to=dt))
    real = op.Sub(op.Mul(scale, op.Add(op.Cast(dst, to=dt), _const(0.5, dt))), _const(0.5, dt))
    real = op.Max(real, _const(0, dt))
    i0 = op.Min(op.Cast(op.Floor(real), to=ir.DataType.INT64), _i64(in_size - 1))
    lam = op.Min(op.Max(op.Sub(real, op.Cast(i0, to=dt)), _const(0, dt)), _const(1, dt))
    i1 = op.Add(i0, op.Cast(op.Less(i0, _i64(in_size - 1)), to=ir.DataType.INT64))
    return i0, i1, op.Sub(_const(1, dt), lam), lam


def myops_paste_masks(masks, boxes, count, image_size: Sequence[int]):
    """torchvision's ``paste_mask_in_image`` per real row, vectorized: each canvas pixel inside
    its box's clipped extent reads the bilinear resize of the mask (torch's arithmetic, one axis
    then the other, by ``GatherND``), every other pixel 0."""
    n, d, s, s2 = _shape(masks)
    dt = _dtype(masks)
    sizes = [int(v) for v in image_size]
    if len(sizes) == 2 and n != 1:
        sizes = sizes * n
    if len(sizes) != 2 * n:
        _refuse("paste_masks", "image_size", f"{len(sizes)} values for {n} images")
    hs, ws = sizes[0::2], sizes[1::2]
    hmax, wmax = max(hs), max(ws)
    x0, y0, x1, y1 = (op.Squeeze(v, _i64([2])) for v in op.Split(boxes, num_outputs=4, axis=2))  # [N, D]
    w = op.Max(op.Add(op.Sub(x1, x0), _i64(1)), _i64(1))
    h = op.Max(op.Add(op.Sub(y1, y0), _i64(1)), _i64(1))
    img_h = op.Reshape(_i64(hs), _i64([n, 1]))
    img_w = op.Reshape(_i64(ws), _i64([n, 1]))

    def axis(lo, hi, extent, img, size, length):
        coord = op.Reshape(op.Range(_i64(0), _i64(size), _i64(1)), _i64([1, 1, size]))
        lo3, hi3 = op.Unsqueeze(lo, _i64([2])), op.Unsqueeze(hi, _i64([2]))
        inside = op.And(
            op.GreaterOrEqual(coord, op.Max(lo3, _i64(0))),
            op.Less(coord, op.Min(op.Add(hi3, _i64(1)), op.Unsqueeze(img, _i64([2])))),
        )
        ext = op.Unsqueeze(extent, _i64([2]))
        local = op.Min(op.Max(op.Sub(coord, lo3), _i64(0)), op.Sub(ext, _i64(1)))  # [N, D, size]
        return (inside,) + _linear_source(local, length, ext, dt)

    in_x, jx0, jx1, wx0, wx1 = axis(x0, x1, w, img_w, wmax, s2)
    in_y, iy0, iy1, wy0, wy1 = axis(y0, y1, h, img_h, hmax, s)
    cols = op.Transpose(masks, perm=[0, 1, 3, 2])  # [N, D, S', S]

    def take(data, idx):  # data [N, D, L, *], idx [N, D, X] -> [N, D, X, *]
        return op.GatherND(data, op.Unsqueeze(idx, _i64([3])), batch_dims=2)

    # along x: [N, D, W, S] -> [N, D, S, W]
    tx = op.Add(
        op.Mul(take(cols, jx0), op.Unsqueeze(wx0, _i64([3]))), op.Mul(take(cols, jx1), op.Unsqueeze(wx1, _i64([3])))
    )
    tx = op.Transpose(tx, perm=[0, 1, 3, 2])
    out = op.Add(
        op.Mul(take(tx, iy0), op.Unsqueeze(wy0, _i64([3]))), op.Mul(take(tx, iy1), op.Unsqueeze(wy1, _i64([3])))
    )
    real = op.Less(op.Reshape(op.Range(_i64(0), _i64(d), _i64(1)), _i64([1, d])), op.Unsqueeze(count, _i64([1])))
    keep = op.And(
        op.And(op.Unsqueeze(in_y, _i64([3])), op.Unsqueeze(in_x, _i64([2]))), op.Reshape(real, _i64([n, d, 1, 1]))
    )
    return op.Where(keep, out, _const(0, dt))


def myops_heatmaps_to_keypoints(maps, rois, count):
    """torchvision's ``heatmaps_to_keypoints`` per real row (one Loop iteration per row): each
    heatmap resampled to its box's own size with torch's bicubic arithmetic (one axis, then the
    other), ``ArgMax`` (the first of equal maxima), the position scaled back into the box. A
    padding row reads a unit box and comes out 0."""
    r, k, hh, ww = _shape(maps)
    dt = _dtype(maps)
    f32 = ir.DataType.FLOAT
    i64 = ir.DataType.INT64
    unit = _const([0, 0, 1, 1], dt)
    one, half, zero = _const(1, dt), _const(0.5, dt), _const(0, dt)
    body = _Body([("iter", i64, []), ("cond", ir.DataType.BOOL, [])])
    it, cond = body.inputs
    nd = body.node
    real = nd("Less", [it, count])
    roi = nd("Where", [real, nd("Gather", [rois, it], axis=0), unit])
    hmap = nd("Gather", [maps, it], axis=0)  # [K, H, W]
    x0, y0, x1, y1 = (nd("Gather", [roi, body.const(j, i64)], axis=0) for j in range(4))

    def resample_axis(lo, hi, size):
        extent = nd("Max", [nd("Sub", [hi, lo]), one])
        ceil = nd("Ceil", [extent])
        n_out = nd("Cast", [ceil], to=i64)
        correction = nd("Div", [extent, ceil])
        scale = nd("Div", [body.const(float(size), dt), nd("Cast", [n_out], to=dt)])
        dst = nd("Cast", [nd("Range", [body.const(0, i64), n_out, body.const(1, i64)])], to=dt)
        src = nd("Sub", [nd("Mul", [scale, nd("Add", [dst, half])]), half])
        base = nd("Floor", [src])
        t = nd("Sub", [src, base])
        ib = nd("Cast", [base], to=i64)
        a = -0.75

        def c1(x):
            return nd(
                "Add",
                [
                    nd(
                        "Mul",
                        [nd("Mul", [nd("Sub", [nd("Mul", [body.const(a + 2, dt), x]), body.const(a + 3, dt)]), x]), x],
                    ),
                    one,
                ],
            )

        def c2(x):
            inner = nd(
                "Add",
                [
                    nd("Mul", [nd("Sub", [nd("Mul", [body.const(a, dt), x]), body.const(5 * a, dt)]), x]),
                    body.const(8 * a, dt),
                ],
            )
            return nd("Sub", [nd("Mul", [inner, x]), body.const(4 * a, dt)])

        u = nd("Sub", [one, t])
        weights = [c2(nd("Add", [t, one])), c1(t), c1(u), c2(nd("Add", [u, one]))]
        idx = [
            nd(
                "Max",
                [nd("Min", [nd("Add", [ib, body.const(j - 1, i64)]), body.const(size - 1, i64)]), body.const(0, i64)],
            )
            for j in range(4)
        ]
        return n_out, correction, idx, weights

    wn, wcorr, xi, xw = resample_axis(x0, x1, ww)
    hn, hcorr, yi, yw = resample_axis(y0, y1, hh)
    tx = None
    for j in range(4):  # along x: [K, H, w]
        term = nd("Mul", [nd("Gather", [hmap, xi[j]], axis=2), xw[j]])
        tx = term if tx is None else nd("Add", [tx, term])
    ty = None
    for j in range(4):  # along y: [K, h, w]
        wy = nd("Unsqueeze", [yw[j], body.const([1], i64)])
        term = nd("Mul", [nd("Gather", [tx, yi[j]], axis=1), wy])
        ty = term if ty is None else nd("Add", [ty, term])
    flat = nd("Reshape", [ty, body.const([k, -1], i64)])
    pos = nd("ArgMax", [flat], axis=1, keepdims=1)  # [K, 1]
    score = nd("Reshape", [nd("GatherElements", [flat, pos], axis=1), body.const([k], i64)])
    pos = nd("Reshape", [pos, body.const([k], i64)])
    x_int = nd("Mod", [pos, wn])
    y_int = nd("Div", [nd("Sub", [pos, x_int]), wn])
    x = nd("Add", [nd("Mul", [nd("Add", [nd("Cast", [x_int], to=dt), half]), wcorr]), x0])
    y = nd("Add", [nd("Mul", [nd("Add", [nd("Cast", [y_int], to=dt), half]), hcorr]), y0])
    ones = nd("Expand", [one, body.const([k], i64)])
    kp = nd("Concat", [nd("Unsqueeze", [v, body.const([1], i64)]) for v in (x, y, ones)], axis=1)
    kp = nd("Cast", [nd("Where", [real, kp, zero])], to=f32)
    score = nd("Cast", [nd("Where", [real, score, zero])], to=f32)
    graph = body.graph([nd("Identity", [cond]), kp, score])
    keypoints, scores = _loop(_i64(r), _const(True, ir.DataType.BOOL), [], graph, 2)
    return op.Reshape(keypoints, _i64([r, k, 3])), op.Reshape(scores, _i64([r, k]))


# ---------------------------------------------------------------------------------------------
# nonzero and the bounded selections
# ---------------------------------------------------------------------------------------------


def _nonzero_rows(x):
    """``torch.nonzero(x)``: int64 ``[T, ndim]`` in row-major order (``NonZero``'s order)."""
    if _rank(x) == 0:
        x = op.Reshape(x, _i64([1]))
        return op.Slice(op.Transpose(op.NonZero(x), perm=[1, 0]), _i64([0]), _i64([0]), _i64([1]))
    return op.Transpose(op.NonZero(x), perm=[1, 0])


def myops_nonzero(self):
    return _nonzero_rows(self)


def myops_nonzero_static(self, size: int, fill_value: int = -1):
    return _padded(_nonzero_rows(self), ir.DataType.INT64, int(size), int(fill_value), [_rank(self)])


def myops_nonzero_bounded(self, size: int, fill_value: int = -1):
    rows = _nonzero_rows(self)
    return _padded(rows, ir.DataType.INT64, int(size), int(fill_value), [_rank(self)]), _count(rows)


def _mask_flat(self, mask):
    """The positions of ``mask``'s true elements, as in ``self[mask]`` (row-major), and the
    elements of ``self`` flattened over the mask's dims."""
    return _mask_flat_shaped(self, mask, _shape(self), _rank(mask))


def _mask_flat_shaped(self, mask, shape: List[int], mrank: int):
    lead = int(np.prod(shape[:mrank])) if mrank else 1
    flat = op.Reshape(self, _i64([lead] + shape[mrank:]))
    idx = op.Reshape(op.NonZero(op.Reshape(mask, _i64([-1]))), _i64([-1]))
    return op.Gather(flat, idx, axis=0), idx, shape[mrank:]


def myops_masked_select_bounded(self, mask, size: int, fill_value: float = 0):
    dt = _dtype(self)
    shape = [int(v) for v in np.broadcast_shapes(tuple(_shape(self)), tuple(_shape(mask)))]
    if shape != _shape(self) or shape != _shape(mask):  # torch.masked_select broadcasts both
        self, mask = op.Expand(self, _i64(shape)), op.Expand(mask, _i64(shape))
        values, idx, _ = _mask_flat_shaped(self, mask, shape, len(shape))
    else:
        values, idx, _ = _mask_flat(self, mask)
    return _padded(values, dt, int(size), fill_value), _count(idx)


def myops_mask_rows_bounded(self, mask, size: int, fill_value: float = 0):
    values, idx, rest = _mask_flat(self, mask)
    return _padded(values, _dtype(self), int(size), fill_value, rest), _count(idx)


# ---------------------------------------------------------------------------------------------
# pooling, diagonal
# ---------------------------------------------------------------------------------------------


def myops_max_pool2d_add(
    self,
    other,
    kernel_size: Sequence[int] = (3, 3),
    stride: Sequence[int] = (2, 2),
    padding: Sequence[int] = (1, 1),
    ceil_mode: bool = False,
):
    kernel, strides, pads = list(kernel_size), list(stride) or list(kernel_size), list(padding)
    pooled = op.MaxPool(self, kernel_shape=kernel, strides=strides, pads=pads * 2, ceil_mode=int(ceil_mode))[0]
    return op.Add(pooled, other)


def myops_diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """``torch.diagonal``: the two dims moved last, flattened, one ``Gather`` of the diagonal."""
    shape = _shape(self)
    rank = len(shape)
    d1, d2 = dim1 % rank, dim2 % rank
    if d1 == d2:
        _refuse("diagonal", "dim1, dim2", "the same dimension twice (torch raises)")
    rest = [i for i in range(rank) if i not in (d1, d2)]
    a, b = shape[d1], shape[d2]
    length = max(0, min(a, b - offset) if offset >= 0 else min(a + offset, b))
    start = (0, offset) if offset >= 0 else (-offset, 0)
    flat_idx = [(start[0] + i) * b + start[1] + i for i in range(length)]
    moved = op.Transpose(self, perm=rest + [d1, d2])
    flat = op.Reshape(moved, _i64([shape[i] for i in rest] + [a * b]))
    return op.Gather(flat, _i64(flat_idx if flat_idx else np.zeros(0, np.int64)), axis=len(rest))


def myops_diagonal_backward(grad, input_sizes: Sequence[int], offset: int, dim1: int, dim2: int):
    """``torch.diagonal``'s backward: ``grad`` scattered onto the diagonal of zeros."""
    shape = [int(v) for v in input_sizes]
    rank = len(shape)
    d1, d2 = dim1 % rank, dim2 % rank
    rest = [i for i in range(rank) if i not in (d1, d2)]
    a, b = shape[d1], shape[d2]
    length = max(0, min(a, b - offset) if offset >= 0 else min(a + offset, b))
    start = (0, offset) if offset >= 0 else (-offset, 0)
    dt = _dtype(grad)
    lead = [shape[i] for i in rest]
    zeros = op.Expand(_const(0, dt), _i64(lead + [a * b]))
    flat_idx = [(start[0] + i) * b + start[1] + i for i in range(length)]
    idx = op.Expand(_i64(flat_idx if flat_idx else np.zeros(0, np.int64)), _i64(lead + [length]))
    flat = op.ScatterElements(zeros, idx, grad, axis=len(rest))
    moved = op.Reshape(flat, _i64(lead + [a, b]))
    inverse = list(np.argsort(rest + [d1, d2]))
    return op.Transpose(moved, perm=[int(v) for v in inverse])


# ---------------------------------------------------------------------------------------------
# elementwise ops: torch's result dtype (type promotion), then the ONNX op
# ---------------------------------------------------------------------------------------------

_TORCH_TO_IR = {
    torch.float32: ir.DataType.FLOAT,
    torch.float64: ir.DataType.DOUBLE,
    torch.float16: ir.DataType.FLOAT16,
    torch.bfloat16: ir.DataType.BFLOAT16,
    torch.int64: ir.DataType.INT64,
    torch.int32: ir.DataType.INT32,
    torch.int16: ir.DataType.INT16,
    torch.int8: ir.DataType.INT8,
    torch.uint8: ir.DataType.UINT8,
    torch.bool: ir.DataType.BOOL,
}
_IR_TO_TORCH = {v: k for k, v in _TORCH_TO_IR.items()}


def _torch_dtype(x) -> torch.dtype:
    return _IR_TO_TORCH[_dtype(x)]


def _example(x):
    """A tensor with ``x``'s dtype and rank (torch's promotion reads both), or ``x`` (a number)."""
    if x is None or isinstance(x, (bool, int, float)):
        return x
    return torch.zeros([1] * _rank(x), dtype=_torch_dtype(x))


def _result(*operands, int_to_float: bool = False) -> ir.DataType:
    """torch's result dtype for one or two ``operands`` (tensors and numbers); integral and bool
    results become float32 with ``int_to_float`` (the IntToFloat rules)."""
    examples = [_example(x) for x in operands]
    dtype = examples[0].dtype if len(examples) == 1 else torch.result_type(*examples)
    if int_to_float and not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    return _TORCH_TO_IR[dtype]


def _result_of(fn, *operands) -> ir.DataType:
    """The result dtype of the torch function ``fn`` on tensors (and numbers) like ``operands``."""
    return _TORCH_TO_IR[fn(*[_example(x) for x in operands]).dtype]


def _as(x, dt: ir.DataType):
    """``x`` (a tensor or a number) as ``dt``."""
    if isinstance(x, (bool, int, float)):
        return _const(x, dt)
    return x if _dtype(x) == dt else op.Cast(x, to=dt)


def _floating(dt: ir.DataType) -> bool:
    return dt in (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16, ir.DataType.BFLOAT16)


def _nan_propagating(fn, a, b, dt):
    """``Max`` / ``Min`` with torch's NaN rule (a NaN operand gives NaN)."""
    out = fn(a, b)
    if not _floating(dt):
        return out
    either = op.Or(op.IsNaN(a), op.IsNaN(b))
    return op.Where(either, op.Add(a, b), out)


def _unary(onnx_fn, int_to_float: bool):
    def fn(self):
        dt = _result(self, int_to_float=int_to_float)
        return onnx_fn(_as(self, dt))

    return fn


def _silu(x):
    return op.Mul(x, op.Sigmoid(x))


def _rsqrt(x):
    return op.Reciprocal(op.Sqrt(x))


def myops_gelu(self, approximate: str = "none"):
    dt = _dtype(self)
    x = self
    if approximate == "tanh":
        inner = op.Mul(
            _const(float(np.sqrt(2 / np.pi)), dt), op.Add(x, op.Mul(_const(0.044715, dt), op.Mul(x, op.Mul(x, x))))
        )
        return op.Mul(op.Mul(_const(0.5, dt), x), op.Add(_const(1, dt), op.Tanh(inner)))
    if approximate != "none":
        _refuse("gelu", "approximate", f"{approximate!r}")
    return op.Mul(op.Mul(_const(0.5, dt), x), op.Add(_const(1, dt), op.Erf(op.Mul(x, _const(float(np.sqrt(0.5)), dt)))))


def myops_cast(self, dtype: int):
    # the exporter hands a ScalarType over as its ONNX data type
    return op.Cast(self, to=int(dtype))


def _alpha(fn, opname):
    def f(self, other, alpha: float = 1):
        dt = _result(self, other)
        a, b = _as(self, dt), _as(other, dt)
        if alpha != 1:
            b = op.Mul(_as(alpha, dt), b)
        return fn(a, b)

    f.__name__ = f"myops_{opname}"
    return f


def _binary(fn, int_to_float: bool = False):
    def f(self, other):
        dt = _result(self, other, int_to_float=int_to_float)
        return fn(_as(self, dt), _as(other, dt))

    return f


def myops_maximum(self, other):
    dt = _result(self, other)
    return _nan_propagating(op.Max, _as(self, dt), _as(other, dt), dt)


def myops_minimum(self, other):
    dt = _result(self, other)
    return _nan_propagating(op.Min, _as(self, dt), _as(other, dt), dt)


def myops_where(condition, self, other):
    dt = _result(self, other)
    return op.Where(condition, _as(self, dt), _as(other, dt))


def myops_addcmul(self, tensor1, tensor2, value: float = 1):
    dt = _result_of(torch.addcmul, self, tensor1, tensor2)
    prod = op.Mul(_as(tensor1, dt), _as(tensor2, dt))
    if value != 1:
        prod = op.Mul(_as(value, dt), prod)
    return op.Add(_as(self, dt), prod)


def _clamped(x, lo, hi, dt):
    if lo is not None:
        x = _nan_propagating(op.Max, x, _as(lo, dt), dt)
    if hi is not None:
        x = _nan_propagating(op.Min, x, _as(hi, dt), dt)
    return x


def myops_clamp(self, min, max):  # noqa: A002  (the schema's names)
    dt = _result_of(torch.clamp, self, min, max)
    return _clamped(_as(self, dt), min, max, dt)


def myops_clamp_scalar(self, min: Optional[float] = None, max: Optional[float] = None):  # noqa: A002
    dt = _result_of(lambda x, lo, hi: torch.clamp(x, lo, hi), self, min, max)
    return _clamped(_as(self, dt), min, max, dt)


# ---------------------------------------------------------------------------------------------
# aten ops the static detectors meet that onnxscript's table leaves out (or refuses)
# ---------------------------------------------------------------------------------------------


def aten_amax(self, dim: Sequence[int] = (), keepdim: bool = False):
    """``amax`` (over ``dim``, every dimension when it is empty): ``ReduceMax``, NaN kept as
    torch keeps it (a NaN element gives NaN)."""
    rank = _rank(self)
    axes = [d % rank for d in dim] if rank else []
    if axes:
        out = op.ReduceMax(self, _i64(axes), keepdims=int(keepdim))
    else:
        out = op.ReduceMax(self, keepdims=int(keepdim))
        if keepdim:
            out = op.Reshape(out, _i64([1] * rank))
    if _floating(_dtype(self)):
        nan = op.Cast(op.IsNaN(self), to=ir.DataType.INT32)
        anynan = (
            op.ReduceMax(nan, _i64(axes), keepdims=int(keepdim)) if axes else op.ReduceMax(nan, keepdims=int(keepdim))
        )
        if not axes and keepdim:
            anynan = op.Reshape(anynan, _i64([1] * rank))
        out = op.Where(op.Cast(anynan, to=ir.DataType.BOOL), op.CastLike(_const(np.nan, ir.DataType.DOUBLE), self), out)
    return out


def _sort(self, dim: int, descending: bool):
    shape = _shape(self)
    if not shape:
        return op.Identity(self), _i64(0)
    axis = dim % len(shape)
    key = self
    if _dtype(self) == ir.DataType.BOOL:
        key = op.Cast(self, to=ir.DataType.INT32)
    _, indices = op.TopK(key, _i64([shape[axis]]), axis=axis, largest=int(descending), sorted=1)
    return op.GatherElements(self, indices, axis=axis), indices


def aten_sort_stable(self, stable: Optional[bool] = None, dim: int = -1, descending: bool = False):
    """A stable ``sort``: ``TopK`` over the whole dim (ONNX: equal values keep the lower index
    first, which is a stable sort's order)."""
    return _sort(self, dim, descending)


def aten_sort(self, dim: int = -1, descending: bool = False):
    return _sort(self, dim, descending)


def aten_squeeze_dims(self, dim: Sequence[int]):
    shape = _shape(self)
    if not shape:
        return op.Identity(self)
    axes = sorted({d % len(shape) for d in dim if shape[d % len(shape)] == 1})
    return op.Squeeze(self, _i64(axes)) if axes else op.Identity(self)


def aten_assert_tensor_metadata(
    a, size: Optional[Sequence[int]] = None, stride=None, dtype=None, device=None, layout=None
):
    """A check of the traced program, already true of its static shapes: nothing at run time."""
    return None


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------


def _ew_translations() -> Dict[Any, Callable]:
    from ._table import EW_OPS

    unary = {
        "relu": (op.Relu, False),
        "silu": (_silu, False),
        "sigmoid": (op.Sigmoid, True),
        "abs": (op.Abs, False),
        "neg": (op.Neg, False),
        "exp": (op.Exp, True),
        "log": (op.Log, True),
        "sqrt": (op.Sqrt, True),
        "rsqrt": (_rsqrt, True),
        "tanh": (op.Tanh, True),
    }
    binary = {"mul": op.Mul, "div": op.Div, "pow": op.Pow}
    table: Dict[Any, Callable] = {}
    for e in EW_OPS.values():
        if e.name in unary:
            fn = _unary(*unary[e.name])
        elif e.name == "gelu":
            fn = myops_gelu
        elif e.name == "cast":
            fn = myops_cast
        elif e.name in ("add", "sub"):
            inner = op.Add if e.name == "add" else op.Sub
            fn = _alpha(inner, e.fn)
        elif e.name in binary:
            fn = _binary(binary[e.name], int_to_float=e.name == "div")
        elif e.name == "maximum":
            fn = myops_maximum
        elif e.name == "minimum":
            fn = myops_minimum
        elif e.name == "where":
            fn = myops_where
        elif e.name == "addcmul":
            fn = myops_addcmul
        elif e.name == "clamp":
            fn = myops_clamp_scalar if e.overload == "Scalar" else myops_clamp
        else:  # pragma: no cover - a new table row: tests/test_onnx.py lists every op
            continue
        table[e.packet] = fn
    return table


def translation_table() -> Dict[Any, Callable]:
    """``{op overload: ONNX translation}`` for ``torch.onnx.export(...,
    custom_translation_table=...)``: every public myops op, and the aten forms of the module
    docstring."""
    m = torch.ops.myops
    a = torch.ops.aten
    table: Dict[Any, Callable] = {
        m.nonzero.default: myops_nonzero,
        m.nonzero_static.default: myops_nonzero_static,
        m.nonzero_bounded.default: myops_nonzero_bounded,
        m.masked_select_bounded.default: myops_masked_select_bounded,
        m.mask_rows_bounded.default: myops_mask_rows_bounded,
        m.nms.default: myops_nms,
        m.batched_nms.default: myops_batched_nms,
        m.nms_static.default: myops_nms_static,
        m.batched_nms_static.default: myops_batched_nms_static,
        m.multiclass_nms_static.default: myops_multiclass_nms_static,
        m.roi_align_levels.default: myops_roi_align_levels,
        m.linear_bounded.default: myops_linear_bounded,
        m.conv_bounded.default: myops_conv_bounded,
        m.paste_masks.default: myops_paste_masks,
        m.heatmaps_to_keypoints.default: myops_heatmaps_to_keypoints,
        m.max_pool2d_add.default: myops_max_pool2d_add,
        m.diagonal.default: myops_diagonal,
        m.diagonal_backward.default: myops_diagonal_backward,
        a.amax.default: aten_amax,
        a.sort.stable: aten_sort_stable,
        a.squeeze.dims: aten_squeeze_dims,
        a._assert_tensor_metadata.default: aten_assert_tensor_metadata,
    }
    table.update(_ew_translations())
    table[m.mul_scalar.default] = _binary(op.Mul)
    return {k: _static_only(str(k).replace(".default", ""), fn) for k, fn in table.items()}


def _static_only(opname: str, fn: Callable) -> Callable:
    """``fn`` refusing, before it runs, a tensor argument of dynamic shape (naming the op and
    the argument): the translations compute with static shapes."""
    import functools
    import inspect

    params = list(inspect.signature(fn).parameters)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        named = list(zip(params, args)) + list(kwargs.items())
        for name, value in named:
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                shape = getattr(v, "shape", None) if isinstance(v, ir.Value) else None
                if isinstance(v, ir.Value) and (shape is None or not all(isinstance(d, int) for d in shape)):
                    _refuse(opname, name, f"a dynamic shape {shape}: the ONNX forms need static shapes")
        return fn(*args, **kwargs)

    return checked


#: The translation table (see :func:`translation_table`).
TRANSLATIONS: Dict[Any, Callable] = translation_table()


def _detector_outputs(module: torch.nn.Module) -> Optional[List[str]]:
    """The output names of a :class:`myops.detection.StaticDetector` (its dict's keys, in order),
    or None for another module."""
    from .detection import StaticDetector

    if not isinstance(module, StaticDetector):
        return None
    names = ["boxes", "scores", "labels", "count", "overflow"]
    if module.kind == "rcnn":
        rh = module.model.roi_heads
        names += ["masks"] if rh.has_mask() else []
        names += ["keypoints", "keypoints_scores"] if rh.has_keypoint() else []
    return names


def export(
    module: torch.nn.Module,
    args: Tuple[Any, ...],
    path: Optional[Union[str, os.PathLike]] = None,
    *,
    check: bool = True,
    **kwargs: Any,
):
    """Export ``module`` called on ``args`` to ONNX (opset :data:`OPSET`, the default domain):
    ``torch.onnx.export(module, args, path, dynamo=True, custom_translation_table=TRANSLATIONS)``
    with the model as it is. The result runs in ONNX Runtime with no myops installed.

    Args:
        module: the model (for a detector: ``myops.detection.make_static(model)``).
        args: the example inputs (their shapes are the model's static shapes).
        path: where to write the ``.onnx`` file (None: not written).
        check: run ``onnx.checker.check_model`` on the result.
        **kwargs: passed to ``torch.onnx.export`` (``input_names``, ``output_names``,
            ``dynamic_shapes``, ``external_data``, ...; a ``custom_translation_table`` entry
            there is added to this module's table).

    Returns:
        The ``torch.onnx.ONNXProgram``.

    Raises:
        UnsupportedError: an op or argument with no ONNX form (the message names both).
    """
    import onnx

    table = dict(TRANSLATIONS)
    table.update(kwargs.pop("custom_translation_table", None) or {})
    kwargs.setdefault("opset_version", OPSET)
    names = _detector_outputs(module)
    if names is not None:
        kwargs.setdefault("input_names", ["images"])
        kwargs.setdefault("output_names", names)
    kwargs.setdefault("verbose", False)
    try:
        program = torch.onnx.export(module, tuple(args), dynamo=True, custom_translation_table=table, **kwargs)
    except Exception as e:  # the exporter wraps the translation's own error: raise that one
        cause: Optional[BaseException] = e
        while cause is not None:
            if isinstance(cause, UnsupportedError):
                raise UnsupportedError(str(cause)) from e
            cause = cause.__cause__ or cause.__context__
        raise
    if program is None:  # pragma: no cover - dynamo=True always returns a program
        raise RuntimeError("myops.onnx.export: torch.onnx.export returned no program")
    if check:
        onnx.checker.check_model(program.model_proto, full_check=True)
    if path is not None:
        program.save(os.fspath(path))
    return program

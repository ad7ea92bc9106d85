// Every myops schema lives here, in one TORCH_LIBRARY block, and nothing else does.
// Kernels register their implementations in their own files with
// TORCH_LIBRARY_IMPL(myops, CPU|CUDA, m), autograd in each family's
// autograd.cpp (TORCH_LIBRARY_IMPL(myops, Autograd, m)); fake kernels are registered from Python
// (python/myops/_fake.py).
//
// This file, the kernels and the autograd make up libmyops.so, which links LibTorch only and
// loads in a process with no Python. The Python module myops._C (csrc/python/) links it.
#include <torch/library.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "detection/bounded_layers.h"
#include "core/checks.h"
#include "detection/detection_decode.h"
#include "diagonal/diagonal_shape.h"
#include "core/dtypes.h"
#include "elementwise/elementwise_host.h"
#include "max_pool2d_add/max_pool2d_add_shape.h"
#include "nms/nms_common.h"
#include "nonzero/nonzero_rules.h"
#include "core/output_strides.h"
#include "roi_align/roi_align_common.h"
#include "myops/op_table.h"

namespace myops {
int64_t batched_nms_vanilla_above(c10::Device device) { return nms_common::vanilla_above(device.is_cpu()); }

std::vector<std::string> ew_table() {
  static const char* const sigs[] = {
#define MYOPS_EW_SIG_NAME(FN, NAME, OVERLOAD, KIND, RULE, SIG, ...) #SIG,
      MYOPS_EW_OPS(MYOPS_EW_SIG_NAME)
#undef MYOPS_EW_SIG_NAME
  };
  using namespace ew;
  std::vector<std::string> rows;
  for (int i = 0; i < kNumEwOps; ++i) {
    const auto& op = kOps[i];
    const int k = static_cast<int>(op.kind);
    rows.push_back(std::string(op.fn) + "|" + op.name + "|" + op.overload + "|" + kKindNames[k] + "|" +
                   std::to_string(kArity[k]) + "|" + kDtypesNames[static_cast<int>(kDtypes[k])] + "|" +
                   kRuleNames[static_cast<int>(op.rule)] + "|" + sigs[i] + "|" + op.aten + "|" +
                   (op.dropin_default ? "1" : "0"));
  }
  return rows;
}

// The elementwise layout rules (core/output_strides.h) on symbolic sizes, for the fake kernels.
// _ew_out_strides: input k has ranks[k] dims, its sizes and strides the next ranks[k] entries of
// `sizes` and `strides`.
std::vector<c10::SymInt> ew_out_strides(c10::SymIntArrayRef shape, c10::SymIntArrayRef sizes,
                                        c10::SymIntArrayRef strides, c10::IntArrayRef ranks) {
  TORCH_CHECK(sizes.size() == strides.size(), "myops._ew_out_strides: 'sizes' and 'strides' must have one length, got ",
              sizes.size(), " and ", strides.size());
  std::vector<ew::StridedDims<c10::SymInt>> ins;
  size_t at = 0;
  for (auto r : ranks) {
    TORCH_CHECK(r >= 0 && at + r <= sizes.size(), "myops._ew_out_strides: 'ranks' ", ranks, " do not fit ",
                sizes.size(), " sizes");
    ins.push_back({sizes.slice(at, r), strides.slice(at, r)});
    at += r;
  }
  TORCH_CHECK(at == sizes.size(), "myops._ew_out_strides: 'ranks' ", ranks, " do not fit ", sizes.size(), " sizes");
  return ew::output_strides_of<c10::SymInt>(shape, c10::ArrayRef<ew::StridedDims<c10::SymInt>>(ins));
}

std::vector<c10::SymInt> ew_preserve_strides(c10::SymIntArrayRef sizes, c10::SymIntArrayRef strides) {
  TORCH_CHECK(sizes.size() == strides.size(), "myops._ew_preserve_strides: 'sizes' and 'strides' must have one ",
              "length, got ", sizes.size(), " and ", strides.size());
  return ew::preserve_strides_of<c10::SymInt>(ew::StridedDims<c10::SymInt>{sizes, strides});
}

// The supported dtype sets (core/dtypes.h) for Python (myops._table.DTYPES): one
// "column|name,name,..." string per set of the op table's DTYPES column, Python's dtype names.
std::vector<std::string> dtype_sets() {
  std::vector<std::string> rows;
  for (int i = 0; i < static_cast<int>(std::size(ew::kDtypesNames)); ++i) {
    std::string names = dtype_names(ew::dtypes_in(static_cast<ew::EwDtypes>(i)));
    names.erase(std::remove(names.begin(), names.end(), ' '), names.end());
    rows.push_back(std::string(ew::kDtypesNames[i]) + "|" + names);
  }
  return rows;
}

// ---- the shape rules for the fake kernels ------------------------------------------------------
// Each family's checks and output shape, written once in its header for the kernels, run here on
// the (symbolic) sizes of the fake kernels' tensors (python/myops/_fake.py). A tensor comes as
// its sizes, strides, dtype and device (TensorInfo, core/checks.h).
#define MYOPS_INFO_ARGS(t) \
  c10::SymIntArrayRef t##_sizes, c10::SymIntArrayRef t##_strides, at::ScalarType t##_dtype, c10::Device t##_device
#define MYOPS_INFO(t) TensorInfo(t##_sizes, t##_strides, t##_dtype, t##_device)

// nonzero, nonzero_static, nonzero_bounded (size).
void nonzero_meta(c10::string_view op, MYOPS_INFO_ARGS(self), std::optional<c10::SymInt> size) {
  const std::string name(op);
  nonzero_rules::check_input(MYOPS_INFO(self), name.c_str(), self_device.is_cuda());
  if (size.has_value()) check_size(*size, name.c_str());
}

// max_pool2d_add (other) or its backward (other = grad_output): the pooled sizes and whether the
// result is channels_last.
std::tuple<std::vector<c10::SymInt>, bool> max_pool2d_add_meta(MYOPS_INFO_ARGS(self), MYOPS_INFO_ARGS(other),
                                                               c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                                               c10::IntArrayRef padding, bool ceil_mode,
                                                               bool backward) {
  const auto r = backward ? max_pool2d_add::backward_shape(MYOPS_INFO(other), MYOPS_INFO(self), kernel_size, stride,
                                                           padding, ceil_mode, "max_pool2d_add_backward")
                          : max_pool2d_add::forward_shape(MYOPS_INFO(self), MYOPS_INFO(other), kernel_size, stride,
                                                          padding, ceil_mode, "max_pool2d_add");
  return {r.out_sizes, r.channels_last};
}

// diagonal (no grad_sizes) or diagonal_backward: the diagonal's sizes.
std::vector<c10::SymInt> diagonal_meta(c10::SymIntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2,
                                       at::OptionalSymIntArrayRef grad_sizes) {
  if (grad_sizes.has_value()) return diagonal_backward_sizes(*grad_sizes, sizes, offset, dim1, dim2).out_sizes;
  return diagonal_sizes(sizes, offset, dim1, dim2, "diagonal", "self").out_sizes;
}

// nms, batched_nms (idxs) and their static forms (size).
void nms_meta(c10::string_view op, MYOPS_INFO_ARGS(boxes), MYOPS_INFO_ARGS(scores),
              at::OptionalSymIntArrayRef idxs_sizes, at::OptionalSymIntArrayRef idxs_strides,
              std::optional<at::ScalarType> idxs_dtype, std::optional<c10::Device> idxs_device,
              std::optional<c10::SymInt> size) {
  const std::string name(op);
  const TensorInfo boxes = MYOPS_INFO(boxes);
  nms_common::check_boxes_scores(boxes, MYOPS_INFO(scores), name.c_str(), boxes.device.is_cpu());
  if (idxs_sizes.has_value()) {
    nms_common::check_idxs(boxes, TensorInfo(*idxs_sizes, *idxs_strides, *idxs_dtype, *idxs_device), name.c_str());
  }
  if (size.has_value()) check_size(*size, name.c_str());
}

void multiclass_nms_meta(MYOPS_INFO_ARGS(boxes), MYOPS_INFO_ARGS(scores), int64_t max_detections,
                         std::optional<int64_t> pre_nms_top_k) {
  nms_common::check_multiclass(MYOPS_INFO(boxes), MYOPS_INFO(scores), max_detections, pre_nms_top_k,
                               "multiclass_nms_static");
}

// roi_align_levels: feature map l has features_ranks[l] dims, its sizes the next entries of
// `features_sizes` (its strides are not read).
void roi_align_levels_meta(c10::SymIntArrayRef features_sizes, c10::IntArrayRef features_ranks,
                           std::vector<at::ScalarType> features_dtypes, std::vector<c10::Device> features_devices,
                           MYOPS_INFO_ARGS(rois), MYOPS_INFO_ARGS(levels), c10::ArrayRef<double> spatial_scale,
                           int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio) {
  TORCH_CHECK(features_ranks.size() == features_dtypes.size() && features_ranks.size() == features_devices.size(),
              "myops._roi_align_levels_meta: one rank, dtype and device per feature map");
  std::vector<TensorInfo> features;
  size_t at = 0;
  for (size_t l = 0; l < features_ranks.size(); ++l) {
    const auto r = static_cast<size_t>(features_ranks[l]);
    TORCH_CHECK(at + r <= features_sizes.size(), "myops._roi_align_levels_meta: 'features_ranks' ", features_ranks,
                " do not fit ", features_sizes.size(), " sizes");
    features.emplace_back(features_sizes.slice(at, r), c10::SymIntArrayRef(), features_dtypes[l], features_devices[l]);
    at += r;
  }
  roi_align::check_inputs(features, MYOPS_INFO(rois), MYOPS_INFO(levels), spatial_scale, pooled_height,
                          pooled_width, sampling_ratio);
}

// linear_bounded / conv_bounded: the ops' own checks (the layer's are torch's).
void bounded_meta(c10::string_view op, MYOPS_INFO_ARGS(input), MYOPS_INFO_ARGS(count)) {
  if (op == bounded::Linear::name) {
    bounded::Linear::check(MYOPS_INFO(input), MYOPS_INFO(count));
  } else {
    TORCH_CHECK(op == bounded::Conv::name, "myops._bounded_meta: unknown op ", op);
    bounded::Conv::check(MYOPS_INFO(input), MYOPS_INFO(count));
  }
}

// heatmaps_to_keypoints (input = maps, other = rois) / paste_masks (input = masks, other = boxes,
// image_size).
void detection_decode_meta(c10::string_view op, MYOPS_INFO_ARGS(input), MYOPS_INFO_ARGS(other),
                           MYOPS_INFO_ARGS(count), c10::IntArrayRef image_size) {
  if (op == "heatmaps_to_keypoints") {
    decode::check_keypoints(MYOPS_INFO(input), MYOPS_INFO(other), MYOPS_INFO(count));
  } else {
    TORCH_CHECK(op == "paste_masks", "myops._detection_decode_meta: unknown op ", op);
    decode::check_paste(MYOPS_INFO(input), MYOPS_INFO(other), MYOPS_INFO(count), image_size);
  }
}
#undef MYOPS_INFO_ARGS
#undef MYOPS_INFO
}  // namespace myops

TORCH_LIBRARY(myops, m) {
  // The fake (meta) kernels are Python functions in myops._fake: a process that loads this
  // library from C++ and then traces from Python is told which module to import.
  m.set_python_module("myops._fake");

  // ---- nonzero family -------------------------------------------------------------------
  m.def("nonzero(Tensor self) -> Tensor");
  m.def("nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor");

  // ---- bounded selection (static output shapes plus the true count as a device scalar) ----
  // indices [size, ndim]: the first min(count, size) rows of nonzero(self), the rest fill_value;
  // count: 0-d int64 on self's device, the true number of nonzeros (may exceed size).
  m.def("nonzero_bounded(Tensor self, *, SymInt size, int fill_value=-1) -> (Tensor indices, Tensor count)");
  // values [size]: the first min(count, size) elements of self[mask], the rest fill_value.
  m.def(
      "masked_select_bounded(Tensor self, Tensor mask, *, SymInt size, Scalar fill_value=0) -> "
      "(Tensor values, Tensor count)");
  // rows [size, *self.shape[1:]]: the first min(count, size) rows of self[mask] (mask 1-D over
  // dim 0), the rest fill_value.
  m.def(
      "mask_rows_bounded(Tensor self, Tensor mask, *, SymInt size, Scalar fill_value=0) -> "
      "(Tensor rows, Tensor count)");

  // ---- non-maximum suppression (== torchvision.ops.nms / batched_nms) ----------------------
  m.def("nms(Tensor boxes, Tensor scores, float iou_threshold) -> Tensor");
  m.def("batched_nms(Tensor boxes, Tensor scores, Tensor idxs, float iou_threshold) -> Tensor");
  // keep [size] int64: the first size survivors of nms (batched_nms), padded with -1;
  // count: 0-d int64 on the boxes' device, the true number of survivors. No host sync.
  m.def(
      "nms_static(Tensor boxes, Tensor scores, float iou_threshold, *, SymInt size) -> "
      "(Tensor keep, Tensor count)");
  m.def(
      "batched_nms_static(Tensor boxes, Tensor scores, Tensor idxs, float iou_threshold, *, "
      "SymInt size) -> (Tensor keep, Tensor count)");
  // A detector's post-processing, padded to K = max_detections (csrc/nms/multiclass_nms.cpp; the
  // reference it equals: python/myops/ops.py): num_detections [N] int64, detection_boxes
  // [N, K, 4], detection_scores [N, K], detection_classes / detection_anchors [N, K] int64;
  // padding: boxes and scores 0, classes and anchors -1. No host sync on CUDA.
  m.def(
      "multiclass_nms_static(Tensor boxes, Tensor scores, *, float score_threshold, float iou_threshold, "
      "int max_detections, int? pre_nms_top_k=None, bool class_agnostic=False, bool multi_label=True) -> "
      "(Tensor num_detections, Tensor detection_boxes, Tensor detection_scores, Tensor detection_classes, "
      "Tensor detection_anchors)");
  // Test control: multiclass_nms_static's static-shape form (the one CUDA runs) on any device.
  m.def(
      "_multiclass_nms_static_padded(Tensor boxes, Tensor scores, *, float score_threshold, float iou_threshold, "
      "int max_detections, int? pre_nms_top_k=None, bool class_agnostic=False, bool multi_label=True) -> "
      "(Tensor num_detections, Tensor detection_boxes, Tensor detection_scores, Tensor detection_classes, "
      "Tensor detection_anchors)");
  // Control op: torchvision.ops.batched_nms's path limit on a device (nms/nms_common.h), for
  // python/myops/detection.py, which picks the same path without a sync.
  m.def("_batched_nms_vanilla_above(Device device) -> int", &myops::batched_nms_vanilla_above);

  // ---- multi-level RoIAlign (== torchvision.ops.roi_align per RoI, inference only) ----------
  // out [K, C, pooled_height, pooled_width]: RoI k (rois[k] = batch index, x1, y1, x2, y2)
  // pooled on features[levels[k]] with spatial_scale[levels[k]]; features: 1 to 8 maps
  // [N, C, H_l, W_l] of one dtype; levels: int64 [K]; a level of -1 marks a padded RoI (not
  // read, its output 0).
  m.def(
      "roi_align_levels(Tensor[] features, Tensor rois, Tensor levels, float[] spatial_scale, "
      "int pooled_height, int pooled_width, int sampling_ratio=-1, bool aligned=False) -> Tensor");

  // ---- per-detection decoding over the real rows (torchvision's loops, inference only) ------
  // heatmaps_to_keypoints: maps [R, K, H, W] (float, double), rois [R, 4] (x1, y1, x2, y2, the
  // maps' dtype), count 0-d int64 on the maps' device (clamped to [0, R]) -> keypoints
  // [R, K, 3] (x, y, 1) and scores [R, K], float32: rows < count ==
  // torchvision.models.detection.roi_heads.heatmaps_to_keypoints(maps[:count], rois[:count]),
  // the rest 0.
  m.def("heatmaps_to_keypoints(Tensor maps, Tensor rois, Tensor count) -> (Tensor, Tensor)");
  // paste_masks: masks [N, D, S, S'] (already padded: float, double), boxes int64 [N, D, 4] (the
  // expanded integer boxes), count int64 [N], image_size [h0, w0, h1, w1, ...] -> [N, D, H, W]
  // (H, W: the largest image), row d < count[n] == torchvision's paste_mask_in_image(masks[n, d],
  // boxes[n, d], h_n, w_n) at the top left of the canvas, every other pixel 0.
  m.def("paste_masks(Tensor masks, Tensor boxes, Tensor count, int[] image_size) -> Tensor");

  // ---- layers over the first `count` rows (inference only) ---------------------------------
  // out[:count] = the layer on input[:count] (rows = dim 0), the rows at or past count 0;
  // count: 0-d int64 on the input's device, clamped to [0, R]; out is contiguous.
  // linear_bounded: input [R, K], == F.linear(input[:count], weight, bias).
  m.def("linear_bounded(Tensor input, Tensor weight, Tensor? bias, Tensor count) -> Tensor");
  // conv_bounded: input [R, C, *spatial], == aten::convolution(input[:count], ...) (Conv1d/2d/3d,
  // ConvTranspose*d).
  m.def(
      "conv_bounded(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
      "bool transposed, int[] output_padding, int groups, Tensor count) -> Tensor");

  // ---- elementwise: one schema per line of the op table (myops/op_table.h) ----------------
  // unary: relu, gelu(approximate='none'|'tanh'), silu, sigmoid, cast; binary (broadcasting,
  // type promotion): add, sub (alpha), mul, div, maximum, minimum, and add / sub / mul / div /
  // where with a number (the Scalar overloads, aten's promotion for a wrapped number); ternary
  // (broadcasting): where, addcmul (value), clamp (Tensor bounds), clamp.Scalar (number bounds:
  // the same values, but only `self` has a gradient, with torch's formula for number bounds)
#define MYOPS_EW_DEF(FN, NAME, OVERLOAD, KIND, RULE, SIG, SCHEMA, DROPIN) \
  m.def((std::string(MYOPS_EW_QUALNAME(NAME, OVERLOAD)) + SCHEMA).c_str());
  MYOPS_EW_OPS(MYOPS_EW_DEF)
#undef MYOPS_EW_DEF
  // mul_scalar: mul.Scalar under its old name, kept for compatibility (CompositeImplicitAutograd,
  // csrc/elementwise/autograd.cpp: it calls mul.Scalar)
  m.def("mul_scalar(Tensor self, Scalar other) -> Tensor");
  // The op table for Python (myops._table: the fake kernels and the test tables read it): one
  // "fn|name|overload|kind|arity|dtypes|rule|sig|aten|dropin_default" string per op, in table order.
  m.def("_ew_table() -> str[]", &myops::ew_table);
  // The elementwise layout rules for the fake kernels (core/output_strides.h; the kernels'
  // planner reads the same rules): the output strides of inputs broadcast to `shape` (their sizes
  // and strides flattened, input k having ranks[k] dims), and the strides of `t.to(dtype)`.
  // CompositeExplicitAutograd: run as they are under every tracer (no tensors, no graph node).
  m.def("_ew_out_strides(SymInt[] shape, SymInt[] sizes, SymInt[] strides, int[] ranks) -> SymInt[]",
        torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(myops::ew_out_strides)));
  m.def("_ew_preserve_strides(SymInt[] sizes, SymInt[] strides) -> SymInt[]",
        torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(myops::ew_preserve_strides)));

  // The supported dtype sets for Python (core/dtypes.h; myops._table.DTYPES reads them): one
  // "column|name,..." string per set of the DTYPES column (All, NonBool, Float).
  m.def("_dtypes() -> str[]", &myops::dtype_sets);

  // ---- the shape rules of the other families, for the fake kernels (python/myops/_fake.py) ----
  // Each runs a family's checks (written once, in the header atop csrc/<family>/, for the CPU and CUDA
  // kernels) on the sizes of the fake kernel's tensors, which may be symbolic; a tensor comes as
  // (sizes, strides, dtype, device). CompositeExplicitAutograd, like _ew_out_strides.
#define MYOPS_META_DEF(SCHEMA, FN) \
  m.def(SCHEMA, torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(FN)))
#define MYOPS_INFO(t) "SymInt[] " t "_sizes, SymInt[] " t "_strides, ScalarType " t "_dtype, Device " t "_device"
  MYOPS_META_DEF("_nonzero_meta(str op, " MYOPS_INFO("self") ", SymInt? size) -> ()", myops::nonzero_meta);
  // the pooled sizes and whether the result is channels_last (other: grad_output with backward)
  MYOPS_META_DEF("_max_pool2d_add_meta(" MYOPS_INFO("self") ", " MYOPS_INFO("other") ", int[] kernel_size, "
                 "int[] stride, int[] padding, bool ceil_mode, bool backward) -> (SymInt[], bool)",
                 myops::max_pool2d_add_meta);
  // the diagonal's sizes (diagonal_backward's checks with grad_sizes)
  MYOPS_META_DEF("_diagonal_meta(SymInt[] sizes, int offset, int dim1, int dim2, SymInt[]? grad_sizes) -> SymInt[]",
                 myops::diagonal_meta);
  MYOPS_META_DEF("_nms_meta(str op, " MYOPS_INFO("boxes") ", " MYOPS_INFO("scores") ", SymInt[]? idxs_sizes, "
                 "SymInt[]? idxs_strides, ScalarType? idxs_dtype, Device? idxs_device, SymInt? size) -> ()",
                 myops::nms_meta);
  MYOPS_META_DEF("_multiclass_nms_meta(" MYOPS_INFO("boxes") ", " MYOPS_INFO("scores") ", int max_detections, "
                 "int? pre_nms_top_k) -> ()",
                 myops::multiclass_nms_meta);
  MYOPS_META_DEF("_roi_align_levels_meta(SymInt[] features_sizes, int[] features_ranks, "
                 "ScalarType[] features_dtypes, Device[] features_devices, " MYOPS_INFO("rois") ", "
                 MYOPS_INFO("levels") ", float[] spatial_scale, int pooled_height, int pooled_width, "
                 "int sampling_ratio) -> ()",
                 myops::roi_align_levels_meta);
  MYOPS_META_DEF("_bounded_meta(str op, " MYOPS_INFO("input") ", " MYOPS_INFO("count") ") -> ()",
                 myops::bounded_meta);
  MYOPS_META_DEF("_detection_decode_meta(str op, " MYOPS_INFO("input") ", " MYOPS_INFO("other") ", "
                 MYOPS_INFO("count") ", int[] image_size) -> ()",
                 myops::detection_decode_meta);
#undef MYOPS_INFO
#undef MYOPS_META_DEF

  // ---- max_pool2d_add ---------------------------------------------------------------------
  m.def(
      "max_pool2d_add(Tensor self, Tensor other, int[2] kernel_size=[3,3], int[2] stride=[2,2], "
      "int[2] padding=[1,1], bool ceil_mode=False) -> Tensor");
  // Gradient w.r.t. `self` only (the gradient of `other` is a sum over its broadcast dims).
  m.def(
      "max_pool2d_add_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
      "int[2] padding, bool ceil_mode) -> Tensor");

  // ---- diagonal ---------------------------------------------------------------------------
  m.def("diagonal(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor");
  // Writes `grad` onto the diagonal of a zero tensor of shape `input_sizes`.
  m.def("diagonal_backward(Tensor grad, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor");

  // ---- control ops (no tensors: their kernels register as CompositeImplicitAutograd) --------
  // Which CPU build runs (csrc/elementwise/cpu/elementwise.cpp; core/cpu_isa.h).
  m.def("_cpu_isa() -> str");
  // The aten drop-in's registry (csrc/dropin/aten_override.cpp; the CUDA emulation copies these
  // schemas into myops_emu, tests/cuda_emulation/loader.py).
  m.def("_override_ops() -> str[]");
  m.def("_override_defaults() -> str[]");
  m.def("_override_enable(str[] ops) -> ()");
  m.def("_override_disable() -> ()");
  m.def("_override_enabled() -> str[]");
  m.def("_override_registered() -> str[]");
  m.def("_override_scope_enter(str[] ops) -> int");
  m.def("_override_scope_exit(str[] ops, int token) -> ()");
  m.def("_override_stats(bool this_thread=False) -> int[]");
  m.def("_override_why() -> str[]");
  m.def("_override_stats_why(bool this_thread=False) -> int[]");
}

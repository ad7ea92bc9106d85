// The nms family's schemas (core/schema.h): nms / batched_nms (== torchvision.ops.nms /
// batched_nms), their static forms, the composite multiclass_nms_static (multiclass_nms.cpp),
// and their shape rules for the fake kernels.
#include <optional>
#include <string>

#include "core/schema.h"
#include "nms/nms_common.h"

namespace myops {
namespace {

int64_t batched_nms_vanilla_above(c10::Device device) { return nms_common::vanilla_above(device.is_cpu()); }

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

}  // namespace
}  // namespace myops

MYOPS_SCHEMAS(m) {
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
  // reference it equals: python/myops/_nms.py): num_detections [N] int64, detection_boxes
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

  MYOPS_CONTROL_DEF(m,
                    "_nms_meta(str op, " MYOPS_INFO_SCHEMA("boxes") ", " MYOPS_INFO_SCHEMA("scores")
                    ", SymInt[]? idxs_sizes, SymInt[]? idxs_strides, ScalarType? idxs_dtype, Device? idxs_device, "
                    "SymInt? size) -> ()",
                    myops::nms_meta);
  MYOPS_CONTROL_DEF(m,
                    "_multiclass_nms_meta(" MYOPS_INFO_SCHEMA("boxes") ", " MYOPS_INFO_SCHEMA(
                        "scores") ", int max_detections, int? pre_nms_top_k) -> ()",
                    myops::multiclass_nms_meta);
}

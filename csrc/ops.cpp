// The C++ API (include/myops/ops.h): each function calls its op through the dispatcher with a
// typed handle found once, as torchvision's C++ ops do, so the caller gets the CPU/CUDA choice,
// autograd and dispatch modes exactly as torch.ops.myops.<op> gives them from Python.
#include "myops/ops.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include "elementwise/elementwise_handles.h"
#include "myops/op_signatures.h"

namespace myops {
namespace {

template <class Sig>
c10::TypedOperatorHandle<Sig> handle(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

using Unary = Tensor(const Tensor&);

}  // namespace

// One function per op: `static const auto op` is looked up on the first call (thread-safe).
#define MYOPS_CALL(name, Sig, ...)                     \
  static const auto op = handle<Sig>("myops::" #name); \
  return op.call(__VA_ARGS__)

Tensor nonzero(const Tensor& self) { MYOPS_CALL(nonzero, Unary, self); }
Tensor nonzero_static(const Tensor& self, int64_t size, int64_t fill_value) {
  MYOPS_CALL(nonzero_static, Tensor(const Tensor&, c10::SymInt, int64_t), self, c10::SymInt(size), fill_value);
}

using Pair = std::tuple<Tensor, Tensor>;
std::tuple<Tensor, Tensor> nonzero_bounded(const Tensor& self, int64_t size, int64_t fill_value) {
  MYOPS_CALL(nonzero_bounded, Pair(const Tensor&, c10::SymInt, int64_t), self, c10::SymInt(size), fill_value);
}
std::tuple<Tensor, Tensor> masked_select_bounded(const Tensor& self, const Tensor& mask, int64_t size,
                                                 const c10::Scalar& fill_value) {
  MYOPS_CALL(masked_select_bounded, Pair(const Tensor&, const Tensor&, c10::SymInt, const c10::Scalar&), self, mask,
             c10::SymInt(size), fill_value);
}
std::tuple<Tensor, Tensor> mask_rows_bounded(const Tensor& self, const Tensor& mask, int64_t size,
                                             const c10::Scalar& fill_value) {
  MYOPS_CALL(mask_rows_bounded, Pair(const Tensor&, const Tensor&, c10::SymInt, const c10::Scalar&), self, mask,
             c10::SymInt(size), fill_value);
}

Tensor nms(const Tensor& boxes, const Tensor& scores, double iou_threshold) {
  MYOPS_CALL(nms, Tensor(const Tensor&, const Tensor&, double), boxes, scores, iou_threshold);
}
Tensor batched_nms(const Tensor& boxes, const Tensor& scores, const Tensor& idxs, double iou_threshold) {
  MYOPS_CALL(batched_nms, Tensor(const Tensor&, const Tensor&, const Tensor&, double), boxes, scores, idxs,
             iou_threshold);
}
std::tuple<Tensor, Tensor> nms_static(const Tensor& boxes, const Tensor& scores, double iou_threshold, int64_t size) {
  MYOPS_CALL(nms_static, Pair(const Tensor&, const Tensor&, double, c10::SymInt), boxes, scores, iou_threshold,
             c10::SymInt(size));
}
std::tuple<Tensor, Tensor> batched_nms_static(const Tensor& boxes, const Tensor& scores, const Tensor& idxs,
                                              double iou_threshold, int64_t size) {
  MYOPS_CALL(batched_nms_static, Pair(const Tensor&, const Tensor&, const Tensor&, double, c10::SymInt), boxes, scores,
             idxs, iou_threshold, c10::SymInt(size));
}

using Detections = std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor>;
using MulticlassNms = Detections(const Tensor&, const Tensor&, double, double, int64_t, std::optional<int64_t>, bool,
                                 bool);
Detections multiclass_nms_static(const Tensor& boxes, const Tensor& scores, double score_threshold,
                                 double iou_threshold, int64_t max_detections, std::optional<int64_t> pre_nms_top_k,
                                 bool class_agnostic, bool multi_label) {
  MYOPS_CALL(multiclass_nms_static, MulticlassNms, boxes, scores, score_threshold, iou_threshold, max_detections,
             pre_nms_top_k, class_agnostic, multi_label);
}

Tensor roi_align_levels(at::TensorList features, const Tensor& rois, const Tensor& levels,
                        at::ArrayRef<double> spatial_scale, int64_t pooled_height, int64_t pooled_width,
                        int64_t sampling_ratio, bool aligned) {
  MYOPS_CALL(
      roi_align_levels,
      Tensor(at::TensorList, const Tensor&, const Tensor&, at::ArrayRef<double>, int64_t, int64_t, int64_t, bool),
      features, rois, levels, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned);
}

std::tuple<Tensor, Tensor> heatmaps_to_keypoints(const Tensor& maps, const Tensor& rois, const Tensor& count) {
  MYOPS_CALL(heatmaps_to_keypoints, Pair(const Tensor&, const Tensor&, const Tensor&), maps, rois, count);
}
Tensor paste_masks(const Tensor& masks, const Tensor& boxes, const Tensor& count, at::IntArrayRef image_size) {
  MYOPS_CALL(paste_masks, Tensor(const Tensor&, const Tensor&, const Tensor&, at::IntArrayRef), masks, boxes, count,
             image_size);
}

Tensor linear_bounded(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      const Tensor& count) {
  MYOPS_CALL(linear_bounded, Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, const Tensor&), input,
             weight, bias, count);
}
Tensor conv_bounded(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                    at::IntArrayRef output_padding, int64_t groups, const Tensor& count) {
  MYOPS_CALL(conv_bounded,
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, at::IntArrayRef, at::IntArrayRef,
                    at::IntArrayRef, bool, at::IntArrayRef, int64_t, const Tensor&),
             input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, count);
}

Tensor max_pool2d_add(const Tensor& self, const Tensor& other, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                      at::IntArrayRef padding, bool ceil_mode) {
  MYOPS_CALL(max_pool2d_add,
             Tensor(const Tensor&, const Tensor&, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool), self, other,
             kernel_size, stride, padding, ceil_mode);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  MYOPS_CALL(diagonal, Tensor(const Tensor&, int64_t, int64_t, int64_t), self, offset, dim1, dim2);
}

#undef MYOPS_CALL

}  // namespace myops

// The elementwise ops: one function per line of the op table (myops/op_table.h), its
// parameters those of its SIG (myops/op_signatures.h), calling the shared handle
// (elementwise/elementwise_handles.h), written out by tools/gen_ops_elementwise.py. Defined with qualified names:
// each must match its declaration in myops/ops_elementwise.h.
#include "elementwise/generated/api.inc"

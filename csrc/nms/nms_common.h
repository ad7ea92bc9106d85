#pragma once
// Shared by the CPU and CUDA nms kernels: torchvision's input checks (with myops' op / argument
// naming) and batched_nms's coordinate trick, computed with the same torch ops as torchvision so
// that the shifted boxes (and hence every IoU) are bit-identical.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/max.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/scalar_tensor.h>

#include "core/checks.h"

#include <optional>

namespace myops {
namespace nms_common {

// torchvision.ops.batched_nms's path limit: above this many elements of `boxes` it runs one nms
// per class, at or below it the coordinate trick (torchvision/ops/boxes.py: 4000 on the CPU,
// 100000 on any other device). The CPU and CUDA kernels and, through the control
// op myops::_batched_nms_vanilla_above, python/myops/detection.py read it here.
constexpr int64_t vanilla_above(bool cpu) { return cpu ? 4000 : 100000; }

// The boxes' dtypes of the CPU kernel (`cpu`) or of the others (RuntimeError otherwise, as
// torchvision's): its CPU kernel takes float and double, its CUDA kernel half too.
inline c10::ArrayRef<at::ScalarType> box_dtypes(bool cpu) {
  static constexpr at::ScalarType kCpu[] = {at::kFloat, at::kDouble};
  static constexpr at::ScalarType kOther[] = {at::kHalf, at::kFloat, at::kDouble};
  return cpu ? c10::ArrayRef<at::ScalarType>(kCpu) : c10::ArrayRef<at::ScalarType>(kOther);
}
inline void check_box_dtype(const TensorInfo& boxes, const char* op, bool cpu) {
  check_dtype(boxes.dtype, box_dtypes(cpu), op, "boxes", /*not_implemented=*/false);
}

// boxes [N, 4], scores [N], both of one dtype (one of box_dtypes), on one device. These checks
// read TensorInfo (core/checks.h): the fake kernels run them through the control op
// myops::_nms_meta (csrc/nms/schema.cpp).
inline void check_boxes_scores(const TensorInfo& boxes, const TensorInfo& scores, const char* op, bool cpu) {
  TORCH_CHECK(boxes.dim() == 2, "myops.", op, ": argument 'boxes' must be a 2-D [N, 4] tensor, got ", boxes.dim(),
              "-D");
  MYOPS_SYM_CHECK(boxes.size(1).sym_eq(4), "myops.", op, ": argument 'boxes' must have 4 elements in dim 1, got ",
                  boxes.size(1));
  TORCH_CHECK(scores.dim() == 1, "myops.", op, ": argument 'scores' must be a 1-D tensor, got ", scores.dim(), "-D");
  MYOPS_SYM_CHECK(boxes.size(0).sym_eq(scores.size(0)), "myops.", op,
                  ": arguments 'boxes' and 'scores' must have the same number of boxes, got ", boxes.size(0), " and ",
                  scores.size(0));
  check_same_device(boxes, "boxes", scores, "scores", op);
  TORCH_CHECK(boxes.dtype == scores.dtype, "myops.", op,
              ": arguments 'boxes' and 'scores' must have the same dtype, got ", boxes.dtype, " and ", scores.dtype);
  check_box_dtype(boxes, op, cpu);
}

// idxs [N], a real dtype, on the boxes' device.
inline void check_idxs(const TensorInfo& boxes, const TensorInfo& idxs, const char* op) {
  MYOPS_SYM_CHECK(idxs.dim() == 1 ? idxs.size(0).sym_eq(boxes.size(0)) : c10::SymBool(false), "myops.", op,
                  ": argument 'idxs' must be a 1-D tensor of ", boxes.size(0), " class indices, got shape ",
                  idxs.sizes);
  TORCH_CHECK(!c10::isComplexType(idxs.dtype), "myops.", op, ": argument 'idxs' must be real, got ", idxs.dtype);
  check_same_device(boxes, "boxes", idxs, "idxs", op);
}

// multiclass_nms_static: boxes [N, A, 4] or [N, A, C, 4], scores [N, A, C], one dtype (one of
// box_dtypes: the CPU's or the others' as `cpu` says, by default as the boxes' device), one
// device; max_detections and pre_nms_top_k >= 0.
inline void check_multiclass(const TensorInfo& boxes, const TensorInfo& scores, int64_t max_detections,
                             std::optional<int64_t> pre_nms_top_k, const char* op,
                             std::optional<bool> cpu = std::nullopt) {
  TORCH_CHECK(scores.dim() == 3, "myops.", op, ": argument 'scores' must be a 3-D [N, A, C] tensor, got ", scores.dim(),
              "-D");
  TORCH_CHECK(boxes.dim() == 3 || boxes.dim() == 4, "myops.", op,
              ": argument 'boxes' must be a 3-D [N, A, 4] or 4-D [N, A, C, 4] tensor, got ", boxes.dim(), "-D");
  MYOPS_SYM_CHECK(boxes.size(-1).sym_eq(4), "myops.", op,
                  ": argument 'boxes' must have 4 elements in its last dim, got ", boxes.size(-1));
  const bool per_class = boxes.dim() == 4;
  c10::SymBool agree = boxes.size(0).sym_eq(scores.size(0)) & boxes.size(1).sym_eq(scores.size(1));
  if (per_class) agree = agree & boxes.size(2).sym_eq(scores.size(2));
  MYOPS_SYM_CHECK(agree, "myops.", op, ": arguments 'boxes' ", boxes.sizes, " and 'scores' ", scores.sizes,
                  " must agree in N, A", per_class ? " and C" : "",
                  " (boxes [N, A, 4] or [N, A, C, 4], scores [N, A, C])");
  check_same_device(boxes, "boxes", scores, "scores", op);
  TORCH_CHECK(boxes.dtype == scores.dtype, "myops.", op,
              ": arguments 'boxes' and 'scores' must have the same dtype, got ", boxes.dtype, " and ", scores.dtype);
  check_box_dtype(boxes, op, cpu.value_or(boxes.device.is_cpu()));
  TORCH_CHECK(max_detections >= 0, "myops.", op, ": argument 'max_detections' must be >= 0, got ", max_detections);
  TORCH_CHECK(!pre_nms_top_k.has_value() || *pre_nms_top_k >= 0, "myops.", op,
              ": argument 'pre_nms_top_k' must be >= 0 or None, got ", pre_nms_top_k.value_or(0));
}

// torchvision's coordinate trick: boxes + (idxs * (boxes.max() + 1))[:, None], in the boxes'
// dtype, op for op as torchvision computes it. Requires boxes.numel() > 0.
inline at::Tensor offset_boxes(const at::Tensor& boxes, const at::Tensor& idxs) {
  const at::Tensor max_coordinate = boxes.max();
  const at::Tensor offsets =
      at::mul(idxs.to(boxes.scalar_type()), at::add(max_coordinate, at::scalar_tensor(1, boxes.options())));
  return at::add(boxes, offsets.unsqueeze(1));
}

}  // namespace nms_common
}  // namespace myops

#pragma once
// Shared by the CPU and CUDA nms kernels: torchvision's input checks (with myops' op / argument
// naming) and batched_nms's coordinate trick, computed with the same torch ops as torchvision so
// that the shifted boxes (and hence every IoU) are bit-identical.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/max.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/scalar_tensor.h>

#include "common/checks.h"

namespace myops {
namespace nms_common {

// torchvision.ops.batched_nms's path limit: above this many elements of `boxes` it runs one nms
// per class, at or below it the coordinate trick (torchvision/ops/boxes.py: 4000 on the CPU,
// 100000 on any other device). The CPU and CUDA kernels and, through the control
// op myops::_batched_nms_vanilla_above, python/myops/detection.py read it here.
constexpr int64_t vanilla_above(bool cpu) { return cpu ? 4000 : 100000; }

// boxes [N, 4], scores [N], both of one dtype, on one device.
inline void check_shapes(const at::Tensor& boxes, const at::Tensor& scores, const char* op) {
  TORCH_CHECK(boxes.dim() == 2, "myops.", op, ": argument 'boxes' must be a 2-D [N, 4] tensor, got ",
              boxes.dim(), "-D");
  TORCH_CHECK(boxes.size(1) == 4, "myops.", op,
              ": argument 'boxes' must have 4 elements in dim 1, got ", boxes.size(1));
  TORCH_CHECK(scores.dim() == 1, "myops.", op, ": argument 'scores' must be a 1-D tensor, got ",
              scores.dim(), "-D");
  TORCH_CHECK(boxes.size(0) == scores.size(0), "myops.", op,
              ": arguments 'boxes' and 'scores' must have the same number of boxes, got ",
              boxes.size(0), " and ", scores.size(0));
  check_same_device(boxes, "boxes", scores, "scores", op);
  TORCH_CHECK(boxes.scalar_type() == scores.scalar_type(), "myops.", op,
              ": arguments 'boxes' and 'scores' must have the same dtype, got ", boxes.scalar_type(),
              " and ", scores.scalar_type());
}

// idxs [N], a real dtype, on the boxes' device.
inline void check_idxs(const at::Tensor& boxes, const at::Tensor& idxs, const char* op) {
  TORCH_CHECK(idxs.dim() == 1 && idxs.size(0) == boxes.size(0), "myops.", op,
              ": argument 'idxs' must be a 1-D tensor of ", boxes.size(0), " class indices, got shape ",
              idxs.sizes());
  TORCH_CHECK(!idxs.is_complex(), "myops.", op, ": argument 'idxs' must be real, got ",
              idxs.scalar_type());
  check_same_device(boxes, "boxes", idxs, "idxs", op);
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

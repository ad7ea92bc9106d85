#pragma once
// heatmaps_to_keypoints / paste_masks (csrc/detection/schema.cpp), shared by the CPU kernels
// (detection/cpu/detection_decode.cpp) and the CUDA kernels (detection/cuda/detection_decode.cu): the input checks
// and the per-RoI geometry, which must be computed alike on both.
//
// Both ops are torchvision's per-detection loops (roi_heads.heatmaps_to_keypoints,
// paste_masks_in_image) over the real rows only: rows at or past their bound (`count`, a device
// tensor) are padding, not read, and their output is 0.
#include <ATen/core/Tensor.h>
#include <c10/macros/Macros.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "core/checks.h"
#include "core/cuda_rules.h"

namespace myops {
namespace decode {

// The checks read TensorInfo (core/checks.h): the fake kernels run them through the control op
// myops::_detection_decode_meta (csrc/detection/schema.cpp).
inline void check_count(const TensorInfo& count, const TensorInfo& input, int64_t dim, const char* op) {
  TORCH_CHECK(count.dtype == at::kLong, "myops.", op, ": argument 'count' must have dtype int64, got ", count.dtype);
  TORCH_CHECK_VALUE(count.dim() == dim, "myops.", op, ": argument 'count' must be a ", dim, "-D tensor, got shape ",
                    count.sizes);
  check_same_device(input, dim == 0 ? "maps" : "masks", count, "count", op);
}

// maps [R, K, H, W] (float, double), rois [R, 4] (x1, y1, x2, y2; the maps' dtype), count 0-d int64.
inline void check_keypoints(const TensorInfo& maps, const TensorInfo& rois, const TensorInfo& count) {
  constexpr const char* op = "heatmaps_to_keypoints";
  TORCH_CHECK_VALUE(maps.dim() == 4, "myops.", op, ": argument 'maps' must be a 4-D [R, K, H, W] tensor, got shape ",
                    maps.sizes);
  check_dtype(maps.dtype, {at::kFloat, at::kDouble}, op, "maps");
  MYOPS_SYM_CHECK_VALUE(
      rois.dim() == 2 ? rois.size(0).sym_eq(maps.size(0)) & rois.size(1).sym_eq(4) : c10::SymBool(false), "myops.", op,
      ": argument 'rois' must be a [", maps.size(0), ", 4] tensor (maps' R), got shape ", rois.sizes);
  TORCH_CHECK(rois.dtype == maps.dtype, "myops.", op, ": argument 'rois' must have the dtype of 'maps' (", maps.dtype,
              "), got ", rois.dtype);
  check_same_device(maps, "maps", rois, "rois", op);
  check_count(count, maps, 0, op);
  MYOPS_SYM_CHECK_VALUE(maps.size(2).sym_gt(0) & maps.size(3).sym_gt(0), "myops.", op,
                        ": argument 'maps' must have H, W > 0, got ", maps.sizes);
}

// masks [N, D, S, S'] (float, double), boxes int64 [N, D, 4], count int64 [N], image_size 2N ints.
inline void check_paste(const TensorInfo& masks, const TensorInfo& boxes, const TensorInfo& count,
                        at::IntArrayRef image_size) {
  constexpr const char* op = "paste_masks";
  TORCH_CHECK_VALUE(masks.dim() == 4, "myops.", op, ": argument 'masks' must be a 4-D [N, D, S, S] tensor, got shape ",
                    masks.sizes);
  check_dtype(masks.dtype, {at::kFloat, at::kDouble}, op, "masks");
  MYOPS_SYM_CHECK_VALUE(masks.size(2).sym_gt(0) & masks.size(3).sym_gt(0), "myops.", op,
                        ": argument 'masks' must have S > 0, got shape ", masks.sizes);
  MYOPS_SYM_CHECK_VALUE(boxes.dim() == 3 ? boxes.size(0).sym_eq(masks.size(0)) & boxes.size(1).sym_eq(masks.size(1)) &
                                               boxes.size(2).sym_eq(4)
                                         : c10::SymBool(false),
                        "myops.", op, ": argument 'boxes' must be a [", masks.size(0), ", ", masks.size(1),
                        ", 4] tensor, got shape ", boxes.sizes);
  TORCH_CHECK(boxes.dtype == at::kLong, "myops.", op, ": argument 'boxes' must have dtype int64, got ", boxes.dtype);
  check_same_device(masks, "masks", boxes, "boxes", op);
  check_count(count, masks, 1, op);
  MYOPS_SYM_CHECK_VALUE(count.size(0).sym_eq(masks.size(0)), "myops.", op, ": argument 'count' must have ",
                        masks.size(0), " elements (one per image), got ", count.size(0));
  MYOPS_SYM_CHECK_VALUE(
      masks.size(0).sym_eq(static_cast<int64_t>(image_size.size()) / 2) & c10::SymBool(image_size.size() % 2 == 0),
      "myops.", op, ": argument 'image_size' must hold (height, width) for each of the ", masks.size(0),
      " images, got ", image_size.size(), " values");
  for (int64_t v : image_size) {
    TORCH_CHECK_VALUE(v >= 0, "myops.", op, ": argument 'image_size' must be >= 0, got ", image_size);
  }
}

// The canvas: the largest image height and width.
inline std::pair<int64_t, int64_t> canvas(at::IntArrayRef image_size) {
  int64_t h = 0, w = 0;
  for (size_t i = 0; i + 1 < image_size.size(); i += 2) {
    h = image_size[i] > h ? image_size[i] : h;
    w = image_size[i + 1] > w ? image_size[i + 1] : w;
  }
  return {h, w};
}

// torchvision's per-RoI size of the resampled heatmap: ceil(max(x2 - x1, 1)), in the RoI's dtype.
template <typename T>
C10_HOST_DEVICE inline T roi_extent(T lo, T hi) {
  const T e = hi - lo;
  return e < T(1) ? T(1) : e;  // clamp(min=1): a NaN stays NaN
}

// x = (x_int + 0.5) * (extent / ceil(extent)) + offset, in float32 as torchvision's (its
// correction and offset are 0-d tensors of the RoI's dtype, rounded to float32 where they meet the
// float32 positions). Each step is its own torch op there, so each is rounded on its own here
// (mul_rn / add_rn: no fused multiply-add on CUDA). The correction divides a 0-d tensor by a
// Python int: on CUDA torch multiplies by the int's reciprocal instead (its true division by a
// CPU scalar, BinaryDivTrueKernel.cu: a * (1 / b), 1 / b in the dtype), on the CPU it divides.
template <typename T>
C10_HOST_DEVICE inline float keypoint_coord(int64_t pos, T extent, int64_t size, T offset) {
#if defined(MYOPS_CUDA_RULES)
  const float correction = static_cast<float>(mul_rn(extent, T(1) / static_cast<T>(size)));
#else
  const float correction = static_cast<float>(extent / static_cast<T>(size));
#endif
  const float c = static_cast<float>(pos) + 0.5f;
  return add_rn(mul_rn(c, correction), static_cast<float>(offset));
}

// Argmax with torch's rule: the first maximum, a NaN counting as the maximum (the first NaN).
template <typename T>
C10_HOST_DEVICE inline bool beats(T v, int64_t i, T best, int64_t best_i) {
  const bool vn = v != v, bn = best != best;
  if (vn || bn) return vn && (!bn || i < best_i);
  return v > best || (v == best && i < best_i);
}

}  // namespace decode
}  // namespace myops

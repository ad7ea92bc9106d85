#pragma once
// torchvision's devIoU on CUDA, shared by the nms kernels (nms.cu) and multiclass_nms_static's
// pipeline (multiclass_nms.cu).
#include "core/op_math.h"  // OpMath: torchvision's accumulate type on CUDA

namespace myops {
namespace nms_iou {

// CUDA's max / min (fmax / fmin: a NaN operand is ignored), as torchvision's devIoU gets them;
// half goes through float (the result is one of the operands, so exact).
template <typename T>
__device__ __forceinline__ T dmax(T a, T b) {
  using Acc = typename OpMath<T>::type;
  return static_cast<T>(::fmax(static_cast<Acc>(a), static_cast<Acc>(b)));
}
template <typename T>
__device__ __forceinline__ T dmin(T a, T b) {
  using Acc = typename OpMath<T>::type;
  return static_cast<T>(::fmin(static_cast<Acc>(a), static_cast<Acc>(b)));
}

// torchvision's devIoU, the same operations in the same types and order: differences of the
// corners in T (rounded to half for half), the products and the ratio in the accumulate type.
template <typename T>
__device__ __forceinline__ bool iou_above(const T* a, const T* b, float threshold) {
  using Acc = typename OpMath<T>::type;
  const T left = dmax(a[0], b[0]), right = dmin(a[2], b[2]);
  const T top = dmax(a[1], b[1]), bottom = dmin(a[3], b[3]);
  const T width = dmax(static_cast<T>(right - left), static_cast<T>(0));
  const T height = dmax(static_cast<T>(bottom - top), static_cast<T>(0));
  const Acc inter = static_cast<Acc>(width) * static_cast<Acc>(height);
  const Acc sa = (static_cast<Acc>(a[2]) - static_cast<Acc>(a[0])) * static_cast<Acc>(static_cast<T>(a[3] - a[1]));
  const Acc sb = (static_cast<Acc>(b[2]) - static_cast<Acc>(b[0])) * static_cast<Acc>(static_cast<T>(b[3] - b[1]));
  return (inter / (sa + sb - inter)) > threshold;
}

}  // namespace nms_iou
}  // namespace myops

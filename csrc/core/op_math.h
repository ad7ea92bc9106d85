#pragma once
// The compute type of a storage type, as PyTorch's at::opmath_type: float for half and bfloat16,
// the type itself otherwise. The elementwise functors compute in it, and so do the NMS and
// RoIAlign CUDA kernels where torchvision's accumulate in float. Light header: c10 only.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

namespace myops {

template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<c10::Half> {
  using type = float;
};
template <>
struct OpMath<c10::BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

}  // namespace myops

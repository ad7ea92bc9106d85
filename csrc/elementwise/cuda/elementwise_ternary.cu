// Ternary elementwise ops on CUDA: the kinds of myops/op_table.h whose CUDA_UNIT is ternary
// (where(condition, self, other), addcmul, clamp).
#include "elementwise/cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

template <>
template <typename T>
void CudaKernel<EwKind::Where>::run_dtype(const Desc& d) {
  launch<T, bool, T, T>(d, WhereSelect<T>{});
}

template <>
template <typename T>
void CudaKernel<EwKind::Addcmul>::run_dtype(const Desc& d) {
  using C = opmath_t<T>;
  launch_same<T, 3>(d, Addcmul<C>{host_value<C>(d.alpha)});
}

// the same element function as clamp.Tensor (the bounds are never NaN here)
template <>
template <typename T>
void CudaKernel<EwKind::ClampScalar>::run_dtype(const Desc& d) {
  launch_same<T, 3>(d, Clamp{});
}

void launch_ternary(EwKind kind, const Desc& d) { launch_unit<CudaUnit::ternary>(kind, d); }

}  // namespace cuda
}  // namespace ew
}  // namespace myops

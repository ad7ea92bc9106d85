// Unary elementwise ops on CUDA: the kinds of myops/op_table.h whose CUDA_UNIT is unary (the
// functors in elementwise/elementwise_functors.h, the launch policy in elementwise/cuda/elementwise.cuh).
#include "elementwise/cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

template <>
template <typename T>
void CudaKernel<EwKind::Gelu>::run_dtype(const Desc& d) {
  launch_same<T, 1>(d, Gelu{d.gelu_tanh});
}

void launch_unary(EwKind kind, const Desc& d) { launch_unit<CudaUnit::unary>(kind, d); }

}  // namespace cuda
}  // namespace ew
}  // namespace myops

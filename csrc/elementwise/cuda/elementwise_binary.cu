// Binary elementwise ops on CUDA: the kinds of myops/op_table.h whose CUDA_UNIT is binary (add;
// sub is add with -alpha; mul). The rest (CUDA_UNIT div_pow_minmax: div, pow, maximum, minimum)
// live in elementwise_div_pow_minmax.cu so the two halves compile in parallel.
#include "elementwise/cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

template <>
template <typename T>
void CudaKernel<EwKind::Add>::run_dtype(const Desc& d) {
  using C = opmath_t<T>;
  if (d.alpha_one) {
    launch_same<T, 2>(d, Plus{});
  } else {
    launch_same<T, 2>(d, Add<C>{host_value<C>(d.alpha)});
  }
}

void launch_binary(EwKind kind, const Desc& d) { launch_unit<CudaUnit::binary>(kind, d); }

}  // namespace cuda
}  // namespace ew
}  // namespace myops

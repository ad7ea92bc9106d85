// Binary elementwise ops on CUDA: the kinds of myops/op_table.h whose CUDA_UNIT is
// div_pow_minmax (div, pow, maximum, minimum; add and mul: elementwise_binary.cu).
#include "elementwise/cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

template <>
template <typename T>
void CudaKernel<EwKind::Div>::run_dtype(const Desc& d) {
  using C = opmath_t<T>;
  if (d.bind == 1) {
    // a CPU scalar divisor: torch's CUDA kernel computes a * (1 / s); the glue bound 1 / s
    launch<T, T>(d, InOpMath<T, BindRight<Mul, C>>{{Mul{}, host_value<C>(d.bound)}});
  } else {
    launch_same<T, 2, /*kBindRight=*/false>(d, Div{});  // no a / s kernel: it spilled (double)
  }
}

void launch_div_pow_minmax(EwKind kind, const Desc& d) { launch_unit<CudaUnit::div_pow_minmax>(kind, d); }

}  // namespace cuda
}  // namespace ew
}  // namespace myops

// cast(self, dtype) on CUDA for destination dtypes: half, bfloat16, float, double (every source dtype).
// The cast instantiations are split over two files so they compile in parallel.
#include <ATen/Dispatch_v2.h>

#include "elementwise/cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

void launch_cast_to_float(const Desc& d) {
  const auto dt = static_cast<c10::ScalarType>(d.dtype);
  const auto src = static_cast<c10::ScalarType>(d.in_dtype[0]);
  AT_DISPATCH_V2(dt, "myops.cast", AT_WRAP([&] {
                   using Out = scalar_t;
                   AT_DISPATCH_V2(src, "myops.cast",
                                  AT_WRAP([&] { launch<Out, scalar_t>(d, CastTo<Out, scalar_t>{}); }),
                                  AT_EXPAND(AT_ALL_TYPES), c10::kBool, c10::kHalf, c10::kBFloat16);
                 }),
                 AT_EXPAND(AT_FLOATING_TYPES), c10::kHalf, c10::kBFloat16);
}

}  // namespace cuda
}  // namespace ew
}  // namespace myops

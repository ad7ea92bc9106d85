// Binary elementwise ops on CUDA: add (sub is add with -alpha), mul. div / maximum / minimum
// live in elementwise_minmax.cu so the two halves compile in parallel.
#include <ATen/Dispatch_v2.h>

#include "cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

#define MYOPS_EW_ALL AT_EXPAND(AT_ALL_TYPES), c10::kBool, c10::kHalf, c10::kBFloat16

void launch_binary(EwKind kind, const Desc& d) {
  const auto dt = static_cast<c10::ScalarType>(d.dtype);
  switch (kind) {
    case EwKind::Add:
      AT_DISPATCH_V2(dt, "myops.add", AT_WRAP([&] {
        using C = opmath_t<scalar_t>;
        if (d.alpha_one) {
          launch_same<scalar_t, 2>(d, Plus{});
        } else {
          launch_same<scalar_t, 2>(d, Add<C>{host_value<C>(d.alpha)});
        }
      }), MYOPS_EW_ALL);
      break;
    case EwKind::Mul:
      AT_DISPATCH_V2(dt, "myops.mul", AT_WRAP([&] { launch_same<scalar_t, 2>(d, Mul{}); }), MYOPS_EW_ALL);
      break;
    case EwKind::Div:
    case EwKind::Maximum:
    case EwKind::Minimum:
      launch_div_minmax(kind, d);
      break;
    default:
      TORCH_INTERNAL_ASSERT(false, "myops: launch_binary got a non-binary op");
  }
}

}  // namespace cuda
}  // namespace ew
}  // namespace myops

// Binary elementwise ops on CUDA: div, maximum, minimum (see elementwise_binary.cu).
#include <ATen/Dispatch_v2.h>

#include "cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

#define MYOPS_EW_ALL AT_EXPAND(AT_ALL_TYPES), c10::kBool, c10::kHalf, c10::kBFloat16
#define MYOPS_EW_FLOAT AT_EXPAND(AT_FLOATING_TYPES), c10::kHalf, c10::kBFloat16

void launch_div_minmax(EwKind kind, const Desc& d) {
  const auto dt = static_cast<c10::ScalarType>(d.dtype);
  switch (kind) {
    case EwKind::Div:
      AT_DISPATCH_V2(dt, "myops.div", AT_WRAP([&] {
        using C = opmath_t<scalar_t>;
        if (d.bind == 1) {
          // a CPU scalar divisor: torch's CUDA kernel computes a * (1 / s), 1 / s in opmath
          const C inv = C(1) / host_value<C>(d.bound);
          launch<scalar_t, scalar_t>(d, InOpMath<scalar_t, BindRight<Mul, C>>{{Mul{}, inv}});
        } else {
          launch_same<scalar_t, 2, /*kBindRight=*/false>(d, Div{});  // no a / s kernel: it spilled (double)
        }
      }), MYOPS_EW_FLOAT);
      break;
    case EwKind::Maximum:
      AT_DISPATCH_V2(dt, "myops.maximum", AT_WRAP([&] { launch_same<scalar_t, 2>(d, Maximum{}); }), MYOPS_EW_ALL);
      break;
    case EwKind::Minimum:
      AT_DISPATCH_V2(dt, "myops.minimum", AT_WRAP([&] { launch_same<scalar_t, 2>(d, Minimum{}); }), MYOPS_EW_ALL);
      break;
    default:
      TORCH_INTERNAL_ASSERT(false, "myops: launch_div_minmax got another op");
  }
}

}  // namespace cuda
}  // namespace ew
}  // namespace myops

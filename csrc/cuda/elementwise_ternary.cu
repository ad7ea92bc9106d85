// Ternary elementwise ops on CUDA: where(condition, self, other), addcmul, clamp.
#include <ATen/Dispatch_v2.h>

#include "cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

#define MYOPS_EW_ALL AT_EXPAND(AT_ALL_TYPES), c10::kBool, c10::kHalf, c10::kBFloat16
#define MYOPS_EW_NOBOOL AT_EXPAND(AT_ALL_TYPES), c10::kHalf, c10::kBFloat16

void launch_ternary(EwKind kind, const Desc& d) {
  const auto dt = static_cast<c10::ScalarType>(d.dtype);
  switch (kind) {
    case EwKind::Where:
      AT_DISPATCH_V2(dt, "myops.where", AT_WRAP([&] {
        launch<scalar_t, bool, scalar_t, scalar_t>(d, WhereG<scalar_t>{});
      }), MYOPS_EW_ALL);
      break;
    case EwKind::Addcmul:
      AT_DISPATCH_V2(dt, "myops.addcmul", AT_WRAP([&] {
        using C = opmath_t<scalar_t>;
        launch_same<scalar_t, 3>(d, Addcmul<C>{host_value<C>(d.alpha)});
      }), MYOPS_EW_NOBOOL);
      break;
    case EwKind::Clamp:
    case EwKind::ClampScalar:  // the same element function (bounds never NaN here)
      AT_DISPATCH_V2(dt, "myops.clamp", AT_WRAP([&] { launch_same<scalar_t, 3>(d, Clamp{}); }), MYOPS_EW_NOBOOL);
      break;
    default:
      TORCH_INTERNAL_ASSERT(false, "myops: launch_ternary got a non-ternary op");
  }
}

}  // namespace cuda
}  // namespace ew
}  // namespace myops

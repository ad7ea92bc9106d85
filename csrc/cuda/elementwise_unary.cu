// Unary elementwise ops on CUDA: relu, gelu, silu, sigmoid (functors in
// common/elementwise_functors.h, launch policy in cuda/elementwise.cuh).
#include <ATen/Dispatch_v2.h>

#include "cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

#define MYOPS_EW_FLOAT AT_EXPAND(AT_FLOATING_TYPES), c10::kHalf, c10::kBFloat16

void launch_unary(EwKind kind, const Desc& d) {
  const auto dt = static_cast<c10::ScalarType>(d.dtype);
  switch (kind) {
    case EwKind::Relu:
      AT_DISPATCH_V2(dt, "myops.relu", AT_WRAP([&] { launch_same<scalar_t, 1>(d, Relu{}); }),
                     AT_EXPAND(AT_ALL_TYPES), c10::kHalf, c10::kBFloat16);
      break;
    case EwKind::Gelu:
      AT_DISPATCH_V2(dt, "myops.gelu", AT_WRAP([&] { launch_same<scalar_t, 1>(d, Gelu{d.tanh}); }), MYOPS_EW_FLOAT);
      break;
    case EwKind::Silu:
      AT_DISPATCH_V2(dt, "myops.silu", AT_WRAP([&] { launch_same<scalar_t, 1>(d, Silu{}); }), MYOPS_EW_FLOAT);
      break;
    case EwKind::Sigmoid:
      AT_DISPATCH_V2(dt, "myops.sigmoid", AT_WRAP([&] { launch_same<scalar_t, 1>(d, Sigmoid{}); }), MYOPS_EW_FLOAT);
      break;
    default:
      TORCH_INTERNAL_ASSERT(false, "myops: launch_unary got a non-unary op");
  }
}

}  // namespace cuda
}  // namespace ew
}  // namespace myops

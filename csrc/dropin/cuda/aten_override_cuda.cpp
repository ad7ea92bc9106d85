// The CUDA backend of the aten drop-in (csrc/dropin/aten_override.h): the same overriding
// kernels on the CUDA key, handing back to torch's CUDA kernels (at::cuda::*, defined in
// libtorch_cuda). Compiled only in a CUDA build; adds itself to the registry at load time.
// The CUDA emulation builds it too (tests/cuda_emulation/dropin.cpp): key, device and
// torch's kernels then come from core/cuda/glue.h's emulated side.
#include "core/cuda/glue.h"  // first: it names the library the drop-in calls (MYOPS_OVERRIDE_LIBRARY)

#include "dropin/aten_override.h"

#include <ATen/CUDAFunctions.h>

namespace myops {
namespace aten_override {
namespace {

struct CudaBackend {
  static constexpr c10::DispatchKey key = kCudaKey;
  static constexpr c10::DeviceType device = kCudaDeviceType;
  static constexpr bool cuda = true;
  // nvcc contracts torch's a * b + c into an FMA, as myops' kernels compute it
  static bool fuses_like_torch() { return true; }
#define MYOPS_OVERRIDE_TORCH_NS MYOPS_TORCH_CUDA_KERNELS
  MYOPS_OVERRIDE_TORCH_KERNELS
#include "elementwise/generated/dropin_torch.inc"
#undef MYOPS_OVERRIDE_TORCH_NS
};

[[maybe_unused]] const bool cuda_added = add_backend(CudaBackend::key, &Kernels<CudaBackend>::register_op);

}  // namespace
}  // namespace aten_override
}  // namespace myops

#pragma once
// Whose rules the code compiled here follows where PyTorch's CUDA and CPU kernels differ (the
// functors' few such corners), and the device intrinsics those rules name.
//
// The one place, with core/cuda/glue.h, core/cuda/launch.h and core/cuda/cub.h, that tells the CUDA emulation
// apart (MYOPS_CUDA_EMULATION: tests/test_cuda_emulation.py builds the CUDA kernels with the host
// compiler, no GPU). Kernel code tests MYOPS_CUDA_RULES only: set in device code and in the
// emulation's build of the CUDA kernels.
#include <cmath>

#if defined(__CUDA_ARCH__) || defined(MYOPS_CUDA_EMULATION)
#define MYOPS_CUDA_RULES 1
#endif

namespace myops {
#if defined(__CUDA_ARCH__)
// ::max / ::min of two floating values as PyTorch's CUDA kernels call them (fmaxf / fminf: ties
// between -0.0 and +0.0 are the hardware's)
template <typename T>
__device__ __forceinline__ T cuda_fmax(T a, T b) {
  return ::max(a, b);
}
template <typename T>
__device__ __forceinline__ T cuda_fmin(T a, T b) {
  return ::min(a, b);
}
#elif defined(MYOPS_CUDA_EMULATION)
template <typename T>
inline T cuda_fmax(T a, T b) {
  return std::fmax(a, b);  // ::max's host stand-in
}
template <typename T>
inline T cuda_fmin(T a, T b) {
  return std::fmin(a, b);  // ::min's host stand-in
}
#endif
}  // namespace myops

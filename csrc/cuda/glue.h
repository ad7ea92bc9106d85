#pragma once
// What the CUDA glue (the .cpp files of this directory, and the host half of
// max_pool2d_add.cu) takes from the CUDA runtime: a device guard, the current stream and the
// library block its kernels register into.
//
// Built with MYOPS_CUDA_EMULATION (tests/test_cuda_emulation.py: the host compiler, no GPU),
// the same glue runs on CPU tensors instead: no guard, a null stream, and the kernels
// registered as the CPU kernels of the test-only library `myops_emu` (cuda/emulation.h runs
// the launches).
#include <c10/core/Device.h>
#include <cuda_runtime_api.h>
#include <torch/library.h>

#if !defined(MYOPS_CUDA_EMULATION)
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace myops {

#if defined(MYOPS_CUDA_EMULATION)
struct CudaGuard {
  explicit CudaGuard(c10::Device) {}
};
inline cudaStream_t current_stream(c10::DeviceIndex = -1) { return nullptr; }
#define MYOPS_CUDA_LIBRARY_IMPL(m) TORCH_LIBRARY_IMPL(myops_emu, CPU, m)
#else
using CudaGuard = c10::cuda::CUDAGuard;
inline cudaStream_t current_stream(c10::DeviceIndex device = -1) {
  return c10::cuda::getCurrentCUDAStream(device).stream();
}
#define MYOPS_CUDA_LIBRARY_IMPL(m) TORCH_LIBRARY_IMPL(myops, CUDA, m)
#endif

}  // namespace myops

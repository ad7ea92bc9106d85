#pragma once
// What the CUDA glue (the .cpp files of this directory, and the host half of
// max_pool2d_add.cu) takes from the CUDA runtime: a device guard, the current stream, the
// library block its kernels register into, the host read of a device result, and the CUDA
// backend of the aten drop-in (dropin/cuda/aten_override_cuda.cpp).
//
// Built with MYOPS_CUDA_EMULATION (tests/test_cuda_emulation.py: the host compiler, no GPU),
// the same glue runs on CPU tensors instead: no guard, a null stream, the kernels registered
// as the CPU kernels of the test-only library `myops_emu` (core/cuda/emulation.h runs the launches),
// and the drop-in's CUDA backend on the CPU key, calling myops_emu's ops and handing back to
// torch's CPU kernels in place of its CUDA ones.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/Device.h>
#include <c10/core/DispatchKey.h>
#include <cuda_runtime_api.h>
#include <torch/library.h>

#include <atomic>
#include <cstdint>

#if defined(MYOPS_CUDA_EMULATION)
#include "core/cuda/emulation.h"
#else
#include <c10/cuda/CUDAFunctions.h>
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
// the aten drop-in (dropin/aten_override.h): the ops it calls, its key and device, torch's kernels
#define MYOPS_OVERRIDE_LIBRARY myops_emu
constexpr c10::DispatchKey kCudaKey = c10::DispatchKey::CPU;
constexpr c10::DeviceType kCudaDeviceType = c10::DeviceType::CPU;
#define MYOPS_TORCH_CUDA_KERNELS at::cpu
#else
using CudaGuard = c10::cuda::CUDAGuard;
inline cudaStream_t current_stream(c10::DeviceIndex device = -1) {
  return c10::cuda::getCurrentCUDAStream(device).stream();
}
#define MYOPS_CUDA_LIBRARY_IMPL(m) TORCH_LIBRARY_IMPL(myops, CUDA, m)
constexpr c10::DispatchKey kCudaKey = c10::DispatchKey::CUDA;
constexpr c10::DeviceType kCudaDeviceType = c10::DeviceType::CUDA;
#define MYOPS_TORCH_CUDA_KERNELS at::cuda
#endif

// The compute capability of `device` as major * 10 + minor (core/variants.h's architectures).
// Cached per device (the CUDA runtime's answer never changes).
inline int device_arch(c10::DeviceIndex device) {
  int dev = device;
#if defined(MYOPS_CUDA_EMULATION)
  dev = 0;  // the one emulated device (a CPU tensor's index is -1)
#else
  if (dev < 0) dev = c10::cuda::current_device();
#endif
  static std::atomic<int> cache[64] = {};
  if (dev >= 0 && dev < 64) {
    if (const int a = cache[dev].load(std::memory_order_relaxed); a != 0) return a;
  }
  int major = 0, minor = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  const int arch = major * 10 + minor;
  if (dev >= 0 && dev < 64) cache[dev].store(arch, std::memory_order_relaxed);
  return arch;
}

// A temporary device buffer of an op call (the emulation counts its bytes, core/cuda/emulation.h).
inline at::Tensor temporary(at::IntArrayRef sizes, const at::TensorOptions& opts) {
  at::Tensor t = at::empty(sizes, opts);
#if defined(MYOPS_CUDA_EMULATION)
  emu::counters().temp_bytes += static_cast<int64_t>(t.nbytes());
#endif
  return t;
}

// The value a device pass stored at `p` (e.g. a count), read by the host: an 8-byte copy into
// pinned memory and a wait for `stream`, the caller's host synchronization.
inline int64_t read_device_int64(const int64_t* p, cudaStream_t stream) {
#if defined(MYOPS_CUDA_EMULATION)
  (void)stream;
  ++emu::counters().syncs;
  emu::synchronize();  // the stream's pending results land
  return *p;
#else
  at::Tensor host = at::empty({1}, at::TensorOptions().dtype(at::kLong).pinned_memory(true));
  c10::cuda::memcpy_and_sync(host.data_ptr(), p, sizeof(int64_t), cudaMemcpyDeviceToHost, stream);
  return *host.const_data_ptr<int64_t>();
#endif
}

}  // namespace myops

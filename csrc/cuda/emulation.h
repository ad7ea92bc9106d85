#pragma once
// Test-only: the CUDA kernels of this directory compiled by the host compiler and run on the
// CPU, so that their index arithmetic, packs, alignment choices, tails, broadcasting and
// functors run in CI, which has no GPU (tests/test_cuda_emulation.py).
//
// A launch runs every (block, thread) of the grid in turn on the calling thread. That is
// faithful for kernels whose threads do not talk to each other (no shared memory, no
// __syncthreads, no warp intrinsics): the elementwise, max_pool2d_add, diagonal and nonzero
// fill kernels. nonzero's CUB passes have host stand-ins in cuda/nonzero.cuh.
// What it cannot show: races, launch limits, the speed, and the device's own math library
// and intrinsics (the host's versions of expf / erff / the half2 conversions run instead).
#if !defined(MYOPS_CUDA_EMULATION) || defined(__CUDACC__)
#error "cuda/emulation.h is for host-compiler builds with MYOPS_CUDA_EMULATION only"
#endif
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace myops {
namespace emu {

inline thread_local uint3 thread_idx{0, 0, 0};
inline thread_local uint3 block_idx{0, 0, 0};
inline thread_local dim3 block_dim{1, 1, 1};
inline thread_local dim3 grid_dim{1, 1, 1};

// The emulated device: few SMs, so that the grid caps (and the grid-stride loops behind
// them) are reached at test sizes.
constexpr int kSms = 1;
constexpr int kMaxThreadsPerSm = 2048;

inline cudaError_t device_get_attribute(int* v, cudaDeviceAttr attr, int /*device*/) {
  switch (attr) {
    case cudaDevAttrMultiProcessorCount: *v = kSms; return cudaSuccess;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = kMaxThreadsPerSm; return cudaSuccess;
    default: return cudaErrorInvalidValue;
  }
}

// cudaMemcpy2DAsync between host buffers (the stream is the host's program order).
inline cudaError_t memcpy_2d_async(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, cudaMemcpyKind /*kind*/, cudaStream_t /*stream*/ = nullptr) {
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  for (size_t r = 0; r < height; ++r) {
    std::memcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  }
  return cudaSuccess;
}

template <class... P>
struct Launch {
  dim3 grid, block;
  void (*kernel)(P...);
  Launch(dim3 g, dim3 b, cudaStream_t /*stream*/, void (*k)(P...)) : grid(g), block(b), kernel(k) {}
  template <class... A>
  void operator()(A&&... a) const {
    TORCH_CHECK(grid.x >= 1 && grid.x <= 2147483647u && grid.y >= 1 && grid.y <= 65535 && grid.z >= 1 &&
                    grid.z <= 65535,
                "emulated launch: invalid grid (", grid.x, ", ", grid.y, ", ", grid.z, ")");
    TORCH_CHECK(block.x * block.y * block.z >= 1 && block.x * block.y * block.z <= 1024,
                "emulated launch: invalid block (", block.x, ", ", block.y, ", ", block.z, ")");
    grid_dim = grid;
    block_dim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx)
          for (unsigned tz = 0; tz < block.z; ++tz)
            for (unsigned ty = 0; ty < block.y; ++ty)
              for (unsigned tx = 0; tx < block.x; ++tx) {
                block_idx = {bx, by, bz};
                thread_idx = {tx, ty, tz};
                kernel(P(a)...);
              }
  }
};

}  // namespace emu
}  // namespace myops

template <class T>
inline T __ldg(const T* p) {
  return *p;
}

// nvcc's min / max overloads, as the kernels call them unqualified
using std::max;
using std::min;

#define threadIdx ::myops::emu::thread_idx
#define blockIdx ::myops::emu::block_idx
#define blockDim ::myops::emu::block_dim
#define gridDim ::myops::emu::grid_dim
#undef __launch_bounds__
#define __launch_bounds__(...)
#define cudaDeviceGetAttribute ::myops::emu::device_get_attribute
#define cudaMemcpy2DAsync ::myops::emu::memcpy_2d_async
#undef C10_CUDA_CHECK
#define C10_CUDA_CHECK(expr)                                                                    \
  do {                                                                                        \
    const cudaError_t myops_emu_err = (expr);                                                 \
    TORCH_CHECK(myops_emu_err == cudaSuccess, "emulated CUDA call failed: ", #expr);          \
  } while (0)
#undef C10_CUDA_KERNEL_LAUNCH_CHECK
#define C10_CUDA_KERNEL_LAUNCH_CHECK() \
  do {                                 \
  } while (0)

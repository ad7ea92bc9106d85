#pragma once
// Test-only: the CUDA kernels of this directory compiled by the host compiler and run on the
// CPU, so that their index arithmetic, packs, alignment choices, tails, broadcasting, functors,
// launch configurations and grid-stride loops run in CI, which has no GPU
// (tests/test_cuda_emulation.py; tests/cuda_emulation/loader.py builds it).
//
// The emulated device is an H100 (SXM): 132 SMs, 2048 threads per SM, and CUDA's launch limits
// (grid <= (2^31 - 1, 65535, 65535), block <= (1024, 1024, 64) and 1024 threads, no empty
// dimension), checked at every launch: a launch the device would refuse raises
// c10::AcceleratorError (as C10_CUDA_KERNEL_LAUNCH_CHECK would), so the real grids, their caps
// and the grid-stride loops behind them run at the sizes an H100 sees.
//
// A launch runs every (block, thread) of the grid on the calling thread, one after another, in a
// shuffled order: a seeded pseudo-random permutation of all grid * block threads (blocks and
// threads interleaved), so a kernel whose result depends on the order its threads run in fails.
// The seed: MYOPS_EMU_SEED in the environment, else a random one logged on stderr at the first
// launch; set_seed() (the test op myops_emu::_emu_seed) changes it. Each launch's order is a
// function of the seed and its grid and block shape only, so a seed replays a test. Seed 0 runs
// the threads in order (x fastest, block by block).
//
// Faithful for kernels whose threads do not talk to each other (no shared memory, no
// __syncthreads, no warp intrinsics): the elementwise, max_pool2d_add, diagonal and nonzero
// fill kernels. nonzero's CUB passes have host stand-ins held to CUB's contract in
// core/cuda/cub_emulation.h. What it cannot show: races, resource limits (registers, shared memory,
// __launch_bounds__), the speed, and the device's own math library and intrinsics (the host's
// versions of expf / erff / the half2 conversions run instead).
//
// Adding a kernel file (e.g. a new op's .cu): launch through MYOPS_LAUNCH (core/cuda/launch.h), take
// the device guard / stream / library block from core/cuda/glue.h, add a two-line
// tests/cuda_emulation/<name>.cpp that #includes the .cu (and one for its glue .cpp), list the op
// in OPS of tests/cuda_emulation/loader.py, and test it in tests/test_cuda_emulation.py. A kernel
// that needs __shared__ / __syncthreads / warp shuffles cannot run here (threads run one at a time
// to completion): keep such a kernel out, or give it a host stand-in as core/cuda/cub_emulation.h does.
#if !defined(MYOPS_CUDA_EMULATION) || defined(__CUDACC__)
#error "core/cuda/emulation.h is for host-compiler builds with MYOPS_CUDA_EMULATION only"
#endif
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <initializer_list>
#include <utility>
#include <vector>

namespace myops {
namespace emu {

inline thread_local uint3 thread_idx{0, 0, 0};
inline thread_local uint3 block_idx{0, 0, 0};
inline thread_local dim3 block_dim{1, 1, 1};
inline thread_local dim3 grid_dim{1, 1, 1};

// ---- the emulated device: an H100 SXM (compute capability 9.0) --------------------------------

constexpr int kSms = 132;
constexpr int kMaxThreadsPerSm = 2048;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxGrid[3] = {2147483647u, 65535u, 65535u};
constexpr unsigned kMaxBlock[3] = {1024u, 1024u, 64u};
constexpr int kWarpSize = 32;

inline cudaError_t device_get_attribute(int* v, cudaDeviceAttr attr, int /*device*/) {
  switch (attr) {
    case cudaDevAttrMultiProcessorCount:
      *v = kSms;
      return cudaSuccess;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      *v = kMaxThreadsPerSm;
      return cudaSuccess;
    case cudaDevAttrMaxThreadsPerBlock:
      *v = kMaxThreadsPerBlock;
      return cudaSuccess;
    case cudaDevAttrMaxGridDimX:
      *v = static_cast<int>(kMaxGrid[0]);
      return cudaSuccess;
    case cudaDevAttrMaxGridDimY:
      *v = static_cast<int>(kMaxGrid[1]);
      return cudaSuccess;
    case cudaDevAttrMaxGridDimZ:
      *v = static_cast<int>(kMaxGrid[2]);
      return cudaSuccess;
    case cudaDevAttrMaxBlockDimX:
      *v = static_cast<int>(kMaxBlock[0]);
      return cudaSuccess;
    case cudaDevAttrMaxBlockDimY:
      *v = static_cast<int>(kMaxBlock[1]);
      return cudaSuccess;
    case cudaDevAttrMaxBlockDimZ:
      *v = static_cast<int>(kMaxBlock[2]);
      return cudaSuccess;
    case cudaDevAttrWarpSize:
      *v = kWarpSize;
      return cudaSuccess;
    default:
      return cudaErrorInvalidValue;
  }
}

// A failed CUDA call, as C10_CUDA_CHECK reports it on a device: c10::AcceleratorError (which
// the aten drop-in propagates instead of handing the call back to torch).
[[noreturn]] inline void fail(cudaError_t err, const std::string& what) {
  throw c10::AcceleratorError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, static_cast<int32_t>(err),
                              "emulated CUDA error " + std::to_string(static_cast<int>(err)) + ": " + what);
}

// CUDA's launch limits: what cudaLaunchKernel refuses with cudaErrorInvalidConfiguration.
inline void check_launch(dim3 grid, dim3 block) {
  const unsigned g[3] = {grid.x, grid.y, grid.z};
  const unsigned b[3] = {block.x, block.y, block.z};
  bool ok = uint64_t(block.x) * block.y * block.z <= uint64_t(kMaxThreadsPerBlock);
  for (int i = 0; i < 3; ++i) ok = ok && g[i] >= 1 && g[i] <= kMaxGrid[i] && b[i] >= 1 && b[i] <= kMaxBlock[i];
  if (!ok) {
    fail(cudaErrorInvalidConfiguration, "invalid launch configuration: grid (" + std::to_string(grid.x) + ", " +
                                            std::to_string(grid.y) + ", " + std::to_string(grid.z) + "), block (" +
                                            std::to_string(block.x) + ", " + std::to_string(block.y) + ", " +
                                            std::to_string(block.z) + ")");
  }
}

// ---- the order the threads of a launch run in -----------------------------------------------

inline uint64_t mix64(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline std::atomic<uint64_t>& seed_state() {
  static std::atomic<uint64_t> seed{[] {
    uint64_t s;
    if (const char* env = std::getenv("MYOPS_EMU_SEED"); env != nullptr && *env != '\0') {
      s = std::strtoull(env, nullptr, 0);
    } else {
      s = (uint64_t(std::random_device{}()) << 32 | std::random_device{}()) >> 1;
      std::fprintf(stderr, "myops CUDA emulation: threads shuffled with MYOPS_EMU_SEED=%llu\n",
                   static_cast<unsigned long long>(s));
    }
    return s;
  }()};
  return seed;
}
inline uint64_t seed() { return seed_state().load(std::memory_order_relaxed); }
// Sets the seed; returns the previous one. 0: threads in order.
inline uint64_t set_seed(uint64_t s) { return seed_state().exchange(s); }

// A bijection of [0, n) picked by `key`: a 4-round Feistel network on the smallest even number
// of bits that holds n, cycle-walking the values >= n (at most 4n values are tried). O(1) memory,
// so any grid is shuffled as a whole.
class Shuffle {
 public:
  Shuffle(uint64_t n, uint64_t key) : n_(n), key_(key) {
    int bits = 2;
    while (bits < 64 && (uint64_t(1) << bits) < n) bits += 2;
    half_ = bits / 2;
    mask_ = (uint64_t(1) << half_) - 1;
  }
  uint64_t operator()(uint64_t i) const {
    if (key_ == 0) return i;
    do i = permute(i);
    while (i >= n_);
    return i;
  }

 private:
  uint64_t permute(uint64_t v) const {
    uint64_t l = v >> half_, r = v & mask_;
    for (uint64_t round = 0; round < 4; ++round) {
      const uint64_t f = mix64(key_ ^ (round << 58) ^ r) & mask_;
      const uint64_t nl = r;
      r = l ^ f;
      l = nl;
    }
    return l << half_ | r;
  }
  uint64_t n_, key_;
  int half_;
  uint64_t mask_;
};

// The key of one shuffled order: the seed and the shape of the work (nothing that changes
// between runs, so a seed replays). 0 (seed 0) means "in order".
inline uint64_t order_key(std::initializer_list<uint64_t> shape) {
  const uint64_t s = seed();
  if (s == 0) return 0;
  uint64_t k = mix64(s);
  for (uint64_t v : shape) k = mix64(k ^ v);
  return k | 1;
}

// ---- the stream: device results become visible to the host at a synchronization -------------

// The emulated stream is the host's program order: a device pass's results (core/cuda/cub_emulation.h:
// CUB's counts) are in memory when its call returns, and a synchronization has nothing to wait
// for. (Holding them back until the next synchronization was tried: an op that returns with a
// count it never reads, as nonzero's second pass does, frees the buffer first, and the held
// store then lands in freed memory. On the device the caching allocator orders the free after
// the pass; here nothing can.) The calls stay, at every point the device synchronizes.
inline void synchronize() {}

// cudaMemcpy2DAsync between host buffers (the stream is the host's program order).
inline cudaError_t memcpy_2d_async(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, cudaMemcpyKind /*kind*/, cudaStream_t /*stream*/ = nullptr) {
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  synchronize();
  for (size_t r = 0; r < height; ++r) {
    std::memcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  }
  return cudaSuccess;
}

// Runs one launch (core/cuda/launch.h's MYOPS_LAUNCH): checks the configuration, then calls the
// kernel once per (block, thread), in the shuffled order, with its own copy of the arguments.
template <class... P>
struct Launch {
  dim3 grid, block;
  void (*kernel)(P...);
  Launch(dim3 g, dim3 b, cudaStream_t /*stream*/, void (*k)(P...)) : grid(g), block(b), kernel(k) {}
  template <class... A>
  void operator()(A&&... a) const {
    check_launch(grid, block);
    synchronize();
    grid_dim = grid;
    block_dim = block;
    const uint64_t threads = uint64_t(block.x) * block.y * block.z;
    const uint64_t total = uint64_t(grid.x) * grid.y * grid.z * threads;
    const Shuffle order(total, order_key({grid.x, grid.y, grid.z, block.x, block.y, block.z}));
    for (uint64_t i = 0; i < total; ++i) {
      const uint64_t j = order(i);
      const uint64_t b = j / threads, t = j % threads;
      block_idx = {static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
                   static_cast<unsigned>(b / grid.x / grid.y)};
      thread_idx = {static_cast<unsigned>(t % block.x), static_cast<unsigned>(t / block.x % block.y),
                    static_cast<unsigned>(t / block.x / block.y)};
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
#define C10_CUDA_CHECK(expr)                                                    \
  do {                                                                          \
    const cudaError_t myops_emu_err = (expr);                                   \
    if (myops_emu_err != cudaSuccess) ::myops::emu::fail(myops_emu_err, #expr); \
  } while (0)
#undef C10_CUDA_KERNEL_LAUNCH_CHECK
#define C10_CUDA_KERNEL_LAUNCH_CHECK() \
  do {                                 \
  } while (0)

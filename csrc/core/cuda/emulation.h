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
// fill kernels. Kernels whose threads do talk launch with MYOPS_LAUNCH_COOP and run as fibers
// ("cooperative launches" below). nonzero's CUB passes have host stand-ins held to CUB's contract in
// core/cuda/cub_emulation.h. What it cannot show: races, resource limits (registers, shared memory,
// __launch_bounds__), the speed, and the device's own math library and intrinsics (the host's
// versions of expf / erff / the half2 conversions run instead).
//
// Adding a kernel file (e.g. a new op's .cu): launch through MYOPS_LAUNCH (core/cuda/launch.h), take
// the device guard / stream / library block from core/cuda/glue.h, add a two-line
// tests/cuda_emulation/<name>.cpp that #includes the .cu (and one for its glue .cpp), list the op
// in OPS of tests/cuda_emulation/loader.py, and test it in tests/test_cuda_emulation.py. A kernel
// that needs __shared__ / __syncthreads / warp shuffles launches with MYOPS_LAUNCH_COOP instead
// (or gets a host stand-in, as core/cuda/cub_emulation.h gives CUB).
#if !defined(MYOPS_CUDA_EMULATION) || defined(__CUDACC__)
#error "core/cuda/emulation.h is for host-compiler builds with MYOPS_CUDA_EMULATION only"
#endif
#if defined(MYOPS_VARIANTS_NS)
#error "core/variants.h included before core/cuda/emulation.h: its state would not be the emulation's"
#endif
// core/variants.h's state: the emulation's own (never libmyops')
#define MYOPS_VARIANTS_NS variants_emu
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
#include <exception>
#include <initializer_list>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <ucontext.h>

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
    case cudaDevAttrComputeCapabilityMajor:
      *v = 9;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *v = 0;
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

// ---- what an op call costs the device: launches, syncs, temporaries ------------------------------

// Counted since the last reset (tests/test_cuda_emulation.py reads them through the test op
// myops_emu::_emu_counters): kernel launches (a CUB stand-in call counts as the kernels CUB
// launches), memsets, host synchronizations (a device value read by the host), and the bytes of
// temporary device memory an op call asks for (the caching allocator's blocks, and the glue's
// temporary tensors, core/cuda/glue.h's temporary()).
struct Counters {
  int64_t launches = 0, memsets = 0, syncs = 0, temp_bytes = 0;
};
inline Counters& counters() {
  static thread_local Counters c;
  return c;
}

// cudaMemsetAsync (the stream is the host's program order).
inline cudaError_t memset_async(void* p, int value, size_t bytes, cudaStream_t /*stream*/ = nullptr) {
  ++counters().memsets;
  std::memset(p, value, bytes);
  return cudaSuccess;
}

// What every launch does first (Launch, LaunchCoop): CUDA's limits checked, the launch counted,
// the stream's earlier work done, the grid and block dimensions set for the kernel to read.
inline void begin_launch(dim3 grid, dim3 block) {
  check_launch(grid, block);
  ++counters().launches;
  synchronize();
  grid_dim = grid;
  block_dim = block;
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
    begin_launch(grid, block);
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

// ---- cooperative launches: barriers, warp collectives, spin-waits on other blocks -------------
//
// A kernel whose threads meet - __syncthreads(), __ballot_sync / __shfl_*_sync (full warps), a
// spin-wait on another block (MYOPS_SPIN_PAUSE() in its loop) - is launched with
// MYOPS_LAUNCH_COOP (core/cuda/launch.h) and runs here with its real block size: every thread is
// a fiber (ucontext) with its own stack, on the calling thread. Up to kResident blocks are
// resident at once, admitted in the shuffled block order (the next one when one finishes), and a
// seeded scheduler resumes a random runnable thread among them until it reaches a barrier, a warp
// collective, a spin pause or its end. So a block's threads interleave between their meeting
// points, several blocks run at once, and a spin-wait on another block ends only if that block
// is resident or done - as on a device, where a block that has not started yet may never start
// while the waiting one holds its SM. A kernel that waits on such a block (e.g. one that takes its
// tile from blockIdx instead of an atomic counter) deadlocks here: reported as an error after
// kMaxSpins pauses without progress. Shared memory: MYOPS_SHARED, one instance per resident block.
// Atomics need no care (one thread of the host runs at a time).
// Under AddressSanitizer (`make sanitize`) every switch is announced, so that it tracks which
// stack is live.
#if defined(__SANITIZE_ADDRESS__)
extern "C" void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, size_t* size_old);
#define MYOPS_EMU_START_SWITCH(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define MYOPS_EMU_FINISH_SWITCH(save, bottom_old, size_old) __sanitizer_finish_switch_fiber(save, bottom_old, size_old)
#else
#define MYOPS_EMU_START_SWITCH(save, bottom, size) ((void)0)
#define MYOPS_EMU_FINISH_SWITCH(save, bottom_old, size_old) ((void)0)
#endif
constexpr int kResident = 3;
constexpr int64_t kMaxSpins = 200000;
constexpr size_t kFiberStack = 256 * 1024;

enum class Collective { kBallot, kShflUp, kShflDown, kShflIdx, kShflXor };

struct Fiber {
  ucontext_t ctx;
  char* stack = nullptr;
  void* fake_stack = nullptr;  // AddressSanitizer's
  uint3 tid{0, 0, 0};
  int slot = 0, warp = 0, lane = 0;
  enum State { kRunnable, kBarrier, kWarp, kDone } state = kDone;
  bool spinning = false;
  uint64_t value = 0, result = 0;
  int arg = 0;
  Collective kind = Collective::kBallot;
};

struct BlockSlot {
  bool active = false;
  uint3 bid{0, 0, 0};
  int live = 0, at_barrier = 0;
  std::vector<int> warp_arrived, warp_exited;
};

struct Coop {
  std::vector<Fiber> fibers;  // kResident * threads, slot-major, then linear thread id
  BlockSlot slots[kResident];
  std::vector<int> runnable;
  ucontext_t sched;
  int current = -1;
  int threads = 0;
  void (*entry_body)(void*) = nullptr;
  void* entry_arg = nullptr;
  std::exception_ptr error;
  const void* sched_bottom = nullptr;  // the scheduler's stack (AddressSanitizer)
  size_t sched_size = 0;
};

inline Coop*& coop() {
  static thread_local Coop* c = nullptr;
  return c;
}

inline Fiber& this_fiber() {
  Coop* c = coop();
  if (c == nullptr || c->current < 0) {
    fail(cudaErrorLaunchFailure, "a barrier, warp collective or spin pause outside a MYOPS_LAUNCH_COOP launch");
  }
  return c->fibers[static_cast<size_t>(c->current)];
}

// Back to the scheduler (the fiber's state says why).
inline void to_scheduler(Fiber& f) {
  Coop& c = *coop();
  MYOPS_EMU_START_SWITCH(&f.fake_stack, c.sched_bottom, c.sched_size);
  swapcontext(&f.ctx, &c.sched);
  MYOPS_EMU_FINISH_SWITCH(f.fake_stack, &c.sched_bottom, &c.sched_size);
}

inline void fiber_main() {
  Coop& c = *coop();
  MYOPS_EMU_FINISH_SWITCH(nullptr, &c.sched_bottom, &c.sched_size);
  try {
    c.entry_body(c.entry_arg);
  } catch (...) {
    if (!c.error) c.error = std::current_exception();
  }
  Fiber& f = c.fibers[static_cast<size_t>(c.current)];
  f.state = Fiber::kDone;
  MYOPS_EMU_START_SWITCH(nullptr, c.sched_bottom, c.sched_size);  // this stack ends
  swapcontext(&f.ctx, &c.sched);                                  // never resumed
}

inline void make_runnable(Coop& c, int i) {
  c.fibers[static_cast<size_t>(i)].state = Fiber::kRunnable;
  c.runnable.push_back(i);
}

inline void barrier() {
  Coop& c = *coop();
  Fiber& f = this_fiber();
  BlockSlot& s = c.slots[f.slot];
  f.state = Fiber::kBarrier;
  if (++s.at_barrier < s.live) return to_scheduler(f);
  s.at_barrier = 0;
  for (int t = 0; t < c.threads; ++t) {
    const int i = f.slot * c.threads + t;
    if (c.fibers[static_cast<size_t>(i)].state == Fiber::kBarrier && i != c.current) make_runnable(c, i);
  }
  f.state = Fiber::kRunnable;
}

// A full-warp collective: every lane of the warp must take part (mask 0xffffffff); the last lane
// to arrive computes every lane's result.
template <class T>
T warp_collective(Collective kind, unsigned mask, T v, int arg) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "warp collectives on 8-byte values at most");
  Coop& c = *coop();
  Fiber& f = this_fiber();
  BlockSlot& s = c.slots[f.slot];
  if (mask != 0xffffffffu || c.threads % kWarpSize != 0) {
    fail(cudaErrorLaunchFailure, "only full-warp collectives (mask 0xffffffff, blocks of whole warps) are emulated");
  }
  if (s.warp_exited[static_cast<size_t>(f.warp)] != 0) {
    fail(cudaErrorLaunchFailure, "a warp collective after a lane of the warp exited");
  }
  f.value = 0;
  std::memcpy(&f.value, &v, sizeof(T));
  f.kind = kind;
  f.arg = arg;
  f.state = Fiber::kWarp;
  const int base = f.slot * c.threads + f.warp * kWarpSize;
  if (++s.warp_arrived[static_cast<size_t>(f.warp)] < kWarpSize) {
    to_scheduler(f);
  } else {
    s.warp_arrived[static_cast<size_t>(f.warp)] = 0;
    uint64_t vals[kWarpSize];
    uint64_t ballot = 0;
    for (int l = 0; l < kWarpSize; ++l) {
      const Fiber& g = c.fibers[static_cast<size_t>(base + l)];
      if (g.kind != kind) fail(cudaErrorLaunchFailure, "the lanes of a warp in different collectives");
      vals[l] = g.value;
      if (g.value != 0) ballot |= uint64_t(1) << l;
    }
    for (int l = 0; l < kWarpSize; ++l) {
      Fiber& g = c.fibers[static_cast<size_t>(base + l)];
      switch (kind) {
        case Collective::kBallot:
          g.result = ballot;
          break;
        case Collective::kShflUp:
          g.result = l >= g.arg ? vals[l - g.arg] : vals[l];
          break;
        case Collective::kShflDown:
          g.result = l + g.arg < kWarpSize ? vals[l + g.arg] : vals[l];
          break;
        case Collective::kShflIdx:
          g.result = vals[g.arg & (kWarpSize - 1)];
          break;
        case Collective::kShflXor:
          g.result = vals[(l ^ g.arg) & (kWarpSize - 1)];
          break;
      }
      if (base + l != c.current) make_runnable(c, base + l);
    }
    f.state = Fiber::kRunnable;
  }
  T out;
  std::memcpy(&out, &f.result, sizeof(T));
  return out;
}

// A pause in a spin-wait on another block: the scheduler runs something else.
inline void spin_pause() {
  Fiber& f = this_fiber();
  f.spinning = true;
  to_scheduler(f);
}

// Runs one cooperative launch: body(arg) is one thread's kernel call.
inline void run_coop(dim3 grid, dim3 block, void (*body)(void*), void* arg) {
  if (coop() != nullptr) fail(cudaErrorLaunchFailure, "a cooperative launch inside a kernel");
  const int threads = static_cast<int>(uint64_t(block.x) * block.y * block.z);
  const uint64_t nblocks = uint64_t(grid.x) * grid.y * grid.z;
  static thread_local std::vector<std::unique_ptr<char[]>> stacks;  // reused across launches
  Coop c;
  c.threads = threads;
  c.entry_body = body;
  c.entry_arg = arg;
  c.fibers.resize(static_cast<size_t>(kResident) * threads);
  while (stacks.size() < c.fibers.size()) stacks.emplace_back(new char[kFiberStack]);
  const uint64_t key = order_key({0xc0ebull, grid.x, grid.y, grid.z, block.x, block.y, block.z});
  const Shuffle order(nblocks, key);
  uint64_t rng = key == 0 ? 0 : mix64(key ^ 0x5c4edull);
  uint64_t next_block = 0;
  int active = 0;
  struct Reset {
    ~Reset() { coop() = nullptr; }
  } reset;
  coop() = &c;
  auto admit = [&](int slot) {
    const uint64_t b = order(next_block++);
    BlockSlot& s = c.slots[slot];
    s.active = true;
    s.bid = {static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
             static_cast<unsigned>(b / grid.x / grid.y)};
    s.live = threads;
    s.at_barrier = 0;
    s.warp_arrived.assign(static_cast<size_t>((threads + kWarpSize - 1) / kWarpSize), 0);
    s.warp_exited.assign(s.warp_arrived.size(), 0);
    ++active;
    for (int t = 0; t < threads; ++t) {
      const int i = slot * threads + t;
      Fiber& f = c.fibers[static_cast<size_t>(i)];
      f.tid = {static_cast<unsigned>(t % block.x), static_cast<unsigned>(t / block.x % block.y),
               static_cast<unsigned>(t / block.x / block.y)};
      f.slot = slot;
      f.warp = t / kWarpSize;
      f.lane = t % kWarpSize;
      f.spinning = false;
      getcontext(&f.ctx);
      f.stack = stacks[static_cast<size_t>(i)].get();
      f.fake_stack = nullptr;
      f.ctx.uc_stack.ss_sp = f.stack;
      f.ctx.uc_stack.ss_size = kFiberStack;
      f.ctx.uc_link = nullptr;
      makecontext(&f.ctx, &fiber_main, 0);
      make_runnable(c, i);
    }
  };
  for (int slot = 0; slot < kResident && next_block < nblocks; ++slot) admit(slot);
  int64_t spins = 0;
  while (active > 0) {
    if (c.runnable.empty()) {
      fail(cudaErrorLaunchFailure, "deadlock: every thread waits at a barrier or warp collective that cannot complete");
    }
    const size_t k = rng == 0 ? 0 : static_cast<size_t>((rng = mix64(rng)) % c.runnable.size());
    const int i = c.runnable[k];
    Fiber& f = c.fibers[static_cast<size_t>(i)];
    c.current = i;
    thread_idx = f.tid;
    block_idx = c.slots[f.slot].bid;
    f.spinning = false;
    void* sched_fake = nullptr;
    MYOPS_EMU_START_SWITCH(&sched_fake, f.stack, kFiberStack);
    swapcontext(&c.sched, &f.ctx);
    MYOPS_EMU_FINISH_SWITCH(sched_fake, nullptr, nullptr);
    c.current = -1;
    if (c.error) std::rethrow_exception(c.error);
    if (f.state == Fiber::kRunnable) {
      if (!f.spinning) continue;
      if (++spins > kMaxSpins) {
        fail(cudaErrorLaunchFailure,
             "deadlock: a spin-wait on another block never ends (does it wait on a block that may not have "
             "started, e.g. a tile taken from blockIdx instead of an atomic counter?)");
      }
      if (rng == 0) std::rotate(c.runnable.begin(), c.runnable.begin() + 1, c.runnable.end());  // in order: next
      continue;
    }
    spins = 0;
    c.runnable[k] = c.runnable.back();
    c.runnable.pop_back();
    if (f.state != Fiber::kDone) continue;
    BlockSlot& s = c.slots[f.slot];
    --s.live;
    ++s.warp_exited[static_cast<size_t>(f.warp)];
    if (s.live > 0 && s.at_barrier == s.live) {  // the exited threads no longer hold a barrier
      s.at_barrier = 0;
      for (int t = 0; t < threads; ++t) {
        const int j = f.slot * threads + t;
        if (c.fibers[static_cast<size_t>(j)].state == Fiber::kBarrier) make_runnable(c, j);
      }
    }
    if (s.live == 0) {
      s.active = false;
      --active;
      if (next_block < nblocks) admit(f.slot);
    }
  }
}

// MYOPS_SHARED's storage: one instance per resident block and declaration (Tag: a lambda's type).
template <class T, size_t N, class Tag>
T* block_shared(Tag) {
  static thread_local T storage[kResident][N];
  const Coop* c = coop();
  return storage[c == nullptr || c->current < 0 ? 0 : c->fibers[static_cast<size_t>(c->current)].slot];
}

template <class... P>
struct LaunchCoop {
  dim3 grid, block;
  void (*kernel)(P...);
  LaunchCoop(dim3 g, dim3 b, cudaStream_t /*stream*/, void (*k)(P...)) : grid(g), block(b), kernel(k) {}
  template <class... A>
  void operator()(A&&... a) const {
    begin_launch(grid, block);
    struct Call {
      void (*kernel)(P...);
      std::tuple<std::decay_t<A>...> args;
      static void run(void* p) {
        const Call& c = *static_cast<const Call*>(p);
        std::apply([&](const auto&... x) { c.kernel(P(x)...); }, c.args);
      }
    } call{kernel, std::tuple<std::decay_t<A>...>(std::forward<A>(a)...)};
    run_coop(grid, block, &Call::run, &call);
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

// The device intrinsics of the cooperative kernels (MYOPS_LAUNCH_COOP, above).
inline void __syncthreads() { ::myops::emu::barrier(); }
inline void __threadfence() {}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  return static_cast<unsigned>(
      ::myops::emu::warp_collective<uint64_t>(::myops::emu::Collective::kBallot, mask, pred != 0 ? 1 : 0, 0));
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int = 32) {
  return ::myops::emu::warp_collective<T>(::myops::emu::Collective::kShflUp, mask, v, static_cast<int>(delta));
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int = 32) {
  return ::myops::emu::warp_collective<T>(::myops::emu::Collective::kShflDown, mask, v, static_cast<int>(delta));
}
template <class T>
T __shfl_sync(unsigned mask, T v, int src, int = 32) {
  return ::myops::emu::warp_collective<T>(::myops::emu::Collective::kShflIdx, mask, v, src);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int = 32) {
  return ::myops::emu::warp_collective<T>(::myops::emu::Collective::kShflXor, mask, v, lane_mask);
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __ffs(unsigned v) { return __builtin_ffs(static_cast<int>(v)); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return std::exchange(*p, *p + v); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return std::exchange(*p, *p + v); }
inline int atomicAdd(int* p, int v) { return std::exchange(*p, *p + v); }

#define threadIdx ::myops::emu::thread_idx
#define blockIdx ::myops::emu::block_idx
#define blockDim ::myops::emu::block_dim
#define gridDim ::myops::emu::grid_dim
#undef __launch_bounds__
#define __launch_bounds__(...)
// Shared memory only through MYOPS_SHARED, in a cooperative launch: a plain __shared__ variable
// would be one per fiber here (a local), so its kernel would pass for the wrong reason.
#undef __shared__
#define __shared__ static_assert(false, "myops: declare shared memory with MYOPS_SHARED (core/cuda/launch.h)");
#define cudaDeviceGetAttribute ::myops::emu::device_get_attribute
#define cudaMemcpy2DAsync ::myops::emu::memcpy_2d_async
#define cudaMemsetAsync ::myops::emu::memset_async
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

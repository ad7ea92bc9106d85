#pragma once
// One spelling for every kernel launch of this directory:
//
//   MYOPS_LAUNCH(grid, block, stream, kernel<...>)(args...);
//     == kernel<...><<<grid, block, 0, stream>>>(args...)
//
// Built with MYOPS_CUDA_EMULATION (the host compiler, tests/test_cuda_emulation.py), the same
// line runs the kernel on the host instead: core/cuda/emulation.h.
//
// A kernel whose threads do not talk to each other runs in the emulation one thread after another.
// A kernel whose threads cooperate - barriers (__syncthreads()), full-warp collectives
// (__ballot_sync, __shfl_*_sync), spin-waits on other blocks - launches with
//
//   MYOPS_LAUNCH_COOP(grid, block, stream, kernel<...>)(args...);
//
// declares its shared memory with MYOPS_SHARED(T, name, N) (T name[N]) and pauses in its spin
// loops with MYOPS_SPIN_PAUSE(). The emulation runs such a launch with every thread a fiber and
// several blocks resident at once (core/cuda/emulation.h, "cooperative launches").
//
// Device math called unqualified (ceil, floor, isfinite): a kernel says
// `using namespace myops::device_math;`. On the device it names nothing (CUDA's overloads take
// the argument's own precision); in the emulation it brings std's float overloads beside the
// host's global double ones, so a float argument stays float as on the device.
#if defined(MYOPS_CUDA_EMULATION)
#include "core/cuda/emulation.h"
#define MYOPS_LAUNCH(grid, block, stream, ...) ::myops::emu::Launch(grid, block, stream, __VA_ARGS__)
#define MYOPS_LAUNCH_COOP(grid, block, stream, ...) ::myops::emu::LaunchCoop(grid, block, stream, __VA_ARGS__)
#define MYOPS_SHARED(T, name, N) T* const name = ::myops::emu::block_shared<T, N>([] {})
#define MYOPS_SPIN_PAUSE() ::myops::emu::spin_pause()
#include <cmath>
namespace myops {
namespace device_math {
using std::ceil;
using std::floor;
using std::isfinite;
}  // namespace device_math
}  // namespace myops
#else
#define MYOPS_LAUNCH(grid, block, stream, ...) __VA_ARGS__<<<grid, block, 0, stream>>>
#define MYOPS_LAUNCH_COOP(grid, block, stream, ...) __VA_ARGS__<<<grid, block, 0, stream>>>
#define MYOPS_SHARED(T, name, N)  \
  __shared__ T name##_storage[N]; \
  T* const name = name##_storage
#define MYOPS_SPIN_PAUSE() __nanosleep(32)
namespace myops {
namespace device_math {}
}  // namespace myops
#endif

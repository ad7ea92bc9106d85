#pragma once
// One spelling for every kernel launch of this directory:
//
//   MYOPS_LAUNCH(grid, block, stream, kernel<...>)(args...);
//     == kernel<...><<<grid, block, 0, stream>>>(args...)
//
// Built with MYOPS_CUDA_EMULATION (the host compiler, tests/test_cuda_emulation.py), the same
// line runs the kernel on the host instead: cuda/emulation.h.
#if defined(MYOPS_CUDA_EMULATION)
#include "cuda/emulation.h"
#define MYOPS_LAUNCH(grid, block, stream, ...) ::myops::emu::Launch(grid, block, stream, __VA_ARGS__)
#else
#define MYOPS_LAUNCH(grid, block, stream, ...) __VA_ARGS__<<<grid, block, 0, stream>>>
#endif

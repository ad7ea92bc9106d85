// The aten drop-in with its CUDA backend, built by the host compiler for
// tests/test_cuda_emulation.py: its own registry and control ops (myops_emu::_override_*), whose
// one backend is the CUDA one, on the CPU key (core/cuda/glue.h), calling myops_emu's ops.
#include "core/cuda/glue.h"          // first: MYOPS_OVERRIDE_LIBRARY = myops_emu
#include "dropin/aten_override.cpp"  // the registry (its CPU backend is replaced by the CUDA one below)
#include "dropin/cuda/aten_override_cuda.cpp"

#pragma once
// Which build of the CPU kernels runs: each family with ISA builds (elementwise: baseline, AVX2,
// AVX-512; max_pool2d_add: baseline, AVX2) calls cpu_isa() and runs the best build at or below
// it. Chosen once per process (csrc/elementwise/cpu/elementwise.cpp):
//
//   MYOPS_CPU_ISA=baseline|avx2|avx512|avx512_bf16   force that build (to test or time it)
//   MYOPS_CPU_BASELINE=1                             the same as MYOPS_CPU_ISA=baseline
//   neither                                          the best build this CPU can run
//
// An unknown value, or a build this CPU cannot run, is an error (a RuntimeError on every CPU
// call that would use it, naming the variable and what this CPU has), never a silent fallback:
// a forced build exists to be tested or timed, and a fallback would test or time another one.
// The registered op myops::_cpu_isa() -> str names the build in use.
#include <string>

namespace myops {

// In order: each level includes the ones before it.
enum class CpuIsa {
  Baseline = 0,    // the compiler's x86-64 baseline (SSE2)
  Avx2 = 1,        // AVX2 + FMA + F16C
  Avx512 = 2,      // + AVX-512 F/BW/VL/DQ
  Avx512Bf16 = 3,  // + AVX512-BF16 (hardware float -> bfloat16 rounding)
};

CpuIsa cpu_isa();       // the build in use (throws for a bad MYOPS_CPU_ISA)
bool cpu_isa_forced();  // whether MYOPS_CPU_ISA (or MYOPS_CPU_BASELINE) chose it
const char* cpu_isa_name(CpuIsa isa);

}  // namespace myops

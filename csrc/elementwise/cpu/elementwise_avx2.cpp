// The CPU elementwise loops (elementwise/cpu/elementwise_kernels.h) built for AVX2 + FMA + F16C:
// at::vec::Vectorized<T> maps to 256-bit registers (namespace at::vec::AVX2, as in PyTorch's
// own AVX2 build), with SLEEF math and hardware half/bfloat16 conversion. elementwise.cpp calls
// run_cpu_avx2 only on CPUs that have these features.
//
// setup.py compiles this file with the AVX2 flags (ISA_BUILDS: -mavx2 -mfma -mf16c
// -DCPU_CAPABILITY=AVX2 -DCPU_CAPABILITY_AVX2), as torch builds its own AVX2 kernels; on other
// platforms it compiles for the baseline and is never called (elementwise.cpp checks the CPU).
#include <type_traits>

#define MYOPS_CPU_ENTRY run_cpu_avx2
#include "elementwise/cpu/elementwise_kernels.h"

#ifdef CPU_CAPABILITY_AVX2
static_assert(std::is_same<at::vec::Vectorized<float>, at::vec::AVX2::Vectorized<float>>::value,
              "myops: the AVX2 elementwise build did not get the AVX2 Vectorized");
#endif

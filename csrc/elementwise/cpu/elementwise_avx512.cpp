// The vectorized CPU elementwise loops on the floating dtypes (float, double, half, bfloat16:
// every op but cast and where) built for AVX-512 (F, BW, VL, DQ) + FMA + F16C:
// at::vec::Vectorized<T> maps to 512-bit registers, with 16-wide math. That doubles the
// arithmetic throughput of the AVX2 build: it pays for the transcendental ops (gelu, silu,
// sigmoid, exp, log, tanh) and for any op whose data sits in the caches. elementwise.cpp calls
// run_cpu_avx512 only for those ops and dtypes and only on CPUs with these features; integer
// and bool dtypes, cast and where stay in the AVX2 build (elementwise/cpu/elementwise_kernels.h is included
// here with MYOPS_EW_FLOAT_ONLY, so nothing else is compiled a third time).
//
// setup.py compiles this file with the AVX-512 flags (ISA_BUILDS: -mavx512f -mavx512bw
// -mavx512vl -mavx512dq -mavx2 -mfma -mf16c -DCPU_CAPABILITY=AVX512 -DCPU_CAPABILITY_AVX512),
// as torch builds its own AVX-512 kernels; on other platforms it compiles for the baseline and
// is never called (elementwise.cpp checks the CPU).
//
// GCC 12 reports every inlined use of its own AVX-512 intrinsics' deliberately uninitialized
// "undefined" registers (`__m512 __Y = __Y;` in avx512fintrin.h) as -Wmaybe-uninitialized,
// ~1,800 times: false positives from the compiler's header, not from this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define MYOPS_CPU_ENTRY run_cpu_avx512
#define MYOPS_EW_FLOAT_ONLY
#define MYOPS_EW_HW_BF16  // bfloat16 gelu / silu / sigmoid: vcvtne2ps2bf16 where the CPU has it
#include "elementwise/cpu/elementwise_kernels.h"

#ifdef CPU_CAPABILITY_AVX512
static_assert(at::vec::Vectorized<float>::size() == 16, "myops: the AVX-512 build did not get 512-bit Vectorized");
#endif

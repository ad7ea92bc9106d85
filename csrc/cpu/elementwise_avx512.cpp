// The vectorized CPU elementwise loops on the floating dtypes (float, double, half, bfloat16:
// every op but cast and where) built for AVX-512 (F, BW, VL, DQ) + FMA + F16C:
// at::vec::Vectorized<T> maps to 512-bit registers, with 16-wide math. That doubles the
// arithmetic throughput of the AVX2 build: it pays for the transcendental ops (gelu, silu,
// sigmoid) and for any op whose data sits in the caches. elementwise.cpp calls run_cpu_avx512
// only for those ops and dtypes and only on CPUs with these features; integer and bool
// dtypes, cast and where stay in the AVX2 build (cpu/elementwise_kernels.h is included here
// with MYOPS_EW_FLOAT_ONLY, so nothing else is compiled a third time).
//
// As in elementwise_avx2.cpp, every header that is not SIMD code is included first, for the
// baseline target; at::vec is compiled into its own namespace (CPU_CAPABILITY myops_avx512) so
// that none of its inline functions can be merged with another build's copy.
// GCC 12 reports every inlined use of its own AVX-512 intrinsics' deliberately uninitialized
// "undefined" registers (`__m512 __Y = __Y;` in avx512fintrin.h) as -Wmaybe-uninitialized,
// ~1,800 times: false positives from the compiler's header, not from this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <ATen/Dispatch_v2.h>
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <type_traits>

#if defined(__linux__)
#include <sys/mman.h>  // mincore (cpu/elementwise_kernels.h)
#include <unistd.h>
#endif

#include "common/elementwise_functors.h"
#include "common/elementwise_host.h"
#include "common/elementwise_ops.h"
#include "cpu/add_alpha_torch_order.h"
#include "cpu/cpu_isa.h"
#include "cpu/gelu_phi_tables.h"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments inside this file only
// g++ does not define the feature macros for a target pragma; the SIMD headers (sleef.h) test them
#ifndef __AVX__
#define __AVX__ 1
#endif
#ifndef __AVX2__
#define __AVX2__ 1
#endif
#ifndef __FMA__
#define __FMA__ 1
#endif
#ifndef __F16C__
#define __F16C__ 1
#endif
#ifndef __AVX512F__
#define __AVX512F__ 1
#endif
#ifndef __AVX512BW__
#define __AVX512BW__ 1
#endif
#ifndef __AVX512VL__
#define __AVX512VL__ 1
#endif
#ifndef __AVX512DQ__
#define __AVX512DQ__ 1
#endif
#define CPU_CAPABILITY myops_avx512
#define CPU_CAPABILITY_AVX512
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>
static_assert(at::vec::Vectorized<float>::size() == 16, "myops: the AVX-512 build did not get 512-bit Vectorized");

#define MYOPS_CPU_ENTRY run_cpu_avx512
#define MYOPS_EW_FLOAT_ONLY
#define MYOPS_EW_HW_BF16  // bfloat16 gelu / silu / sigmoid: vcvtne2ps2bf16 where the CPU has it
#include "cpu/elementwise_kernels.h"
#pragma GCC pop_options

#else  // no AVX-512 build on this platform: never called (elementwise.cpp checks the CPU)
#define MYOPS_CPU_ENTRY run_cpu_avx512
#define MYOPS_EW_FLOAT_ONLY
#include "cpu/elementwise_kernels.h"
#endif

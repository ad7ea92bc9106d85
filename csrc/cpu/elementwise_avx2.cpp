// The CPU elementwise loops (cpu/elementwise_kernels.h) built for AVX2 + FMA + F16C:
// at::vec::Vectorized<T> maps to 256-bit registers (namespace at::vec::AVX2, as in PyTorch's
// own AVX2 build), with SLEEF math and hardware half/bfloat16 conversion. elementwise.cpp calls
// run_cpu_avx2 only on CPUs that have these features.
//
// Every header that is not SIMD code is included first, for the baseline target, so that only
// the vector code below is compiled for AVX2.
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
#pragma GCC target("avx2,fma,f16c")
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
#define CPU_CAPABILITY AVX2
#define CPU_CAPABILITY_AVX2
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>
static_assert(std::is_same<at::vec::Vectorized<float>, at::vec::AVX2::Vectorized<float>>::value,
              "myops: the AVX2 elementwise build did not get the AVX2 Vectorized");

#define MYOPS_CPU_ENTRY run_cpu_avx2
#include "cpu/elementwise_kernels.h"
#pragma GCC pop_options

#else  // no AVX2 build on this platform: never called (elementwise.cpp checks the CPU)
#define MYOPS_CPU_ENTRY run_cpu_avx2
#include "cpu/elementwise_kernels.h"
#endif

// The CPU kernels of myops.max_pool2d_add built for AVX2 + FMA (at::vec's 256-bit
// Vectorized), chosen at run time by max_pool2d_add.cpp when the CPU supports them. setup.py
// builds every file with the same flags, so the instruction set is raised here with a target
// pragma, after the generic headers (whose inline functions must stay baseline code) and before
// at::vec, which then compiles its AVX2 implementation into its own namespace.
#if defined(__GNUC__) && defined(__x86_64__)
#include <ATen/Dispatch_v2.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/irange.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/max_pool2d_add_shape.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#pragma GCC diagnostic ignored "-Wpsabi"  // AVX vector arguments inside this file only
// The target pragma does not define __AVX__/__AVX2__, which sleef.h (included by at::vec's AVX2
// headers) needs to declare its 256-bit functions: define them for that one include.
#include <immintrin.h>
#if !defined(__AVX2__)
#define __AVX__ 1
#define __AVX2__ 1
#define __FMA__ 1
#include <sleef.h>
#undef __AVX__
#undef __AVX2__
#undef __FMA__
#else
#include <sleef.h>
#endif
#define CPU_CAPABILITY myops_avx2
#define CPU_CAPABILITY_AVX2 1
#define MYOPS_MP_CAP avx2
#include "cpu/max_pool2d_add_kernels.h"
#pragma GCC pop_options
#endif

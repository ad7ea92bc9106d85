// The CPU kernels of myops.max_pool2d_add built for AVX2 + FMA (at::vec's 256-bit
// Vectorized), chosen at run time by max_pool2d_add.cpp when the CPU supports them. setup.py
// compiles this file with the AVX2 flags (ISA_BUILDS: -mavx2 -mfma -mf16c
// -DCPU_CAPABILITY=AVX2 -DCPU_CAPABILITY_AVX2); elsewhere it is empty.
#ifdef CPU_CAPABILITY_AVX2
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

#include "max_pool2d_add/max_pool2d_add_shape.h"

#define MYOPS_MP_CAP avx2
#include "max_pool2d_add/cpu/max_pool2d_add_kernels.h"
#endif

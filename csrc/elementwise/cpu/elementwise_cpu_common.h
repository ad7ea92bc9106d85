#pragma once
// What every part of the CPU elementwise kernels shares (elementwise/cpu/elementwise_kernels.h): the
// headers, the names in scope and the grain size.
//
// The CPU elementwise loops, compiled three times: by elementwise.cpp for the compiler's
// baseline (Vectorized<T> without SIMD: plain loops the compiler vectorizes), by
// elementwise_avx2.cpp with AVX2/FMA/F16C enabled (Vectorized<T> on 256-bit registers,
// hardware half conversions, the inline float math below) and by elementwise_avx512.cpp for
// the floating dtypes on 512-bit registers (plus the AVX512-BF16 rounding of bfloat16 gelu /
// silu / sigmoid); elementwise.cpp picks one at run time (core/cpu_isa.h, MYOPS_CPU_ISA).
#include <ATen/Dispatch_v2.h>
#include <ATen/Parallel.h>
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "elementwise/elementwise_functors.h"
#include "elementwise/elementwise_host.h"
#include "elementwise/elementwise_front.h"
#include "core/uint_of.h"
#include "elementwise/cpu/add_alpha_torch_order.h"
#include "core/cpu_isa.h"
#include "elementwise/cpu/gelu_phi_tables.h"

namespace myops {
namespace {

using namespace myops::ew;
using at::vec::Vectorized;

constexpr int64_t kGrain = 32768;

}  // namespace
}  // namespace myops

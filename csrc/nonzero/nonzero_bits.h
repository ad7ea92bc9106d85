#pragma once
// nonzero's constants, shared by the CPU kernels (nonzero/cpu/nonzero.cpp), the CUDA glue and the CUB
// launchers (nonzero/cuda/nonzero.h): what "nonzero" means for an element's bits, and the CUDA rank limit.
// No torch types (the checks that use these: nonzero/nonzero_rules.h).
#include <cstdint>

namespace myops {
namespace nonzero_rules {

// Highest rank whose coordinates the CUDA kernels write (torch's own CUDA nonzero stops at 25).
constexpr int kMaxCudaRank = 64;

// The bits of an element of `bytes` bytes that make it nonzero: all of them for bool and the
// integers; all but the sign bit (the top one) for floating types, so that -0.0 is zero and NaN
// nonzero, exactly like `x != 0`.
constexpr uint64_t mask(bool floating, int bytes) {
  return (bytes >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * bytes)) - 1) >> (floating ? 1 : 0);
}

}  // namespace nonzero_rules
}  // namespace myops

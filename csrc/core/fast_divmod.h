#pragma once
// Division by a runtime-invariant divisor with one multiply-high, an add and a shift
// (Granlund & Montgomery, "Division by invariant integers using multiplication", 1994).
// Built once on the host, used on host and device. FastDivmod<uint32_t> is exact for
// dividends < 2^31, FastDivmod<uint64_t> for dividends < 2^63.
#include <cstdint>

#include "core/macros.h"

namespace myops {

template <typename T>
struct FastDivmod;

template <>
struct FastDivmod<uint32_t> {
  uint32_t divisor = 1, multiplier = 1, shift = 0;
  FastDivmod() = default;
  explicit FastDivmod(uint32_t d) : divisor(d) {
    shift = 0;
    while (shift < 32 && (uint64_t(1) << shift) < d) ++shift;
    multiplier = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }
  MYOPS_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    uint32_t t = __umulhi(n, multiplier);
#else
    uint32_t t = uint32_t((uint64_t(n) * multiplier) >> 32);
#endif
    return (t + n) >> shift;
  }
  MYOPS_HD void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = div(n);
    r = n - q * divisor;
  }
};

template <>
struct FastDivmod<uint64_t> {
  uint64_t divisor = 1, multiplier = 1;
  uint32_t shift = 0;
  FastDivmod() = default;
  // Requires 1 <= d <= 2^63.
  explicit FastDivmod(uint64_t d) : divisor(d) {
    shift = 0;
    while (shift < 64 && (uint64_t(1) << shift) < d) ++shift;
    using u128 = unsigned __int128;
    u128 two_s = shift == 64 ? (u128(1) << 64) : u128(uint64_t(1) << shift);
    multiplier = uint64_t(((u128(1) << 64) * (two_s - d)) / d + 1);
  }
  MYOPS_HD uint64_t div(uint64_t n) const {
#if defined(__CUDA_ARCH__)
    uint64_t t = __umul64hi(n, multiplier);
#else
    uint64_t t = uint64_t((static_cast<unsigned __int128>(n) * multiplier) >> 64);
#endif
    return (t + n) >> shift;
  }
  MYOPS_HD void divmod(uint64_t n, uint64_t& q, uint64_t& r) const {
    q = div(n);
    r = n - q * divisor;
  }
};

}  // namespace myops

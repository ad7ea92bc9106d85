#pragma once
// The CPU elementwise loops, compiled three times: by elementwise.cpp for the compiler's
// baseline (Vectorized<T> without SIMD: plain loops the compiler vectorizes), by
// elementwise_avx2.cpp with AVX2/FMA/F16C enabled (Vectorized<T> on 256-bit registers,
// hardware half conversions, the inline float math below) and by elementwise_avx512.cpp for
// the floating dtypes on 512-bit registers (plus the AVX512-BF16 rounding of bfloat16 gelu /
// silu / sigmoid); elementwise.cpp picks one at run time (cpu/cpu_isa.h, MYOPS_CPU_ISA).
// Include only after defining MYOPS_CPU_ENTRY (the name of the entry point this copy defines).
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

#include "common/elementwise_functors.h"
#include "common/elementwise_host.h"
#include "common/elementwise_ops.h"
#include "common/uint_of.h"
#include "cpu/add_alpha_torch_order.h"
#include "cpu/cpu_isa.h"
#include "cpu/gelu_phi_tables.h"

#ifndef MYOPS_CPU_ENTRY
#error "define MYOPS_CPU_ENTRY before including cpu/elementwise_kernels.h"
#endif

namespace myops {
namespace {


using namespace myops::ew;
using at::vec::Vectorized;

constexpr int64_t kGrain = 32768;

// ---- vector forms of the functors (on Vectorized<compute type>) -----------------------------
// Each gives the same value as the scalar functor for every non-NaN result (NaN results may
// carry another payload, as in PyTorch's own vector paths).

struct NoVec {};

template <class F>
struct VecOf {
  using type = NoVec;
};

struct VRelu {
  Relu f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a) const {
    return V::blendv(a, V(0), a < V(0));
  }
};
template <>
struct VecOf<Relu> {
  using type = VRelu;
};

// relu on half / bfloat16 without widening to float: on the storage bits read as int16, the
// values relu sends to 0 (negative, nonzero, not NaN: -inf included) are exactly those in
// [-32767, bits of -inf]; -0.0 (-32768) and negative NaNs (above -inf) pass unchanged, as in
// the scalar functor. Returns how many leading elements it wrote.
template <typename T>
int64_t relu16_row(const T* in, T* out, int64_t n) {
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
  static_assert(sizeof(T) == 2, "16-bit types only");
  constexpr int16_t kNegInf = std::is_same<T, c10::BFloat16>::value ? int16_t(-128) : int16_t(-1024);
  int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX512)
  const __m512i lim = _mm512_set1_epi16(kNegInf + 1), minus0 = _mm512_set1_epi16(-32768);
  for (; i + 32 <= n; i += 32) {
    const __m512i v = _mm512_loadu_si512(in + i);
    const __mmask32 zero = _mm512_cmpgt_epi16_mask(lim, v) & _mm512_cmpgt_epi16_mask(v, minus0);
    _mm512_storeu_si512(out + i, _mm512_maskz_mov_epi16(~zero, v));
  }
#else
  const __m256i lim = _mm256_set1_epi16(kNegInf + 1), minus0 = _mm256_set1_epi16(-32768);
  for (; i + 16 <= n; i += 16) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i zero = _mm256_and_si256(_mm256_cmpgt_epi16(lim, v), _mm256_cmpgt_epi16(v, minus0));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_andnot_si256(zero, v));
  }
#endif
  return i;
#else
  (void)in;
  (void)out;
  (void)n;
  return 0;
#endif
}

// ---- fast float math for the SIMD builds ------------------------------------------------------
// gelu, silu and sigmoid on float (and on half / bfloat16, which compute in float) spend their
// time in exp, erf and a division. at::vec calls SLEEF (an out-of-line call per vector) and
// divides; PyTorch's own kernels do the same, or call oneDNN's JIT kernels, which inline a
// polynomial exp and replace the division. So do we, in both SIMD builds (256 and 512 bits):
//  - exp: Cody-Waite reduction by ln 2 in two parts and Cephes' degree-6 polynomial
//    (about 1 ulp), inline; the input clamped to [-87.34, 88] (NaN passes through) so that
//    1 + exp(-x) stays finite and the scale 2^n a normal number;
//  - 1 / d: the hardware reciprocal estimate (rcp: 12 bits, rcp14: 14 bits) and one Newton
//    step (within 1-2 ulp of the division);
//  - gelu's Phi: a piecewise polynomial of 0.5 erfc, picked per lane by permutes (v_phi).
// These stay well inside the suite's tolerance against torch (4 ulp or 3e-6 relative in
// float32, 1 ulp of half / bfloat16). double keeps the library's functions.
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
#define MYOPS_EW_FAST_MATH 1
using VFloat = Vectorized<float>;
#if defined(CPU_CAPABILITY_AVX512)
inline VFloat vfmadd(const VFloat& a, const VFloat& b, const VFloat& c) { return _mm512_fmadd_ps(a, b, c); }
inline VFloat vfnmadd(const VFloat& a, const VFloat& b, const VFloat& c) { return _mm512_fnmadd_ps(a, b, c); }
// min / max with a constant; a NaN x is returned unchanged (the second operand wins)
inline VFloat vmin_c(const VFloat& x, float c) { return _mm512_min_ps(_mm512_set1_ps(c), x); }
inline VFloat vmax_c(const VFloat& x, float c) { return _mm512_max_ps(_mm512_set1_ps(c), x); }
inline VFloat vround(const VFloat& x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// 2^n for an integral n in [-126, 127]
inline VFloat vpow2(const VFloat& n) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
}
inline VFloat vrcp(const VFloat& d) {
  const __m512 t = _mm512_rcp14_ps(d);
  return _mm512_mul_ps(t, _mm512_fnmadd_ps(d, t, _mm512_set1_ps(2.f)));  // Newton: t (2 - d t)
}
inline VFloat vabs(const VFloat& x) { return _mm512_abs_ps(x); }
// x < below ? x * 0 : r (-0, or NaN at -inf, as torch's formulas give far out on the left)
C10_ALWAYS_INLINE VFloat v_neg_tail(const VFloat& r, const VFloat& x, float below) {
  return _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(x, _mm512_set1_ps(below), _CMP_LT_OQ), x, _mm512_setzero_ps());
}
// x's sign bit set ? q : 1 - q
inline VFloat v_phi_select(const VFloat& q, const VFloat& x) {
  return _mm512_mask_sub_ps(q, ~_mm512_movepi32_mask(_mm512_castps_si512(x)), _mm512_set1_ps(1.f), q);
}
// gelu's Phi table (cpu/gelu_phi_tables.h): 32 intervals, each lane's coefficient k picked by
// one vpermt2ps from the table's two 16-entry halves (only the index's low 5 bits are read)
struct PhiLut {
  static constexpr int kDegree = ew_cpu::kPhi32Degree;
  static constexpr float kScale = ew_cpu::kPhi32Scale;
  __m512i idx;
  explicit PhiLut(const VFloat& interval) : idx(_mm512_cvtps_epi32(interval)) {}
  C10_ALWAYS_INLINE VFloat pick(int k) const {
    return _mm512_permutex2var_ps(_mm512_load_ps(ew_cpu::kPhi32[k]), idx, _mm512_load_ps(ew_cpu::kPhi32[k] + 16));
  }
};
// p where t < c (or t is NaN), else 0
inline VFloat v_zero_from(const VFloat& p, const VFloat& t, float c) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, _mm512_set1_ps(c), _CMP_NGE_UQ), p);
}
// every lane in [lo, hi] (false for a NaN lane)
inline bool vall_in(const VFloat& x, float lo, float hi) {
  return (_mm512_cmp_ps_mask(x, _mm512_set1_ps(lo), _CMP_GE_OQ) & _mm512_cmp_ps_mask(x, _mm512_set1_ps(hi), _CMP_LE_OQ)) == 0xFFFF;
}
// x = m 2^e with m in [0.5, 1), for a normal positive x
inline VFloat vfrexp(const VFloat& x, VFloat& e) {
  e = _mm512_add_ps(_mm512_getexp_ps(x), _mm512_set1_ps(1.f));
  return _mm512_getmant_ps(x, _MM_MANT_NORM_p5_1, _MM_MANT_SIGN_zero);
}
#else
inline VFloat vfmadd(const VFloat& a, const VFloat& b, const VFloat& c) { return _mm256_fmadd_ps(a, b, c); }
inline VFloat vfnmadd(const VFloat& a, const VFloat& b, const VFloat& c) { return _mm256_fnmadd_ps(a, b, c); }
inline VFloat vmin_c(const VFloat& x, float c) { return _mm256_min_ps(_mm256_set1_ps(c), x); }
inline VFloat vmax_c(const VFloat& x, float c) { return _mm256_max_ps(_mm256_set1_ps(c), x); }
inline VFloat vround(const VFloat& x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline VFloat vpow2(const VFloat& n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
inline VFloat vrcp(const VFloat& d) {
  const __m256 t = _mm256_rcp_ps(d);
  return _mm256_mul_ps(t, _mm256_fnmadd_ps(d, t, _mm256_set1_ps(2.f)));
}
inline VFloat vabs(const VFloat& x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.f), x); }
C10_ALWAYS_INLINE VFloat v_neg_tail(const VFloat& r, const VFloat& x, float below) {
  return _mm256_blendv_ps(r, _mm256_mul_ps(x, _mm256_setzero_ps()),
                          _mm256_cmp_ps(x, _mm256_set1_ps(below), _CMP_LT_OQ));
}
inline VFloat v_phi_select(const VFloat& q, const VFloat& x) {
  return _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.f), q), q, x);
}
// 8 intervals, one vpermps per coefficient (only the index's low 3 bits are read)
struct PhiLut {
  static constexpr int kDegree = ew_cpu::kPhi8Degree;
  static constexpr float kScale = ew_cpu::kPhi8Scale;
  __m256i idx;
  explicit PhiLut(const VFloat& interval) : idx(_mm256_cvtps_epi32(interval)) {}
  C10_ALWAYS_INLINE VFloat pick(int k) const {
    return _mm256_permutevar8x32_ps(_mm256_load_ps(ew_cpu::kPhi8[k]), idx);
  }
};
inline VFloat v_zero_from(const VFloat& p, const VFloat& t, float c) {
  return _mm256_and_ps(_mm256_cmp_ps(t, _mm256_set1_ps(c), _CMP_NGE_UQ), p);
}
inline bool vall_in(const VFloat& x, float lo, float hi) {
  return _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(lo), _CMP_GE_OQ),
                                          _mm256_cmp_ps(x, _mm256_set1_ps(hi), _CMP_LE_OQ))) == 0xFF;
}
inline VFloat vfrexp(const VFloat& x, VFloat& e) {
  const __m256i bits = _mm256_castps_si256(x);
  e = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(bits, 23)), _mm256_set1_ps(126.f));
  return _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                             _mm256_set1_epi32(0x3f000000)));
}
#endif

// exp for x in [-87.34, 88] (vexp_in) or clamped there (vexp)
C10_ALWAYS_INLINE VFloat vexp_in(const VFloat& x) {
  const VFloat n = vround(x * VFloat(1.44269504088896341f));
  VFloat r = vfnmadd(n, VFloat(0.693359375f), x);  // x - n ln2, ln2 in two parts
  r = vfnmadd(n, VFloat(-2.12194440e-4f), r);
  VFloat p = vfmadd(VFloat(1.9875691500e-4f), r, VFloat(1.3981999507e-3f));
  p = vfmadd(p, r, VFloat(8.3334519073e-3f));
  p = vfmadd(p, r, VFloat(4.1665795894e-2f));
  p = vfmadd(p, r, VFloat(1.6666665459e-1f));
  p = vfmadd(p, r, VFloat(5.0000001201e-1f));
  p = vfmadd(p, r * r, r + VFloat(1.f));
  return p * vpow2(n);
}
C10_ALWAYS_INLINE VFloat vexp(const VFloat& x) { return vexp_in(vmax_c(vmin_c(x, 88.0f), -87.33654f)); }

// exp, log and tanh on float (issue #29): at::vec's are SLEEF's 1-ulp functions, an out-of-line
// call per vector, and SLEEF's tanhf_u10 / logf_u10 work in double-float arithmetic: myops
// measured 0.21x / 0.55x torch on tanh / log (torch's kernels call MKL's VML on contiguous
// float). These are Cephes' single-precision algorithms, inline: within 2 ulp of the correctly
// rounded result (measured: README.md), so within the suite's 4 ulp of torch's. exp and log
// take at::vec's function for a vector that holds any lane outside the range where the fast
// form is exact in its special cases (exp: the result normal and finite; log: a positive normal
// finite input), so inf, NaN, zero, negative and denormal lanes get SLEEF's values.
C10_ALWAYS_INLINE VFloat v_exp_f(const VFloat& x) {
  if (!vall_in(x, -87.0f, 88.0f)) return x.exp();
  return vexp_in(x);
}
C10_ALWAYS_INLINE VFloat v_log_f(const VFloat& x) {
  if (!vall_in(x, 1.17549435e-38f, 3.40282347e+38f)) return x.log();
  VFloat e;
  const VFloat m = vfrexp(x, e);  // m in [0.5, 1)
  // m < sqrt(1/2): log(2m) - (e - 1) ln2, so that f = m - 1 (or 2m - 1) lies in [-0.29, 0.41]
  const VFloat lo = m < VFloat(0.707106781186547524f);
  const VFloat f = m - VFloat(1.f) + (lo & m);
  e = e - (lo & VFloat(1.f));
  const VFloat z = f * f;
  VFloat p = vfmadd(VFloat(7.0376836292e-2f), f, VFloat(-1.1514610310e-1f));
  p = vfmadd(p, f, VFloat(1.1676998740e-1f));
  p = vfmadd(p, f, VFloat(-1.2420140846e-1f));
  p = vfmadd(p, f, VFloat(1.4249322787e-1f));
  p = vfmadd(p, f, VFloat(-1.6668057665e-1f));
  p = vfmadd(p, f, VFloat(2.0000714765e-1f));
  p = vfmadd(p, f, VFloat(-2.4999993993e-1f));
  p = vfmadd(p, f, VFloat(3.3333331174e-1f));
  VFloat y = p * f * z;
  y = vfmadd(e, VFloat(-2.12194440e-4f), y);
  y = vfnmadd(z, VFloat(0.5f), y);
  return vfmadd(e, VFloat(0.693359375f), f + y);
}
// tanh: an odd polynomial below |x| = 0.625, else 1 - 2 / (exp(2|x|) + 1) with x's sign (vexp
// clamps 2|x| to 88: 1 from there on; a NaN passes through; the division is vrcp).
C10_ALWAYS_INLINE VFloat v_tanh_f(const VFloat& x) {
  const VFloat a = vabs(x);
  const VFloat z = x * x;
  VFloat p = vfmadd(VFloat(-5.70498872745e-3f), z, VFloat(2.06390887954e-2f));
  p = vfmadd(p, z, VFloat(-5.37397155531e-2f));
  p = vfmadd(p, z, VFloat(1.33314422036e-1f));
  p = vfmadd(p, z, VFloat(-3.33332819422e-1f));
  const VFloat small = vfmadd(p * z, x, x);
  // 2 / (e + 1) <= 0.45 against a result >= 0.55: vrcp's error (1-2 ulp of the quotient)
  // shrinks in the difference
  const VFloat big = vfnmadd(VFloat(2.f), vrcp(vexp(a + a) + VFloat(1.f)), VFloat(1.f)) | (x & VFloat(-0.f));
  return VFloat::blendv(big, small, a < VFloat(0.625f));
}

// Phi(x) = 0.5 (1 + erf(x / sqrt 2)), gelu's factor: Phi = 1 - q(|x|) for x >= 0 and q(|x|)
// for x < 0, q(t) = 0.5 erfc(t / sqrt 2) (no cancellation for negative x: torch's
// 1 + erf(...) has it). q is a piecewise polynomial on [0, 6) (cpu/gelu_phi_tables.h,
// tools/fit_gelu_phi.py; within 1.5e-7 of q relative to max(q, 0.02)): each lane's interval i
// picks its coefficients from a table with one permute per coefficient (32 intervals of degree 4
// with vpermt2ps on 512-bit registers, 8 of degree 7 with vpermps on 256-bit ones), then Horner
// in u = t / w - i - 0.5. No exp, no reciprocal: about 18 instructions (AVX-512) where
// A&S 7.1.26 (exp, rcp, polynomial) took 32.
// Beyond t = 6, q = 0 (gelu(x) = x there, and x * 0 on the left: -0, NaN at -inf, as torch's).
// NaN in, NaN out (t NaN: every step keeps it; the t >= 6 mask is false).
C10_ALWAYS_INLINE VFloat v_phi(const VFloat& x) {
  const VFloat t = vabs(x);
  // r = t / w - 0.5, n = round(r): the interval, u = r - n in [-0.5, 0.5]
  const VFloat r = vfmadd(t, VFloat(PhiLut::kScale), VFloat(-0.5f));
  const VFloat n = vround(r);
  const VFloat u = r - n;
  const PhiLut lut(n);
  VFloat p = lut.pick(PhiLut::kDegree);
#pragma GCC unroll 8
  for (int k = PhiLut::kDegree - 1; k >= 0; --k) p = vfmadd(p, u, lut.pick(k));
  // q = 0 from t = 6 on (the last interval ends there; r's rounding could pick one past it)
  return v_phi_select(v_zero_from(p, t, ew_cpu::kPhiRange), x);
}
#endif

template <class V>
C10_ALWAYS_INLINE V v_gelu(const V& x, bool tanh_approx) {
  using T = typename V::value_type;
  if (tanh_approx) {
    const V kBeta(T(M_SQRT2 * M_2_SQRTPI * 0.5));
    const V kKappa(T(0.044715));
    V x_cube = x * x * x;
    V inner = kBeta * (x + kKappa * x_cube);
    return V(T(0.5)) * x * (V(T(1)) + inner.tanh());
  }
  return x * V(T(0.5)) * (V(T(1)) + (x * V(T(M_SQRT1_2))).erf());
}
template <class V>
C10_ALWAYS_INLINE V v_sigmoid(const V& x) {
  using T = typename V::value_type;
  return V(T(1)) / (V(T(1)) + x.neg().exp());
}
template <class V>
C10_ALWAYS_INLINE V v_silu(const V& x) {
  using T = typename V::value_type;
  return x / (V(T(1)) + x.neg().exp());
}

#ifdef MYOPS_EW_FAST_MATH
// Large negative x: torch's formulas give -0 there (NaN at -inf: -inf * 0); ours may give a
// denormal factor instead of 0 (rcp14 of a huge 1 + exp(-x), or a tiny erfc), so those lanes
// take x * 0 (v_neg_tail).
template <>
C10_ALWAYS_INLINE VFloat v_gelu(const VFloat& x, bool tanh_approx) {
  if (tanh_approx) {
    // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3)
    const VFloat u2 = (x + VFloat(0.044715f) * x * x * x) * VFloat(float(-2.0 * M_SQRT2 * M_2_SQRTPI * 0.5));
    return v_neg_tail(x * vrcp(VFloat(1.f) + vexp(u2)), x, -10.f);
  }
  return x * v_phi(x);  // Phi is 0 from x = -6 on: -0 (NaN at -inf), as torch's
}
template <>
C10_ALWAYS_INLINE VFloat v_sigmoid(const VFloat& x) {
  return vrcp(VFloat(1.f) + vexp(VFloat(0.f) - x));
}
template <>
C10_ALWAYS_INLINE VFloat v_silu(const VFloat& x) {
  return v_neg_tail(x * vrcp(VFloat(1.f) + vexp(VFloat(0.f) - x)), x, -80.f);
}
#endif

struct VGelu {
  Gelu f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V x) const {
    return v_gelu(x, f.tanh_approx);
  }
};
template <>
struct VecOf<Gelu> {
  using type = VGelu;
};

struct VSigmoid {
  Sigmoid f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V x) const {
    return v_sigmoid(x);
  }
};
template <>
struct VecOf<Sigmoid> {
  using type = VSigmoid;
};

struct VSilu {
  Silu f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V x) const {
    return v_silu(x);
  }
};
template <>
struct VecOf<Silu> {
  using type = VSilu;
};

// exp / log / tanh: at::vec's, but on float in the SIMD builds the inline forms above
template <class V>
C10_ALWAYS_INLINE V v_exp(const V& x) { return x.exp(); }
template <class V>
C10_ALWAYS_INLINE V v_log(const V& x) { return x.log(); }
template <class V>
C10_ALWAYS_INLINE V v_tanh(const V& x) { return x.tanh(); }
#ifdef MYOPS_EW_FAST_MATH
template <>
C10_ALWAYS_INLINE VFloat v_exp(const VFloat& x) { return v_exp_f(x); }
template <>
C10_ALWAYS_INLINE VFloat v_log(const VFloat& x) { return v_log_f(x); }
template <>
C10_ALWAYS_INLINE VFloat v_tanh(const VFloat& x) { return v_tanh_f(x); }
#endif

// The unary math of the table on Vectorized<float / double> (half / bfloat16 widened to float):
// at::vec's own functions, which torch's vector loops call (SLEEF for exp, log, tanh, pow;
// the instructions for sqrt, 1 / sqrt, abs, neg).
#define MYOPS_VEC_UNARY(F, EXPR)   \
  struct V##F {                    \
    F f;                           \
    template <class V>             \
    C10_ALWAYS_INLINE V operator()(V x) const { \
      return EXPR;                 \
    }                              \
  };                               \
  template <>                      \
  struct VecOf<F> {                \
    using type = V##F;             \
  };
MYOPS_VEC_UNARY(Abs, x.abs())
MYOPS_VEC_UNARY(Neg, x.neg())
MYOPS_VEC_UNARY(Exp, v_exp(x))
MYOPS_VEC_UNARY(Log, v_log(x))
MYOPS_VEC_UNARY(Sqrt, x.sqrt())
MYOPS_VEC_UNARY(Rsqrt, x.rsqrt())
MYOPS_VEC_UNARY(Tanh, v_tanh(x))
#undef MYOPS_VEC_UNARY

struct VPow {
  Pow f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a, V b) const {
    return a.pow(b);
  }
};
template <>
struct VecOf<Pow> {
  using type = VPow;
};

// a + alpha * b and self + value * t1 * t2, fused as the scalar functors are (same bits)
template <typename C>
struct VAdd {
  Add<C> f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a, V b) const {
    return at::vec::fmadd(V(f.alpha), b, a);
  }
};
template <typename C>
struct VecOf<Add<C>> {
  using type = VAdd<C>;
};

template <typename C>
struct VAddcmul {
  Addcmul<C> f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a, V b, V c) const {
    return at::vec::fmadd(V(f.value) * b, c, a);
  }
};
template <typename C>
struct VecOf<Addcmul<C>> {
  using type = VAddcmul<C>;
};

// The baseline build is what a CPU without AVX2 runs, and torch on such a CPU runs its default
// build, which has no fused multiply-add: `add` / `sub` with alpha != 1 is `a + alpha * b` and
// `addcmul` is `self + value * t1 * t2`, rounded after each operation (half / bfloat16: in float,
// as torch's kernels; its vector and scalar loops agree here). Written as separate statements:
// x86-64's baseline has no FMA instruction to contract them into, and no compiler contracts
// across statements at its default setting (GCC's -ffp-contract=fast would, given FMA).
#if !defined(CPU_CAPABILITY_AVX2) && !defined(CPU_CAPABILITY_AVX512)
template <typename C>
struct AddUnfused {
  C alpha;
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point<C>::value) {
      const C prod = alpha * b;
      return a + prod;
    } else {
      return Add<C>{alpha}(a, b);
    }
  }
};
template <typename C>
struct AddcmulUnfused {
  C value;
  C operator()(C a, C b, C c) const {
    if constexpr (std::is_floating_point<C>::value) {
      C prod = value * b;
      prod = prod * c;
      return a + prod;
    } else {
      return Addcmul<C>{value}(a, b, c);
    }
  }
};
template <typename C>
using AddOfBuild = AddUnfused<C>;
template <typename C>
using AddcmulOfBuild = AddcmulUnfused<C>;
#else
// the SIMD builds: fused, as torch's AVX2 / AVX-512 kernels (vec::fmadd and contracted scalar
// loops), but for the unfused run AddScalarTail describes
template <typename C>
using AddOfBuild = Add<C>;
template <typename C>
using AddcmulOfBuild = Addcmul<C>;
#endif

struct VPlus {
  Plus f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a, V b) const {
    if constexpr (std::is_floating_point<typename V::value_type>::value) {
      // b * 1 + a: the same bits as a + b (one rounding), and PyTorch's own form
      // (fmadd(other, alpha, self)), so NaN payloads propagate as in torch. Measured faster
      // too: the half add loop with vaddps ran 0.93-0.95x torch on the AVX2 build (Zen 4),
      // with vfmadd 1.1x; why is not understood (the loops differ in that instruction only).
      return at::vec::fmadd(b, V(typename V::value_type(1)), a);
    } else {
      return a + b;
    }
  }
};
template <>
struct VecOf<Plus> {
  using type = VPlus;
};

struct VMul {
  Mul f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a, V b) const {
    return a * b;
  }
};
template <>
struct VecOf<Mul> {
  using type = VMul;
};

struct VDiv {
  Div f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a, V b) const {
    return a / b;
  }
};
template <>
struct VecOf<Div> {
  using type = VDiv;
};

struct VMaximum {
  Maximum f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a, V b) const {
    return at::vec::maximum(a, b);
  }
};
template <>
struct VecOf<Maximum> {
  using type = VMaximum;
};

struct VMinimum {
  Minimum f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a, V b) const {
    return at::vec::minimum(a, b);
  }
};
template <>
struct VecOf<Minimum> {
  using type = VMinimum;
};

struct VClamp {
  Clamp f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V x, V lo, V hi) const {
    return at::vec::minimum(at::vec::maximum(x, lo), hi);
  }
};
template <>
struct VecOf<Clamp> {
  using type = VClamp;
};

struct VClampScalar {
  ClampScalar f;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V x, V lo, V hi) const {
    return at::vec::clamp(x, lo, hi);
  }
};
template <>
struct VecOf<ClampScalar> {
  using type = VClampScalar;
};

// ---- ties between -0.0 and +0.0: torch's two formulas ------------------------------------------
// torch's CPU maximum / minimum / clamp (tensor bounds) run cpu_kernel_vec with two formulas that
// differ only where the operands compare equal (-0.0 against +0.0): the vector one
// (vec::maximum / vec::minimum: _mm256_max_ps and the like, or the default build's
// `a > b ? a : b`) returns the second operand, the scalar one (std::max / std::min) the first.
// Which elements take which is torch's loop structure (vectorized_loop in ATen's
// native/cpu/Loops.h): in a row (the innermost dim of the merged iteration space) whose output
// and inputs are contiguous, or contiguous but for exactly one input of stride 0, the first
// floor(n / S) * S elements take the vector formula, S = two 32-byte vectors (16 float, 8 double,
// 32 half / bfloat16); the rest of that row and every other row take the scalar formula. S is
// the same in every torch build: these kernels are not among those torch builds for AVX-512,
// and its default build's vectors are 32 bytes too (measured: tests/test_elementwise.py,
// test_signed_zero_ties). The scalar functors (Maximum, Minimum, Clamp) are the scalar formula;
// the ones below are the vector formula one element at a time (for the baseline build, which
// has no Vectorized, and for the vector part's scalar head before aligned streaming stores).
// NaN: NaN either way (its bits are not promised, README "Exactness").
struct MaximumVecTies {
  template <typename C>
  C operator()(C a, C b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a > b ? a : b;
  }
};
struct MinimumVecTies {
  template <typename C>
  C operator()(C a, C b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a < b ? a : b;
  }
};
struct ClampVecTies {
  template <typename C>
  C operator()(C x, C lo, C hi) const {
    if (is_nan(x)) return x;
    if (is_nan(lo)) return lo;
    if (is_nan(hi)) return hi;
    return MinimumVecTies{}(MaximumVecTies{}(x, lo), hi);
  }
};
template <class F>
struct VecTiesOf {
  using type = void;  // ties cannot be told apart, or both formulas agree
};
template <>
struct VecTiesOf<Maximum> {
  using type = MaximumVecTies;
};
template <>
struct VecTiesOf<Minimum> {
  using type = MinimumVecTies;
};
template <>
struct VecTiesOf<Clamp> {
  using type = ClampVecTies;
};

// The row functor of such an op: `vec` (the vector formula) on the elements torch vectorizes,
// `scalar` on the rest (CpuLoop::row_dispatch splits each row).
template <class GV, class GS>
struct SplitTies {
  GV vec;
  GS scalar;
};
template <class G>
constexpr bool kSplitTies = false;
template <class GV, class GS>
constexpr bool kSplitTies<SplitTies<GV, GS>> = true;

// How many leading elements of a row torch's cpu_kernel_vec computes with its vector formula
// (see above); st: the row's strides in elements (output first), all operands of type T.
template <typename T, int NARGS>
int64_t torch_vec_count(const int64_t* st, int64_t n) {
  if (st[0] != 1) return 0;
  int scalars = 0;
  for (int k = 1; k < NARGS; ++k) {
    if (st[k] == 0) {
      ++scalars;
    } else if (st[k] != 1) {
      return 0;
    }
  }
  if (scalars > 1) return 0;
  constexpr int64_t S = 64 / int64_t(sizeof(T));
  return n / S * S;
}

// ---- add / sub with alpha != 1 beside a stride-0 second operand: torch's scalar tail --------
// torch's CPU add computes `self + alpha * other` with vec::fmadd in its vector loop and with
// the contracted (fused) scalar expression elsewhere, except in one place: in a row whose output
// and `self` are contiguous and whose `other` has stride 0 (a 0-d or one-element operand, a
// broadcast column), the scalar tail after the vector loop (the last n - torch_vec_count
// elements) is a loop in which `other` is loop-invariant. GCC vectorizes that loop on 16-byte
// vectors after peeling its first element, and hoists `alpha * other` out of it, rounded once:
// those elements are `self + round(alpha * other)`. So the tail's first element is fused, the
// next floor((t - 1) / W) * W (t: the tail's length, W = 16 / sizeof(T)) unfused, the rest fused
// again. Measured (tests/test_elementwise.py, test_add_alpha_scalar_tail) for float32 and
// float64 at torch's AVX2 and AVX-512 levels, for every tail length and output alignment; a
// stride-0 `self` keeps every element fused, and its default build (the baseline's peer) fuses
// none (AddUnfused). half / bfloat16 run cpu/add_alpha_torch_order.h.
template <class G>
struct AddScalarTail {
  G fused;  // InOpMath<T, Add<T>>
};
template <class G>
constexpr bool kAddScalarTail = false;
template <class G>
constexpr bool kAddScalarTail<AddScalarTail<G>> = true;

// The unfused run [lo, hi) of a row with strides st (output, self, other), or lo == hi.
template <typename T>
void add_scalar_tail_range(const int64_t* st, int64_t n, int64_t& lo, int64_t& hi) {
  constexpr int64_t W = 16 / int64_t(sizeof(T));
  lo = hi = 0;
  if (!(st[0] == 1 && st[1] == 1 && st[2] == 0)) return;
  lo = torch_vec_count<T, 3>(st, n) + 1;
  hi = lo < n ? lo + (n - lo) / W * W : lo;
}

// ---- gelu through oneDNN: its results at the edges of the range ------------------------------
// Where torch's CPU gelu (erf form) runs oneDNN's eltwise_gelu_erf (torch_cpu_gelu_runs_onednn:
// contiguous input of more than one element, float32 / bfloat16 / float16, oneDNN on), every
// element gets oneDNN's formula, which differs from torch's own kernel (and from exact) at the
// edges; measured the same at every ATEN_CPU_CAPABILITY (oneDNN picks its own code):
//   +inf -> NaN with the sign bit set, -inf -> NaN without it, x >= 2^127 -> +inf (float32 and
//   bfloat16: it forms 2x), a NaN input -> that NaN quieted (sign and payload kept, bfloat16's too);
// elsewhere it is within the stated bounds of torch's kernel, which myops' formula follows.
// OneDnnGeluEdges runs the row in chunks and, in each, overwrites those edge elements (rare:
// one branch-free max over the chunk's input bits finds whether there are any).
template <class G>
struct OneDnnGeluEdges {
  G g;
};
template <class G>
constexpr bool kOneDnnGeluEdges = false;
template <class G>
constexpr bool kOneDnnGeluEdges<OneDnnGeluEdges<G>> = true;

template <typename T>
void onednn_gelu_edges(char* const* ptr, const int64_t* st, int64_t n) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 2) {
    using U = typename UIntOf<sizeof(T)>::type;
    constexpr bool kHalf = std::is_same<T, c10::Half>::value;
    constexpr U kSign = sizeof(T) == 4 ? U(0x80000000u) : U(0x8000);
    constexpr U kAbs = U(~kSign);
    constexpr U kInf = sizeof(T) == 4 ? U(0x7f800000) : kHalf ? U(0x7c00) : U(0x7f80);
    constexpr U kQuiet = sizeof(T) == 4 ? U(0x00400000) : kHalf ? U(0x0200) : U(0x0040);
    constexpr U kEdge = sizeof(T) == 4 ? U(0x7f000000) : kHalf ? kInf : U(0x7f00);  // 2^127 (half: inf)
    const U* in = reinterpret_cast<const U*>(ptr[1]);
    U* out = reinterpret_cast<U*>(ptr[0]);
    const int64_t si = st[1], so = st[0];
    U top = 0;
    for (int64_t i = 0; i < n; ++i) top = std::max<U>(top, U(in[i * si] & kAbs));
    if (top < kEdge) return;
    for (int64_t i = 0; i < n; ++i) {
      const U x = in[i * si];
      if (U(x & kAbs) < kEdge || (x & kSign && U(x & kAbs) < kInf)) continue;  // not an edge; or -0 as computed
      U r;
      if (U(x & kAbs) > kInf) {
        r = U(x | kQuiet);
      } else if (x == kInf) {
        r = U(kSign | kInf | kQuiet);
      } else if (x == U(kSign | kInf)) {
        r = U(kInf | kQuiet);
      } else {
        r = kInf;
      }
      out[i * so] = r;
    }
  } else {
    (void)ptr, (void)st, (void)n;
  }
}

template <class F, typename C>
struct VBindLeft {
  BindLeft<F, C> b;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V x) const {
    return typename VecOf<F>::type{b.f}(V(b.s), x);
  }
};
template <class F, typename C>
struct VecOf<BindLeft<F, C>> {
  using type = typename std::conditional<std::is_same<typename VecOf<F>::type, NoVec>::value, NoVec,
                                         VBindLeft<F, C>>::type;
};
template <class F, typename C>
struct VBindRight {
  BindRight<F, C> b;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V x) const {
    return typename VecOf<F>::type{b.f}(x, V(b.s));
  }
};
template <class F, typename C>
struct VecOf<BindRight<F, C>> {
  using type = typename std::conditional<std::is_same<typename VecOf<F>::type, NoVec>::value, NoVec,
                                         VBindRight<F, C>>::type;
};

// ---- bfloat16 gelu / silu / sigmoid with the AVX512-BF16 conversion ----------------------------
// In the AVX-512 build, on CPUs with AVX512-BF16 (and unless MYOPS_CPU_ISA asks for less), the
// float results of these three ops are rounded to bfloat16 by vcvtne2ps2bf16 (one instruction
// per 32 values) instead of at::vec's integer rounding sequence; widening is a shift. Same
// round-to-nearest-even bits for every normal result, NaN written as 0xffff like the software
// path; the instruction flushes float denormal results (|r| < 1.2e-38) to zero where the
// software rounding keeps a bfloat16 denormal: inside the ops' tolerance, which is why the exact
// ops (add, relu, ...) never take this path. The function carries its own target attribute, so
// the rest of the build runs on AVX-512 CPUs without BF16.
#if defined(CPU_CAPABILITY_AVX512) && defined(MYOPS_EW_HW_BF16) && defined(__GNUC__)
#define MYOPS_EW_HAVE_HW_BF16 1
inline bool hw_bf16() {
  static const bool ok = cpu_isa() >= CpuIsa::Avx512Bf16;
  return ok;
}
template <class T, class VF>
constexpr bool kHwBf16 = std::is_same<T, c10::BFloat16>::value &&
    (std::is_same<VF, VGelu>::value || std::is_same<VF, VSilu>::value || std::is_same<VF, VSigmoid>::value);

template <class VF>
__attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
int64_t bf16_unary_hw(const c10::BFloat16* in, c10::BFloat16* out, int64_t n, const VF& vf) {
  int64_t i = 0;
  const __m512i all_ones = _mm512_set1_epi32(-1);
  for (; i + 32 <= n; i += 32) {
    const __m512i raw = _mm512_loadu_si512(in + i);
    const __m512 lo = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(raw)), 16));
    const __m512 hi = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(raw, 1)), 16));
    const __m512 rlo = vf(Vectorized<float>(lo));
    const __m512 rhi = vf(Vectorized<float>(hi));
    __m512i r = (__m512i)_mm512_cvtne2ps_pbh(rhi, rlo);  // rlo in the low half
    const __mmask32 nan = static_cast<__mmask32>(_mm512_cmp_ps_mask(rlo, rlo, _CMP_UNORD_Q)) |
                          (static_cast<__mmask32>(_mm512_cmp_ps_mask(rhi, rhi, _CMP_UNORD_Q)) << 16);
    r = _mm512_mask_mov_epi16(r, nan, all_ones);
    _mm512_storeu_si512(out + i, r);
  }
  return i;
}
#endif

// ---- storage-type adaptors ------------------------------------------------------------------

// Loads storage values, computes in OpMath<T>, rounds back to T.
template <typename T, class F>
struct InOpMath {
  F f;
  template <class... A>
  T operator()(A... a) const {
    using C = opmath_t<T>;
    return static_cast<T>(f(static_cast<C>(a)...));
  }
};

// c ? a : b as a bitwise select on the storage bits: the same bits as the branch, but no
// branch to mispredict on a random condition, so the compiler vectorizes the dense loops.

template <typename T>
struct WhereT {
  T operator()(bool c, T a, T b) const {
    using U = typename UIntOf<sizeof(T)>::type;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(T));
    std::memcpy(&ub, &b, sizeof(T));
    const U m = static_cast<U>(U(0) - static_cast<U>(c));
    const U r = static_cast<U>((ua & m) | (ub & static_cast<U>(~m)));
    T out;
    std::memcpy(&out, &r, sizeof(T));
    return out;
  }
};

template <typename Out>
struct CastT {
  template <typename In>
  Out operator()(In v) const {
    return c10::convert<Out>(v);
  }
};

// Without a SIMD capability (this file is built with the compiler's baseline flags)
// Vectorized<T> is a plain array whose operations are out-of-line loops: slower than the
// scalar loops below, which the compiler vectorizes itself. Use it only where it maps to SIMD.
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
constexpr bool kUseVectorized = true;
#else
constexpr bool kUseVectorized = false;
#endif

// Non-temporal ("streaming") stores for outputs far larger than the caches: the written lines
// skip the read-for-ownership a normal store makes, so a memory-bound op moves a quarter
// fewer bytes (add: 2 reads + 1 write instead of 2 + 1 + 1). Same bits; only the cache
// policy changes. float and double rows of the SIMD builds only; the caller fences.
constexpr int64_t kStreamBytes = int64_t(16) << 20;
template <typename T>
constexpr bool kCanStream =
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
    std::is_same<T, float>::value || std::is_same<T, double>::value;
#else
    false;
#endif

template <typename T>
inline void stream_store(T* p, const Vectorized<T>& v) {
#if defined(CPU_CAPABILITY_AVX512)
  if constexpr (std::is_same<T, float>::value) _mm512_stream_ps(p, v);
  if constexpr (std::is_same<T, double>::value) _mm512_stream_pd(p, v);
#elif defined(CPU_CAPABILITY_AVX2)
  if constexpr (std::is_same<T, float>::value) _mm256_stream_ps(p, v);
  if constexpr (std::is_same<T, double>::value) _mm256_stream_pd(p, v);
#else
  v.store(p);
#endif
}

// Whether an output's pages are already in memory (a block the allocator reused) rather than
// fresh (a new mmap: glibc serves blocks over its mmap threshold, at most 32 MiB, that way, so
// every call past 32 MiB gets one). A fresh page faults in on the first write and the kernel
// zeroes it through the cache; a streamed store to such a line then costs more than a plain
// store (measured, [32,64,56,56] float32: 0.87x torch streamed, 1.0x plain), while on reused
// pages streaming wins (0.87x plain, 1.0x streamed). 16 pages spread over the output decide
// (a reused block can be partly fresh; 16 mincore calls cost microseconds against the
// >= 16 MiB the op writes): all resident, stream. Unknown (not Linux, mincore fails): stream.
inline bool pages_resident(const void* p, int64_t bytes) {
#if defined(__linux__)
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  constexpr int kSamples = 16;
  for (int k = 0; k < kSamples; ++k) {
    const uintptr_t at = (reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes / kSamples * k + bytes / (2 * kSamples))) & ~(page - 1);
    unsigned char v = 0;
    if (mincore(reinterpret_cast<void*>(at), page, &v) != 0) return true;
    if ((v & 1) == 0) return false;
  }
  return true;
#else
  (void)p;
  (void)bytes;
  return true;
#endif
}

inline void stream_fence() {
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
  _mm_sfence();
#endif
}

template <typename T>
constexpr bool is_vec_float = kUseVectorized &&
    (std::is_same<T, float>::value || std::is_same<T, double>::value || std::is_same<T, c10::Half>::value ||
     std::is_same<T, c10::BFloat16>::value);

// Contiguous float <-> half / bfloat16 conversion with the library's vector routines
// (hardware conversion in the AVX2 build). Returns false where it does not apply.
template <typename Out, typename In>
bool vec_cast(const In* in, Out* out, int64_t n) {
  constexpr bool reduced_out = std::is_same<Out, c10::Half>::value || std::is_same<Out, c10::BFloat16>::value;
  constexpr bool reduced_in = std::is_same<In, c10::Half>::value || std::is_same<In, c10::BFloat16>::value;
  if constexpr (kUseVectorized && std::is_same<In, float>::value && reduced_out) {
    at::vec::convert(in, out, n);
    return true;
  } else if constexpr (kUseVectorized && reduced_in && std::is_same<Out, float>::value) {
    using V = Vectorized<In>;
    constexpr int64_t W = V::size();
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      auto lohi = at::vec::convert_to_float<In>(V::loadu(in + i));
      std::get<0>(lohi).store(out + i);
      std::get<1>(lohi).store(out + i + W / 2);
    }
    for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
    return true;
  } else {
    (void)in;
    (void)out;
    (void)n;
    return false;
  }
}

// ---- the loop ---------------------------------------------------------------------------------

template <typename Out, typename... In>
struct CpuLoop {
  static constexpr int NIN = sizeof...(In);
  static constexpr int NARGS = NIN + 1;
  static constexpr bool kSame = (std::is_same<In, Out>::value && ...);
  // rows of this op go through vec_row / vec_row_plain (Vectorized<Out>) when dense
  template <class VF>
  static constexpr bool kVecRow = kSame && is_vec_float<Out> && !std::is_same<VF, NoVec>::value;

  // One row of n elements; strides in elements (0: broadcast).
  template <class G, class VF>
  static void row(char* const* ptr, const int64_t* st, int64_t n, const G& g, const VF& vf, bool stream) {
    Out* out = reinterpret_cast<Out*>(ptr[0]);
    bool dense = st[0] == 1;
    for (int k = 1; k < NARGS; ++k) dense &= st[k] == 0 || st[k] == 1;
    if constexpr (NIN == 1 && !kSame) {
      if (st[0] == 1 && st[1] == 1 &&
          vec_cast(reinterpret_cast<const In*>(ptr[1])..., reinterpret_cast<Out*>(ptr[0]), n)) {
        return;
      }
    }
    if constexpr (kVecRow<VF>) {
      if (dense) {
        vec_row(ptr, st, n, g, vf, stream, std::make_index_sequence<NIN>{});
        return;
      }
    } else {
      if (dense) {
        dense_row(ptr, st, n, g, std::make_index_sequence<NIN>{});
        return;
      }
    }
    strided_row(ptr, st, n, g, std::make_index_sequence<NIN>{});
    (void)out;
    (void)stream;
  }

  template <class G, size_t... I>
  static void strided_row(char* const* ptr, const int64_t* st, int64_t n, const G& g, std::index_sequence<I...>) {
    Out* out = reinterpret_cast<Out*>(ptr[0]);
    const int64_t so = st[0];
    for (int64_t i = 0; i < n; ++i) {
      out[i * so] = g(reinterpret_cast<const In*>(ptr[I + 1])[i * st[I + 1]]...);
    }
  }

  // Contiguous output, inputs contiguous or broadcast (stride 0). The broadcast pattern is
  // made a compile-time constant so that the compiler hoists the broadcast loads and
  // vectorizes the loop (a branch-free select for where: its condition is random data).
  template <class G, size_t... I>
  static void dense_row(char* const* ptr, const int64_t* st, int64_t n, const G& g, std::index_sequence<I...> seq) {
    unsigned mask = 0;
    ((mask |= (st[I + 1] == 0 ? 1u : 0u) << I), ...);
    dense_row_dispatch<0>(mask, ptr, n, g, seq);
  }

  template <unsigned M, class G, size_t... I>
  static void dense_row_dispatch(unsigned mask, char* const* ptr, int64_t n, const G& g, std::index_sequence<I...> seq) {
    if constexpr (M + 1 < (1u << NIN)) {  // every pattern but "all inputs broadcast"
      if (mask == M) return dense_row_bc<M>(ptr, n, g, seq);
      return dense_row_dispatch<M + 1>(mask, ptr, n, g, seq);
    } else {
      // all inputs broadcast: one value for the whole row
      Out* out = reinterpret_cast<Out*>(ptr[0]);
      const Out v = g(reinterpret_cast<const In*>(ptr[I + 1])[0]...);
      for (int64_t i = 0; i < n; ++i) out[i] = v;
    }
  }

  template <unsigned M, class G, size_t... I>
  static void dense_row_bc(char* const* ptr, int64_t n, const G& g, std::index_sequence<I...>) {
    Out* __restrict out = reinterpret_cast<Out*>(ptr[0]);
    const std::tuple<const In*...> in{reinterpret_cast<const In*>(ptr[I + 1])...};
    const std::tuple<In...> bv{reinterpret_cast<const In*>(ptr[I + 1])[0]...};
    for (int64_t i = 0; i < n; ++i) {
      out[i] = g(((M >> I) & 1u ? std::get<I>(bv) : std::get<I>(in)[i])...);
    }
  }

  // Vectorized over the float types: loads (or broadcasts) Vectorized<Out>, computes on
  // Vectorized<opmath>, stores; the tail goes through the scalar functor.
  template <class G, class VF, size_t... I>
  static void vec_row(char* const* ptr, const int64_t* st, int64_t n, const G& g, const VF& vf, bool stream,
                      std::index_sequence<I...>) {
    using T = Out;
    using V = Vectorized<T>;
    constexpr int64_t W = V::size();
    T* out = reinterpret_cast<T*>(ptr[0]);
    const T* in[NIN] = {reinterpret_cast<const T*>(ptr[I + 1])...};
    bool bc[NIN] = {(st[I + 1] == 0)...};
    if (!(bc[I] || ...)) return vec_row_plain(out, in, n, g, vf, stream, std::index_sequence<I...>{});
    V bv[NIN] = {V(in[I][0])...};
    int64_t i = 0;
    if constexpr (kCanStream<T>) {
      if (stream) {
        for (; i < n && reinterpret_cast<uintptr_t>(out + i) % sizeof(V) != 0; ++i) {
          out[i] = g((bc[I] ? in[I][0] : in[I][i])...);
        }
        for (; i + W <= n; i += W) stream_store(out + i, vf((bc[I] ? bv[I] : V::loadu(in[I] + i))...));
      }
    }
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      // two vectors per iteration: independent dependency chains for the long ones (erf, exp)
      for (; i + 2 * W <= n; i += 2 * W) {
        V r0 = vf((bc[I] ? bv[I] : V::loadu(in[I] + i))...);
        V r1 = vf((bc[I] ? bv[I] : V::loadu(in[I] + i + W))...);
        r0.store(out + i);
        r1.store(out + i + W);
      }
      for (; i + W <= n; i += W) {
        V r = vf((bc[I] ? bv[I] : V::loadu(in[I] + i))...);
        r.store(out + i);
      }
    } else {
      using VFl = Vectorized<float>;
      VFl blo[NIN], bhi[NIN];
      for (int k = 0; k < NIN; ++k) {
        // widened once per row, and only for broadcast operands: short rows (channels_last
        // with a per-channel operand: rows of C elements) would otherwise pay it per row
        if (bc[k]) std::tie(blo[k], bhi[k]) = at::vec::convert_to_float<T>(bv[k]);
      }
      for (; i + W <= n; i += W) {
        VFl lo[NIN], hi[NIN];
        for (int k = 0; k < NIN; ++k) {
          if (bc[k]) {
            lo[k] = blo[k];
            hi[k] = bhi[k];
          } else {
            std::tie(lo[k], hi[k]) = at::vec::convert_to_float<T>(V::loadu(in[k] + i));
          }
        }
        VFl rlo = vf(lo[I]...);
        VFl rhi = vf(hi[I]...);
        at::vec::convert_from_float<T>(rlo, rhi).store(out + i);
      }
    }
    for (; i < n; ++i) out[i] = g((bc[I] ? in[I][0] : in[I][i])...);
  }

  // vec_row without broadcast operands: no per-row setup, which matters for short rows (a
  // channels_last tensor times a per-channel operand runs rows of C elements).
  template <class G, class VF, size_t... I>
  static void vec_row_plain(Out* out, const Out* const* in, int64_t n, const G& g, const VF& vf, bool stream,
                            std::index_sequence<I...>) {
    using T = Out;
    using V = Vectorized<T>;
    constexpr int64_t W = V::size();
    int64_t i = 0;
    if constexpr (kCanStream<T>) {
      if (stream) {
        for (; i < n && reinterpret_cast<uintptr_t>(out + i) % sizeof(V) != 0; ++i) out[i] = g(in[I][i]...);
        for (; i + W <= n; i += W) stream_store(out + i, vf(V::loadu(in[I] + i)...));
      }
    }
    (void)stream;
#ifdef MYOPS_EW_HAVE_HW_BF16
    if constexpr (kHwBf16<T, VF>) {
      if (hw_bf16()) i = bf16_unary_hw(in[0], out, n, vf);
    }
#endif
    if constexpr (std::is_same<VF, VRelu>::value && sizeof(T) == 2) {
      i = relu16_row(in[0], out, n);
    } else if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      for (; i + 2 * W <= n; i += 2 * W) {
        V r0 = vf(V::loadu(in[I] + i)...);
        V r1 = vf(V::loadu(in[I] + i + W)...);
        r0.store(out + i);
        r1.store(out + i + W);
      }
      for (; i + W <= n; i += W) vf(V::loadu(in[I] + i)...).store(out + i);
    } else {
      using VFl = Vectorized<float>;
      // two vectors per iteration, as PyTorch's vectorized loop
      for (; i + 2 * W <= n; i += 2 * W) {
        VFl lo[NIN], hi[NIN], lo2[NIN], hi2[NIN];
        ((std::tie(lo[I], hi[I]) = at::vec::convert_to_float<T>(V::loadu(in[I] + i))), ...);
        ((std::tie(lo2[I], hi2[I]) = at::vec::convert_to_float<T>(V::loadu(in[I] + i + W))), ...);
        const V r0 = at::vec::convert_from_float<T>(vf(lo[I]...), vf(hi[I]...));
        const V r1 = at::vec::convert_from_float<T>(vf(lo2[I]...), vf(hi2[I]...));
        r0.store(out + i);
        r1.store(out + i + W);
      }
      for (; i + W <= n; i += W) {
        VFl lo[NIN], hi[NIN];
        ((std::tie(lo[I], hi[I]) = at::vec::convert_to_float<T>(V::loadu(in[I] + i))), ...);
        at::vec::convert_from_float<T>(vf(lo[I]...), vf(hi[I]...)).store(out + i);
      }
    }
    for (; i < n; ++i) out[i] = g(in[I][i]...);
  }

  template <class G, class VF = NoVec>
  static void run(const EwPlan& p, const G& g, const VF& vf = VF()) {
    auto shape = p.shape_n<NARGS>();
    const int nd = shape.dim();
    const int64_t W = shape.sizes[nd - 1];
    int64_t elsize[NARGS] = {int64_t(sizeof(Out)), int64_t(sizeof(In))...};
    char* base[NARGS];
    base[0] = static_cast<char*>(p.out.mutable_data_ptr());
    for (int k = 0; k < NIN; ++k) {
      base[k + 1] = p.folded[k] ? const_cast<char*>(reinterpret_cast<const char*>(p.scalar[k].data()))
                                : static_cast<char*>(const_cast<void*>(p.in[k].const_data_ptr()));
    }
    int64_t inner[NARGS];
    for (int k = 0; k < NARGS; ++k) inner[k] = shape.strides[nd - 1][k];
    const int64_t out_bytes = p.numel * int64_t(sizeof(Out));
    const bool stream = kCanStream<Out> && out_bytes >= kStreamBytes && pages_resident(base[0], out_bytes);
    at::parallel_for(0, p.numel, kGrain, [&](int64_t begin, int64_t end) {
      // odometer over the outer dims
      int64_t idx[MYOPS_MAX_DIMS] = {0};
      int64_t row = begin / W, col = begin % W;
      for (int d = nd - 2; d >= 0; --d) {
        idx[d] = row % shape.sizes[d];
        row /= shape.sizes[d];
      }
      while (begin < end) {
        int64_t n = std::min(W - col, end - begin);
        char* ptr[NARGS];
        for (int k = 0; k < NARGS; ++k) {
          int64_t off = col * inner[k];
          for (int d = 0; d < nd - 1; ++d) off += idx[d] * shape.strides[d][k];
          ptr[k] = base[k] + off * elsize[k];
        }
        if (col == 0 && nd >= 2) {
          // whole rows along the next dim: step the pointers instead of recomputing them
          // (short rows, e.g. channels_last times a per-channel operand: rows of C elements)
          const int64_t rows = std::min((end - begin) / W, shape.sizes[nd - 2] - idx[nd - 2]);
          if (rows > 1) {
            int64_t step[NARGS];
            for (int k = 0; k < NARGS; ++k) step[k] = shape.strides[nd - 2][k] * elsize[k];
            if (!plain_rows(ptr, inner, step, rows, W, g, vf, stream)) {
              for (int64_t r = 0; r < rows; ++r) {
                row_dispatch(ptr, inner, W, g, vf, stream);
                for (int k = 0; k < NARGS; ++k) ptr[k] += step[k];
              }
            }
            begin += rows * W;
            idx[nd - 2] += rows - 1;  // the last row's carry is done below
            n = 0;
          }
        }
        if (n > 0) {
          row_dispatch(ptr, inner, n, g, vf, stream);
          begin += n;
        }
        col = 0;
        for (int d = nd - 2; d >= 0; --d) {
          if (++idx[d] < shape.sizes[d]) break;
          idx[d] = 0;
        }
      }
      if (stream) stream_fence();  // the streamed lines are visible before the join
    });
  }

  // Whole rows, every operand contiguous along them (no broadcast inside a row): the row kind
  // is decided once for all of them, and each row goes straight to vec_row_plain. Returns
  // false (nothing done) for any other row kind.
  template <class G, class VF>
  static bool plain_rows(char* const* ptr0, const int64_t* st, const int64_t* step, int64_t rows, int64_t n,
                         const G& g, const VF& vf, bool stream) {
    if constexpr (kVecRow<VF> && !kSplitTies<G> && !kAddScalarTail<G> && !kOneDnnGeluEdges<G>) {
      for (int k = 0; k < NARGS; ++k) {
        if (st[k] != 1) return false;
      }
      return plain_rows_impl(ptr0, step, rows, n, g, vf, stream, std::make_index_sequence<NIN>{});
    } else {
      (void)ptr0, (void)st, (void)step, (void)rows, (void)n, (void)g, (void)vf, (void)stream;
      return false;
    }
  }

  template <class G, class VF, size_t... I>
  static bool plain_rows_impl(char* const* ptr0, const int64_t* step, int64_t rows, int64_t n, const G& g,
                              const VF& vf, bool stream, std::index_sequence<I...>) {
    Out* out = reinterpret_cast<Out*>(ptr0[0]);
    const Out* in[NIN] = {reinterpret_cast<const Out*>(ptr0[I + 1])...};
    for (int64_t r = 0; r < rows; ++r) {
      vec_row_plain(out, in, n, g, vf, stream, std::index_sequence<I...>{});
      out = reinterpret_cast<Out*>(reinterpret_cast<char*>(out) + step[0]);
      ((in[I] = reinterpret_cast<const Out*>(reinterpret_cast<const char*>(in[I]) + step[I + 1])), ...);
    }
    return true;
  }

  template <class G, class VF>
  static void row_dispatch(char* const* ptr, const int64_t* st, int64_t n, const G& g, const VF& vf,
                           bool stream) {
    if constexpr (kSplitTies<G>) {
      // torch's vector formula on the elements its vector loop takes, its scalar one after
      const int64_t nvec = torch_vec_count<Out, NARGS>(st, n);
      if (nvec > 0) row(ptr, st, nvec, g.vec, vf, stream);
      if (nvec < n) {
        char* rest[NARGS];
        for (int k = 0; k < NARGS; ++k) rest[k] = ptr[k] + nvec * st[k] * int64_t(sizeof(Out));
        row(rest, st, n - nvec, g.scalar, NoVec{}, false);
      }
    } else if constexpr (kAddScalarTail<G>) {
      int64_t lo, hi;
      add_scalar_tail_range<Out>(st, n, lo, hi);
      if (lo >= hi) return row(ptr, st, n, g.fused, vf, stream);
      row(ptr, st, lo, g.fused, vf, stream);
      // self + alpha * other rounded once: the product is computed here, outside the loop, so it
      // cannot be contracted into the additions
      Out* out = reinterpret_cast<Out*>(ptr[0]);
      const Out* self = reinterpret_cast<const Out*>(ptr[1]);
      const Out prod = g.fused.f.alpha * *reinterpret_cast<const Out*>(ptr[2]);
      for (int64_t i = lo; i < hi; ++i) out[i] = self[i] + prod;
      if (hi < n) {
        char* rest[NARGS] = {ptr[0] + hi * int64_t(sizeof(Out)), ptr[1] + hi * int64_t(sizeof(Out)), ptr[2]};
        row(rest, st, n - hi, g.fused, vf, false);
      }
    } else if constexpr (kOneDnnGeluEdges<G>) {
      constexpr int64_t kChunk = 2048;  // a multiple of every vector loop's step
      for (int64_t i = 0; i < n; i += kChunk) {
        const int64_t m = std::min(kChunk, n - i);
        char* at[NARGS];
        for (int k = 0; k < NARGS; ++k) at[k] = ptr[k] + i * st[k] * int64_t(sizeof(Out));
        row(at, st, m, g.g, vf, stream);
        onednn_gelu_edges<Out>(at, st, m);
      }
    } else {
      row(ptr, st, n, g, vf, stream);
    }
  }
};

template <typename T, int NIN, class F>
void run_same_impl(const EwPlan& p, const F& f);

// Runs functor F (on compute types) with output and inputs all of dtype T. A binary op on
// half/bfloat16 with a scalar the plan marks for opmath precision runs as a unary op with the
// scalar bound into the functor.
template <typename T, int NIN, class F>
void run_same(const EwPlan& p, const F& f) {
  if constexpr (NIN == 2 && !std::is_same<T, opmath_t<T>>::value) {
    using C = opmath_t<T>;
    int k = p.opmath_fold();
    if (k == 0) return run_same_impl<T, 1>(p.without_input(0), BindLeft<F, C>{f, p.opmath_value<C>(0)});
    if (k == 1) return run_same_impl<T, 1>(p.without_input(1), BindRight<F, C>{f, p.opmath_value<C>(1)});
  }
  run_same_impl<T, NIN>(p, f);
}

// (the SIMD builds: the baseline's peer fuses nowhere)
template <typename T, class F>
constexpr bool kHasAddScalarTail = kUseVectorized && std::is_same<F, Add<T>>::value &&
                                   (std::is_same<T, float>::value || std::is_same<T, double>::value);

template <typename T, int NIN, class F>
void run_same_impl(const EwPlan& p, const F& f) {
  InOpMath<T, F> g{f};
  using VF = typename VecOf<F>::type;
  using VT = typename VecTiesOf<F>::type;
  if constexpr (!std::is_void<VT>::value && (std::is_floating_point<T>::value || std::is_same<T, c10::Half>::value ||
                                            std::is_same<T, c10::BFloat16>::value)) {
    // -0.0 / +0.0 ties broken element by element as torch's loops break them (VecTiesOf)
    const SplitTies<InOpMath<T, VT>, InOpMath<T, F>> split{{VT{}}, g};
    if constexpr (NIN == 2) {
      CpuLoop<T, T, T>::run(p, split, VF{f});
    } else {
      CpuLoop<T, T, T, T>::run(p, split, VF{f});
    }
    return;
  }
  if constexpr (kHasAddScalarTail<T, F>) {
    // torch's unfused run in a stride-0 row's scalar tail (AddScalarTail)
    CpuLoop<T, T, T>::run(p, AddScalarTail<InOpMath<T, F>>{g}, VF{f});
    return;
  }
  if constexpr (NIN == 1) {
    if constexpr (std::is_same<VF, NoVec>::value) {
      CpuLoop<T, T>::run(p, g);
    } else {
      CpuLoop<T, T>::run(p, g, VF{f});
    }
  } else if constexpr (NIN == 2) {
    if constexpr (std::is_same<VF, NoVec>::value) {
      CpuLoop<T, T, T>::run(p, g);
    } else {
      CpuLoop<T, T, T>::run(p, g, VF{f});
    }
  } else {
    if constexpr (std::is_same<VF, NoVec>::value) {
      CpuLoop<T, T, T, T>::run(p, g);
    } else {
      CpuLoop<T, T, T, T>::run(p, g, VF{f});
    }
  }
}

#ifdef MYOPS_EW_FLOAT_ONLY
// The AVX-512 build: the vectorized ops on the floating dtypes only (see elementwise_avx512.cpp)
#define MYOPS_EW_ALL AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16
#define MYOPS_EW_NOBOOL AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16
#else
#define MYOPS_EW_ALL AT_EXPAND(AT_ALL_TYPES), at::kBool, at::kHalf, at::kBFloat16
#define MYOPS_EW_NOBOOL AT_EXPAND(AT_ALL_TYPES), at::kHalf, at::kBFloat16
#endif
#define MYOPS_EW_FLOAT AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16

// The vectorized part of a half / bfloat16 add with alpha != 1 (cpu/add_alpha_torch_order.h):
// out = T(fma(float(b), alpha, float(a))), as PyTorch's Vectorized<T>::fmadd: widened to
// float, one fused multiply-add, rounded once (at::vec's conversions: the same bits). Strides
// sa / sb are 1, or 0 for a broadcast scalar. Returns the count done (none in the baseline
// build: the caller's loop does them).
struct AddAlphaVecRow {
  // torch's vector loop fuses in its SIMD builds; its default build (the baseline's peer) does
  // not: there both loops compute in T's own arithmetic (AddUnfused above)
  static constexpr bool kTorchFuses = kUseVectorized;
  template <typename T>
  int64_t operator()(const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n, float alpha) const {
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
    using VT = Vectorized<T>;
    using VF = Vectorized<float>;
    constexpr int64_t kL = VT::size();
    const VF va_s(static_cast<float>(a[0])), vb_s(static_cast<float>(b[0])), valpha(alpha);
    int64_t j = 0;
    for (; j + kL <= n; j += kL) {
      VF a0 = va_s, a1 = va_s, b0 = vb_s, b1 = vb_s;
      if (sa) std::tie(a0, a1) = at::vec::convert_to_float<T>(VT::loadu(a + j));
      if (sb) std::tie(b0, b1) = at::vec::convert_to_float<T>(VT::loadu(b + j));
      at::vec::convert_from_float<T>(at::vec::fmadd(b0, valpha, a0), at::vec::fmadd(b1, valpha, a1)).store(out + j);
    }
    return j;
#else
    (void)a, (void)sa, (void)b, (void)sb, (void)out, (void)n, (void)alpha;
    return 0;
#endif
  }
};

// The kernel of kind K in this build (one per line of MYOPS_EW_KERNELS, common/op_table.h). The
// generic one runs the plain functor K on every dtype of the kind's DTYPES (all operands of the
// result dtype); the kinds below specialize it.
template <typename T>
constexpr bool in_dtypes(EwDtypes d) {
  return d == EwDtypes::All || (d == EwDtypes::NonBool && !std::is_same<T, bool>::value) ||
         (d == EwDtypes::Float && (std::is_floating_point<T>::value || std::is_same<T, c10::Half>::value ||
                                   std::is_same<T, c10::BFloat16>::value));
}

template <EwKind K>
struct CpuKernel {
  template <typename T>
  static void run_dtype(const EwPlan& p, const EwParams&) {
    run_same<T, arity_of(K)>(p, typename FunctorOf<K>::type{});
  }
  static void run(const EwPlan& p, const EwParams& prm) {
    AT_DISPATCH_V2(p.dtype, kKindNames[static_cast<int>(K)], AT_WRAP([&] {
      if constexpr (in_dtypes<scalar_t>(dtypes_of(K))) {
        CpuKernel::template run_dtype<scalar_t>(p, prm);
      } else {
        TORCH_CHECK(false, "myops: internal error: ", kKindNames[static_cast<int>(K)], " got dtype ", p.dtype);
      }
    }), MYOPS_EW_ALL);
  }
};

template <>
template <typename T>
void CpuKernel<EwKind::Gelu>::run_dtype(const EwPlan& p, const EwParams& prm) {
  if (prm.onednn_gelu) {
    // oneDNN's results at the edges of the range (OneDnnGeluEdges)
    const Gelu f{false};
    CpuLoop<T, T>::run(p, OneDnnGeluEdges<InOpMath<T, Gelu>>{{f}}, VGelu{f});
  } else {
    run_same<T, 1>(p, Gelu{prm.tanh});
  }
}

template <>
template <typename T>
void CpuKernel<EwKind::Add>::run_dtype(const EwPlan& p, const EwParams& prm) {
  using C = opmath_t<T>;
  if (prm.alpha.equal(1)) {
    run_same<T, 2>(p, Plus{});
  } else {
    run_same<T, 2>(p, AddOfBuild<C>{prm.alpha.to<C>()});
  }
}

template <>
template <typename T>
void CpuKernel<EwKind::Addcmul>::run_dtype(const EwPlan& p, const EwParams& prm) {
  using C = opmath_t<T>;
  run_same<T, 3>(p, AddcmulOfBuild<C>{prm.alpha.to<C>()});
}

#ifndef MYOPS_EW_FLOAT_ONLY
template <>
template <typename T>
void CpuKernel<EwKind::Cast>::run_dtype(const EwPlan& p, const EwParams&) {
  using Out = T;
  AT_DISPATCH_V2(p.in_dtype[0], "myops.cast", AT_WRAP([&] { CpuLoop<Out, scalar_t>::run(p, CastT<Out>{}); }),
                 MYOPS_EW_ALL);
}

template <>
template <typename T>
void CpuKernel<EwKind::Where>::run_dtype(const EwPlan& p, const EwParams&) {
  CpuLoop<T, bool, T, T>::run(p, WhereT<T>{});
}
#else
// not in the AVX-512 build (elementwise.cpp never calls it for them)
template <>
void CpuKernel<EwKind::Cast>::run(const EwPlan&, const EwParams&) {
  TORCH_CHECK(false, "myops: internal error: cast is not in this CPU build");
}
template <>
void CpuKernel<EwKind::Where>::run(const EwPlan&, const EwParams&) {
  TORCH_CHECK(false, "myops: internal error: where is not in this CPU build");
}
#endif

}  // namespace

namespace ew {

// Computes plan.out for one op (every dtype the op supports).
void MYOPS_CPU_ENTRY(EwKind kind, const EwPlan& p, const EwParams& prm) {
  if (add_alpha_needs_torch_order(kind, p, prm)) {
    // half / bfloat16 add with alpha != 1 (and sub): PyTorch's two precisions, element for element
    run_add_alpha_torch_order(p, prm, AddAlphaVecRow{});
    return;
  }
  switch (kind) {
#define MYOPS_EW_CPU_CASE(KIND, ...) \
  case EwKind::KIND:                 \
    return CpuKernel<EwKind::KIND>::run(p, prm);
    MYOPS_EW_KERNELS(MYOPS_EW_CPU_CASE)
#undef MYOPS_EW_CPU_CASE
  }
}

}  // namespace ew
}  // namespace myops

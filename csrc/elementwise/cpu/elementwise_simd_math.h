#pragma once
// The SIMD math of the CPU elementwise loops (elementwise/cpu/elementwise_kernels.h): the vector form of
// each functor (VecOf<F>, on Vectorized<compute type>) and the inline float math of the AVX2 /
// AVX-512 builds (exp, log, tanh, gelu's Phi, the reciprocal).
#include "elementwise/cpu/elementwise_cpu_common.h"

namespace myops {
namespace {

// ---- vector forms of the functors (on Vectorized<compute type>) -----------------------------
// Each gives the same value as the scalar functor for every non-NaN result (NaN results may
// carry another payload, as in PyTorch's own vector paths).

struct NoVec {};

template <class F>
struct VecOf {
  using type = NoVec;
};

// ---- 16-bit rows on the storage bits -----------------------------------------------------------
// relu, abs and neg on half / bfloat16 without widening to float: one lane operation on the
// storage bits read as int16, run over a row by row16 (the AVX-512 or AVX2 build; nothing in the
// baseline build). The lane operation Op (a functor's Row16<T>) gives operator() on __m512i
// (AVX-512 build) or __m256i (AVX2 build), and kPairs: two vectors per iteration, as torch's
// loop for abs / neg (AVX-512: then single vectors, torch's are 32 lanes; AVX2: pairs only). Returns
// how many leading elements it wrote; the caller runs the scalar functor on the rest.
template <class Op, typename T>
int64_t row16(const T* in, T* out, int64_t n) {
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
  static_assert(sizeof(T) == 2, "16-bit types only");
  const Op op{};
  int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX512)
  if constexpr (Op::kPairs) {
    for (; i + 64 <= n; i += 64) {
      const __m512i v0 = _mm512_loadu_si512(in + i), v1 = _mm512_loadu_si512(in + i + 32);
      _mm512_storeu_si512(out + i, op(v0));
      _mm512_storeu_si512(out + i + 32, op(v1));
    }
  }
  for (; i + 32 <= n; i += 32) _mm512_storeu_si512(out + i, op(_mm512_loadu_si512(in + i)));
#else
  // kPairs: whole pairs only, as torch's AVX2 loop (two 16-lane vectors per step, the rest in its
  // scalar loop, which rounds a NaN to the default one): the same elements get each treatment
  constexpr int64_t step = Op::kPairs ? 32 : 16;
  for (; i + step <= n; i += step) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), op(v));
    if constexpr (Op::kPairs) {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 16));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 16), op(w));
    }
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

// A vector functor with a member template Row16<T> (a lane operation) has its half / bfloat16
// rows run by row16<typename VF::template Row16<T>> instead of widened to float.
template <class VF, typename T, class = void>
struct HasRow16 : std::false_type {};
template <class VF, typename T>
struct HasRow16<VF, T, std::void_t<typename VF::template Row16<T>>> : std::bool_constant<sizeof(T) == 2> {};
template <class VF, typename T>
constexpr bool kHasRow16 = HasRow16<VF, T>::value;

// A vector functor with kComputeBound = true never takes the streamed stores
// (elementwise/cpu/elementwise_store.h): they pay off for memory-bound ops only. The compute-bound kinds:
// pow and rsqrt (their functors, below, say why); elementwise.cpp reads the same list.
constexpr bool compute_bound_kind(ew::EwKind kind) { return kind == ew::EwKind::Pow || kind == ew::EwKind::Rsqrt; }
template <class VF, class = void>
struct NeverStream : std::false_type {};
template <class VF>
struct NeverStream<VF, std::void_t<decltype(VF::kComputeBound)>> : std::bool_constant<VF::kComputeBound> {};
template <class VF>
constexpr bool kNeverStream = NeverStream<VF>::value;

// A vector functor with kHwBf16Rounding = true (an op held to a tolerance, not to torch's bits)
// may round its bfloat16 results by the AVX512-BF16 instruction, which flushes float denormal
// results to zero (elementwise/cpu/elementwise_torch_order.h, bf16_unary_hw).
template <class VF, class = void>
struct HwBf16Rounding : std::false_type {};
template <class VF>
struct HwBf16Rounding<VF, std::void_t<decltype(VF::kHwBf16Rounding)>> : std::bool_constant<VF::kHwBf16Rounding> {};

// relu's lane operation: the values relu sends to 0 (negative, nonzero, not NaN: -inf included)
// are exactly those in [-32767, bits of -inf]; -0.0 (-32768) and negative NaNs (above -inf) pass
// unchanged, as in the scalar functor.
template <typename T>
struct Relu16 {
  static constexpr bool kPairs = false;
  static constexpr int16_t kNegInf = std::is_same<T, c10::BFloat16>::value ? int16_t(-128) : int16_t(-1024);
#if defined(CPU_CAPABILITY_AVX512)
  const __m512i lim = _mm512_set1_epi16(kNegInf + 1), minus0 = _mm512_set1_epi16(-32768);
  C10_ALWAYS_INLINE __m512i operator()(__m512i v) const {
    const __mmask32 zero = _mm512_cmpgt_epi16_mask(lim, v) & _mm512_cmpgt_epi16_mask(v, minus0);
    return _mm512_maskz_mov_epi16(~zero, v);
  }
#elif defined(CPU_CAPABILITY_AVX2)
  const __m256i lim = _mm256_set1_epi16(kNegInf + 1), minus0 = _mm256_set1_epi16(-32768);
  C10_ALWAYS_INLINE __m256i operator()(__m256i v) const {
    return _mm256_andnot_si256(_mm256_and_si256(_mm256_cmpgt_epi16(lim, v), _mm256_cmpgt_epi16(v, minus0)), v);
  }
#endif
};

// abs / neg's lane operation: the sign bit cleared / flipped, as torch's Vectorized<Half /
// BFloat16>::abs / neg do (NaN payloads kept; the widening path cost a conversion each way:
// 0.5-0.8x torch at 2^16).
template <bool kNeg>
struct Sign16 {
  static constexpr bool kPairs = true;
#if defined(CPU_CAPABILITY_AVX512)
  const __m512i sign = _mm512_set1_epi16(int16_t(0x8000));
  C10_ALWAYS_INLINE __m512i operator()(__m512i v) const {
    return kNeg ? _mm512_xor_si512(v, sign) : _mm512_andnot_si512(sign, v);
  }
#elif defined(CPU_CAPABILITY_AVX2)
  const __m256i sign = _mm256_set1_epi16(int16_t(0x8000));
  C10_ALWAYS_INLINE __m256i operator()(__m256i v) const {
    return kNeg ? _mm256_xor_si256(v, sign) : _mm256_andnot_si256(sign, v);
  }
#endif
};

struct VRelu {
  Relu f;
  template <typename T>
  using Row16 = Relu16<T>;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V a) const {
    return V::blendv(a, V(0), a < V(0));
  }
};
template <>
struct VecOf<Relu> {
  using type = VRelu;
};

// ---- fast float math for the SIMD builds ------------------------------------------------------
// gelu, silu and sigmoid on float (and on half / bfloat16, which compute in float) spend their
// time in exp, erf and a division. at::vec calls SLEEF (an out-of-line call per vector) and
// divides; PyTorch's own kernels do the same, or call oneDNN's JIT kernels, which inline a
// polynomial exp and replace the division. So do we, in both SIMD builds (256 and 512 bits):
//  - exp: Cody-Waite reduction by ln 2 in two parts and a degree-6 polynomial (vexp_in,
//    about 1 ulp), inline; the input clamped to [-87.34, 88] (NaN passes through) so that
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
// p 2^n for an integral n in [-126, 127]: one vscalefps (the same bits as p * vpow2(n): one
// rounding of the exact product, a denormal result included)
inline VFloat vldexp(const VFloat& p, const VFloat& n) { return _mm512_scalef_ps(p, n); }
inline VFloat vrcp(const VFloat& d) {
  const __m512 t = _mm512_rcp14_ps(d);
  return _mm512_mul_ps(t, _mm512_fnmadd_ps(d, t, _mm512_set1_ps(2.f)));  // Newton: t (2 - d t)
}
inline VFloat vabs(const VFloat& x) { return _mm512_abs_ps(x); }
// an estimate of 1 / d good to 2^-14 (rcp14), for a quotient corrected by its residual
inline VFloat vrcp_est(const VFloat& d) { return _mm512_rcp14_ps(d); }
// 2^n from t = n + 127 + 1.5 * 2^23 (n an integer in [-127, 128], t's low mantissa bits n + 127)
inline VFloat vmagic_pow2(const VFloat& t) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(t), 23));
}
// |m| (m's sign bit clear) with s's sign: one vpternlogd (m | (s & sign bit))
inline VFloat vcopysign(const VFloat& m, const VFloat& s) {
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(m), _mm512_castps_si512(s),
                                                       _mm512_set1_epi32(int32_t(0x80000000u)), 0xF8));
}
// every lane positive, normal and finite (no zero, denormal, inf, NaN or negative lane): one vfpclassps
inline bool vall_pos_normal(const VFloat& x) { return _mm512_fpclass_ps_mask(x, 0xFF) == 0; }
// x < below ? x * 0 : r (-0, or NaN at -inf, as torch's formulas give far out on the left)
C10_ALWAYS_INLINE VFloat v_neg_tail(const VFloat& r, const VFloat& x, float below) {
  return _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(x, _mm512_set1_ps(below), _CMP_LT_OQ), x, _mm512_setzero_ps());
}
// x's sign bit set ? q : 1 - q
inline VFloat v_phi_select(const VFloat& q, const VFloat& x) {
  return _mm512_mask_sub_ps(q, ~_mm512_movepi32_mask(_mm512_castps_si512(x)), _mm512_set1_ps(1.f), q);
}
// gelu's Phi table (elementwise/cpu/gelu_phi_tables.h): 32 intervals, each lane's coefficient k picked by
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
  return (_mm512_cmp_ps_mask(x, _mm512_set1_ps(lo), _CMP_GE_OQ) &
          _mm512_cmp_ps_mask(x, _mm512_set1_ps(hi), _CMP_LE_OQ)) == 0xFFFF;
}
// some lane below c (false for a NaN lane)
inline bool vany_lt(const VFloat& x, float c) { return _mm512_cmp_ps_mask(x, _mm512_set1_ps(c), _CMP_LT_OQ) != 0; }
// log's reduction, for a normal positive x: x = M 2^e with M in [sqrt(1/2), sqrt(2)), returns
// f = M - 1 (exact). Cephes' split (m in [0.5, 1) from frexp, doubled below sqrt(1/2)) taken on
// the bits: e = (bits(x) - bits(sqrt(1/2))) >> 23 (arithmetic), bits(M) = bits(x) - (e << 23):
// the same f and e as frexp, a compare and two blends gave, in 6 instructions instead of 10.
inline VFloat vlog_reduce(const VFloat& x, VFloat& e) {
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i k = _mm512_srai_epi32(_mm512_sub_epi32(bits, _mm512_set1_epi32(0x3f3504f3)), 23);
  e = _mm512_cvtepi32_ps(k);
  return _mm512_sub_ps(_mm512_castsi512_ps(_mm512_sub_epi32(bits, _mm512_slli_epi32(k, 23))), _mm512_set1_ps(1.f));
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
inline VFloat vldexp(const VFloat& p, const VFloat& n) { return p * vpow2(n); }
inline VFloat vrcp(const VFloat& d) {
  const __m256 t = _mm256_rcp_ps(d);
  return _mm256_mul_ps(t, _mm256_fnmadd_ps(d, t, _mm256_set1_ps(2.f)));
}
inline VFloat vabs(const VFloat& x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.f), x); }
// rcp (12 bits) and one Newton step: about 2^-23
inline VFloat vrcp_est(const VFloat& d) {
  const VFloat t = _mm256_rcp_ps(d);
  return vfmadd(t, vfnmadd(d, t, VFloat(1.f)), t);
}
inline VFloat vmagic_pow2(const VFloat& t) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23));
}
inline VFloat vcopysign(const VFloat& m, const VFloat& s) { return m | (s & VFloat(-0.f)); }
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
  C10_ALWAYS_INLINE VFloat pick(int k) const { return _mm256_permutevar8x32_ps(_mm256_load_ps(ew_cpu::kPhi8[k]), idx); }
};
inline VFloat v_zero_from(const VFloat& p, const VFloat& t, float c) {
  return _mm256_and_ps(_mm256_cmp_ps(t, _mm256_set1_ps(c), _CMP_NGE_UQ), p);
}
inline bool vall_in(const VFloat& x, float lo, float hi) {
  return _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(lo), _CMP_GE_OQ),
                                          _mm256_cmp_ps(x, _mm256_set1_ps(hi), _CMP_LE_OQ))) == 0xFF;
}
inline bool vany_lt(const VFloat& x, float c) {
  return _mm256_movemask_ps(_mm256_cmp_ps(x, _mm256_set1_ps(c), _CMP_LT_OQ)) != 0;
}
inline bool vall_pos_normal(const VFloat& x) { return vall_in(x, 1.17549435e-38f, 3.40282347e+38f); }
inline VFloat vlog_reduce(const VFloat& x, VFloat& e) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i k = _mm256_srai_epi32(_mm256_sub_epi32(bits, _mm256_set1_epi32(0x3f3504f3)), 23);
  e = _mm256_cvtepi32_ps(k);
  return _mm256_sub_ps(_mm256_castsi256_ps(_mm256_sub_epi32(bits, _mm256_slli_epi32(k, 23))), _mm256_set1_ps(1.f));
}
#endif

// exp for x in [-87.34, 88] (vexp_in) or clamped there (vexp). n = round(x / ln 2) by the
// 1.5 * 2^23 shifter inside one FMA (one rounding of the exact x log2(e), where a multiply and a
// vroundscaleps took three uops), then exp(r) = 1 + r + r^2 Q(r), Q of degree 4 fitted to within
// 4e-9 relative on |r| <= ln2 / 2 (tools/fit_exp_log.py; Cephes' degree 5 took one FMA more), in
// Horner form down to the constant 1.
// K: the result scaled by 2^K (exact), which extends the range of x down by K ln 2 (the tails of
// sigmoid and silu take K = 24 for x down to -104)
template <int K = 0>
C10_ALWAYS_INLINE VFloat vexp_in(const VFloat& x) {
  const VFloat shift(12582912.f);  // 1.5 * 2^23
  const VFloat n = vfmadd(x, VFloat(1.44269504088896341f), shift) - shift;
  VFloat r = vfnmadd(n, VFloat(0.693359375f), x);  // x - n ln2, ln2 in two parts
  r = vfnmadd(n, VFloat(-2.12194440e-4f), r);
  VFloat p = vfmadd(VFloat(1.3814573176e-3f), r, VFloat(8.3687268198e-3f));
  p = vfmadd(p, r, VFloat(4.1668388993e-2f));
  p = vfmadd(p, r, VFloat(1.6666521132e-1f));
  p = vfmadd(p, r, VFloat(4.9999994040e-1f));
  p = vfmadd(p, r, VFloat(1.f));
  p = vfmadd(p, r, VFloat(1.f));
  if constexpr (K != 0) return vldexp(p, n + VFloat(float(K)));
  return vldexp(p, n);
}
C10_ALWAYS_INLINE VFloat vexp(const VFloat& x) { return vexp_in(vmax_c(vmin_c(x, 88.0f), -87.33654f)); }

// exp, log and tanh on float (issue #29): at::vec's are SLEEF's 1-ulp functions, an out-of-line
// call per vector, and SLEEF's tanhf_u10 / logf_u10 work in double-float arithmetic: myops
// measured 0.21x / 0.55x torch on tanh / log (torch's kernels call MKL's VML on contiguous
// float). exp and log are Cephes' single-precision reductions with refitted polynomials, tanh an
// expm1 form (v_tanh_f), inline: within 2 ulp of the correctly rounded result (exp and log
// within 1 ulp; measured: README.md), so within the suite's 4 ulp of torch's. exp and log
// take at::vec's function for a vector that holds any lane outside the range where the fast
// form is exact in its special cases (exp: the result normal and finite; log: a positive normal
// finite input), so inf, NaN, zero, negative and denormal lanes get SLEEF's values.
C10_ALWAYS_INLINE VFloat v_exp_f(const VFloat& x) {
#if defined(CPU_CAPABILITY_AVX512)
  // vscalefps saturates (inf, 0 or a denormal for an n out of range, NaN passes), so the result
  // shows every lane the fast form does not serve: one vfpclassps on it, where a check of the
  // input's range took two compares and a mask operation
  const VFloat y = vexp_in(x);
  return vall_pos_normal(y) ? y : x.exp();
#else
  if (!vall_in(x, -87.0f, 88.0f)) return x.exp();
  return vexp_in(x);
#endif
}
C10_ALWAYS_INLINE VFloat v_log_f(const VFloat& x) {
  if (!vall_pos_normal(x)) return x.log();
  VFloat e;
  const VFloat f = vlog_reduce(x, e);  // x = (1 + f) 2^e, f in [-0.29, 0.41]
  const VFloat z = f * f;
  // log(1 + f) = f - f^2 / 2 + f^3 P(f), P of degree 7 fitted to within 7e-9 relative on
  // [sqrt(1/2) - 1, sqrt(2) - 1] (tools/fit_exp_log.py; Cephes' degree 8 took one FMA more)
  VFloat p = vfmadd(VFloat(-7.8593455255e-2f), f, VFloat(1.2881559134e-1f));
  p = vfmadd(p, f, VFloat(-1.3128812611e-1f));
  p = vfmadd(p, f, VFloat(1.4181207120e-1f));
  p = vfmadd(p, f, VFloat(-1.6624549031e-1f));
  p = vfmadd(p, f, VFloat(2.0002286136e-1f));
  p = vfmadd(p, f, VFloat(-2.5000810623e-1f));
  p = vfmadd(p, f, VFloat(3.3333316445e-1f));
  // = f + z (f P(f) - 1/2), then + e ln2 in two parts
  const VFloat q = vfmadd(p, f, VFloat(-0.5f));
  const VFloat y = vfmadd(e, VFloat(-2.12194440e-4f), vfmadd(q, z, f));
  return vfmadd(e, VFloat(0.693359375f), y);
}
// sqrt (AVX-512 build): vsqrtps on 512-bit registers issues one vector per 6 cycles on one port;
// torch's VML sqrt ran 1.7x faster at 2^16. For a vector of positive normal finite lanes: the
// 14-bit rsqrt14 estimate y, s = x y and h = y / 2 refined by one Goldschmidt step (error about
// 2^-27), then s + (x - s^2) h with the residual exact in an FMA: the correctly rounded square
// root for x in [2^-96, FLT_MAX] (checked exhaustively: every float32 there gives vsqrtps'
// bits; below 2^-100 the residual is a denormal and loses bits). Any other lane (small, 0,
// denormal, inf, NaN, negative) sends the vector to vsqrtps.
#if defined(CPU_CAPABILITY_AVX512)
C10_ALWAYS_INLINE bool vsqrt_fast_range(const VFloat& x) { return vall_in(x, 0x1p-96f, 3.40282347e+38f); }
C10_ALWAYS_INLINE VFloat vsqrt_rn(const VFloat& x) {
  const VFloat y = _mm512_rsqrt14_ps(x);
  VFloat s = x * y;
  VFloat h = y * VFloat(0.5f);
  const VFloat d = vfnmadd(s, h, VFloat(0.5f));
  s = vfmadd(s, d, s);
  h = vfmadd(h, d, h);
  return vfmadd(vfnmadd(s, s, x), h, s);
}
#endif
C10_ALWAYS_INLINE VFloat v_sqrt_f(const VFloat& x) {
#if defined(CPU_CAPABILITY_AVX512)
  if (!vsqrt_fast_range(x)) return x.sqrt();
  return vsqrt_rn(x);
#else
  return x.sqrt();
#endif
}
// 1 / sqrt (AVX-512 build): at::vec's (torch's) is vdivps(1, vsqrtps(x)), two roundings, both
// on the divider. The same two roundings without it: the correctly rounded sqrt above, then
// the correctly rounded reciprocal by rcp14 and two Newton steps, the last with an exact FMA
// residual (checked exhaustively: every float32 in [2^-96, FLT_MAX] gives vdivps(1, vsqrtps)'s
// bits). Other lanes: at::vec's.
C10_ALWAYS_INLINE VFloat v_rsqrt_f(const VFloat& x) {
#if defined(CPU_CAPABILITY_AVX512)
  if (!vsqrt_fast_range(x)) return x.rsqrt();
  const VFloat s = vsqrt_rn(x);
  VFloat y = _mm512_rcp14_ps(s);
  y = vfmadd(y, vfnmadd(s, y, VFloat(1.f)), y);
  y = vfmadd(y, vfnmadd(s, y, VFloat(1.f)), y);
  // the one exception of that last step (Markstein): s = 2^k (2 - 2^-23), a mantissa of all
  // ones, whose reciprocal 2^(-k-1) (1 + 2^-24 + 2^-48 ...) lies just above a midpoint the step
  // takes for a tie (one per binade of s: 224 inputs): one ulp up there
  const __m512i ones = _mm512_set1_epi32(0x7fffff);
  const __mmask16 all_ones = _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(s), ones), ones);
  return _mm512_castsi512_ps(
      _mm512_mask_add_epi32(_mm512_castps_si512(y), all_ones, _mm512_castps_si512(y), _mm512_set1_epi32(1)));
#else
  return x.rsqrt();
#endif
}

// pow (AVX-512 build): at::vec's (torch's) is SLEEF's powf16_u10, out of line and in double-float
// arithmetic (~110 cycles a vector here). For x positive normal and y finite: 2^(y log2 x) in
// double, 8 lanes at a time, far more accurate than the float result (about 2^-31 relative), so
// the one rounding to float leaves it within 1 ulp of the correctly rounded power:
//  - x = 2^k z, z in [0.699, 1.398) (the offset kPowOff), and z in one of 16 intervals (4 bits of
//    z - kPowOff): log2 x = k + log2(c_i) + log2(1 + r), r = z / c_i - 1 = z invc_i - 1 exact
//    (invc_i has 21 bits) and |r| < 0.031, log2(1 + r) by its Taylor series to r^7 (2^-38
//    relative). The interval holding 1 has c = 1: x near 1 loses nothing to a table value;
//  - t = y log2 x; 2^t = 2^(m / 16) 2^g with m = round(16 t) (the 1.5 * 2^52 shifter), g in
//    [-1/32, 1/32]: 2^(m / 16) = 2^floor(m / 16) (vscalefpd) times a table entry picked by m's
//    low 4 bits, 2^g by its Taylor series to g^5 (2^-42).
// Any other lane (x zero, negative, denormal, inf or NaN; y inf or NaN) or a result that is not
// a normal float (vscalefpd saturates, the conversion to float gives inf, 0 or a denormal)
// sends the vector to at::vec's.
#if defined(CPU_CAPABILITY_AVX512)
constexpr int32_t kPowOff = 0x3f330000;
struct PowTables {
  alignas(64) double invc[16];   // 1 / c_i rounded to 21 bits; 1 for the interval holding 1
  alignas(64) double log2c[16];  // log2(c_i) = -log2(invc_i)
  alignas(64) double exp2[16];   // 2^(j / 16)
};
// built on the first call (in this build's code, which runs only on an AVX-512 CPU)
inline const PowTables& pow_tables() {
  static const PowTables tables = [] {
    PowTables t{};
    for (int i = 0; i < 16; ++i) {
      const int32_t blo = kPowOff + (i << 19), bhi = kPowOff + ((i + 1) << 19);
      float lo, hi;
      std::memcpy(&lo, &blo, sizeof(lo));
      std::memcpy(&hi, &bhi, sizeof(hi));
      double ic = 1.0;
      if (!(lo <= 1.0f && 1.0f < hi))
        ic = std::ldexp(std::nearbyint(std::ldexp(2.0 / (double(lo) + double(hi)), 20)), -20);
      t.invc[i] = ic;
      t.log2c[i] = -std::log2(ic);
      t.exp2[i] = std::exp2(i / 16.0);
    }
    return t;
  }();
  return tables;
}
// 2^(y log2 x) in double for 8 lanes: z, k and the table index as above
C10_ALWAYS_INLINE __m512d vpow_d(__m256 z, __m256i k, __m256i idx, __m256 y, const PowTables& t) {
  constexpr double kInvLn2 = 1.4426950408889634, kLn2 = 0.6931471805599453;
  const __m512i ix = _mm512_cvtepu32_epi64(idx);  // vpermt2pd reads its low 4 bits
  const __m512d ic = _mm512_permutex2var_pd(_mm512_load_pd(t.invc), ix, _mm512_load_pd(t.invc + 8));
  const __m512d lc = _mm512_permutex2var_pd(_mm512_load_pd(t.log2c), ix, _mm512_load_pd(t.log2c + 8));
  const __m512d r = _mm512_fmsub_pd(_mm512_cvtps_pd(z), ic, _mm512_set1_pd(1.0));
  // log2(1 + r) = r Q(r), Q = sum (-1)^(n+1) r^(n-1) / (n ln2), n = 1..7
  __m512d q = _mm512_set1_pd(kInvLn2 / 7);
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(-kInvLn2 / 6));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(kInvLn2 / 5));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(-kInvLn2 / 4));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(kInvLn2 / 3));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(-kInvLn2 / 2));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(kInvLn2));
  const __m512d l = _mm512_fmadd_pd(r, q, _mm512_add_pd(_mm512_cvtepi32_pd(k), lc));
  const __m512d tt = _mm512_mul_pd(_mm512_cvtps_pd(y), l);
  const __m512d shift = _mm512_set1_pd(6755399441055744.0);  // 1.5 * 2^52
  const __m512d u = _mm512_fmadd_pd(tt, _mm512_set1_pd(16.0), shift);
  const __m512d m = _mm512_sub_pd(u, shift);
  const __m512d g = _mm512_fnmadd_pd(m, _mm512_set1_pd(1.0 / 16), tt);
  // 2^g = sum (g ln2)^n / n!, n = 0..5
  __m512d p = _mm512_set1_pd(kLn2 * kLn2 * kLn2 * kLn2 * kLn2 / 120);
  p = _mm512_fmadd_pd(p, g, _mm512_set1_pd(kLn2 * kLn2 * kLn2 * kLn2 / 24));
  p = _mm512_fmadd_pd(p, g, _mm512_set1_pd(kLn2 * kLn2 * kLn2 / 6));
  p = _mm512_fmadd_pd(p, g, _mm512_set1_pd(kLn2 * kLn2 / 2));
  p = _mm512_fmadd_pd(p, g, _mm512_set1_pd(kLn2));
  p = _mm512_fmadd_pd(p, g, _mm512_set1_pd(1.0));
  const __m512d e = _mm512_permutex2var_pd(_mm512_load_pd(t.exp2), _mm512_castpd_si512(u), _mm512_load_pd(t.exp2 + 8));
  return _mm512_scalef_pd(_mm512_mul_pd(e, p), _mm512_mul_pd(m, _mm512_set1_pd(1.0 / 16)));
}
C10_ALWAYS_INLINE VFloat v_pow_f(const VFloat& x, const VFloat& y) {
  // 0x99: NaN (quiet, signalling) or +-inf
  if ((_mm512_fpclass_ps_mask(x, 0xFF) | _mm512_fpclass_ps_mask(y, 0x99)) != 0) return x.pow(y);
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i tmp = _mm512_sub_epi32(bits, _mm512_set1_epi32(kPowOff));
  const __m512i k = _mm512_srai_epi32(tmp, 23);
  const __m512i idx = _mm512_srli_epi32(tmp, 19);
  const __m512 z =
      _mm512_castsi512_ps(_mm512_sub_epi32(bits, _mm512_and_si512(tmp, _mm512_set1_epi32(int32_t(0xff800000u)))));
  const __m512 yv = y;
  const PowTables& t = pow_tables();
  const __m512d lo = vpow_d(_mm512_castps512_ps256(z), _mm512_castsi512_si256(k), _mm512_castsi512_si256(idx),
                            _mm512_castps512_ps256(yv), t);
  const __m512d hi = vpow_d(_mm512_extractf32x8_ps(z, 1), _mm512_extracti64x4_epi64(k, 1),
                            _mm512_extracti64x4_epi64(idx, 1), _mm512_extractf32x8_ps(yv, 1), t);
  const VFloat r = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
  return vall_pos_normal(r) ? r : x.pow(y);
}
#endif

// tanh, one evaluation for every lane: with a = min(|x|, 10) (tanh rounds to 1 from 9.01 on; a
// NaN passes) and h = expm1(2a) / 2, tanh(a) = h / (1 + h), x's sign put back (-0 stays -0).
//  - h: 2a = n ln 2 + 2r, |r| <= ln 2 / 4, n = round(2a / ln 2) by the 1.5 * 2^23 rounding
//    constant, whose low mantissa bits (biased by 127) shifted into the exponent are s = 2^n;
//    h = s (r + r^2 P(r)) + (s - 1) / 2 with r + r^2 P(r) = expm1(2r) / 2 (degree 7, fitted
//    for relative error 2^-28.7 with float coefficients). No cancellation anywhere: for n = 0,
//    h = r = a + O(a^2) keeps a's relative accuracy (a denormal a gives h = a, so tanh = a), and
//    for n >= 1 both terms are positive. The one-constant reduction's error n (ln 2 / 2 -
//    fl(ln 2 / 2)) is damped by 2 / (e^2a + 1) in tanh.
//  - q = h / (1 + h): q0 = h y with y ~ 1 / (1 + h) (vrcp_est), then one correction by the
//    residual h - q0 (1 + h) = (h - q0) - h q0, computed without rounding 1 + h (h - q0 is exact
//    for h <= 1, Sterbenz; the residual h - q0 fl(1 + h) left 647,640 positive inputs 2 ulp off
//    in a standalone copy of this code, this one 454).
// Checked on all 2^32 float32 inputs against the correctly rounded tanh (AVX-512 and AVX2
// builds): within 2 ulp, README.md "Exactness".
C10_ALWAYS_INLINE VFloat v_tanh_f(const VFloat& x) {
  const VFloat a = vmin_c(vabs(x), 10.0f);
  constexpr float kRound = 12582912.f + 127.f;                               // 1.5 * 2^23 + the exponent bias
  const VFloat t = vfmadd(a, VFloat(2.88539008177792681f), VFloat(kRound));  // 2 / ln 2
  const VFloat n = t - VFloat(kRound);
  const VFloat s = vmagic_pow2(t);
  const VFloat r = vfnmadd(n, VFloat(0.346573590279972655f), a);  // ln 2 / 2
  VFloat p = vfmadd(VFloat(1.2701371684670448e-2f), r, VFloat(4.4610634446144104e-2f));
  p = vfmadd(p, r, VFloat(1.333342343568802e-1f));
  p = vfmadd(p, r, VFloat(3.333308696746826e-1f));
  p = vfmadd(p, r, VFloat(6.666666269302368e-1f));
  p = vfmadd(p, r, VFloat(1.f));
  p = vfmadd(r * r, p, r);
  const VFloat h = vfmadd(s, p, vfmadd(s, VFloat(0.5f), VFloat(-0.5f)));
  const VFloat y = vrcp_est(h + VFloat(1.f));
  const VFloat q0 = h * y;
  const VFloat q = vfmadd(vfnmadd(h, q0, h - q0), y, q0);
  return vcopysign(q, x);
}

// Phi(x) = 0.5 (1 + erf(x / sqrt 2)), gelu's factor: Phi = 1 - q(|x|) for x >= 0 and q(|x|)
// for x < 0, q(t) = 0.5 erfc(t / sqrt 2) (no cancellation for negative x: torch's
// 1 + erf(...) has it). q is a piecewise polynomial on [0, 6) (elementwise/cpu/gelu_phi_tables.h,
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
// Large negative x: torch's gelu gives -0 there (NaN at -inf: -inf * 0); ours may give a
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
// sigmoid and silu far out on the left (issue #56): torch computes 1 / (1 + exp(-x)) (silu: x / (1 +
// exp(-x))), whose exp overflows from x = -88.72283935546875 down (the result 0, silu's -0), and
// whose result is a denormal from about x = -87.3 on, where the fast form's clamped exp and its
// reciprocal estimate would give neither. Lanes below -87 take e^x there instead (1 + e^x is 1 in
// float): vexp_in scaled by 2^24 (its reduction stays exact), then 2^-24, one rounding of the
// denormal. The check is one compare a vector; the blend, only for a vector that holds such a
// lane, makes no call (a call in the loop costs the registers of the fast form's constants).
C10_ALWAYS_INLINE VFloat v_left_tail(const VFloat& x, const VFloat& fast, bool silu) {
  const VFloat e24 = vexp_in<24>(vmax_c(x, -103.f));  // e^x 2^24, normal for x down to -103
  VFloat tail = (silu ? x * e24 : e24) * VFloat(0x1p-24f);
  // exp(-x) overflows in torch: 0 (silu: x * 0, NaN at -inf)
  const VFloat zero = silu ? x * VFloat(0.f) : VFloat(0.f);
  tail = VFloat::blendv(tail, zero, x <= VFloat(-88.72283935546875f));
  return VFloat::blendv(fast, tail, x < VFloat(-87.f));
}
template <>
C10_ALWAYS_INLINE VFloat v_sigmoid(const VFloat& x) {
  const VFloat fast = vrcp(VFloat(1.f) + vexp(VFloat(0.f) - x));
  if (C10_LIKELY(!vany_lt(x, -87.f))) return fast;
  return v_left_tail(x, fast, /*silu=*/false);
}
template <>
C10_ALWAYS_INLINE VFloat v_silu(const VFloat& x) {
  const VFloat fast = x * vrcp(VFloat(1.f) + vexp(VFloat(0.f) - x));
  if (C10_LIKELY(!vany_lt(x, -87.f))) return fast;
  return v_left_tail(x, fast, /*silu=*/true);
}
#endif

struct VGelu {
  Gelu f;
  static constexpr bool kHwBf16Rounding = true;  // within tolerance, not bit-exact
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
  static constexpr bool kHwBf16Rounding = true;  // within tolerance, not bit-exact
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
  static constexpr bool kHwBf16Rounding = true;  // within tolerance, not bit-exact
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
C10_ALWAYS_INLINE V v_exp(const V& x) {
  return x.exp();
}
template <class V>
C10_ALWAYS_INLINE V v_log(const V& x) {
  return x.log();
}
template <class V>
C10_ALWAYS_INLINE V v_tanh(const V& x) {
  return x.tanh();
}
template <class V>
C10_ALWAYS_INLINE V v_sqrt(const V& x) {
  return x.sqrt();
}
template <class V>
C10_ALWAYS_INLINE V v_rsqrt(const V& x) {
  return x.rsqrt();
}
template <class V>
C10_ALWAYS_INLINE V v_pow(const V& a, const V& b) {
  return a.pow(b);
}
#ifdef MYOPS_EW_FAST_MATH
template <>
C10_ALWAYS_INLINE VFloat v_exp(const VFloat& x) {
  return v_exp_f(x);
}
template <>
C10_ALWAYS_INLINE VFloat v_log(const VFloat& x) {
  return v_log_f(x);
}
template <>
C10_ALWAYS_INLINE VFloat v_tanh(const VFloat& x) {
  return v_tanh_f(x);
}
template <>
C10_ALWAYS_INLINE VFloat v_sqrt(const VFloat& x) {
  return v_sqrt_f(x);
}
template <>
C10_ALWAYS_INLINE VFloat v_rsqrt(const VFloat& x) {
  return v_rsqrt_f(x);
}
#if defined(CPU_CAPABILITY_AVX512)
template <>
C10_ALWAYS_INLINE VFloat v_pow(const VFloat& a, const VFloat& b) {
  return v_pow_f(a, b);
}
#endif
#endif

// The unary math of the table on Vectorized<float / double> (half / bfloat16 widened to float):
// at::vec's own functions, which torch's vector loops call (SLEEF for exp, log, tanh, pow;
// the instructions for sqrt, 1 / sqrt, abs, neg), but the float forms above (v_exp, v_log,
// v_tanh, v_sqrt, v_rsqrt) in the SIMD builds; abs / neg on half / bfloat16 rows: Sign16.
// TRAITS: members declaring the functor's traits (Row16, kComputeBound), or nothing.
#define MYOPS_VEC_UNARY(F, EXPR, TRAITS)        \
  struct V##F {                                 \
    F f;                                        \
    TRAITS                                      \
    template <class V>                          \
    C10_ALWAYS_INLINE V operator()(V x) const { \
      return EXPR;                              \
    }                                           \
  };                                            \
  template <>                                   \
  struct VecOf<F> {                             \
    using type = V##F;                          \
  };
MYOPS_VEC_UNARY(Abs, x.abs(), template <typename T> using Row16 = Sign16<false>;)
MYOPS_VEC_UNARY(Neg, x.neg(), template <typename T> using Row16 = Sign16<true>;)
MYOPS_VEC_UNARY(Exp, v_exp(x), )
MYOPS_VEC_UNARY(Log, v_log(x), )
MYOPS_VEC_UNARY(Sqrt, v_sqrt(x), )
// rsqrt is compute-bound (a square root and a division, or their refinements, per element):
// float32 at 2^22 ran 0.92x torch with streamed stores in both SIMD builds (an EPYC, Zen 4)
MYOPS_VEC_UNARY(Rsqrt, v_rsqrt(x), static constexpr bool kComputeBound = compute_bound_kind(ew::EwKind::Rsqrt);)
MYOPS_VEC_UNARY(Tanh, v_tanh(x), )
#undef MYOPS_VEC_UNARY

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

// The plain binary ops on Vectorized<float / double> (half / bfloat16 widened to float):
// at::vec's operators and functions, as torch's vector loops (SLEEF's pow). TRAITS: as in
// MYOPS_VEC_UNARY.
#define MYOPS_VEC_BINARY(F, EXPR, TRAITS)            \
  struct V##F {                                      \
    F f;                                             \
    TRAITS                                           \
    template <class V>                               \
    C10_ALWAYS_INLINE V operator()(V a, V b) const { \
      return EXPR;                                   \
    }                                                \
  };                                                 \
  template <>                                        \
  struct VecOf<F> {                                  \
    using type = V##F;                               \
  };
MYOPS_VEC_BINARY(Mul, a* b, )
MYOPS_VEC_BINARY(Div, a / b, )
MYOPS_VEC_BINARY(Maximum, at::vec::maximum(a, b), )
MYOPS_VEC_BINARY(Minimum, at::vec::minimum(a, b), )
// pow is compute-bound (float32: v_pow_f ~1.2 ns an element in the AVX-512 build, SLEEF's powf16
// ~2.4 ns in the others: far from memory-bound): its streamed float32 rows at 2^22 ran 0.72x torch
// (SLEEF, 15.0 against 10.8 ms, reused pages), plain 1.0x
MYOPS_VEC_BINARY(Pow, v_pow(a, b), static constexpr bool kComputeBound = compute_bound_kind(ew::EwKind::Pow);)
#undef MYOPS_VEC_BINARY

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

}  // namespace
}  // namespace myops

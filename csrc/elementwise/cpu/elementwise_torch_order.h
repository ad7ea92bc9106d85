#pragma once
// Where torch's CPU kernels give other bits than the plain functor, the CPU elementwise loops
// (elementwise/cpu/elementwise_kernels.h) follow them: the -0.0 / +0.0 ties of maximum / minimum / clamp,
// add / sub with alpha beside a stride-0 operand, gelu through oneDNN at the edges of its range,
// and bfloat16 gelu / silu / sigmoid rounded by the AVX512-BF16 instruction.
//
// Each quirk is a wrapper of the op's row functor that tells the loop how to split a row
// (kSplitsRows and split_row, which CpuLoop::row_dispatch asks any row functor for), next to
// the measurements that show torch's order; TorchRowOf picks the wrapper for an op.
#include "elementwise/cpu/elementwise_simd_math.h"

namespace myops {
namespace {

template <typename T, class F>
struct InOpMath;  // elementwise/cpu/elementwise_store.h

// TorchRowOf<T, F>: the row functor the CPU loop runs for functor F with every operand of
// storage type T (run_same): InOpMath<T, F>, or the torch-order wrapper of F's op below.
// make(f) builds it.
template <typename T, class F, class = void>
struct TorchRowOf {
  using type = InOpMath<T, F>;
  static type make(const F& f) { return {f}; }
};

// The split_row of a wrapper: split_row<Loop>(ptr, st, n, vf, stream) runs one row of n
// elements (pointers ptr and element strides st, output first) with vector functor vf through
// Loop (the CpuLoop: Loop::row runs a part of the row with a given functor, whole).

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

// The row functor of such an op: `vec` (the vector formula) on the elements torch vectorizes,
// `scalar` on the rest.
template <class GV, class GS>
struct SplitTies {
  GV vec;
  GS scalar;
  static constexpr bool kSplitsRows = true;
  template <class Loop, class VF>
  C10_ALWAYS_INLINE void split_row(char* const* ptr, const int64_t* st, int64_t n, const VF& vf, bool stream) const {
    using T = typename Loop::out_type;
    constexpr int NARGS = Loop::NARGS;
    const int64_t nvec = torch_vec_count<T, NARGS>(st, n);
    if (nvec > 0) Loop::row(ptr, st, nvec, vec, vf, stream);
    if (nvec < n) {
      char* rest[NARGS];
      for (int k = 0; k < NARGS; ++k) rest[k] = ptr[k] + nvec * st[k] * int64_t(sizeof(T));
      Loop::row(rest, st, n - nvec, scalar, NoVec{}, false);
    }
  }
};

// maximum, minimum and clamp (the ops with a VecTiesOf) on the floating dtypes
template <typename T>
constexpr bool kFloatingStorage =
    std::is_floating_point<T>::value || std::is_same<T, c10::Half>::value || std::is_same<T, c10::BFloat16>::value;
template <typename T, class F>
struct TorchRowOf<T, F, std::enable_if_t<!std::is_void<typename VecTiesOf<F>::type>::value && kFloatingStorage<T>>> {
  using VT = typename VecTiesOf<F>::type;
  using type = SplitTies<InOpMath<T, VT>, InOpMath<T, F>>;
  static type make(const F& f) { return {{VT{}}, {f}}; }
};

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
// none (AddUnfused). half / bfloat16 run elementwise/cpu/add_alpha_torch_order.h.

// The unfused run [lo, hi) of a row with strides st (output, self, other), or lo == hi.
template <typename T>
void add_scalar_tail_range(const int64_t* st, int64_t n, int64_t& lo, int64_t& hi) {
  constexpr int64_t W = 16 / int64_t(sizeof(T));
  lo = hi = 0;
  if (!(st[0] == 1 && st[1] == 1 && st[2] == 0)) return;
  lo = torch_vec_count<T, 3>(st, n) + 1;
  hi = lo < n ? lo + (n - lo) / W * W : lo;
}

template <class G>
struct AddScalarTail {
  G fused;  // InOpMath<T, Add<T>>
  static constexpr bool kSplitsRows = true;
  template <class Loop, class VF>
  C10_ALWAYS_INLINE void split_row(char* const* ptr, const int64_t* st, int64_t n, const VF& vf, bool stream) const {
    using T = typename Loop::out_type;
    static_assert(Loop::NARGS == 3, "add: output, self, other");
    int64_t lo, hi;
    add_scalar_tail_range<T>(st, n, lo, hi);
    if (lo >= hi) return Loop::row(ptr, st, n, fused, vf, stream);
    Loop::row(ptr, st, lo, fused, vf, stream);
    // self + alpha * other rounded once: the product is computed here, outside the loop, so it
    // cannot be contracted into the additions
    T* out = reinterpret_cast<T*>(ptr[0]);
    const T* self = reinterpret_cast<const T*>(ptr[1]);
    const T prod = fused.f.alpha * *reinterpret_cast<const T*>(ptr[2]);
    for (int64_t i = lo; i < hi; ++i) out[i] = self[i] + prod;
    if (hi < n) {
      char* rest[3] = {ptr[0] + hi * int64_t(sizeof(T)), ptr[1] + hi * int64_t(sizeof(T)), ptr[2]};
      Loop::row(rest, st, n - hi, fused, vf, false);
    }
  }
};

// float32 / float64 add in the SIMD builds (kUseVectorized, elementwise/cpu/elementwise_store.h: the
// baseline's peer fuses nowhere)
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
template <typename T>
struct TorchRowOf<T, Add<T>, std::enable_if_t<std::is_same<T, float>::value || std::is_same<T, double>::value>> {
  using type = AddScalarTail<InOpMath<T, Add<T>>>;
  static type make(const Add<T>& f) { return {{f}}; }
};
#endif

// ---- gelu through oneDNN: its results at the edges of the range ------------------------------
// Where torch's CPU gelu (erf form) runs oneDNN's JIT eltwise_gelu_erf (torch_cpu_gelu_path:
// TorchCpuGelu::OneDnnJit), every element gets oneDNN's formula, which differs from torch's own
// kernel (and from exact) at the edges; measured the same at every ATEN_CPU_CAPABILITY (oneDNN
// picks its own code):
//   +inf -> NaN with the sign bit set, -inf -> NaN without it, x >= 2^127 -> +inf (float32 and
//   bfloat16: it forms 2x), a NaN input -> that NaN quieted (sign and payload kept, bfloat16's too);
// elsewhere it is within the stated bounds of torch's kernel, which myops' formula follows.
// OneDnnGeluEdges wraps the scalar functor (each element it computes is checked: tails, strided
// rows); OneDnnGeluWatch wraps the vector one with one compare per vector (|x| >= 2^127 or NaN
// in float, which holds the 16-bit inputs exactly) that only notes an edge lane, and the row's
// chunk where it noted one is fixed up afterwards in the storage type (onednn_gelu_edges), so
// that finite inputs pay the compare and nothing else. (The fix-up cannot be made in float: the
// 16-bit conversions write every NaN as 0xffff.)
template <typename T>
struct OneDnnGeluBits {
  using U = typename UIntOf<sizeof(T)>::type;
  static constexpr bool kHalf = std::is_same<T, c10::Half>::value;
  static constexpr U kSign = sizeof(T) == 4 ? U(0x80000000u) : U(0x8000);
  static constexpr U kAbs = U(~kSign);
  static constexpr U kInf = sizeof(T) == 4 ? U(0x7f800000) : kHalf ? U(0x7c00) : U(0x7f80);
  static constexpr U kQuiet = sizeof(T) == 4 ? U(0x00400000) : kHalf ? U(0x0200) : U(0x0040);
  static constexpr U kEdge = sizeof(T) == 4 ? U(0x7f000000) : kHalf ? kInf : U(0x7f00);  // 2^127 (half: inf)
  // the same threshold in float (|x| >= it, or NaN: an edge)
  static constexpr float kEdgeFloat = kHalf ? std::numeric_limits<float>::infinity() : 0x1p127f;
  // oneDNN's result for input bits x into r; false where x is no edge (or -0 as computed)
  static C10_ALWAYS_INLINE bool edge(U x, U& r) {
    const U a = U(x & kAbs);
    if (C10_LIKELY(a < kEdge) || (x & kSign && a < kInf)) return false;
    if (a > kInf) {
      r = U(x | kQuiet);
    } else if (x == kInf) {
      r = U(kSign | kInf | kQuiet);
    } else if (x == U(kSign | kInf)) {
      r = U(kInf | kQuiet);
    } else {
      r = kInf;
    }
    return true;
  }
};

// Whether a vector of floats holds a lane with |x| >= edge or NaN.
template <class V>
C10_ALWAYS_INLINE bool any_lane_at_least(const V& x, float edge) {
  static_assert(std::is_same<V, Vectorized<float>>::value, "a vector of floats");
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(edge), _CMP_NLT_UQ) != 0;
#elif defined(CPU_CAPABILITY_AVX2)
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(edge), _CMP_NLT_UQ)) != 0;
#else
  bool any = false;
  for (int k = 0; k < V::size(); ++k) any |= !(std::abs(x[k]) < edge);
  return any;
#endif
}

// The vector functor VF (VGelu) on a row of storage type T, noting whether any lane was an edge.
// Thread-private: one per chunk.
template <typename T, class VF>
struct OneDnnGeluWatch {
  const VF& vf;
  mutable bool seen = false;
  static constexpr bool kHwBf16Rounding = HwBf16Rounding<VF>::value;
  template <class V>
  C10_ALWAYS_INLINE V operator()(V x) const {
    if (C10_UNLIKELY(any_lane_at_least(x, OneDnnGeluBits<T>::kEdgeFloat))) seen = true;
    return vf(x);
  }
};

// Overwrites oneDNN's edge elements of a row (n elements, strides st: output, input).
template <typename T>
void onednn_gelu_edges(char* const* ptr, const int64_t* st, int64_t n) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 2) {
    using B = OneDnnGeluBits<T>;
    using U = typename B::U;
    const U* in = reinterpret_cast<const U*>(ptr[1]);
    U* out = reinterpret_cast<U*>(ptr[0]);
    const int64_t si = st[1], so = st[0];
    for (int64_t i = 0; i < n; ++i) {
      U r;
      if (B::edge(in[i * si], r)) out[i * so] = r;
    }
  } else {
    (void)ptr, (void)st, (void)n;
  }
}

template <typename T, class G>
struct OneDnnGeluEdges {
  G g;  // InOpMath<T, Gelu>
  C10_ALWAYS_INLINE T operator()(T x) const {
    if constexpr (sizeof(T) == 4 || sizeof(T) == 2) {
      using B = OneDnnGeluBits<T>;
      typename B::U bits, r;
      std::memcpy(&bits, &x, sizeof(T));
      if (C10_UNLIKELY(B::edge(bits, r))) {
        T y;
        std::memcpy(&y, &r, sizeof(T));
        return y;
      }
    }
    return g(x);
  }
  // the edge lanes noted by the vector loop, fixed up per chunk where there are any
  static constexpr bool kSplitsRows = true;
  template <class Loop, class VF>
  C10_ALWAYS_INLINE void split_row(char* const* ptr, const int64_t* st, int64_t n, const VF& vf, bool stream) const {
    constexpr int NARGS = Loop::NARGS;
    constexpr int64_t kChunk = 4096;  // a multiple of every vector loop's step
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t m = std::min(kChunk, n - i);
      char* chunk[NARGS];
      for (int k = 0; k < NARGS; ++k) chunk[k] = ptr[k] + i * st[k] * int64_t(sizeof(T));
      const OneDnnGeluWatch<T, VF> watch{vf};
      Loop::row(chunk, st, m, *this, watch, stream);
      if (C10_UNLIKELY(watch.seen)) onednn_gelu_edges<T>(chunk, st, m);
    }
  }
};

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
  using type =
      typename std::conditional<std::is_same<typename VecOf<F>::type, NoVec>::value, NoVec, VBindLeft<F, C>>::type;
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
  using type =
      typename std::conditional<std::is_same<typename VecOf<F>::type, NoVec>::value, NoVec, VBindRight<F, C>>::type;
};

// ---- bfloat16 gelu / silu / sigmoid with the AVX512-BF16 conversion ----------------------------
// In the AVX-512 build, on CPUs with AVX512-BF16 (and unless MYOPS_CPU_ISA asks for less), the
// float results of these three ops (their functors declare kHwBf16Rounding) are rounded to
// bfloat16 by vcvtne2ps2bf16 (one instruction per 32 values) instead of at::vec's integer rounding sequence; widening
// is a shift. Same round-to-nearest-even bits for every normal result, NaN written as 0xffff like the software path;
// the instruction flushes float denormal results (|r| < 1.2e-38) to zero where the software rounding keeps a bfloat16
// denormal, so 32 results holding a denormal take at::vec's rounding (sigmoid(-88.5) is one). The function carries
// its own target attribute, so the rest of the build runs on AVX-512 CPUs without BF16.
#if defined(CPU_CAPABILITY_AVX512) && defined(MYOPS_EW_HW_BF16) && defined(__GNUC__)
#define MYOPS_EW_HAVE_HW_BF16 1
inline bool hw_bf16() {
  static const bool ok = cpu_isa() >= CpuIsa::Avx512Bf16;
  return ok;
}
template <class T, class VF>
constexpr bool kHwBf16 = std::is_same<T, c10::BFloat16>::value && HwBf16Rounding<VF>::value;

template <class VF>
__attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c"))) int64_t
bf16_unary_hw(const c10::BFloat16* in, c10::BFloat16* out, int64_t n, const VF& vf) {
  int64_t i = 0;
  const __m512i all_ones = _mm512_set1_epi32(-1);
  for (; i + 32 <= n; i += 32) {
    const __m512i raw = _mm512_loadu_si512(in + i);
    const __m512 lo = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(raw)), 16));
    const __m512 hi =
        _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(raw, 1)), 16));
    const __m512 rlo = vf(Vectorized<float>(lo));
    const __m512 rhi = vf(Vectorized<float>(hi));
    if ((_mm512_fpclass_ps_mask(rlo, 0x20) | _mm512_fpclass_ps_mask(rhi, 0x20)) != 0) {
      // a denormal result, which the instruction flushes: at::vec's rounding keeps it (issue #56)
      const auto rounded = convert_float_bfloat16(Vectorized<float>(rlo), Vectorized<float>(rhi));
      rounded.store(out + i);
      continue;
    }
    __m512i r = (__m512i)_mm512_cvtne2ps_pbh(rhi, rlo);  // rlo in the low half
    const __mmask32 nan = static_cast<__mmask32>(_mm512_cmp_ps_mask(rlo, rlo, _CMP_UNORD_Q)) |
                          (static_cast<__mmask32>(_mm512_cmp_ps_mask(rhi, rhi, _CMP_UNORD_Q)) << 16);
    r = _mm512_mask_mov_epi16(r, nan, all_ones);
    _mm512_storeu_si512(out + i, r);
  }
  return i;
}
#endif

}  // namespace
}  // namespace myops

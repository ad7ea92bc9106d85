#pragma once
// The CPU elementwise kernels, compiled three times: by elementwise.cpp for the compiler's
// baseline (Vectorized<T> without SIMD: plain loops the compiler vectorizes), by
// elementwise_avx2.cpp with AVX2/FMA/F16C enabled (Vectorized<T> on 256-bit registers,
// hardware half conversions, the inline float math) and by elementwise_avx512.cpp for the
// floating dtypes on 512-bit registers (plus the AVX512-BF16 rounding of bfloat16 gelu /
// silu / sigmoid); elementwise.cpp picks one at run time (core/cpu_isa.h, MYOPS_CPU_ISA).
// Include only after defining MYOPS_CPU_ENTRY (the name of the entry point this copy defines).
//
// By concern, each in its own header, each including the one before:
//   elementwise/cpu/elementwise_cpu_common.h   headers, names in scope, grain size
//   elementwise/cpu/elementwise_simd_math.h    the vector forms of the functors and the inline float math
//   elementwise/cpu/elementwise_torch_order.h  where torch's kernels give other bits: ties, scalar tails,
//                                  oneDNN's gelu edges, AVX512-BF16 rounding
//   elementwise/cpu/elementwise_store.h        storage-type adaptors, casts and the store policy
//   elementwise/cpu/elementwise_loop.h         contiguous / strided / broadcast rows, run_same
//   elementwise/cpu/elementwise_kernels.h      (this file) the dtype dispatch and the entry point
#ifndef MYOPS_CPU_ENTRY
#error "define MYOPS_CPU_ENTRY before including elementwise/cpu/elementwise_kernels.h"
#endif

#include "elementwise/cpu/elementwise_loop.h"

namespace myops {
namespace {

#ifdef MYOPS_EW_FLOAT_ONLY
// The AVX-512 build: the vectorized ops on the floating dtypes only (see elementwise_avx512.cpp)
#define MYOPS_EW_ALL AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16
#define MYOPS_EW_NOBOOL AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16
#else
#define MYOPS_EW_ALL AT_EXPAND(AT_ALL_TYPES), at::kBool, at::kHalf, at::kBFloat16
#define MYOPS_EW_NOBOOL AT_EXPAND(AT_ALL_TYPES), at::kHalf, at::kBFloat16
#endif
#define MYOPS_EW_FLOAT AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16

// The vectorized part of a half / bfloat16 add with alpha != 1 (elementwise/cpu/add_alpha_torch_order.h):
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

// The kernel of kind K in this build (one per line of MYOPS_EW_KERNELS, myops/op_table.h). The
// generic one runs the plain functor K on every dtype of the kind's DTYPES (all operands of the
// result dtype); the kinds below specialize it.
template <EwKind K>
struct CpuKernel {
  template <typename T>
  static void run_dtype(const EwPlan& p, const EwParams&) {
    run_same<T, arity_of(K)>(p, typename FunctorOf<K>::type{});
  }
  static void run(const EwPlan& p, const EwParams& prm) {
    AT_DISPATCH_V2(p.dtype, kKindNames[static_cast<int>(K)], AT_WRAP([&] {
                     if constexpr (ew::in_dtypes<scalar_t>(dtypes_of(K))) {
                       CpuKernel::template run_dtype<scalar_t>(p, prm);
                     } else {
                       TORCH_CHECK(false, "myops: internal error: ", kKindNames[static_cast<int>(K)], " got dtype ",
                                   p.dtype);
                     }
                   }),
                   MYOPS_EW_ALL);
  }
};

template <>
template <typename T>
void CpuKernel<EwKind::Gelu>::run_dtype(const EwPlan& p, const EwParams& prm) {
  if constexpr (!std::is_same<T, double>::value) {
    if (prm.onednn_gelu) {
      // oneDNN's results at the edges of the range (OneDnnGeluEdges, OneDnnGeluWatch)
      const Gelu f{false};
      CpuLoop<T, T>::run(p, OneDnnGeluEdges<T, InOpMath<T, Gelu>>{{f}}, VGelu{f});
      return;
    }
  }
  run_same<T, 1>(p, Gelu{prm.gelu_tanh});
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
  AT_DISPATCH_V2(p.in_dtype[0], "myops.cast", AT_WRAP([&] { CpuLoop<Out, scalar_t>::run(p, CastTo<Out, scalar_t>{}); }),
                 MYOPS_EW_ALL);
}

template <>
template <typename T>
void CpuKernel<EwKind::Where>::run_dtype(const EwPlan& p, const EwParams&) {
  CpuLoop<T, bool, T, T>::run(p, WhereSelect<T>{});
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

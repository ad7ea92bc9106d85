// Binary elementwise ops on CUDA: the kinds of myops/op_table.h whose CUDA_UNIT is binary (add;
// sub is add with -alpha; mul). The rest (CUDA_UNIT div_pow_minmax: div, pow, maximum, minimum)
// live in elementwise_div_pow_minmax.cu so the two halves compile in parallel.
//
// The "binary16" variants (core/variants.h) of add / sub / mul with two float16 or bfloat16
// tensor operands (any layout or broadcast; a bound or mixed-dtype operand takes "float"):
//  * "float": each element converted to float, computed, rounded once (torch's opmath);
//  * "paired": each pair of a pack computed by one __hadd2_rn / __hsub2_rn / __hmul2_rn (sm_90:
//    add/sub/mul.f16x2 and .bf16x2), the odd element by the scalar __hadd_rn / ....
// Same bits: the paired instructions round the exact result once to the 16-bit format; torch
// rounds it to float, then to the 16-bit format. For +, - and * that double rounding is
// innocuous because float's 24 bits are >= 2p + 2 for p = 11 (float16) and p = 8 (bfloat16)
// (Figueroa, "When is double rounding innocuous?", 1995): float16 products are even exact in
// float; bfloat16 shares float's exponent range, and below it (float subnormals) the sum of two
// bfloat16 values is exact and no product of two 8-bit significands lies within float's rounding
// distance of a bfloat16 midpoint. A NaN result is the canonical NaN in both. add with alpha
// other than +-1 (one fused rounding in float) takes "float".
// Expected on an H200: "paired" for the broadcast cases (one 16-bit instruction per pair instead
// of two conversions, a float op and a conversion per element, in a kernel whose broadcast
// offsets already cost instructions per pack), no change where the copy is bandwidth-bound.
#include "elementwise/cuda/elementwise.cuh"
// after core/cuda/launch.h (the emulation's variant state)
#include "core/variants.h"

namespace myops {
namespace ew {
namespace cuda {

enum class Pair16 { kAdd, kSub, kMul };

// The 16-bit storage type's CUDA vector types.
template <typename T>
struct Cuda16;
template <>
struct Cuda16<c10::Half> {
  using one = __half;
  using two = __half2;
};
template <>
struct Cuda16<c10::BFloat16> {
  using one = __nv_bfloat16;
  using two = __nv_bfloat162;
};

// The "paired" functor: native 16-bit arithmetic, two elements per instruction in apply2. The
// storage values are moved bit for bit (memcpy: c10's conversions to the CUDA types exist only
// under nvcc, the emulation builds with the host compiler).
template <typename T, Pair16 P>
struct Paired16 {
  using one = typename Cuda16<T>::one;
  using two = typename Cuda16<T>::two;
  __device__ __forceinline__ T operator()(T a, T b) const {
    one x, y, r;
    memcpy(&x, &a, sizeof(T));
    memcpy(&y, &b, sizeof(T));
    if constexpr (P == Pair16::kAdd) {
      r = __hadd_rn(x, y);
    } else if constexpr (P == Pair16::kSub) {
      r = __hsub_rn(x, y);
    } else {
      r = __hmul_rn(x, y);
    }
    T out;
    memcpy(&out, &r, sizeof(T));
    return out;
  }
  // o, a, b: two elements each, 4-byte aligned (even offsets in a Pack)
  __device__ __forceinline__ void apply2(T* o, const T* a, const T* b) const {
    two x, y, r;
    memcpy(&x, a, sizeof(two));
    memcpy(&y, b, sizeof(two));
    if constexpr (P == Pair16::kAdd) {
      r = __hadd2_rn(x, y);
    } else if constexpr (P == Pair16::kSub) {
      r = __hsub2_rn(x, y);
    } else {
      r = __hmul2_rn(x, y);
    }
    memcpy(o, &r, sizeof(two));
  }
};

// The compute capability of `device` (major * 10 + minor), cached per device.
inline int arch_of(int device) {
  constexpr int kMaxDevices = 64;
  static std::once_flag once[kMaxDevices];
  static int cache[kMaxDevices];
  auto query = [device]() {
    int major = 0, minor = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return major * 10 + minor;
  };
  if (device < 0 || device >= kMaxDevices) return query();
  std::call_once(once[device], [&] { cache[device] = query(); });
  return cache[device];
}

// Runs P on the "paired" path when T is 16-bit, both operands are tensors of T and the variant
// is selected; false: the caller takes the "float" path.
template <typename T, Pair16 P>
bool launch_paired(const Desc& d) {
  if constexpr (std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>) {
    if (d.bind >= 0 || d.in_dtype[0] != d.dtype || d.in_dtype[1] != d.dtype) return false;
    if (cuda_variant("binary16", arch_of(d.device)) != "paired") return false;
    launch<T, T, T>(d, Paired16<T, P>{});
    return true;
  } else {
    return false;
  }
}

template <>
template <typename T>
void CudaKernel<EwKind::Add>::run_dtype(const Desc& d) {
  using C = opmath_t<T>;
  if (d.alpha_one) {
    if (launch_paired<T, Pair16::kAdd>(d)) return;
    launch_same<T, 2>(d, Plus{});
  } else {
    if constexpr (std::is_floating_point_v<C>) {  // sub: alpha -1, exactly
      if (host_value<C>(d.alpha) == C(-1) && launch_paired<T, Pair16::kSub>(d)) return;
    }
    launch_same<T, 2>(d, Add<C>{host_value<C>(d.alpha)});
  }
}

template <>
template <typename T>
void CudaKernel<EwKind::Mul>::run_dtype(const Desc& d) {
  if (launch_paired<T, Pair16::kMul>(d)) return;
  launch_same<T, 2>(d, Mul{});
}

void launch_binary(EwKind kind, const Desc& d) { launch_unit<CudaUnit::binary>(kind, d); }

}  // namespace cuda
}  // namespace ew
}  // namespace myops

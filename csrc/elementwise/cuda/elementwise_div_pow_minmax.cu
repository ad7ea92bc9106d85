// Binary elementwise ops on CUDA: the kinds of myops/op_table.h whose CUDA_UNIT is
// div_pow_minmax (div, pow, maximum, minimum; add and mul: elementwise_binary.cu).
#include "elementwise/cuda/elementwise.cuh"

namespace myops {
namespace ew {
namespace cuda {

template <>
template <typename T>
void CudaKernel<EwKind::Div>::run_dtype(const Desc& d) {
  using C = opmath_t<T>;
  if (d.bind == 1) {
    // a CPU scalar divisor: torch's CUDA kernel computes a * (1 / s); the glue bound 1 / s
    launch<T, T>(d, InOpMath<T, BindRight<Mul, C>>{{Mul{}, host_value<C>(d.bound)}});
  } else {
    launch_same<T, 2, /*kBindRight=*/false>(d, Div{});  // no a / s kernel: it spilled (double)
  }
}

// pow with the exponent on the host (a number, or a 0-d CPU tensor: folded) as torch's CUDA kernel
// computes it (PowKernel.cu, pow_tensor_scalar_kernel): 0.5, -0.5 and -1 run its sqrt, rsqrt and
// reciprocal kernels; 2, 3 and -2 are products in the dtype (for float16 / bfloat16 x * x is
// rounded to it before the third factor or the division); any other exponent, converted to the
// dtype, goes to the same CUDA pow (powf in float for float16 / bfloat16). torch tests 0.5, -0.5
// and -1 on the number itself, 2, 3 and -2 on its value in the dtype; the value in the dtype
// decides all six here (a number that only rounds to 0.5, -0.5 or -1 in the dtype, such as
// float16 ** 0.5001, takes the special case where torch calls pow).
enum class PowCase { general, sqrt, rsqrt, reciprocal, square, cube, inv_square };

inline PowCase pow_case(double e) {
  if (e == 0.5) return PowCase::sqrt;
  if (e == -0.5) return PowCase::rsqrt;
  if (e == -1) return PowCase::reciprocal;
  if (e == 2) return PowCase::square;
  if (e == 3) return PowCase::cube;
  if (e == -2) return PowCase::inv_square;
  return PowCase::general;
}

// T: the storage dtype (where torch's products round); C: the compute type.
template <typename T>
struct PowHostExponent {
  PowCase c;
  template <typename C>
  MYOPS_HD C operator()(C a, C e) const {
    switch (c) {
      case PowCase::sqrt:
        return Sqrt{}(a);
      case PowCase::rsqrt:
        return Rsqrt{}(a);
      case PowCase::reciprocal:
        return C(1) / a;
      case PowCase::square:
        return a * a;
      case PowCase::cube:
        return static_cast<C>(static_cast<T>(a * a)) * a;
      case PowCase::inv_square:
        return C(1) / static_cast<C>(static_cast<T>(a * a));
      default:
        return Pow{}(a, e);
    }
  }
};

template <>
template <typename T>
void CudaKernel<EwKind::Pow>::run_dtype(const Desc& d) {
  if (d.bind < 0 && d.folded[1]) {
    TORCH_INTERNAL_ASSERT(d.in_dtype[1] == d.dtype, "myops: pow's folded exponent is not in the result dtype");
    T e;
    std::memcpy(&e, d.scalar[1], sizeof(T));
    launch<T, T, T>(d, InOpMath<T, PowHostExponent<T>>{{pow_case(static_cast<double>(e))}});
  } else {
    launch_same<T, 2, /*kBindRight=*/false>(d, Pow{});
  }
}

void launch_div_pow_minmax(EwKind kind, const Desc& d) { launch_unit<CudaUnit::div_pow_minmax>(kind, d); }

}  // namespace cuda
}  // namespace ew
}  // namespace myops

#pragma once
// Elementwise functors shared by the CPU kernels (csrc/elementwise/cpu/elementwise*.cpp) and the CUDA
// template (csrc/elementwise/cuda/elementwise.cuh). A functor is a small struct whose operator() maps
// compute-type values (OpMath<T>: float for half/bfloat16, T otherwise) to one result; the
// kernels load storage values, convert them to the compute type, call the functor and round
// the result back to the storage type, as PyTorch's kernels do.
//
// Each formula is written to give PyTorch's result bit for bit where PyTorch is exact (same
// operation order, same NaN handling); where PyTorch's CPU and CUDA kernels differ in a corner
// case the formula follows each (guarded by __CUDA_ARCH__).
//
// Light header: c10 only, usable from .cpp and .cu files.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/TypeCast.h>

#include <cmath>
#include <type_traits>

#include "core/cuda_rules.h"
#include "core/macros.h"
#include "core/op_math.h"
#include "myops/op_table.h"

namespace myops {
namespace ew {

// EwKind (every kernel) and the ops: myops/op_table.h. The functor of kind K is the struct K.

// OpMath / opmath_t, the compute type: core/op_math.h.

// max / min of two non-NaN values as PyTorch computes them: on CUDA its kernels call
// ::max / ::min (fmaxf / fminf: ties between -0.0 and +0.0 are the hardware's), on CPU
// std::max / std::min (a tie returns the first operand).
template <typename T>
MYOPS_HD T ew_max(T a, T b) {
#if defined(MYOPS_CUDA_RULES)
  if constexpr (std::is_floating_point<T>::value) return cuda_fmax(a, b);
#endif
  return a < b ? b : a;
}
template <typename T>
MYOPS_HD T ew_min(T a, T b) {
#if defined(MYOPS_CUDA_RULES)
  if constexpr (std::is_floating_point<T>::value) return cuda_fmin(a, b);
#endif
  return b < a ? b : a;
}

template <typename T>
MYOPS_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return v != v;
  } else {
    return false;
  }
}

// ---- unary ------------------------------------------------------------------------------------

// relu(x) = max(x, 0) with NaN passed through (torch: clamp_min(x, 0)); on CPU relu(-0.0)
// is -0.0 as in PyTorch's CPU kernel, on CUDA it is fmax(-0.0, 0) as in PyTorch's CUDA kernel.
struct Relu {
  template <typename T>
  MYOPS_HD T operator()(T a) const {
    if constexpr (std::is_unsigned<T>::value) {
      return a;  // bool, uint8
    } else if constexpr (std::is_floating_point<T>::value) {
      return is_nan(a) ? a : ew_max(a, T(0));
    } else {
      return a < T(0) ? T(0) : a;
    }
  }
};

// gelu: exact (erf) or tanh approximation, computed in the compute type T (float or double).
struct Gelu {
  bool tanh_approx = false;
  template <typename T>
  MYOPS_HD T operator()(T x) const {
    if (tanh_approx) {
      const T kBeta = T(M_SQRT2 * M_2_SQRTPI * 0.5);
      const T kKappa = T(0.044715);
      T x_cube = x * x * x;
      T inner = kBeta * (x + kKappa * x_cube);
      return T(0.5) * x * (T(1) + std::tanh(inner));
    }
    const T kAlpha = T(M_SQRT1_2);
    return x * T(0.5) * (T(1) + std::erf(x * kAlpha));
  }
};

struct Sigmoid {
  template <typename T>
  MYOPS_HD T operator()(T x) const {
    return T(1) / (T(1) + std::exp(-x));
  }
};

struct Silu {
  template <typename T>
  MYOPS_HD T operator()(T x) const {
    return x / (T(1) + std::exp(-x));
  }
};

// |x| (integers wrap at their minimum, as in torch); on floats the sign bit cleared (NaN too).
struct Abs {
  template <typename T>
  MYOPS_HD T operator()(T a) const {
    if constexpr (std::is_floating_point<T>::value) {
      return std::fabs(a);
    } else if constexpr (std::is_unsigned<T>::value) {
      return a;
    } else {
      return a < T(0) ? T(-a) : a;
    }
  }
};

struct Neg {
  template <typename T>
  MYOPS_HD T operator()(T a) const {
    return T(-a);
  }
};

// exp, log, sqrt, 1 / sqrt, tanh: the C library's (correctly rounded or within an ulp: torch's
// scalar loops call the same; its vector loops SLEEF's, within its documented 1 ulp)
struct Exp {
  template <typename T>
  MYOPS_HD T operator()(T x) const {
    return std::exp(x);
  }
};

struct Log {
  template <typename T>
  MYOPS_HD T operator()(T x) const {
    return std::log(x);
  }
};

struct Sqrt {
  template <typename T>
  MYOPS_HD T operator()(T x) const {
    return std::sqrt(x);
  }
};

// 1 / sqrt(x); on CUDA PyTorch's rsqrt kernel calls CUDA's ::rsqrt (core/cuda_rules.h)
struct Rsqrt {
  template <typename T>
  MYOPS_HD T operator()(T x) const {
#if defined(MYOPS_CUDA_RULES)
    return cuda_rsqrt(x);
#else
    return T(1) / std::sqrt(x);
#endif
  }
};

struct Tanh {
  template <typename T>
  MYOPS_HD T operator()(T x) const {
    return std::tanh(x);
  }
};

// ---- binary -----------------------------------------------------------------------------------

// a + alpha * b (sub is add with -alpha), fused for floating types as PyTorch's vector
// (vec::fmadd) and CUDA (contracted) kernels compute it. bool: a || (b && alpha).
template <typename C>
struct Add {
  C alpha;
  MYOPS_HD C operator()(C a, C b) const {
    if constexpr (std::is_same<C, bool>::value) {
      return a || (b && alpha);
    } else if constexpr (std::is_floating_point<C>::value) {
      return std::fma(alpha, b, a);
    } else {
      return a + alpha * b;
    }
  }
};

// a + b: the alpha == 1 case, kept separate so no multiply is emitted.
struct Plus {
  template <typename C>
  MYOPS_HD C operator()(C a, C b) const {
    if constexpr (std::is_same<C, bool>::value) {
      return a || b;
    } else {
      return a + b;
    }
  }
};

struct Mul {
  template <typename C>
  MYOPS_HD C operator()(C a, C b) const {
    if constexpr (std::is_same<C, bool>::value) {
      return a && b;
    } else {
      return a * b;
    }
  }
};

// True division; only instantiated for floating compute types (integers are promoted).
struct Div {
  template <typename C>
  MYOPS_HD C operator()(C a, C b) const {
    return a / b;
  }
};

// maximum / minimum propagate NaN (either operand).
struct Maximum {
  template <typename C>
  MYOPS_HD C operator()(C a, C b) const {
    if constexpr (std::is_same<C, bool>::value) {
      return a || b;
    } else {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      return ew_max(a, b);
    }
  }
};

struct Minimum {
  template <typename C>
  MYOPS_HD C operator()(C a, C b) const {
    if constexpr (std::is_same<C, bool>::value) {
      return a && b;
    } else {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      return ew_min(a, b);
    }
  }
};

// a ** b (floating compute types)
struct Pow {
  template <typename C>
  MYOPS_HD C operator()(C a, C b) const {
    return std::pow(a, b);
  }
};

// ---- ternary ----------------------------------------------------------------------------------

// self + value * t1 * t2 (torch's operation order; the final add fused for floating types,
// as compilers contract it in PyTorch's kernels).
template <typename C>
struct Addcmul {
  C value;
  MYOPS_HD C operator()(C a, C b, C c) const {
    if constexpr (std::is_floating_point<C>::value) {
#if defined(MYOPS_CUDA_RULES)
      // torch's CUDA kernel (pointwise_op_impl): fma(b, c, a) for value 1, else
      // fma(value, b * c, a) with the product rounded
      return value == C(1) ? std::fma(b, c, a) : std::fma(value, b * c, a);
#else
      return std::fma(value * b, c, a);  // torch's CPU kernel: value * b rounded, then fused
#endif
    } else {
      return a + value * b * c;
    }
  }
};

// min(max(x, lo), hi); NaN in x, lo or hi gives NaN.
struct Clamp {
  template <typename C>
  MYOPS_HD C operator()(C x, C lo, C hi) const {
    if (is_nan(x)) return x;
    if (is_nan(lo)) return lo;
    if (is_nan(hi)) return hi;
    return ew_min(ew_max(x, lo), hi);
  }
};

// clamp with number bounds (clamp.Scalar; the bounds are never NaN here: the front end fills
// the result with NaN instead, as torch does). Element by element it is Clamp; only the CPU's
// vector form differs (torch's vec::clamp keeps a NaN input's bits where clamp.Tensor's
// vec::minimum / vec::maximum return all ones).
struct ClampScalar : Clamp {};

// ---- a scalar operand bound into a binary functor ----------------------------------------------

template <class F, typename C>
struct BindLeft {
  F f;
  C s;
  MYOPS_HD C operator()(C b) const { return f(s, b); }
};

template <class F, typename C>
struct BindRight {
  F f;
  C s;
  MYOPS_HD C operator()(C a) const { return f(a, s); }
};

// Whether a kernel of dtype set `d` (op_table.h: a kind's DTYPES) runs on element type T: the CPU
// and CUDA kernels' generic dispatch compile a kind only for these.
template <typename T>
constexpr bool in_dtypes(EwDtypes d) {
  return d == EwDtypes::All || (d == EwDtypes::NonBool && !std::is_same<T, bool>::value) ||
         (d == EwDtypes::Float && (std::is_floating_point<T>::value || std::is_same<T, c10::Half>::value ||
                                   std::is_same<T, c10::BFloat16>::value));
}

}  // namespace ew
}  // namespace myops

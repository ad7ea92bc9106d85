#pragma once
// The autograd formulas' helpers that call elementwise ops (through their handles,
// elementwise/elementwise_handles.h): the reduction of a broadcast gradient to its input's shape
// and dtype, and torch's maybe_multiply. For every family's autograd.cpp that needs them; the
// family-free machinery (with_autograd, Meta, ...) is core/autograd.h.
#include <ATen/ExpandUtils.h>

#include "core/autograd.h"
#include "elementwise/elementwise_handles.h"

namespace myops {
namespace autograd {

// `grad` summed over the dims it was broadcast along to `sizes`, in `dtype`.
inline Tensor reduce_to(Tensor grad, c10::SymIntArrayRef sizes, at::ScalarType dtype) {
  if (!grad.sym_sizes().equals(sizes)) grad = at::sum_to(grad, sizes, /*always_return_non_view=*/true);
  if (grad.scalar_type() != dtype) grad = ew::handles::cast().call(grad, dtype);
  return grad;
}

// `grad` reduced to the shape and dtype Meta::save kept under `key`.
inline Tensor reduce_saved(AutogradContext* ctx, const char* key, const Tensor& grad) {
  return reduce_to(grad, Meta::sizes(ctx, key), Meta::dtype(ctx, key));
}

// `grad` reduced to `input`'s shape and dtype.
inline Tensor reduce_like(const Tensor& grad, const Tensor& input) {
  return reduce_to(grad, input.sym_sizes(), input.scalar_type());
}

// torch's maybe_multiply(t, s) (the alpha / value factor of add's, sub's and addcmul's
// gradients): t itself when s is one, else t * s. Its test of "one" reads an integral s as an
// int64, so an int alpha past int64 (2^63 <= alpha < 2^64, which c10 holds as uint64) raises
// torch's overflow error there, in the backward, while the forward took it (as a double).
inline Tensor scaled(const Tensor& t, const c10::Scalar& s) {
  const bool one = s.isFloatingPoint() ? s.toDouble() == 1 : s.isIntegral(/*includeBool=*/true) && s.toLong() == 1;
  return one ? t : ew::handles::mul_scalar().call(t, s);
}

// -grad * alpha (sub's gradient of `other`), in torch's order: the negation first, then
// maybe_multiply. Not grad * -alpha: with an int alpha of 0 that gives +0 where torch's
// (-grad) * 0 gives -0, and -alpha may not exist in alpha's type (-2^63, a uint64).
inline Tensor negated_times(const Tensor& grad, const c10::Scalar& alpha) {
  return scaled(ew::handles::neg().call(grad), alpha);
}

}  // namespace autograd
}  // namespace myops

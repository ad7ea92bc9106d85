// What every Autograd kernel of myops shares (TORCH_LIBRARY_IMPL(myops, Autograd, m), one file
// per family beside this header):
//
// A call where no input needs a gradient (grad mode off, or no input requiring grad) goes
// straight to the device kernel: no Python, no graph node (with_autograd). Otherwise a
// torch::autograd::Function records the backward formula. The formulas are built from myops
// ops called through the dispatcher (so they run on myops' CPU/CUDA kernels and are themselves
// differentiable: double backward works) plus a few ATen ops (comparisons, sum_to, gelu's
// derivative).
#pragma once

#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/scalar_tensor.h>
#include <torch/autograd.h>

#include <string>
#include <utility>

#include "core/op_handles.h"

namespace myops {
namespace autograd {

using at::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::Function;
using torch::autograd::variable_list;

// ---- the myops ops the formulas call (through the dispatcher, autograd included) -----------

template <class Sig>
c10::TypedOperatorHandle<Sig> op_handle(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

// MYOPS_AUTOGRAD_OP(fn, "op", Sig): fn(), the typed handle of myops::op, looked up once
#define MYOPS_AUTOGRAD_OP(fn, name, Sig)                                     \
  const c10::TypedOperatorHandle<Sig>& fn() {                                \
    static const auto h = ::myops::autograd::op_handle<Sig>("myops::" name); \
    return h;                                                                \
  }

// Runs the device kernel of an op (everything below autograd).
template <class Sig, class... A>
Tensor below_autograd(const c10::TypedOperatorHandle<Sig>& op, A&&... a) {
  at::AutoDispatchBelowADInplaceOrView guard;
  return op.call(std::forward<A>(a)...);
}

inline bool requires_grad_of(const Tensor& t) { return t.requires_grad(); }
template <class T>
bool requires_grad_of(const T&) {
  return false;
}

// The Autograd kernel of an op: Function `Fn` records the graph node when grad mode is on and
// some tensor argument requires a gradient; otherwise the call goes straight to the kernel.
template <class Fn, class Sig, class... A>
Tensor with_autograd(const c10::TypedOperatorHandle<Sig>& op, const A&... a) {
  if (!at::GradMode::is_enabled() || !(requires_grad_of(a) || ...)) return below_autograd(op, a...);
  return Fn::apply(a...);
}

// 0-d CPU scalar of `like`'s dtype: folded into the kernel on any device.
inline Tensor scalar_of(double v, const Tensor& like) {
  return at::scalar_tensor(v, at::TensorOptions().dtype(like.scalar_type()));
}

// Shape and dtype of an input, kept for its gradient instead of the tensor itself.
struct Meta {
  static void save(AutogradContext* ctx, const char* key, const Tensor& t) {
    ctx->saved_data[std::string(key) + ".sizes"] = t.sym_sizes();
    ctx->saved_data[std::string(key) + ".dtype"] = static_cast<int64_t>(t.scalar_type());
  }
  // `grad` summed over the dims `key` was broadcast along, in `key`'s dtype.
  static Tensor reduce(AutogradContext* ctx, const char* key, Tensor grad) {
    auto sizes = ctx->saved_data[std::string(key) + ".sizes"].toSymIntVector();
    auto dtype = static_cast<at::ScalarType>(ctx->saved_data[std::string(key) + ".dtype"].toInt());
    return reduce_to(grad, sizes, dtype);
  }
  static Tensor reduce_to(Tensor grad, c10::SymIntArrayRef sizes, at::ScalarType dtype) {
    if (!grad.sym_sizes().equals(sizes)) grad = at::sum_to(grad, sizes, /*always_return_non_view=*/true);
    if (grad.scalar_type() != dtype) grad = ew::ops::cast().call(grad, dtype);
    return grad;
  }
};

inline Tensor reduce_like(const Tensor& grad, const Tensor& input) {
  return Meta::reduce_to(grad, input.sym_sizes(), input.scalar_type());
}

// torch's maybe_multiply(t, s) (the alpha / value factor of add's, sub's and addcmul's
// gradients): t itself when s is one, else t * s. Its test of "one" reads an integral s as an
// int64, so an int alpha past int64 (2^63 <= alpha < 2^64, which c10 holds as uint64) raises
// torch's overflow error there, in the backward, while the forward took it (as a double).
inline Tensor scaled(const Tensor& t, const c10::Scalar& s) {
  const bool one = s.isFloatingPoint() ? s.toDouble() == 1 : s.isIntegral(/*includeBool=*/true) && s.toLong() == 1;
  return one ? t : ew::ops::mul_scalar().call(t, s);
}

// -grad * alpha (sub's gradient of `other`), in torch's order: the negation first, then
// maybe_multiply. Not grad * -alpha: with an int alpha of 0 that gives +0 where torch's
// (-grad) * 0 gives -0, and -alpha may not exist in alpha's type (-2^63, a uint64).
inline Tensor negated_times(const Tensor& grad, const c10::Scalar& alpha) {
  return scaled(ew::ops::neg().call(grad), alpha);
}

}  // namespace autograd
}  // namespace myops

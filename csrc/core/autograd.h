// What every Autograd kernel of myops shares (TORCH_LIBRARY_IMPL(myops, Autograd, m), one file
// per family beside this header):
//
// A call where no input needs a gradient (grad mode off, or no input requiring grad) goes
// straight to the device kernel: no Python, no graph node (with_autograd). Otherwise a
// torch::autograd::Function records the backward formula. The formulas are built from myops
// ops called through the dispatcher (so they run on myops' CPU/CUDA kernels and are themselves
// differentiable: double backward works) plus a few ATen ops (comparisons, sum_to, gelu's
// derivative). This header names no family; the helpers that call the elementwise ops (the
// reduction of a broadcast gradient, torch's maybe_multiply) are elementwise/elementwise_grad.h.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/scalar_tensor.h>
#include <torch/autograd.h>

#include <string>
#include <utility>
#include <vector>

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

// Shape and dtype of an input, kept for its gradient instead of the tensor itself; the
// gradient's reduction to them (which casts with myops.cast) is elementwise/elementwise_grad.h's.
struct Meta {
  static void save(AutogradContext* ctx, const char* key, const Tensor& t) {
    ctx->saved_data[std::string(key) + ".sizes"] = t.sym_sizes();
    ctx->saved_data[std::string(key) + ".dtype"] = static_cast<int64_t>(t.scalar_type());
  }
  static std::vector<c10::SymInt> sizes(AutogradContext* ctx, const char* key) {
    return ctx->saved_data[std::string(key) + ".sizes"].toSymIntVector();
  }
  static at::ScalarType dtype(AutogradContext* ctx, const char* key) {
    return static_cast<at::ScalarType>(ctx->saved_data[std::string(key) + ".dtype"].toInt());
  }
};

}  // namespace autograd
}  // namespace myops

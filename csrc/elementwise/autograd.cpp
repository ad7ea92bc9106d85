// Autograd of the elementwise ops (the op table, myops/op_table.h): unary, a number operand
// (the Scalar overloads), binary and ternary. Each formula is torch's (derivatives.yaml), in
// torch's order, so gradients carry the same bits; the shared machinery is core/autograd.h, the
// helpers that call elementwise ops elementwise/elementwise_grad.h.
#include <ATen/ops/add.h>
#include <ATen/ops/div.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/gelu_backward.h>
#include <ATen/ops/log.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/rsub.h>
#include <ATen/ops/sgn.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sigmoid_backward.h>
#include <ATen/ops/silu_backward.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/tanh_backward.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <string>

#include "core/torch_version.h"
#include "elementwise/elementwise_grad.h"

namespace myops {
namespace {

using namespace myops::autograd;

// ---- unary ------------------------------------------------------------------------------------

// The unary ops of the table with the generic ENTRY (SIG unary): one Function, the formula per op. UnaryGrad<OP>
// says what the backward needs (the input, the result) and computes the gradient from the
// incoming one: torch's formula (derivatives.yaml), in torch's order (the same bits).
template <ew::EwOp OP>
struct UnaryGrad;

template <>
struct UnaryGrad<ew::EwOp::relu> {
  static constexpr bool kSelf = false, kResult = true;
  // torch's threshold_backward: zero where out <= 0, the gradient elsewhere (NaN included)
  static Tensor grad(const Tensor& g, const Tensor&, const Tensor& out) {
    return ew::handles::where().call(at::le(out, 0), scalar_of(0, g), g);
  }
};

template <>
struct UnaryGrad<ew::EwOp::silu> {
  static constexpr bool kSelf = true, kResult = false;
  // ATen's silu_backward (opmath inside), or its infinitely differentiable composite when the
  // backward itself is being recorded
  static Tensor grad(const Tensor& g, const Tensor& x, const Tensor&) {
    if (at::GradMode::is_enabled()) {
      auto s = at::sigmoid(x);
      return at::mul(at::mul(g, s), at::add(at::mul(x, at::rsub(s, 1.0)), 1.0));
    }
    return at::silu_backward(g, x);
  }
};

template <>
struct UnaryGrad<ew::EwOp::sigmoid> {
  static constexpr bool kSelf = false, kResult = true;
  // sigmoid_backward(grad, result): opmath inside, itself differentiable
  static Tensor grad(const Tensor& g, const Tensor&, const Tensor& out) { return at::sigmoid_backward(g, out); }
};

template <>
struct UnaryGrad<ew::EwOp::abs> {
  static constexpr bool kSelf = true, kResult = false;
  static Tensor grad(const Tensor& g, const Tensor& x, const Tensor&) { return at::mul(g, at::sgn(x)); }
};

template <>
struct UnaryGrad<ew::EwOp::neg> {
  static constexpr bool kSelf = false, kResult = false;
  static Tensor grad(const Tensor& g, const Tensor&, const Tensor&) { return at::neg(g); }
};

template <>
struct UnaryGrad<ew::EwOp::exp> {
  static constexpr bool kSelf = false, kResult = true;
  static Tensor grad(const Tensor& g, const Tensor&, const Tensor& out) { return at::mul(g, out); }
};

template <>
struct UnaryGrad<ew::EwOp::log> {
  static constexpr bool kSelf = true, kResult = false;
  static Tensor grad(const Tensor& g, const Tensor& x, const Tensor&) { return at::div(g, x); }
};

template <>
struct UnaryGrad<ew::EwOp::sqrt> {
  static constexpr bool kSelf = false, kResult = true;
  // grad / (2 * result)
  static Tensor grad(const Tensor& g, const Tensor&, const Tensor& out) { return at::div(g, at::mul(out, 2)); }
};

template <>
struct UnaryGrad<ew::EwOp::rsqrt> {
  static constexpr bool kSelf = false, kResult = true;
  // -0.5 * grad * result.pow(3)
  static Tensor grad(const Tensor& g, const Tensor&, const Tensor& out) {
    return at::mul(at::mul(g, -0.5), at::pow(out, 3));
  }
};

template <>
struct UnaryGrad<ew::EwOp::tanh> {
  static constexpr bool kSelf = false, kResult = true;
  static Tensor grad(const Tensor& g, const Tensor&, const Tensor& out) { return at::tanh_backward(g, out); }
};

template <ew::EwOp OP>
struct UnaryFn : Function<UnaryFn<OP>> {
  using G = UnaryGrad<OP>;
  static Tensor forward(AutogradContext* ctx, const Tensor& self) {
    auto out = below_autograd(ew::handle<OP>(), self);
    ctx->save_for_backward({G::kSelf ? self : Tensor(), G::kResult ? out : Tensor()});
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto saved = ctx->get_saved_variables();
    return {G::grad(g[0], saved[0], saved[1])};
  }
};

template <ew::EwOp OP>
Tensor unary_autograd(const Tensor& self) {
  return with_autograd<UnaryFn<OP>>(ew::handle<OP>(), self);
}

struct GeluFn : Function<GeluFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, c10::string_view approximate) {
    ctx->save_for_backward({self});
    ctx->saved_data["approximate"] = std::string(approximate);
    return below_autograd(ew::handles::gelu(), self, approximate);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto x = ctx->get_saved_variables()[0];
    // no myops op computes gelu's derivative: ATen's formula
    return {at::gelu_backward(g[0], x, ctx->saved_data["approximate"].toStringRef()), Tensor()};
  }
};

Tensor gelu_autograd(const Tensor& self, c10::string_view approximate) {
  return with_autograd<GeluFn>(ew::handles::gelu(), self, approximate);
}

// ---- a number operand (the Scalar overloads): only the tensor has a gradient ------------------

// The gradient of the tensor operand of an op with a number, torch's formulas (derivatives.yaml):
//   add.Scalar / sub.Scalar  grad                        add.ScalarSelf  alpha * grad
//   mul.Scalar               grad * other                sub.ScalarSelf  -alpha * grad
//   div.Scalar               grad / other                mul.ScalarSelf  grad * self
//                                                        div.ScalarSelf  -grad * ((self / other) / other)
// in the tensor's dtype. Tensor-first ops: Sig (Tensor, Scalar[, Scalar]); number-first ones:
// (Scalar, Tensor[, Scalar]). kTensor: the formula reads the tensor (saved for the backward).
// The Autograd kernels of SIG scalar / rscalar with the generic ENTRY are scalar_autograd<OP> /
// rscalar_autograd<OP>, below; the others' are written out.
template <ew::EwOp OP>
struct NumberGrad;
template <>
struct NumberGrad<ew::EwOp::add_scalar> {
  static constexpr bool kTensor = false;
  static Tensor grad(const Tensor& g, const Tensor&, const c10::Scalar&, const c10::Scalar&) { return g; }
};
template <>
struct NumberGrad<ew::EwOp::sub_scalar> : NumberGrad<ew::EwOp::add_scalar> {};
template <>
struct NumberGrad<ew::EwOp::mul_scalar> {
  static constexpr bool kTensor = false;
  static Tensor grad(const Tensor& g, const Tensor&, const c10::Scalar& s, const c10::Scalar&) {
    return ew::handles::mul_scalar().call(g, s);
  }
};
template <>
struct NumberGrad<ew::EwOp::div_scalar> {
  static constexpr bool kTensor = false;
  static Tensor grad(const Tensor& g, const Tensor&, const c10::Scalar& s, const c10::Scalar&) {
    return ew::handles::div_scalar().call(g, s);
  }
};
template <>
struct NumberGrad<ew::EwOp::add_scalar_self> {
  static constexpr bool kTensor = false;
  static Tensor grad(const Tensor& g, const Tensor&, const c10::Scalar&, const c10::Scalar& alpha) {
    return scaled(g, alpha);
  }
};
template <>
struct NumberGrad<ew::EwOp::sub_scalar_self> {
  static constexpr bool kTensor = false;
  static Tensor grad(const Tensor& g, const Tensor&, const c10::Scalar&, const c10::Scalar& alpha) {
    return negated_times(g, alpha);
  }
};
template <>
struct NumberGrad<ew::EwOp::mul_scalar_self> : NumberGrad<ew::EwOp::mul_scalar> {};
template <>
struct NumberGrad<ew::EwOp::div_scalar_self> {
  static constexpr bool kTensor = true;
  static Tensor grad(const Tensor& g, const Tensor& other, const c10::Scalar& s, const c10::Scalar&) {
    auto q = ew::handles::div().call(ew::handles::div_scalar_self().call(s, other), other);
    return ew::handles::mul_scalar().call(ew::handles::mul().call(g, q), -1);
  }
};

// kNumberFirst: the op takes (number, tensor[, alpha]) (ScalarSelf), else (tensor, number[, alpha])
template <ew::EwOp OP, bool kNumberFirst>
struct NumberFn : Function<NumberFn<OP, kNumberFirst>> {
  static constexpr bool kNeedsTensor = NumberGrad<OP>::kTensor;
  template <class... A>
  static Tensor run(const Tensor& t, const c10::Scalar& s, const A&... alpha) {
    if constexpr (kNumberFirst) {
      return below_autograd(ew::handle<OP>(), s, t, alpha...);
    } else {
      return below_autograd(ew::handle<OP>(), t, s, alpha...);
    }
  }
  template <class... A>
  static Tensor forward(AutogradContext* ctx, const Tensor& t, const c10::Scalar& s, const A&... alpha) {
    Meta::save(ctx, "t", t);
    if (kNeedsTensor) ctx->save_for_backward({t});
    ctx->saved_data["number"] = s;
    ctx->saved_data["alpha"] = c10::Scalar(alpha...);
    return run(t, s, alpha...);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor t = kNeedsTensor ? ctx->get_saved_variables()[0] : Tensor();
    auto gt = NumberGrad<OP>::grad(g[0], t, ctx->saved_data["number"].toScalar(), ctx->saved_data["alpha"].toScalar());
    return {reduce_saved(ctx, "t", gt), Tensor(), Tensor()};
  }
};

// The Autograd kernels: NumberFn's apply takes (tensor, number[, alpha]) in that order.
template <ew::EwOp OP, bool kNumberFirst, class... A>
Tensor number_autograd_impl(const Tensor& t, const c10::Scalar& s, const A&... alpha) {
  using Fn = NumberFn<OP, kNumberFirst>;
  if (!at::GradMode::is_enabled() || !t.requires_grad()) return Fn::run(t, s, alpha...);
  return Fn::apply(t, s, alpha...);
}
// the generic ENTRY: SIG scalar (NAME.Scalar) and rscalar (NAME.ScalarSelf)
template <ew::EwOp OP>
Tensor scalar_autograd(const Tensor& self, const c10::Scalar& other) {
  return number_autograd_impl<OP, false>(self, other);
}
template <ew::EwOp OP>
Tensor rscalar_autograd(const c10::Scalar& self, const Tensor& other) {
  return number_autograd_impl<OP, true>(other, self);
}
// the own ones
Tensor add_scalar_autograd(const Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha) {
  return number_autograd_impl<ew::EwOp::add_scalar, false>(self, other, alpha);
}
Tensor sub_scalar_autograd(const Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha) {
  return number_autograd_impl<ew::EwOp::sub_scalar, false>(self, other, alpha);
}
Tensor add_scalar_self_autograd(const c10::Scalar& self, const Tensor& other, const c10::Scalar& alpha) {
  return number_autograd_impl<ew::EwOp::add_scalar_self, true>(other, self, alpha);
}
Tensor sub_scalar_self_autograd(const c10::Scalar& self, const Tensor& other, const c10::Scalar& alpha) {
  return number_autograd_impl<ew::EwOp::sub_scalar_self, true>(other, self, alpha);
}
Tensor mul_scalar_self_autograd(const c10::Scalar& self, const Tensor& other) {
  return number_autograd_impl<ew::EwOp::mul_scalar_self, true>(other, self);
}

// myops::mul_scalar, kept for compatibility: mul.Scalar under its old name (CompositeImplicitAutograd)
Tensor mul_scalar_compat(const Tensor& self, const c10::Scalar& other) {
  return ew::handles::mul_scalar().call(self, other);
}

struct CastFn : Function<CastFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, c10::ScalarType dtype) {
    ctx->saved_data["dtype"] = static_cast<int64_t>(self.scalar_type());
    return below_autograd(ew::handles::cast(), self, dtype);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    return {ew::handles::cast().call(g[0], dtype), Tensor()};
  }
};

Tensor cast_autograd(const Tensor& self, c10::ScalarType dtype) {
  // an integral result is not differentiable
  if (!at::isFloatingType(dtype)) return below_autograd(ew::handles::cast(), self, dtype);
  return with_autograd<CastFn>(ew::handles::cast(), self, dtype);
}

// ---- binary -----------------------------------------------------------------------------------

// add and sub: d/dself = grad, d/dother = ±alpha * grad
template <bool kSub>
struct AddSubFn : Function<AddSubFn<kSub>> {
  static const auto& op() { return kSub ? ew::handles::sub() : ew::handles::add(); }
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
    Meta::save(ctx, "self", self);
    Meta::save(ctx, "other", other);
    ctx->saved_data["alpha"] = alpha;
    return below_autograd(op(), self, other, alpha);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor gs, go;
    auto alpha = ctx->saved_data["alpha"].toScalar();
    if (ctx->needs_input_grad(0)) gs = reduce_saved(ctx, "self", g[0]);
    if (ctx->needs_input_grad(1)) {
      go = kSub ? negated_times(g[0], alpha) : scaled(g[0], alpha);
      go = reduce_saved(ctx, "other", go);
    }
    return {gs, go, Tensor()};
  }
};

Tensor add_autograd(const Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
  return with_autograd<AddSubFn<false>>(ew::handles::add(), self, other, alpha);
}

Tensor sub_autograd(const Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
  return with_autograd<AddSubFn<true>>(ew::handles::sub(), self, other, alpha);
}

// The binary ops of the table with the generic ENTRY (SIG binary): one Function, the formulas
// per op. BinaryGrad<OP> says what the backward needs (the operands, the result) and computes
// each operand's gradient from the incoming one (before the sum over broadcast dims): torch's
// formula (derivatives.yaml), in torch's order (the same bits).
template <ew::EwOp OP>
struct BinaryGrad;

template <>
struct BinaryGrad<ew::EwOp::mul> {
  static constexpr bool kSelf = true, kOther = true, kResult = false;
  // self: grad * other; other: grad * self
  static Tensor self_grad(const Tensor& g, const Tensor&, const Tensor& other, const Tensor&) {
    return ew::handles::mul().call(g, other);
  }
  static Tensor other_grad(const Tensor& g, const Tensor& self, const Tensor&, const Tensor&) {
    return ew::handles::mul().call(g, self);
  }
};

template <>
struct BinaryGrad<ew::EwOp::div> {
  static constexpr bool kSelf = true, kOther = true, kResult = false;
  // self: grad / other
  static Tensor self_grad(const Tensor& g, const Tensor&, const Tensor& other, const Tensor&) {
    return ew::handles::div().call(g, other);
  }
  // other: d(a/b)/db = -a / b^2, in torch's order: -g * ((a / b) / b) (b * b would overflow in
  // half for |b| > 255.9)
  static Tensor other_grad(const Tensor& g, const Tensor& self, const Tensor& other, const Tensor&) {
    auto q = ew::handles::div().call(ew::handles::div().call(self, other), other);
    return ew::handles::mul_scalar().call(ew::handles::mul().call(g, q), -1);
  }
};

template <ew::EwOp OP>
struct BinaryFn : Function<BinaryFn<OP>> {
  using G = BinaryGrad<OP>;
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const Tensor& other) {
    auto out = below_autograd(ew::handle<OP>(), self, other);
    // an operand the formulas do not read: its shape and dtype only (Meta), for the sum
    if (!G::kSelf) Meta::save(ctx, "self", self);
    if (!G::kOther) Meta::save(ctx, "other", other);
    ctx->save_for_backward({G::kSelf ? self : Tensor(), G::kOther ? other : Tensor(), G::kResult ? out : Tensor()});
    return out;
  }
  // `grad` summed to operand `key` (saved, or its Meta)
  static Tensor reduce(AutogradContext* ctx, const char* key, const Tensor& saved, const Tensor& grad) {
    return saved.defined() ? reduce_like(grad, saved) : reduce_saved(ctx, key, grad);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto saved = ctx->get_saved_variables();
    const auto &self = saved[0], &other = saved[1], &out = saved[2];
    Tensor gs, go;
    if (ctx->needs_input_grad(0)) gs = reduce(ctx, "self", self, G::self_grad(g[0], self, other, out));
    if (ctx->needs_input_grad(1)) go = reduce(ctx, "other", other, G::other_grad(g[0], self, other, out));
    return {gs, go};
  }
};

template <ew::EwOp OP>
Tensor binary_autograd(const Tensor& self, const Tensor& other) {
  return with_autograd<BinaryFn<OP>>(ew::handle<OP>(), self, other);
}

// The pattern of torch's gradients for maximum / minimum and clamp with tensor bounds
// (torch >= 2.14): kept = where(tie, grad / 2, grad), then the losing elements zeroed in place
// (masked_fill_). The gradient has the where's layout (its condition's and grad's), and a
// broadcast operand's gradient is summed in that order: a where that zeroes them instead would
// take the layout of the losers' mask too, which can differ (another summation order: a float32
// or float16 gradient 1 ulp off).
Tensor zero_where(Tensor kept, const Tensor& loses) { return kept.masked_fill_(loses, 0); }

// maximum / minimum: the gradient goes to the winner; ties split it in half, as PyTorch does.
// PyTorch masks out the loser (not "keeps the winner"), so where either operand is NaN both
// get the full gradient.
template <bool kMax>
struct MinMaxFn : Function<MinMaxFn<kMax>> {
  static const auto& op() { return kMax ? ew::handles::maximum() : ew::handles::minimum(); }
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const Tensor& other) {
    ctx->save_for_backward({self, other});
    return below_autograd(op(), self, other);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto saved = ctx->get_saved_variables();
    const auto &self = saved[0], &other = saved[1];
    auto half = ew::handles::mul_scalar().call(g[0], 0.5);
    auto kept = ew::handles::where().call(at::eq(self, other), half, g[0]);
    const bool both = ctx->needs_input_grad(0) && ctx->needs_input_grad(1);
    Tensor gs, go;
    if (ctx->needs_input_grad(0)) {
      auto loses = kMax ? at::lt(self, other) : at::gt(self, other);
      gs = reduce_like(zero_where(both ? kept.clone() : kept, loses), self);
    }
    if (ctx->needs_input_grad(1)) {
      auto loses = kMax ? at::gt(self, other) : at::lt(self, other);
      go = reduce_like(zero_where(kept, loses), other);
    }
    return {gs, go};
  }
};

Tensor maximum_autograd(const Tensor& self, const Tensor& other) {
  return with_autograd<MinMaxFn<true>>(ew::handles::maximum(), self, other);
}

Tensor minimum_autograd(const Tensor& self, const Tensor& other) {
  return with_autograd<MinMaxFn<false>>(ew::handles::minimum(), self, other);
}

// pow (torch's pow_backward_self / pow_backward_exponent, FunctionsManual.cpp): self gets
// grad * exponent * self ** (exponent - 1), zero where exponent == 0; exponent gets
// grad * result * log(self), zero where self == 0 and exponent >= 0.
struct PowFn : Function<PowFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const Tensor& exponent) {
    auto out = below_autograd(ew::handles::pow(), self, exponent);
    ctx->save_for_backward({self, exponent, out});
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto saved = ctx->get_saved_variables();
    const auto &self = saved[0], &exponent = saved[1], &out = saved[2];
    auto z = scalar_of(0, g[0]);
    Tensor gs, ge;
    if (ctx->needs_input_grad(0)) {
      auto d = at::mul(g[0], at::mul(exponent, at::pow(self, at::sub(exponent, 1))));
      gs = reduce_like(at::where(at::eq(exponent, 0.0), z, d), self);
    }
    if (ctx->needs_input_grad(1)) {
      auto self_ = self.to(at::result_type(self, exponent));
      auto rl = at::mul(out, at::log(self_));
      ge = reduce_like(at::mul(g[0], at::where(at::ge(exponent, 0), at::where(at::eq(self_, 0), z, rl), rl)), exponent);
    }
    return {gs, ge};
  }
};

Tensor pow_autograd(const Tensor& self, const Tensor& exponent) {
  return with_autograd<PowFn>(ew::handles::pow(), self, exponent);
}

// pow.Scalar (torch's pow_backward): zero for exponent 0, else grad * (exponent * self ** (exponent - 1))
struct PowScalarFn : Function<PowScalarFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const c10::Scalar& exponent) {
    ctx->save_for_backward({self});
    ctx->saved_data["exponent"] = exponent;
    return below_autograd(ew::handles::pow_scalar(), self, exponent);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    const auto self = ctx->get_saved_variables()[0];
    const double e = ctx->saved_data["exponent"].toScalar().toDouble();
    if (e == 0.0) return {at::zeros_like(self, at::MemoryFormat::Contiguous), Tensor()};
    return {at::mul(g[0], at::mul(at::pow(self, e - 1), e)), Tensor()};
  }
};

Tensor pow_scalar_autograd(const Tensor& self, const c10::Scalar& exponent) {
  return with_autograd<PowScalarFn>(ew::handles::pow_scalar(), self, exponent);
}

// ---- ternary ----------------------------------------------------------------------------------

struct WhereFn : Function<WhereFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& cond, const Tensor& self, const Tensor& other) {
    ctx->save_for_backward({cond});
    Meta::save(ctx, "self", self);
    Meta::save(ctx, "other", other);
    return below_autograd(ew::handles::where(), cond, self, other);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto cond = ctx->get_saved_variables()[0];
    auto z = scalar_of(0, g[0]);
    Tensor gs, go;
    if (ctx->needs_input_grad(1)) gs = reduce_saved(ctx, "self", ew::handles::where().call(cond, g[0], z));
    if (ctx->needs_input_grad(2)) go = reduce_saved(ctx, "other", ew::handles::where().call(cond, z, g[0]));
    return {Tensor(), gs, go};
  }
};

Tensor where_autograd(const Tensor& cond, const Tensor& self, const Tensor& other) {
  return with_autograd<WhereFn>(ew::handles::where(), cond, self, other);
}

// where.ScalarSelf / where.ScalarOther: the tensor's gradient is where's (the number has none)
template <bool kNumberFirst>
struct WhereNumberFn : Function<WhereNumberFn<kNumberFirst>> {
  static Tensor run(const Tensor& cond, const Tensor& t, const c10::Scalar& s) {
    if constexpr (kNumberFirst) {
      return below_autograd(ew::handles::where_scalar_self(), cond, s, t);
    } else {
      return below_autograd(ew::handles::where_scalar_other(), cond, t, s);
    }
  }
  static Tensor forward(AutogradContext* ctx, const Tensor& cond, const Tensor& t, const c10::Scalar& s) {
    ctx->save_for_backward({cond});
    Meta::save(ctx, "t", t);
    return run(cond, t, s);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto cond = ctx->get_saved_variables()[0];
    auto z = scalar_of(0, g[0]);
    auto gt = kNumberFirst ? ew::handles::where().call(cond, z, g[0]) : ew::handles::where().call(cond, g[0], z);
    return {Tensor(), reduce_saved(ctx, "t", gt), Tensor()};
  }
};

Tensor where_scalar_self_autograd(const Tensor& cond, const c10::Scalar& self, const Tensor& other) {
  if (!at::GradMode::is_enabled() || !other.requires_grad()) return WhereNumberFn<true>::run(cond, other, self);
  return WhereNumberFn<true>::apply(cond, other, self);
}

Tensor where_scalar_other_autograd(const Tensor& cond, const Tensor& self, const c10::Scalar& other) {
  if (!at::GradMode::is_enabled() || !self.requires_grad()) return WhereNumberFn<false>::run(cond, self, other);
  return WhereNumberFn<false>::apply(cond, self, other);
}

// where.Scalar: no differentiable operand
Tensor where_scalar_autograd(const Tensor& cond, const c10::Scalar& self, const c10::Scalar& other) {
  return below_autograd(ew::handles::where_scalar(), cond, self, other);
}

struct AddcmulFn : Function<AddcmulFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const Tensor& t1, const Tensor& t2,
                        const c10::Scalar& value) {
    Meta::save(ctx, "self", self);
    ctx->save_for_backward({t1, t2});
    ctx->saved_data["value"] = value;
    return below_autograd(ew::handles::addcmul(), self, t1, t2, value);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto saved = ctx->get_saved_variables();
    const auto &t1 = saved[0], &t2 = saved[1];
    const auto value = ctx->saved_data["value"].toScalar();
    Tensor g0, g1, g2;
    // torch's order: grad * (t2 * value), grad * (t1 * value); a plain product, not
    // maybe_multiply (an int value past int64 does not raise here), skipped for a value of 1
    auto times_value = [&value](const Tensor& t) {
      return !value.isBoolean() && value.equal(1) ? t : ew::handles::mul_scalar().call(t, value);
    };
    if (ctx->needs_input_grad(0)) g0 = reduce_saved(ctx, "self", g[0]);
    if (ctx->needs_input_grad(1)) g1 = reduce_like(ew::handles::mul().call(g[0], times_value(t2)), t1);
    if (ctx->needs_input_grad(2)) g2 = reduce_like(ew::handles::mul().call(g[0], times_value(t1)), t2);
    return {g0, g1, g2, Tensor()};
  }
};

Tensor addcmul_autograd(const Tensor& self, const Tensor& t1, const Tensor& t2, const c10::Scalar& value) {
  return with_autograd<AddcmulFn>(ew::handles::addcmul(), self, t1, t2, value);
}

// clamp's gradients follow the torch this library is built against (core/torch_version.h):
// torch 2.14 changed both formulas (pytorch#185927, #191142; checked against the 2.11, 2.12,
// 2.13, 2.14.0 and 2.14.1 wheels).

// Tensor bounds (clamp.Tensor).
// torch >= 2.14: self gets the gradient where it lies within [min, max] (NaN included), the
//   bound it equals shares it half and half when min < max; min gets it where
//   self < min <= max, max where self > max >= min or where min > max (the result is then max).
// torch <= 2.13: self where min <= self <= max (NaN in any of the three: none), min where
//   self < min < max, max where self > max or max < min; no tie is split.
struct ClampFn : Function<ClampFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const Tensor& lo, const Tensor& hi) {
    ctx->save_for_backward({self, lo, hi});
    return below_autograd(ew::handles::clamp(), self, lo, hi);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto saved = ctx->get_saved_variables();
    const auto &self = saved[0], &lo = saved[1], &hi = saved[2];
    auto lo_lt_hi = at::lt(lo, hi);
    Tensor g0, g1, g2;
#if MYOPS_TORCH_AT_LEAST(2, 14)
    // torch's masks, in its order (the where conditions set the layout: zero_where)
    auto half = ew::handles::mul_scalar().call(g[0], 0.5);
    auto lo_eq_hi = at::eq(lo, hi);
    if (ctx->needs_input_grad(0)) {
      auto tie = at::logical_and(at::logical_or(at::eq(self, lo), at::eq(self, hi)), lo_lt_hi);
      auto out = at::logical_or(at::lt(self, lo), at::gt(self, hi));
      g0 = reduce_like(zero_where(ew::handles::where().call(tie, half, g[0]), out), self);
    }
    if (ctx->needs_input_grad(1)) {
      // min wins where self <= min < max (half of it at self == min) or self < min == max
      auto wins =
          at::logical_or(at::logical_and(lo_lt_hi, at::le(self, lo)), at::logical_and(lo_eq_hi, at::lt(self, lo)));
      g1 = reduce_like(zero_where(ew::handles::where().call(at::eq(self, lo), half, g[0]), at::logical_not(wins)), lo);
    }
    if (ctx->needs_input_grad(2)) {
      // max wins where self >= max > min (half of it at self == max), max < min, or self > max == min
      auto wins = at::logical_or(at::logical_or(at::logical_and(lo_lt_hi, at::ge(self, hi)), at::lt(hi, lo)),
                                 at::logical_and(lo_eq_hi, at::gt(self, hi)));
      auto tie = at::logical_and(at::eq(self, hi), lo_lt_hi);
      g2 = reduce_like(zero_where(ew::handles::where().call(tie, half, g[0]), at::logical_not(wins)), hi);
    }
#else
    auto z = scalar_of(0, g[0]);
    if (ctx->needs_input_grad(0)) {
      auto in = at::logical_and(at::ge(self, lo), at::le(self, hi));
      g0 = reduce_like(ew::handles::where().call(in, g[0], z), self);
    }
    if (ctx->needs_input_grad(1)) {
      g1 = reduce_like(ew::handles::where().call(at::logical_and(at::lt(self, lo), lo_lt_hi), g[0], z), lo);
    }
    if (ctx->needs_input_grad(2)) {
      g2 = reduce_like(ew::handles::where().call(at::logical_or(at::gt(self, hi), at::lt(hi, lo)), g[0], z), hi);
    }
#endif
    return {g0, g1, g2};
  }
};

Tensor clamp_autograd(const Tensor& self, const Tensor& lo, const Tensor& hi) {
  return with_autograd<ClampFn>(ew::handles::clamp(), self, lo, hi);
}

// Number bounds (clamp.Scalar): only self has a gradient. torch >= 2.14: where
// min < self < max (the minimum-norm subgradient: none at a bound); torch <= 2.13: where
// min <= self <= max. NaN in self or a bound: none. A missing bound does not restrict.
struct ClampScalarFn : Function<ClampScalarFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const std::optional<c10::Scalar>& lo,
                        const std::optional<c10::Scalar>& hi) {
    ctx->save_for_backward({self});
    if (lo) ctx->saved_data["min"] = *lo;
    if (hi) ctx->saved_data["max"] = *hi;
    return below_autograd(ew::handles::clamp_scalar(), self, lo, hi);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    const auto self = ctx->get_saved_variables()[0];
    Tensor in;
    auto both = [&](const Tensor& m) { in = in.defined() ? at::logical_and(in, m) : m; };
#if MYOPS_TORCH_AT_LEAST(2, 14)
    if (ctx->saved_data.count("min")) both(at::gt(self, ctx->saved_data["min"].toScalar()));
    if (ctx->saved_data.count("max")) both(at::lt(self, ctx->saved_data["max"].toScalar()));
#else
    if (ctx->saved_data.count("min")) both(at::ge(self, ctx->saved_data["min"].toScalar()));
    if (ctx->saved_data.count("max")) both(at::le(self, ctx->saved_data["max"].toScalar()));
#endif
    return {reduce_like(ew::handles::where().call(in, g[0], scalar_of(0, g[0])), self), Tensor(), Tensor()};
  }
};

Tensor clamp_scalar_autograd(const Tensor& self, const std::optional<c10::Scalar>& lo,
                             const std::optional<c10::Scalar>& hi) {
  return with_autograd<ClampScalarFn>(ew::handles::clamp_scalar(), self, lo, hi);
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, Autograd, m) {
  using namespace myops;
  // every op of the elementwise table (myops/op_table.h), by its SIG's ENTRY
  // (myops/op_signatures.h): generic, <SIG>_autograd<OP> (unary_autograd, binary_autograd,
  // scalar_autograd, rscalar_autograd; the formulas: UnaryGrad<OP>, BinaryGrad<OP>,
  // NumberGrad<OP>); own, FN_autograd (written out by tools/gen_ops_elementwise.py)
#include "elementwise/generated/autograd.inc"
}

// myops::mul_scalar, the compatibility alias of mul.Scalar: composite (autograd, fake and the
// device kernels are mul.Scalar's)
TORCH_LIBRARY_IMPL(myops, CompositeImplicitAutograd, m) { m.impl("mul_scalar", &myops::mul_scalar_compat); }

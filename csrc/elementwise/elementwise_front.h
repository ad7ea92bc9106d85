#pragma once
// The elementwise ops' front ends, shared by the CPU and CUDA registrations: each is the op's
// rule (elementwise/elementwise_rules.h: the checks, PyTorch's result dtype and device, the
// operands), then its run: planning (elementwise/elementwise_host.h) and one call into the
// backend, a type with
//   static void run(EwKind, const EwPlan&, const EwParams&);   // computes plan.out
//   static at::Tensor cast(const at::Tensor&, at::ScalarType);  // self.to(dtype) on its device
//   static constexpr bool kCpuRules;  // PyTorch's CPU rules (true) or its CUDA rules (false)
// kCpuRules is true exactly for the CPU backend; it is its own constant (not the tensors'
// device) so that the CUDA glue keeps its rules when the CUDA emulation runs it on CPU tensors.
// Used from .cpp files only.
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/native/TypeProperties.h>
#include <c10/core/DefaultDtype.h>
#include <c10/util/string_view.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>

#include "elementwise/elementwise_host.h"
#include "elementwise/elementwise_rules.h"
#include "core/torch_version.h"

namespace myops {
namespace ew {

// ---- Python numbers on CUDA ----------------------------------------------------------------
// torch converts a Python number operand differently on its two backends, and myops follows the
// backend's (kCpuRules below; the device, not the torch version, decides):
// - a number operand of add / sub / mul / div is aten's wrapped number, a 0-d CPU tensor of the
//   number's own type (bool, int64, double; uint64 for an int in [2^63, 2^64)). torch's CPU
//   TensorIterator casts it to the common dtype first (copy semantics, no range check: a double
//   past float's range is inf); its CUDA kernels read it unconverted with an unchecked
//   fetch_and_cast (iter.scalar_value<opmath_t>: an int wraps, uint64 included), and its CUDA
//   div by a CPU scalar multiplies by 1 / b computed in double from that value and rounded once
//   to opmath (BinaryDivTrueKernel.cu since pytorch#169507: x / 1e39 is x * 1e-39, not x * 0).
// - the number of where.ScalarSelf / ScalarOther is at::scalar_tensor(number, result dtype) on the
//   tensor's device: a CPU fill (half / bfloat16 round, to inf past their range; integers are
//   checked), a CUDA fill that converts with the checked Scalar::to<dtype> (70000 or even 65519
//   for half raises torch's overflow error). A uint64 result (two ints, one past int64) has no
//   CUDA where kernel: NotImplementedError.
// - add / sub's alpha and addcmul's value: param_to below, converted before the kernel looks at
//   the number of elements (an empty input checks it too).
// - sub's bool check is aten's own sub_check (the exception type changed between torch versions:
//   RuntimeError in 2.11, NotImplementedError in 2.14), the same on both backends.

// An op's number parameter (add / sub's alpha, addcmul's value) as torch's kernels convert it,
// with c10's checked Scalar::to (torch's overflow error), into the type each one computes with:
// its CPU add to the storage type (half / bfloat16 included), its CUDA addcmul to CUDA's
// accumulate type (int64 for every integral dtype: 300 fits an int8 addcmul there, wrapping as
// its int64 arithmetic truncated to int8 does), every other kernel to opmath. Returned in opmath.
template <typename scalar_t>
opmath_t<scalar_t> param_to(EwKind kind, bool cpu_rules, const c10::Scalar& v) {
  using C = opmath_t<scalar_t>;
  if (cpu_rules && kind == EwKind::Add) return static_cast<C>(v.to<scalar_t>());
  if (!cpu_rules && kind == EwKind::Addcmul) return static_cast<C>(v.to<at::acc_type<scalar_t, /*is_cuda=*/true>>());
  return v.to<C>();
}

struct EwParams {
  c10::Scalar alpha = 1;   // add/sub: alpha (sub passes -alpha); addcmul: value
  bool gelu_tanh = false;  // gelu approximate='tanh'
  // gelu (erf form) where torch's CPU gelu runs oneDNN's JIT kernel (TorchCpuGelu::OneDnnJit):
  // its results at the edges of the range follow that kernel's
  bool onednn_gelu = false;
};

// Which kernel torch's CPU gelu (approximate='none') runs on `self`. ATen's Activation.cpp
// (use_mkldnn) sends it to oneDNN's eltwise_gelu_erf when oneDNN is on and `self` is contiguous
// (torch's test, which skips size-1 dims whatever their strides) with more than one element,
// float32, or bfloat16 / float16 on a CPU oneDNN supports them on; else its own kernel (Own).
// oneDNN then runs its JIT kernel only on memory it calls dense, and it calls any stride of 0
// not dense, a size-1 dim's included (memory_desc_wrapper::is_dense / has_broadcast): there it
// runs its reference kernel (OneDnnRef), whose edge values are torch's own kernel's.
// Fresh-primitive behaviour: oneDNN's primitive cache treats two layouts that differ only in
// size-1 dims' strides as the same, so in a process that ran one of them first torch reuses
// that one's kernel for the other; myops cannot see that cache. Defined with the CPU backend
// (elementwise/cpu/elementwise.cpp).
enum class TorchCpuGelu { Own, OneDnnJit, OneDnnRef };
TorchCpuGelu torch_cpu_gelu_path(const at::Tensor& self);
// oneDNN's memory descriptors hold at most this many dims (DNNL_MAX_NDIMS): torch's oneDNN gelu
// on more raises RuntimeError("dimensions are invalid"), and myops' gelu with it
constexpr int64_t kOneDnnMaxDims = 12;

template <class B>
struct FrontEnd {
  static at::Tensor cast_fn(const at::Tensor& t, at::ScalarType dt) { return B::cast(t, dt); }
  static constexpr bool kCpu = B::kCpuRules;

  // ---- the runs: the kernel on the operands as the rule (`s`) planned them -------------------
  // With nothing to compute the kernel does not run, but torch still converts add's / sub's
  // alpha and addcmul's value (param_to): so is it converted here.
  static void convert_alpha_for_empty(EwKind kind, at::ScalarType dt, const EwParams& prm) {
    AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, dt, "myops.elementwise",
                               [&] { (void)param_to<scalar_t>(kind, B::kCpuRules, prm.alpha); });
  }

  static at::Tensor run(const EwSpec& s, EwKind kind, c10::ArrayRef<at::Tensor> ins, const EwParams& prm) {
    auto p = make_plan(s, ins, cast_fn);
    // PyTorch applies a scalar operand of add/sub/mul/div at opmath precision (not rounded to
    // half/bfloat16 first): its CUDA kernels for a CPU scalar in either position of add/sub/mul
    // and as div's divisor (a dividend is rounded to the dtype), its CPU kernels only for
    // mul/div with the scalar second.
    if (s.nin == 2 && (kind == EwKind::Add || kind == EwKind::Mul) && !B::kCpuRules) {
      p.opmath_scalar[0] = p.opmath_scalar[1] = true;
    } else if (s.nin == 2 && (kind == EwKind::Mul || kind == EwKind::Div)) {
      p.opmath_scalar[1] = true;
    }
    if (p.numel) {
      B::run(kind, p, prm);
    } else if (kind == EwKind::Add || kind == EwKind::Addcmul) {
      convert_alpha_for_empty(kind, s.dtype, prm);
    }
    return p.out;
  }

  // ---- unary ------------------------------------------------------------------------------

  template <EwOp OP>
  static at::Tensor unary_op(const at::Tensor& self) {
    constexpr const EwOpInfo& op = kOps[static_cast<int>(OP)];
    static_assert(op.rule == EwRule::Same || op.rule == EwRule::IntToFloat, "a unary rule");
    return run(rules::unary_op(op, self, kCpu), op.kind, {self}, {});
  }

  static at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
    const auto s = rules::gelu(self, approximate, kCpu);
    EwParams prm;
    prm.gelu_tanh = approximate == "tanh";
    if constexpr (B::kCpuRules) {
      const TorchCpuGelu path = prm.gelu_tanh ? TorchCpuGelu::Own : torch_cpu_gelu_path(self);
      TORCH_CHECK(path == TorchCpuGelu::Own || self.dim() <= kOneDnnMaxDims,
                  "myops.gelu: dimensions are invalid: torch's CPU gelu runs oneDNN on this input (contiguous ",
                  self.scalar_type(), ", oneDNN on), which takes at most ", kOneDnnMaxDims, " dims, got ", self.dim());
      prm.onednn_gelu = path == TorchCpuGelu::OneDnnJit;
    }
    return run(s, EwKind::Gelu, {self}, prm);
  }

  static at::Tensor cast(const at::Tensor& self, at::ScalarType dtype) {
    const auto s = rules::cast(self, dtype, kCpu);
    auto p = make_plan(s, {self}, cast_fn, empty_preserve(self, dtype, s.device));
    if (p.numel) B::run(EwKind::Cast, p, {});
    return p.out;
  }

  // ---- binary -----------------------------------------------------------------------------

  static at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
    EwParams prm;
    prm.alpha = alpha;
    return run(rules::add(self, other, alpha, kCpu), EwKind::Add, {self, other}, prm);
  }

  static at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
    const auto s = rules::sub(self, other, alpha, kCpu);
    EwParams prm;
    prm.alpha = -alpha;
    return run(s, EwKind::Add, {self, other}, prm);
  }

  // ---- the generic binary front ends (ENTRY generic, myops/op_signatures.h) ------------------
  // An op of the table with no code of its own, as unary_op: its RULE gives the result dtype,
  // its KIND the kernel (rules::binary_op, rules::number_op).

  template <EwOp OP>
  static at::Tensor binary_op(const at::Tensor& self, const at::Tensor& other) {
    constexpr const EwOpInfo& op = kOps[static_cast<int>(OP)];
    static_assert(op.rule == EwRule::Promote || op.rule == EwRule::PromoteIntToFloat, "a binary rule");
    return run(rules::binary_op(op, self, other, kCpu), op.kind, {self, other}, {});
  }

  template <EwOp OP>
  static at::Tensor scalar_op(const at::Tensor& self, const c10::Scalar& other) {
    constexpr const EwOpInfo& op = kOps[static_cast<int>(OP)];
    static_assert(op.rule == EwRule::PromoteNumber || op.rule == EwRule::PromoteNumberIntToFloat, "a number rule");
    const auto s = rules::scalar_op(op, self, other, kCpu);
    return with_number(s, op.kind, self, other, {});
  }

  template <EwOp OP>
  static at::Tensor rscalar_op(const c10::Scalar& self, const at::Tensor& other) {
    constexpr const EwOpInfo& op = kOps[static_cast<int>(OP)];
    static_assert(op.rule == EwRule::PromoteNumber || op.rule == EwRule::PromoteNumberIntToFloat, "a number rule");
    const auto s = rules::rscalar_op(op, self, other, kCpu);
    return with_number(s, op.kind, other, self, {});
  }

  // ---- a number operand (the Scalar overloads) ------------------------------------------------
  // As aten: the number is the 0-d CPU operand that the kernels fold in as a scalar (on any
  // device), first or second as the rule placed it (s.number).

  static int category(at::ScalarType t) {
    return t == at::kBool ? 0 : at::isComplexType(t) ? 3 : at::isFloatingType(t) ? 2 : 1;
  }

  // The number as the kernels' 0-d CPU operand for a result of dtype `dt` beside a tensor of
  // dtype `tensor_dt`. CUDA rules: aten's wrapped number as it is (the top of this file). CPU
  // rules: its own value (bool, int64, double) when the result is of its category or a wider
  // one, else converted to `dt`; an int past int64 (c10 holds it as uint64) is converted once
  // as torch's kernels convert it: to int64 (wrapping) for an integral result, to double for a
  // float64 one and to float for the other floating ones (torch takes it to float16 / bfloat16
  // through float).
  static at::Tensor number_operand(const c10::Scalar& s, at::ScalarType tensor_dt, at::ScalarType dt) {
    at::Tensor w;
    if (!B::kCpuRules) {
      w = c10::scalar_to_tensor(s);
    } else if (s.type() == at::kUInt64) {
      const uint64_t u = s.toUInt64();
      if (dt == at::kDouble) {
        w = at::scalar_tensor(static_cast<double>(u), at::TensorOptions().dtype(at::kDouble));
      } else if (at::isFloatingType(dt)) {
        w = at::scalar_tensor(static_cast<double>(static_cast<float>(u)), at::TensorOptions().dtype(at::kFloat));
      } else {
        w = at::scalar_tensor(static_cast<int64_t>(u), at::TensorOptions().dtype(at::kLong));
      }
    } else {
      w = c10::scalar_to_tensor(s);
      if (category(w.scalar_type()) > category(tensor_dt) && w.scalar_type() != dt) w = w.to(dt);
    }
    w.unsafeGetTensorImpl()->set_wrapped_number(true);
    return w;
  }

  // tensor `t` and number `n`, placed as the rule placed them
  static at::Tensor with_number(const EwSpec& s, EwKind kind, const at::Tensor& t, const c10::Scalar& n,
                                const EwParams& prm) {
    auto w = number_operand(n, t.scalar_type(), s.dtype);
    return s.number[0] ? run(s, kind, {w, t}, prm) : run(s, kind, {t, w}, prm);
  }

  // add / sub with a number operand `n` beside tensor `t`: t + alpha * n or t - alpha * n (sub:
  // alpha negated), the number where the rule placed it
  static at::Tensor add_number(const EwSpec& s, AddOrSub which, const at::Tensor& t, const c10::Scalar& n,
                               const c10::Scalar& alpha) {
    EwParams prm;
    prm.alpha = which == AddOrSub::sub ? -alpha : alpha;
    return with_number(s, EwKind::Add, t, n, prm);
  }

  // add.Scalar / sub.Scalar: self + alpha * other, self - alpha * other
  static at::Tensor add_scalar(const at::Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha) {
    return add_number(rules::add_scalar(self, other, alpha, kCpu), AddOrSub::add, self, other, alpha);
  }

  static at::Tensor sub_scalar(const at::Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha) {
    return add_number(rules::sub_scalar(self, other, alpha, kCpu), AddOrSub::sub, self, other, alpha);
  }

  // add.ScalarSelf / sub.ScalarSelf: the number first (torch.add(2, x, alpha=3) = 2 + 3 * x);
  // with alpha 1 add commutes, and takes the number second as torch's x + 2 does
  static at::Tensor add_scalar_self(const c10::Scalar& self, const at::Tensor& other, const c10::Scalar& alpha) {
    return add_number(rules::add_scalar_self(self, other, alpha, kCpu), AddOrSub::add, other, self, alpha);
  }

  static at::Tensor sub_scalar_self(const c10::Scalar& self, const at::Tensor& other, const c10::Scalar& alpha) {
    return add_number(rules::sub_scalar_self(self, other, alpha, kCpu), AddOrSub::sub, other, self, alpha);
  }

  // mul.ScalarSelf (SIG rscalar_own: not the generic rscalar_op): the number is taken second,
  // as Python's `number * tensor` takes it (torch: tensor.__rmul__, mul with the number
  // second): in the opmath type, never rounded to a float16 / bfloat16 result first
  // (-1.2748 * bf16 -104 is 133, -2^63 * fp16 0 is -0), as torch's CUDA kernel takes a number on
  // either side. (torch.mul(number, tensor) on the CPU rounds it first; the drop-in's mul.Tensor
  // with a wrapped number first still does, as torch.)
  static at::Tensor mul_scalar_self(const c10::Scalar& self, const at::Tensor& other) {
    return with_number(rules::mul_scalar_self(self, other, kCpu), EwKind::Mul, other, self, {});
  }

  // pow (SIG binary_own): binary_op but for its second argument's name in messages ('exponent',
  // as torch's schema names it); its Autograd formula (PowFn) and its drop-in routing (a host
  // scalar exponent on CUDA stays torch's) are its own too
  static at::Tensor pow(const at::Tensor& self, const at::Tensor& exponent) {
    return run(rules::pow(self, exponent, kCpu), EwKind::Pow, {self, exponent}, {});
  }

  // pow.Scalar (SIG scalar_own): a number exponent, converted to the result dtype (as torch's CPU kernel does:
  // a bfloat16 tensor ** -3.7 is ** -3.703125) and folded into the kernel; on float32, float64
  // and bfloat16 (not float16) torch computes ** 0.5 and ** -0.5 as sqrt and rsqrt (-inf ** 0.5
  // is NaN there, +inf in float16), and so do we
  static at::Tensor pow_scalar(const at::Tensor& self, const c10::Scalar& exponent) {
    const auto s = rules::pow_scalar(self, exponent, kCpu);
    // ** 0 fills 1 and ** 1 copies self, before any kernel, as torch's pow.Scalar does on every
    // device (pow_Tensor_Scalar_out): CUDA's pow(x, 1.0) is not always x in float64 (1 ulp off,
    // first GPU session). A 0-d tensor exponent still runs the kernel, as it does in torch.
    const bool zero = exponent.equal(0.0) || exponent.equal(false), one = exponent.equal(1.0) || exponent.equal(true);
    if (zero || one) {
      auto p = make_plan(s, {self}, cast_fn);
      if (p.numel) zero ? p.out.fill_(1) : p.out.copy_(self);
      return p.out;
    }
    if (s.nin == 1) return run(s, exponent.equal(0.5) ? EwKind::Sqrt : EwKind::Rsqrt, {self}, {});
    auto wrapped = c10::scalar_to_tensor(exponent);  // 0-d CPU: folded into the kernel
    return run(s, EwKind::Pow, {self, wrapped}, {});
  }

  // maximum / minimum (SIG binary_own): their complex check comes first (rules::max_min)
  static at::Tensor maximum(const at::Tensor& self, const at::Tensor& other) {
    return run(rules::maximum(self, other, kCpu), EwKind::Maximum, {self, other}, {});
  }

  static at::Tensor minimum(const at::Tensor& self, const at::Tensor& other) {
    return run(rules::minimum(self, other, kCpu), EwKind::Minimum, {self, other}, {});
  }

  // ---- ternary ----------------------------------------------------------------------------

  static void warn_condition(const at::Tensor& condition) {
    if (condition.defined() && condition.scalar_type() == at::kByte) {
      // accepted as torch.where does (nonzero = true), with its deprecation warning
      TORCH_WARN(
          "myops.where received a uint8 condition tensor. This behavior is deprecated and will be "
          "removed in a future version of PyTorch. Use a boolean condition instead.");
    }
  }

  static at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
    warn_condition(condition);
    const auto s = rules::where(condition, self, other, kCpu);
    return run(s, EwKind::Where, {condition, self, other}, {});
  }

  // where.ScalarSelf / where.ScalarOther, as aten's: the number a 0-d CPU tensor of the result
  // dtype made by at::scalar_tensor (the rule makes it: rules::where_number), converted as torch's
  // fill on the tensor's device converts it (the top of this file: on the CPU integers are
  // checked, float16 / bfloat16 round; CUDA checks every dtype)
  static at::Tensor where_scalar_self(const at::Tensor& condition, const c10::Scalar& self, const at::Tensor& other) {
    warn_condition(condition);
    at::Tensor w;
    const auto s = rules::where_scalar_self(condition, self, other, kCpu, &w);
    return run(s, EwKind::Where, {condition, w, other}, {});
  }

  static at::Tensor where_scalar_other(const at::Tensor& condition, const at::Tensor& self, const c10::Scalar& other) {
    warn_condition(condition);
    at::Tensor w;
    const auto s = rules::where_scalar_other(condition, self, other, kCpu, &w);
    return run(s, EwKind::Where, {condition, self, w}, {});
  }

  // where.Scalar: both numbers converted to the result dtype (checked). A uint64 result (a dtype
  // the kernels do not take) is selected as int64 bits.
  static at::Tensor where_scalar(const at::Tensor& condition, const c10::Scalar& self, const c10::Scalar& other) {
    warn_condition(condition);
    auto s = rules::where_scalar(condition, self, other, kCpu);
    if (s.dtype == at::kUInt64) {
      auto bits = [](const c10::Scalar& v) {
        const int64_t i = v.type() == at::kUInt64 ? static_cast<int64_t>(v.toUInt64()) : v.toLong();
        return at::scalar_tensor(i, at::TensorOptions().dtype(at::kLong));
      };
      s.dtype = s.in_dtype[1] = s.in_dtype[2] = at::kLong;
      return run(s, EwKind::Where, {condition, bits(self), bits(other)}, {}).view(at::kUInt64);
    }
    auto opts = at::TensorOptions().dtype(s.dtype);
    return run(s, EwKind::Where, {condition, at::scalar_tensor(self, opts), at::scalar_tensor(other, opts)}, {});
  }

  static at::Tensor addcmul(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                            const c10::Scalar& value) {
    const auto s = rules::addcmul(self, t1, t2, value, kCpu);
    EwParams prm;
    prm.alpha = value;
    return run(s, EwKind::Addcmul, {self, t1, t2}, prm);
  }

  static at::Tensor clamp(const at::Tensor& self, const at::Tensor& min, const at::Tensor& max) {
    return run(rules::clamp(self, min, max, kCpu), EwKind::Clamp, {self, min, max}, {});
  }

  // clamp.Scalar, torch.clamp's overload for number bounds: each number becomes a 0-d CPU
  // tensor of the result dtype (c10's checked conversion: a number that does not fit raises
  // torch's overflow error), a missing bound +-inf (or the integer type's limit), and the clamp
  // runs with torch's Scalar-kernel NaN rule: a NaN bound makes every element NaN (torch <=
  // 2.11: only with both bounds given), a NaN input keeps its bits.
  static at::Tensor clamp_scalar(const at::Tensor& self, const std::optional<c10::Scalar>& min,
                                 const std::optional<c10::Scalar>& max) {
    const auto s = rules::clamp_scalar(self, min, max, kCpu);
    const auto dt = s.dtype;
    auto nan = [](const std::optional<c10::Scalar>& v) {
      return v && v->isFloatingPoint() && std::isnan(v->toDouble());
    };
    // A NaN bound fills the result before the bounds are converted (the other one may not fit:
    // nothing raises), on both backends: torch's clamp_out tests for NaN before its kernels run.
#if MYOPS_TORCH_AT_LEAST(2, 12)
    const bool fill = nan(min) || nan(max);
    const bool drop_nan_bound = false;
#else
    // torch <= 2.11 fills only when both bounds are given; a lone NaN bound leaves self as is
    // (min / max with a NaN operand return the other one in its kernels)
    const bool fill = min && max && (nan(min) || nan(max));
    const bool drop_nan_bound = true;
#endif
    // torch's CPU kernel converts a bound to the dtype (checked: a half bound past 65504
    // raises), its CUDA kernel to opmath (float for half / bfloat16, checked for float only)
    const bool opmath_bounds = !B::kCpuRules && (dt == at::kHalf || dt == at::kBFloat16);
    auto bound = [&](const std::optional<c10::Scalar>& v, bool upper) {
      c10::Scalar b = upper ? c10::Scalar(std::numeric_limits<double>::infinity())
                            : c10::Scalar(-std::numeric_limits<double>::infinity());
      const bool given = v && !fill && !(drop_nan_bound && nan(v));
      if (given && opmath_bounds) {
        auto t = at::scalar_tensor(c10::Scalar(v->to<float>()), at::TensorOptions().dtype(at::kFloat));
        t.unsafeGetTensorImpl()->set_wrapped_number(true);  // a number: no say in the result dtype
        return t;
      } else if (given) {
        // Scalar::to is c10's checked conversion (at::scalar_tensor alone would not check)
        AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dt, "myops.clamp",
                                   [&] { b = c10::Scalar(v->to<scalar_t>()); });
      } else if (!at::isFloatingType(dt)) {
        AT_DISPATCH_INTEGRAL_TYPES(dt, "myops.clamp", [&] {
          b = upper ? c10::Scalar(std::numeric_limits<scalar_t>::max())
                    : c10::Scalar(std::numeric_limits<scalar_t>::lowest());
        });
      }
      return at::scalar_tensor(b, at::TensorOptions().dtype(dt));
    };
    auto out = run(s, EwKind::ClampScalar, {self, bound(min, /*upper=*/false), bound(max, /*upper=*/true)}, {});
    if (fill) out.fill_(std::numeric_limits<double>::quiet_NaN());
    return out;
  }
};

// Registers every elementwise op of the table (myops/op_table.h) for one dispatch key with
// backend B, by its SIG's ENTRY (myops/op_signatures.h): generic, FrontEnd<B>::<SIG>_op<OP>
// (unary_op, binary_op, scalar_op, rscalar_op); own, FrontEnd<B>::FN (written out by
// tools/gen_ops_elementwise.py).
template <class B>
void register_all(torch::Library& m) {
  using F = FrontEnd<B>;
#include "elementwise/generated/front_ends.inc"
}

}  // namespace ew
}  // namespace myops

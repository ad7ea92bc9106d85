#pragma once
// The elementwise ops' rules, each written once: the argument checks (with their messages and
// exception types), the result dtype, the result device and, through ew_layout, the output's
// shape and strides. A rule reads its tensors as TensorInfo (core/checks.h: sizes and strides as
// c10::SymInt, dtype, device) and its numbers as c10::Scalar, and returns an EwSpec; it never
// touches data. Two callers:
//  - the front ends (elementwise/elementwise_front.h), on the call's tensors, before they run the
//    kernel (`cpu_rules` there is the backend's kCpuRules);
//  - the control op myops::_elementwise_meta (csrc/elementwise/schema.cpp), on the (symbolic)
//    sizes of a fake kernel's tensors (python/myops/_fake.py), `cpu_rules` the device's.
// A comparison of symbolic sizes guards as Python's does; a condition on them is a SymBool
// checked with MYOPS_SYM_CHECK (a runtime assert for an unbacked size).
// Used from .cpp files only.
#include <ATen/Dispatch.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/Scalar.h>
#include <c10/util/string_view.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/checks.h"
#include "core/dtypes.h"
#include "core/output_strides.h"
#include "myops/op_table.h"

namespace myops {
namespace ew {

constexpr int kMaxIn = 3;

// The dtypes of a DTYPES column of the op table (myops/op_table.h); the one list: core/dtypes.h.
inline c10::ArrayRef<at::ScalarType> dtypes_in(EwDtypes d) {
  switch (d) {
    case EwDtypes::NonBool:
      return nonbool_dtypes();
    case EwDtypes::Float:
      return float_dtypes();
    case EwDtypes::All:
      break;
  }
  return all_dtypes();
}

inline at::ScalarType default_float() { return c10::typeMetaToScalarType(c10::get_default_dtype()); }

// ---- an operand as a rule reads it -----------------------------------------------------------
// A tensor's TensorInfo, whether it is defined (the C++ API may pass an undefined tensor) and
// whether it is aten's wrapped number (a Python number beside a tensor: the drop-in's operands).
struct EwArg {
  TensorInfo info;
  bool defined = true;
  bool wrapped = false;

  EwArg(const at::Tensor& t)  // NOLINT: implicit, so that the front ends pass their tensors
      : info(t.defined() ? TensorInfo(t) : TensorInfo({}, {}, at::ScalarType::Undefined, c10::kCPU)),
        defined(t.defined()),
        wrapped(t.defined() && t.unsafeGetTensorImpl()->is_wrapped_number()) {}
  EwArg(const TensorInfo& i) : info(i) {}  // NOLINT: a fake kernel's tensor
  // A number operand as the kernels take it: a 0-d CPU tensor (its dtype does not matter to the
  // layout: a one-element CPU operand is folded into the kernel).
  static EwArg number() { return EwArg(TensorInfo({}, {}, at::kDouble, c10::kCPU)); }
  bool is_cpu_scalar() const { return info.dim() == 0 && info.device.is_cpu(); }
};

// What a rule decides: the kernel's operands (in the kernel's order, numbers included), the
// dtype each must have there, and the result's dtype and device.
struct EwSpec {
  const char* op = "";  // the op's name in messages
  int nin = 0;
  std::array<const char*, kMaxIn> names{};        // each operand's argument name, for messages
  std::array<at::ScalarType, kMaxIn> in_dtype{};  // the dtype each operand has in the kernel
  std::array<bool, kMaxIn> number{};              // a number operand (a 0-d CPU tensor the run makes)
  at::ScalarType dtype = at::kFloat;              // the result's
  c10::Device device = c10::kCPU;                 // the result's
  // the layout is computed from the inputs cast to in_dtype (PyTorch's CPU TensorIterator casts
  // before it chooses strides, its CUDA one after; where casts first on both)
  bool cast_first = false;
  bool preserve = false;  // cast: the output has self's strides (memory_format=preserve)
};

// ---- the checks ----------------------------------------------------------------------------

inline void check_in(const EwArg& t, c10::ArrayRef<at::ScalarType> allowed, const char* op, const char* arg,
                     bool not_implemented = true) {
  TORCH_CHECK(t.defined, "myops.", op, ": argument '", arg, "' is an undefined tensor");
  check_dtype(t.info.dtype, allowed, op, arg, not_implemented);
}

// A 0-d CPU tensor may accompany tensors on another device (as in PyTorch: a wrapped Python
// number); every other pair must share a device. Returns the device of the result.
inline c10::Device common_device(const char* op, c10::ArrayRef<const EwArg*> ts, c10::ArrayRef<const char*> names) {
  int first = -1;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i]->is_cpu_scalar()) {
      first = static_cast<int>(i);
      break;
    }
  }
  if (first < 0) return ts[0]->info.device;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i]->is_cpu_scalar()) continue;
    check_same_device(ts[first]->info, names[first], ts[i]->info, names[i], op);
  }
  return ts[first]->info.device;
}

template <typename T>
std::string shape_str(c10::ArrayRef<T> s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += c10::str(s[i]);
  }
  return r + "]";
}

// "'self' [2, 3], 'other' [4]"
template <typename T>
std::string shapes_str(c10::ArrayRef<c10::ArrayRef<T>> sizes, c10::ArrayRef<const char*> names) {
  std::string got;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (k) got += ", ";
    got += std::string("'") + names[k] + "' " + shape_str(sizes[k]);
  }
  return got;
}

inline c10::SymBool size_eq(const c10::SymInt& a, const c10::SymInt& b) { return a.sym_eq(b); }
inline bool size_eq(int64_t a, int64_t b) { return a == b; }

// numpy broadcasting of the operands' sizes; the error names the op, every argument and its
// shape. int64_t for the kernels' planner, c10::SymInt for the fake kernels.
template <typename T>
std::vector<T> broadcast_shape(const char* op, c10::ArrayRef<c10::ArrayRef<T>> sizes,
                               c10::ArrayRef<const char*> names) {
  size_t nd = 0;
  for (const auto& s : sizes) nd = std::max(nd, s.size());
  std::vector<T> out(nd, T(1));
  for (size_t ti = 0; ti < sizes.size(); ++ti) {
    const auto s = sizes[ti];
    const size_t off = nd - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const T& b = s[i];
      if (b == 1) continue;
      if (out[off + i] == 1) {
        out[off + i] = b;
        continue;
      }
      const T a = out[off + i];
      MYOPS_SYM_CHECK(size_eq(a, b), "myops.", op, ": shapes do not broadcast: ", shapes_str(sizes, names), " (size ",
                      b, " of argument '", names[ti], "' at dim ", i, " against ", a, ")");
    }
  }
  return out;
}

// at::result_type over the operands (aten's ResultTypeState: dimensioned operands outrank 0-d
// ones of the same category, which outrank wrapped numbers), and with numbers.
inline at::ScalarType promote_defined(at::ScalarType a, at::ScalarType b) {
  if (a == at::ScalarType::Undefined) return b;
  if (b == at::ScalarType::Undefined) return a;
  return c10::promoteTypes(a, b);
}
inline at::native::ResultTypeState update_state(const EwArg& a, at::native::ResultTypeState st) {
  at::ScalarType cur = a.info.dtype;
  if (a.wrapped) {
    if (at::isComplexType(cur)) {
      cur = c10::typeMetaToScalarType(c10::get_default_complex_dtype());
    } else if (at::isFloatingType(cur)) {
      cur = default_float();
    }
  }
  if (a.info.dim() > 0) {
    st.dimResult = promote_defined(st.dimResult, cur);
  } else if (a.wrapped) {
    st.wrappedResult = promote_defined(st.wrappedResult, cur);
  } else {
    st.zeroResult = promote_defined(st.zeroResult, cur);
  }
  return st;
}
inline at::ScalarType result_type_of(std::initializer_list<const EwArg*> ts) {
  at::native::ResultTypeState st{};
  for (auto* t : ts) st = update_state(*t, st);
  return at::native::result_type(st);
}
inline at::ScalarType result_type_of(const EwArg& t, const c10::Scalar& s) {
  return at::native::result_type(at::native::update_result_type_state(s, update_state(t, {})));
}

// sub's bool operands: aten's own check (sub_check), first as in torch (its exception type
// changed between torch versions: RuntimeError in 2.11, NotImplementedError in 2.14). It reads
// only dtypes: here it reads them off empty meta tensors, made only when one is bool.
inline at::Tensor meta_of(at::ScalarType dt) { return at::empty({}, at::TensorOptions().dtype(dt).device(c10::kMeta)); }
inline void sub_check(const EwArg& a, const EwArg& b) {
  if (a.info.dtype == at::kBool || b.info.dtype == at::kBool) {
    at::native::sub_check(meta_of(a.info.dtype), meta_of(b.info.dtype));
  }
}
inline void sub_check(const EwArg& t, const c10::Scalar& s) {
  if (t.info.dtype == at::kBool || s.isBoolean()) at::native::sub_check(meta_of(t.info.dtype), s);
}

// add / sub's alpha (`arg`) for a result of dtype `dt`
inline void check_alpha(const char* op, const char* arg, at::ScalarType dt, const c10::Scalar& alpha) {
  TORCH_CHECK(!alpha.isBoolean() || dt == at::kBool, "myops.", op, ": argument '", arg,
              "' may be a bool only for a bool result, got result dtype ", dt);
  TORCH_CHECK(at::isFloatingType(dt) || alpha.isIntegral(/*includeBool=*/true), "myops.", op, ": argument '", arg,
              "' must not be a floating point number for integral inputs (result dtype ", dt, "), got ",
              alpha.toDouble());
}

// The result dtype of `t` op number `s`; a complex number is refused (no myops kernel takes a
// complex result: NotImplementedError, as for a complex tensor).
inline at::ScalarType number_dtype(const char* op, const EwArg& t, const char* tname, const c10::Scalar& s,
                                   const char* sname) {
  check_in(t, all_dtypes(), op, tname);
  TORCH_CHECK_NOT_IMPLEMENTED(!s.isComplex(), "myops.", op, ": argument '", sname,
                              "' must be a real number (no complex results), got ", s);
  return result_type_of(t, s);
}

inline void check_condition(const EwArg& condition) {
  check_in(condition, {at::kBool, at::kByte}, "where", "condition", /*not_implemented=*/false);
}

// Where a number operand goes in the kernel call (the Scalar overloads): after the tensor, as
// in x + 2, or before it (the ScalarSelf forms: 2 - x).
enum class NumberSide { second, first };
// add or sub (sub: alpha negated, bool operands refused)
enum class AddOrSub { add, sub };

// ---- the rules, one per front end ----------------------------------------------------------
// Each is named as the front end it serves (FrontEnd<B>::<name>, elementwise/elementwise_front.h).
namespace rules {

// Operands `ts` (numbers marked in `numbers`) of dtype `dt` each, on their common device.
inline EwSpec spec_of(const char* op, std::initializer_list<const EwArg*> ts, std::initializer_list<const char*> names,
                      at::ScalarType dt, bool cast_first, std::initializer_list<bool> numbers = {}) {
  EwSpec s;
  s.op = op;
  s.nin = static_cast<int>(ts.size());
  std::copy(names.begin(), names.end(), s.names.begin());
  std::copy(numbers.begin(), numbers.end(), s.number.begin());
  for (int k = 0; k < s.nin; ++k) s.in_dtype[k] = dt;
  s.dtype = dt;
  s.cast_first = cast_first;
  s.device = common_device(op, c10::ArrayRef<const EwArg*>(ts.begin(), ts.size()),
                           c10::ArrayRef<const char*>(s.names.data(), s.nin));
  return s;
}

inline EwSpec unary(const char* op, const EwArg& self, at::ScalarType dt, bool cpu_rules) {
  return spec_of(op, {&self}, {"self"}, dt, cpu_rules);
}

// A unary op of the table without arguments of its own: the operand's dtype must be one of the
// kernel's DTYPES (rule Same) or any (IntToFloat: an integral or bool operand gives the default
// float dtype, the kernel running in it).
inline EwSpec unary_op(const EwOpInfo& op, const EwArg& self, bool cpu_rules) {
  check_in(self, op.rule == EwRule::Same ? dtypes_in(dtypes_of(op.kind)) : all_dtypes(), op.fn, "self");
  auto dt = self.info.dtype;
  if (op.rule == EwRule::IntToFloat && !at::isFloatingType(dt)) dt = default_float();
  return unary(op.fn, self, dt, cpu_rules);
}

inline EwSpec gelu(const EwArg& self, c10::string_view approximate, bool cpu_rules) {
  check_in(self, dtypes_in(dtypes_of(EwKind::Gelu)), "gelu", "self");
  TORCH_CHECK(approximate == "none" || approximate == "tanh",
              "myops.gelu: argument 'approximate' must be 'none' or 'tanh', got '", approximate, "'");
  return unary("gelu", self, self.info.dtype, cpu_rules);
}

inline EwSpec cast(const EwArg& self, at::ScalarType dtype, bool /*cpu_rules*/) {
  check_in(self, all_dtypes(), "cast", "self");
  const auto dts = all_dtypes();
  TORCH_CHECK(std::find(dts.begin(), dts.end(), dtype) != dts.end(), "myops.cast: argument 'dtype' must be one of ",
              dtype_names(dts), ", got ", dtype);
  auto s = unary("cast", self, dtype, /*cast_first=*/true);
  s.in_dtype[0] = self.info.dtype;
  s.preserve = true;
  return s;
}

inline EwSpec binary(const char* op, const EwArg& a, const EwArg& b, at::ScalarType dt, bool cpu_rules,
                     std::initializer_list<bool> numbers = {}) {
  return spec_of(op, {&a, &b}, {"self", "other"}, dt, cpu_rules, numbers);
}

inline at::ScalarType binary_dtype(const char* op, const EwArg& self, const EwArg& other) {
  check_in(self, all_dtypes(), op, "self");
  check_in(other, all_dtypes(), op, "other");
  return result_type_of({&self, &other});
}

inline EwSpec add(AddOrSub which, const EwArg& self, const EwArg& other, const c10::Scalar& alpha, bool cpu_rules) {
  const char* op = which == AddOrSub::sub ? "sub" : "add";
  if (which == AddOrSub::sub) sub_check(self, other);
  auto dt = binary_dtype(op, self, other);
  check_alpha(op, "alpha", dt, alpha);
  return binary(op, self, other, dt, cpu_rules);
}

// SIG binary: Promote (torch.result_type) or PromoteIntToFloat (an integral result becoming the
// default float dtype: div's true division). The operands must have one of the kernel's DTYPES,
// or any dtype for PromoteIntToFloat (converted to the float result first).
inline EwSpec binary_op(const EwOpInfo& op, const EwArg& self, const EwArg& other, bool cpu_rules) {
  const auto allowed = op.rule == EwRule::Promote ? dtypes_in(dtypes_of(op.kind)) : all_dtypes();
  check_in(self, allowed, op.name, "self");
  check_in(other, allowed, op.name, "other");
  auto dt = result_type_of({&self, &other});
  if (op.rule == EwRule::PromoteIntToFloat && !at::isFloatingType(dt)) dt = default_float();
  return binary(op.name, self, other, dt, cpu_rules);
}

// tensor `t` and number `s` (argument names `tname`, `sname`), the number `side` in the kernel
inline EwSpec with_number(const char* op, const EwArg& t, NumberSide side, at::ScalarType dt, bool cpu_rules) {
  const EwArg n = EwArg::number();
  return side == NumberSide::first ? binary(op, n, t, dt, cpu_rules, {true, false})
                                   : binary(op, t, n, dt, cpu_rules, {false, true});
}

// SIG scalar (NAME.Scalar: the number second) and rscalar (NAME.ScalarSelf: the number first):
// PromoteNumber (at::result_type(tensor, number): a Python number is a wrapped number, it does
// not widen the tensor's dtype within its category) or PromoteNumberIntToFloat
inline EwSpec number_op(const EwOpInfo& op, const EwArg& t, const char* tname, const c10::Scalar& s, const char* sname,
                        NumberSide side, bool cpu_rules) {
  if (op.rule == EwRule::PromoteNumber && dtypes_of(op.kind) != EwDtypes::All) {
    check_in(t, dtypes_in(dtypes_of(op.kind)), op.name, tname);
  }
  auto dt = number_dtype(op.name, t, tname, s, sname);
  if (op.rule == EwRule::PromoteNumberIntToFloat && !at::isFloatingType(dt)) dt = default_float();
  return with_number(op.name, t, side, dt, cpu_rules);
}

// add / sub with a number operand: t + alpha * s or t - alpha * s
inline EwSpec add_number(AddOrSub which, const EwArg& t, const char* tname, const c10::Scalar& s, const char* sname,
                         NumberSide side, const c10::Scalar& alpha, bool cpu_rules) {
  const char* op = which == AddOrSub::sub ? "sub" : "add";
  if (which == AddOrSub::sub) sub_check(t, s);
  auto dt = number_dtype(op, t, tname, s, sname);
  check_alpha(op, "alpha", dt, alpha);
  return with_number(op, t, side, dt, cpu_rules);
}

// add.ScalarSelf with alpha 1 commutes: the number is taken second, as torch's x + 2 takes it
inline NumberSide add_scalar_self_side(const c10::Scalar& alpha) {
  const bool one = !alpha.isBoolean() && !alpha.isComplex() && alpha.equal(1);
  return one ? NumberSide::second : NumberSide::first;
}

inline EwSpec mul_scalar_self(const c10::Scalar& self, const EwArg& other, bool cpu_rules) {
  auto dt = number_dtype("mul", other, "other", self, "self");
  return with_number("mul", other, NumberSide::second, dt, cpu_rules);
}

inline EwSpec pow(const EwArg& self, const EwArg& exponent, bool cpu_rules) {
  check_in(self, dtypes_in(dtypes_of(EwKind::Pow)), "pow", "self");
  check_in(exponent, dtypes_in(dtypes_of(EwKind::Pow)), "pow", "exponent");
  return binary("pow", self, exponent, result_type_of({&self, &exponent}), cpu_rules);
}

// pow.Scalar. ** 0, ** 1 (and ** 0.5, ** -0.5 but for float16) run on self alone (the front
// end says why): no number operand then
inline bool pow_scalar_alone(const c10::Scalar& exponent, at::ScalarType dt) {
  return exponent.equal(0.0) || exponent.equal(false) || exponent.equal(1.0) || exponent.equal(true) ||
         (dt != at::kHalf && (exponent.equal(0.5) || exponent.equal(-0.5)));
}
inline EwSpec pow_scalar(const EwArg& self, const c10::Scalar& exponent, bool cpu_rules) {
  check_in(self, dtypes_in(dtypes_of(EwKind::Pow)), "pow", "self");
  TORCH_CHECK(!exponent.isComplex(), "myops.pow: argument 'exponent' must be a real number, got ", exponent);
  auto dt = result_type_of(self, exponent);
  if (pow_scalar_alone(exponent, dt)) return unary("pow", self, dt, cpu_rules);
  return with_number("pow", self, NumberSide::second, dt, cpu_rules);
}

// maximum / minimum: RuntimeError for complex operands, as torch.maximum / minimum raise (not
// NotImplementedError), before the generic checks
inline EwSpec max_min(const char* op, const EwArg& self, const EwArg& other, bool cpu_rules) {
  TORCH_CHECK(!at::isComplexType(self.info.dtype) && !at::isComplexType(other.info.dtype), "myops.", op,
              ": not implemented for complex tensors (arguments 'self' and 'other'), got ", self.info.dtype, " and ",
              other.info.dtype);
  return binary(op, self, other, binary_dtype(op, self, other), cpu_rules);
}

// where: the condition bool (or uint8, deprecated), the values promoted; cast first on both
// backends
inline EwSpec where_of(const EwArg& c, const EwArg& a, const EwArg& b, at::ScalarType dt,
                       std::initializer_list<bool> numbers = {}) {
  auto s = spec_of("where", {&c, &a, &b}, {"condition", "self", "other"}, dt, /*cast_first=*/true, numbers);
  s.in_dtype[0] = at::kBool;
  return s;
}

inline EwSpec where(const EwArg& condition, const EwArg& self, const EwArg& other, bool /*cpu_rules*/) {
  check_condition(condition);
  check_in(self, all_dtypes(), "where", "self");
  check_in(other, all_dtypes(), "where", "other");
  return where_of(condition, self, other, result_type_of({&self, &other}));
}

// where.ScalarSelf / where.ScalarOther, as aten's: the result dtype is at::result_type(tensor,
// number) (the condition does not promote). The number is converted to it first, as torch
// converts it before its kernel looks at the dtypes: on CUDA with c10's checked conversion, then
// into the 0-d CPU tensor of the kernel call (at::scalar_tensor: the front end says more), which
// the rule hands to the front end in `*made` (not for a symbolic number: a fake kernel's).
inline EwSpec where_number(const EwArg& condition, const EwArg& t, const char* tname, const c10::Scalar& s,
                           const char* sname, NumberSide side, bool cpu_rules, at::Tensor* made) {
  check_condition(condition);
  const auto rt = result_type_of(t, s);
  const auto dts = all_dtypes();
  if (!cpu_rules && std::find(dts.begin(), dts.end(), rt) != dts.end()) {
    AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, rt, "myops.where", [&] { (void)s.to<scalar_t>(); });
  }
  if (!s.isSymbolic()) {
    auto w = at::scalar_tensor(s, at::TensorOptions().dtype(rt));
    if (made) *made = std::move(w);
  }
  auto dt = number_dtype("where", t, tname, s, sname);
  const EwArg n = EwArg::number();
  return side == NumberSide::first ? where_of(condition, n, t, dt, {false, true, false})
                                   : where_of(condition, t, n, dt, {false, false, true});
}

// where.Scalar: two numbers, the result dtype theirs (at::result_type(number, number))
inline EwSpec where_scalar(const EwArg& condition, const c10::Scalar& self, const c10::Scalar& other, bool cpu_rules) {
  check_condition(condition);
  TORCH_CHECK_NOT_IMPLEMENTED(!self.isComplex() && !other.isComplex(),
                              "myops.where: arguments 'self' and 'other' must be real numbers, got ", self, " and ",
                              other);
  const auto dt = at::result_type(self, other);
  TORCH_CHECK_NOT_IMPLEMENTED(cpu_rules || dt != at::kUInt64, "myops.where: no CUDA kernel for a uint64 ",
                              "result (as torch's where_cuda): arguments 'self' and 'other' are ints and one ",
                              "is past int64");
  const EwArg n = EwArg::number();
  return where_of(condition, n, n, dt, {false, true, true});
}

// addcmul, clamp: bool operands are fine when they promote to another dtype; a bool result is
// not (torch: NotImplementedError, "not implemented for 'Bool'")
inline EwSpec ternary(const char* op, const EwArg& a, const EwArg& b, const EwArg& c,
                      std::initializer_list<const char*> names, bool cpu_rules) {
  const auto n = names.begin();
  check_in(a, all_dtypes(), op, n[0]);
  check_in(b, all_dtypes(), op, n[1]);
  check_in(c, all_dtypes(), op, n[2]);
  auto dt = result_type_of({&a, &b, &c});
  TORCH_CHECK_NOT_IMPLEMENTED(dt != at::kBool, "myops.", op, ": not implemented for a bool result (arguments '", n[0],
                              "', '", n[1], "' and '", n[2], "' are all bool)");
  return spec_of(op, {&a, &b, &c}, names, dt, cpu_rules);
}

// clamp.Scalar: as torch's clamp, a floating self keeps its dtype (the bounds do not promote
// with each other then: an int past int64 beside an int is fine); the bounds are 0-d CPU
// operands of the result dtype
inline EwSpec clamp_scalar(const EwArg& self, const std::optional<c10::Scalar>& min,
                           const std::optional<c10::Scalar>& max, bool cpu_rules) {
  TORCH_CHECK(min.has_value() || max.has_value(), "myops.clamp: at least one of 'min' and 'max' must not be None");
  check_in(self, all_dtypes(), "clamp", "self");
  auto dt = self.info.dtype;
  if (!at::isFloatingType(dt)) {
    auto st = update_state(self, {});
    if (min) st = at::native::update_result_type_state(*min, st);
    if (max) st = at::native::update_result_type_state(*max, st);
    dt = at::native::result_type(st);
  }
  TORCH_CHECK_NOT_IMPLEMENTED(dt != at::kBool, "myops.clamp: not implemented for a bool result (argument 'self' ",
                              "and the bounds are all bool)");
  const EwArg n = EwArg::number();
  return spec_of("clamp", {&self, &n, &n}, {"self", "min", "max"}, dt, cpu_rules, {false, true, true});
}

// ---- one rule per op of the table, named as the op's front end (FrontEnd<B>::<FN>), taking the op's
// schema parameters in order (its tensors as EwArg) and then `cpu_rules`: the control op
// myops::_elementwise_meta calls them by position. The generic ones (ENTRY generic,
// myops/op_signatures.h) take the op's row first.

inline EwSpec unary_op(const EwOpInfo& op, const EwArg& self, bool cpu_rules);  // above
inline EwSpec scalar_op(const EwOpInfo& op, const EwArg& self, const c10::Scalar& other, bool cpu_rules) {
  return number_op(op, self, "self", other, "other", NumberSide::second, cpu_rules);
}
inline EwSpec rscalar_op(const EwOpInfo& op, const c10::Scalar& self, const EwArg& other, bool cpu_rules) {
  return number_op(op, other, "other", self, "self", NumberSide::first, cpu_rules);
}
inline EwSpec add(const EwArg& self, const EwArg& other, const c10::Scalar& alpha, bool cpu_rules) {
  return add(AddOrSub::add, self, other, alpha, cpu_rules);
}
inline EwSpec sub(const EwArg& self, const EwArg& other, const c10::Scalar& alpha, bool cpu_rules) {
  return add(AddOrSub::sub, self, other, alpha, cpu_rules);
}
inline EwSpec add_scalar(const EwArg& self, const c10::Scalar& other, const c10::Scalar& alpha, bool cpu_rules) {
  return add_number(AddOrSub::add, self, "self", other, "other", NumberSide::second, alpha, cpu_rules);
}
inline EwSpec sub_scalar(const EwArg& self, const c10::Scalar& other, const c10::Scalar& alpha, bool cpu_rules) {
  return add_number(AddOrSub::sub, self, "self", other, "other", NumberSide::second, alpha, cpu_rules);
}
inline EwSpec add_scalar_self(const c10::Scalar& self, const EwArg& other, const c10::Scalar& alpha, bool cpu_rules) {
  return add_number(AddOrSub::add, other, "other", self, "self", add_scalar_self_side(alpha), alpha, cpu_rules);
}
inline EwSpec sub_scalar_self(const c10::Scalar& self, const EwArg& other, const c10::Scalar& alpha, bool cpu_rules) {
  return add_number(AddOrSub::sub, other, "other", self, "self", NumberSide::first, alpha, cpu_rules);
}
inline EwSpec maximum(const EwArg& self, const EwArg& other, bool cpu_rules) {
  return max_min("maximum", self, other, cpu_rules);
}
inline EwSpec minimum(const EwArg& self, const EwArg& other, bool cpu_rules) {
  return max_min("minimum", self, other, cpu_rules);
}
// (`made`: where_number's)
inline EwSpec where_scalar_self(const EwArg& condition, const c10::Scalar& self, const EwArg& other, bool cpu_rules,
                                at::Tensor* made = nullptr) {
  return where_number(condition, other, "other", self, "self", NumberSide::first, cpu_rules, made);
}
inline EwSpec where_scalar_other(const EwArg& condition, const EwArg& self, const c10::Scalar& other, bool cpu_rules,
                                 at::Tensor* made = nullptr) {
  return where_number(condition, self, "self", other, "other", NumberSide::second, cpu_rules, made);
}
inline EwSpec addcmul(const EwArg& self, const EwArg& tensor1, const EwArg& tensor2, const c10::Scalar& /*value*/,
                      bool cpu_rules) {
  return ternary("addcmul", self, tensor1, tensor2, {"self", "tensor1", "tensor2"}, cpu_rules);
}
inline EwSpec clamp(const EwArg& self, const EwArg& min, const EwArg& max, bool cpu_rules) {
  return ternary("clamp", self, min, max, {"self", "min", "max"}, cpu_rules);
}

}  // namespace rules

// ---- the layout ----------------------------------------------------------------------------
// The output's sizes and strides for a spec's operands (numbers as 0-d CPU operands, in the
// spec's order): the broadcast shape, and TensorIterator's strides (core/output_strides.h) over
// the operands as the kernel sees them (cast first: a cast operand has the strides of
// `t.to(dtype)`; a one-element CPU operand is folded, never cast). The kernels' planner
// (elementwise/elementwise_host.h) and the fake kernels (int64_t / c10::SymInt) share it.
template <typename T>
struct EwLayout {
  std::vector<T> sizes, strides;
};

template <typename T>
EwLayout<T> ew_layout(const EwSpec& s, c10::ArrayRef<StridedDims<T>> ins, c10::ArrayRef<at::ScalarType> dtypes,
                      c10::ArrayRef<c10::Device> devices) {
  std::array<c10::ArrayRef<T>, kMaxIn> sizes;
  for (int k = 0; k < s.nin; ++k) sizes[k] = ins[k].sizes;
  EwLayout<T> l;
  if (s.preserve) {
    l.sizes = ins[0].sizes.vec();
    l.strides = preserve_strides_of<T>(ins[0]);
    return l;
  }
  l.sizes = broadcast_shape<T>(s.op, c10::ArrayRef<c10::ArrayRef<T>>(sizes.data(), s.nin),
                               c10::ArrayRef<const char*>(s.names.data(), s.nin));
  std::vector<std::vector<T>> cast_strides(s.nin);
  std::vector<StridedDims<T>> seen(ins.begin(), ins.begin() + s.nin);
  for (int k = 0; k < s.nin; ++k) {
    T numel = 1;
    for (const auto& d : ins[k].sizes) numel *= d;
    const bool folded = devices[k].is_cpu() && numel == 1;
    if (s.cast_first && !folded && dtypes[k] != s.in_dtype[k]) {
      cast_strides[k] = preserve_strides_of<T>(ins[k]);
      seen[k].strides = cast_strides[k];
    }
  }
  l.strides = output_strides_of<T>(l.sizes, c10::ArrayRef<StridedDims<T>>(seen));
  return l;
}

}  // namespace ew
}  // namespace myops

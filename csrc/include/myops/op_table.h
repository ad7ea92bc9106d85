#pragma once
// The elementwise op table: every fact about an elementwise op that more than one file needs,
// written once. Everything that lists the ops comes from the two X-macros below, each row
// reaching its code through at most two levels of macros:
//   - expanded here and where they are used: the EwKind enum and the CPU / CUDA dispatch
//     switches (MYOPS_EW_KERNELS); the EwOp enum and kOps, the schemas
//     (csrc/elementwise/schema.cpp) and the control op myops::_ew_table() that hands the table to
//     Python (myops._table: the fake kernels and the test tables read it) (MYOPS_EW_OPS);
//   - written out, with each op's C++ signature (myops/op_signatures.h), by
//     tools/gen_ops_elementwise.py: the C++ API (myops/ops_elementwise.h, csrc/ops.cpp), and in
//     csrc/elementwise/generated/ the CPU / CUDA registration (register_all), the Autograd
//     registration (csrc/elementwise/autograd.cpp), the typed dispatcher handles
//     (elementwise/elementwise_handles.h), the fake kernels' rules (_elementwise_meta), the Python fast entry
//     points (csrc/python/fast.cpp) and the drop-in's ops, kernels and defaults
//     (aten_override.h / .cpp). Run it after changing a row; tests/test_cpp.py checks the files.
// Adding an op: CONTRIBUTING.md.
//
// Light header: no torch, usable from .cpp and .cu files.

namespace myops {
namespace ew {

// clang-format off: the tables below keep one line a row, their columns aligned by hand

// ---- kernels: one line per functor the backends run -------------------------------------------
// K(KIND, ARITY, DTYPES, CUDA_UNIT, FORM)
//   KIND       the EwKind value
//   ARITY      tensor operands
//   DTYPES     the storage dtypes the kernel is compiled for: All (bool, the integers, float16,
//              bfloat16, float32, float64), NonBool, Float (the four floating types)
//   CUDA_UNIT  the .cu file that compiles its CUDA kernel (cuda/elementwise_<unit>.cu)
//   FORM       plain: the functor is the struct KIND of elementwise/elementwise_functors.h, built as
//              KIND{} and run by each backend's generic kernel (all operands of the result
//              dtype, computed in its opmath type) unless the backend specializes the kind;
//              custom: the functor takes parameters (gelu's approximation, add's alpha,
//              addcmul's value) or mixed dtypes (cast, where's condition), and every backend
//              writes the kernel of that kind itself
#define MYOPS_EW_KERNELS(K)               \
  K(Relu, 1, NonBool, unary, plain)       \
  K(Gelu, 1, Float, unary, custom)        \
  K(Silu, 1, Float, unary, plain)         \
  K(Sigmoid, 1, Float, unary, plain)      \
  K(Abs, 1, NonBool, unary, plain)        \
  K(Neg, 1, NonBool, unary, plain)        \
  K(Exp, 1, Float, unary, plain)          \
  K(Log, 1, Float, unary, plain)          \
  K(Sqrt, 1, Float, unary, plain)         \
  K(Rsqrt, 1, Float, unary, plain)        \
  K(Tanh, 1, Float, unary, plain)         \
  K(Cast, 1, All, cast, custom)           \
  K(Add, 2, All, binary, custom)          \
  K(Mul, 2, All, binary, plain)           \
  K(Div, 2, Float, div_pow_minmax, plain) \
  K(Maximum, 2, All, div_pow_minmax, plain) \
  K(Minimum, 2, All, div_pow_minmax, plain) \
  K(Pow, 2, Float, div_pow_minmax, plain) \
  K(Where, 3, All, ternary, custom)       \
  K(Addcmul, 3, NonBool, ternary, custom) \
  K(Clamp, 3, NonBool, ternary, plain)    \
  K(ClampScalar, 3, NonBool, ternary, plain)

// ---- ops: one line per schema -----------------------------------------------------------------
// X(FN, NAME, OVERLOAD, KIND, RULE, SIG, SCHEMA, DROPIN)
//   FN         the C++ / Python function name (myops::FN, myops._C.FN, the handle ops::FN())
//   NAME       the schema name; OVERLOAD its overload name ("" for the default)
//   KIND       the kernel it runs (MYOPS_EW_KERNELS)
//   RULE       the result dtype (declared, as FlagGems declares its promotion methods):
//                Same               the operand's dtype
//                IntToFloat         the operand's dtype if floating, else the default float dtype
//                Promote            torch.result_type of the tensor operands
//                PromoteIntToFloat  Promote, an integral result becoming the default float dtype
//                PromoteNumber      at::result_type(tensor, number): the number is a wrapped number
//                                   (it never widens the tensor's category's dtype)
//                PromoteNumberIntToFloat  PromoteNumber, an integral result becoming the default
//                                   float dtype (div)
//                Target             the dtype argument (cast)
//                Values             Promote over the value operands (where: not the condition)
//              The operands must have one of the kernel's DTYPES (else NotImplementedError),
//              but for IntToFloat and PromoteIntToFloat (any dtype: converted to the float
//              result first) and where noted in the front end (where's condition, addcmul's
//              and clamp's bool operands promoting to a non-bool result).
//   SIG        the C++ signature, a line of myops/op_signatures.h. The number operands (Scalar
//              overloads, as aten has them: add.Scalar, where.ScalarOther, ...; a number first,
//              which aten takes as a wrapped-number tensor, is the overload ScalarSelf) are
//              scalar, scalar_alpha, rscalar, rscalar_alpha and the where_* forms. Its ENTRY
//              says whether the op has code of its own: unary, binary, scalar and rscalar are
//              generic (front end, autograd and drop-in generated from RULE and KIND, the
//              derivative a formula struct in autograd.cpp); an op of those signatures with a
//              quirk names <SIG>_own and has its own code, its reason beside it
//   SCHEMA     the schema after the name
//   DROPIN     route(ATEN, DEFAULT): the drop-in (myops.enable / replace_torch_ops) can stand in
//              for aten overload ATEN, and routes it when no ops are named if DEFAULT (the
//              bit-exact ops: on; the transcendental ones, a few ulp from torch: off); its
//              hand-back is torch's kernel for the backend (at::cpu / at::cuda::ATEN);
//              composite(ATEN, DEFAULT): the same for an aten op with no per-backend kernel
//              (aten::abs), whose hand-back is its CompositeExplicitAutograd kernel;
//              none: not routable
#define MYOPS_EW_OPS(X)                                                                                          \
  X(relu, relu, "", Relu, Same, unary, "(Tensor self) -> Tensor", route("relu", true))                          \
  X(gelu, gelu, "", Gelu, Same, gelu, "(Tensor self, *, str approximate='none') -> Tensor", route("gelu", false)) \
  X(silu, silu, "", Silu, Same, unary, "(Tensor self) -> Tensor", route("silu", false))                         \
  X(sigmoid, sigmoid, "", Sigmoid, IntToFloat, unary, "(Tensor self) -> Tensor", route("sigmoid", false))       \
  X(abs, abs, "", Abs, Same, unary, "(Tensor self) -> Tensor", composite("abs", true))                        \
  X(neg, neg, "", Neg, Same, unary, "(Tensor self) -> Tensor", route("neg", true))                               \
  X(exp, exp, "", Exp, IntToFloat, unary, "(Tensor self) -> Tensor", route("exp", false))                        \
  X(log, log, "", Log, IntToFloat, unary, "(Tensor self) -> Tensor", route("log", false))                        \
  X(sqrt, sqrt, "", Sqrt, IntToFloat, unary, "(Tensor self) -> Tensor", route("sqrt", false))                    \
  X(rsqrt, rsqrt, "", Rsqrt, IntToFloat, unary, "(Tensor self) -> Tensor", route("rsqrt", false))                \
  X(tanh, tanh, "", Tanh, IntToFloat, unary, "(Tensor self) -> Tensor", route("tanh", false))                    \
  X(cast, cast, "", Cast, Target, cast, "(Tensor self, ScalarType dtype) -> Tensor", none)                      \
  X(add, add, "", Add, Promote, alpha, "(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",              \
    route("add.Tensor", true))                                                                                   \
  X(sub, sub, "", Add, Promote, alpha, "(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",              \
    route("sub.Tensor", true))                                                                                   \
  X(mul, mul, "", Mul, Promote, binary, "(Tensor self, Tensor other) -> Tensor", route("mul.Tensor", true))     \
  X(div, div, "", Div, PromoteIntToFloat, binary, "(Tensor self, Tensor other) -> Tensor", route("div.Tensor", true)) \
  X(add_scalar, add, "Scalar", Add, PromoteNumber, scalar_alpha, "(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", \
    route("add.Scalar", true))                                                                                   \
  X(sub_scalar, sub, "Scalar", Add, PromoteNumber, scalar_alpha, "(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", \
    route("sub.Scalar", true))                                                                                   \
  X(mul_scalar, mul, "Scalar", Mul, PromoteNumber, scalar, "(Tensor self, Scalar other) -> Tensor",              \
    route("mul.Scalar", true))                                                                                   \
  X(div_scalar, div, "Scalar", Div, PromoteNumberIntToFloat, scalar, "(Tensor self, Scalar other) -> Tensor",    \
    route("div.Scalar", true))                                                                                   \
  X(add_scalar_self, add, "ScalarSelf", Add, PromoteNumber, rscalar_alpha,                                       \
    "(Scalar self, Tensor other, *, Scalar alpha=1) -> Tensor", none)                                            \
  X(sub_scalar_self, sub, "ScalarSelf", Add, PromoteNumber, rscalar_alpha,                                       \
    "(Scalar self, Tensor other, *, Scalar alpha=1) -> Tensor", none)                                            \
  X(mul_scalar_self, mul, "ScalarSelf", Mul, PromoteNumber, rscalar_own, "(Scalar self, Tensor other) -> Tensor", none) \
  X(div_scalar_self, div, "ScalarSelf", Div, PromoteNumberIntToFloat, rscalar, "(Scalar self, Tensor other) -> Tensor", \
    none)                                                                                                        \
  X(maximum, maximum, "", Maximum, Promote, binary_own, "(Tensor self, Tensor other) -> Tensor", route("maximum", true)) \
  X(minimum, minimum, "", Minimum, Promote, binary_own, "(Tensor self, Tensor other) -> Tensor", route("minimum", true)) \
  X(pow, pow, "", Pow, Promote, binary_own, "(Tensor self, Tensor exponent) -> Tensor", route("pow.Tensor_Tensor", false)) \
  X(pow_scalar, pow, "Scalar", Pow, PromoteNumber, scalar_own, "(Tensor self, Scalar exponent) -> Tensor",           \
    route("pow.Tensor_Scalar", false))                                                                            \
  X(where, where, "", Where, Values, ternary, "(Tensor condition, Tensor self, Tensor other) -> Tensor",       \
    route("where.self", true))                                                                                   \
  X(where_scalar_self, where, "ScalarSelf", Where, Values, where_scalar_self,                                    \
    "(Tensor condition, Scalar self, Tensor other) -> Tensor", none)                                             \
  X(where_scalar_other, where, "ScalarOther", Where, Values, where_scalar_other,                                 \
    "(Tensor condition, Tensor self, Scalar other) -> Tensor", none)                                             \
  X(where_scalar, where, "Scalar", Where, Values, where_scalars, "(Tensor condition, Scalar self, Scalar other) -> Tensor", \
    none)                                                                                                        \
  X(addcmul, addcmul, "", Addcmul, Promote, value,                                                               \
    "(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", route("addcmul", true))      \
  X(clamp, clamp, "", Clamp, Promote, ternary, "(Tensor self, Tensor min, Tensor max) -> Tensor",               \
    route("clamp.Tensor", true))                                                                                 \
  X(clamp_scalar, clamp, "Scalar", ClampScalar, Promote, clamp_scalar,                                           \
    "(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", none)
// clang-format on

// Every elementwise kernel; the CPU and CUDA backends switch on it.
enum class EwKind {
#define MYOPS_EW_KIND_ENUM(KIND, ...) KIND,
  MYOPS_EW_KERNELS(MYOPS_EW_KIND_ENUM)
#undef MYOPS_EW_KIND_ENUM
};

enum class EwDtypes { All, NonBool, Float };
enum class EwRule {
  Same,
  IntToFloat,
  Promote,
  PromoteIntToFloat,
  PromoteNumber,
  PromoteNumberIntToFloat,
  Target,
  Values
};

// The DROPIN column is C++: route(ATEN, DEFAULT), composite(ATEN, DEFAULT) and none are values
// of this type, so kOps reads a row's drop-in facts with no macro of their own (the generator,
// tools/gen_ops_elementwise.py, tells route from composite).
struct EwDropin {
  const char* aten;  // "" for none
  bool by_default;
};
constexpr EwDropin route(const char* aten, bool by_default) { return {aten, by_default}; }
constexpr EwDropin composite(const char* aten, bool by_default) { return {aten, by_default}; }
constexpr EwDropin none{"", false};

// The kernel's arity and dtypes, by kind.
constexpr int kArity[] = {
#define MYOPS_EW_KIND_ARITY(KIND, ARITY, ...) ARITY,
    MYOPS_EW_KERNELS(MYOPS_EW_KIND_ARITY)
#undef MYOPS_EW_KIND_ARITY
};
constexpr EwDtypes kDtypes[] = {
#define MYOPS_EW_KIND_DTYPES(KIND, ARITY, DTYPES, ...) EwDtypes::DTYPES,
    MYOPS_EW_KERNELS(MYOPS_EW_KIND_DTYPES)
#undef MYOPS_EW_KIND_DTYPES
};
constexpr const char* kKindNames[] = {
#define MYOPS_EW_KIND_NAME(KIND, ...) #KIND,
    MYOPS_EW_KERNELS(MYOPS_EW_KIND_NAME)
#undef MYOPS_EW_KIND_NAME
};
constexpr const char* kDtypesNames[] = {"All", "NonBool", "Float"};
constexpr const char* kRuleNames[] = {
    "Same",   "IntToFloat", "Promote", "PromoteIntToFloat", "PromoteNumber", "PromoteNumberIntToFloat",
    "Target", "Values"};
// FunctorOf<K>::type: the functor of a plain kind (elementwise/elementwise_functors.h defines it).
// The one row expansion that pastes a column (FORM) into a macro name: a custom kind's functor
// may be a template (Add, Addcmul), so only the plain kinds may be declared here.
template <EwKind K>
struct FunctorOf;
#define MYOPS_EW_FUNCTOR_plain(KIND) \
  struct KIND;                       \
  template <>                        \
  struct FunctorOf<EwKind::KIND> {   \
    using type = KIND;               \
  };
#define MYOPS_EW_FUNCTOR_custom(KIND)
#define MYOPS_EW_FUNCTOR_OF(KIND, ARITY, DTYPES, UNIT, FORM) MYOPS_EW_FUNCTOR_##FORM(KIND)
MYOPS_EW_KERNELS(MYOPS_EW_FUNCTOR_OF)
#undef MYOPS_EW_FUNCTOR_OF

// The CUDA_UNIT column: the .cu file of each kind.
enum class CudaUnit { unary, binary, div_pow_minmax, ternary, cast };
constexpr CudaUnit kCudaUnit[] = {
#define MYOPS_EW_KIND_UNIT(KIND, ARITY, DTYPES, UNIT, ...) CudaUnit::UNIT,
    MYOPS_EW_KERNELS(MYOPS_EW_KIND_UNIT)
#undef MYOPS_EW_KIND_UNIT
};
constexpr CudaUnit unit_of(EwKind k) { return kCudaUnit[static_cast<int>(k)]; }

constexpr int arity_of(EwKind k) { return kArity[static_cast<int>(k)]; }
constexpr EwDtypes dtypes_of(EwKind k) { return kDtypes[static_cast<int>(k)]; }

// The ops, in table order.
enum class EwOp {
#define MYOPS_EW_OP_ENUM(FN, ...) FN,
  MYOPS_EW_OPS(MYOPS_EW_OP_ENUM)
#undef MYOPS_EW_OP_ENUM
};

// One op's row, for code that walks the table at run time.
struct EwOpInfo {
  const char* fn;
  const char* name;
  const char* overload;
  EwKind kind;
  EwRule rule;
  const char* aten;  // "" if not routable
  bool dropin_default;
};
constexpr EwOpInfo kOps[] = {
#define MYOPS_EW_OP_INFO(FN, NAME, OVERLOAD, KIND, RULE, SIG, SCHEMA, DROPIN) \
  {#FN, #NAME, OVERLOAD, EwKind::KIND, EwRule::RULE, (DROPIN).aten, (DROPIN).by_default},
    MYOPS_EW_OPS(MYOPS_EW_OP_INFO)
#undef MYOPS_EW_OP_INFO
};
constexpr int kNumEwOps = sizeof(kOps) / sizeof(kOps[0]);

}  // namespace ew
}  // namespace myops

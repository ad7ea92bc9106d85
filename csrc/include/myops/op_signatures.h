#pragma once
// The C++ signatures of the op table's SIG column (myops/op_table.h), each written once.
// tools/gen_ops_elementwise.py reads them with the table and writes out the code that lists the
// ops per signature: the C++ API's declarations (myops/ops_elementwise.h) and the fragments of
// csrc/elementwise/generated/ (the typed dispatcher handles, the C++ API's definitions, the CPU /
// CUDA and Autograd registrations, the fake kernels' rules, the drop-in's kernels and the Python
// fast entry points). Adding a signature is one line here.
//
// MYOPS_EW_SIG_<SIG>(F, P) is F(ENTRY, FAST, API_NAME) followed by one P(TYPE, NAME, DEFAULT)
// per parameter, in order (DEFAULT: `= value`, or empty):
//   ENTRY     generic: the op has no code of its own; its front end, Autograd kernel and drop-in
//             kernel are the table's generic ones for the signature, driven by the op's RULE
//             and KIND (myops/op_table.h): FrontEnd<B>::<SIG>_op<OP> (elementwise/elementwise_front.h),
//             <SIG>_autograd<OP> with the op's derivative formula (autograd.cpp: UnaryGrad<OP>
//             for unary, BinaryGrad<OP> for binary, NumberGrad<OP> for scalar / rscalar) and, if
//             routed, Kernels<B>::<FN> generated (dropin/aten_override.h);
//             own: the op FN has its own front end FrontEnd<B>::FN, Autograd kernel FN_autograd and,
//             if routed, drop-in kernel Kernels<B>::FN. An op of a generic signature that needs
//             code of its own (a quirk of torch's) names the signature's own variant, <SIG>_own
//             (below): the same parameters, ENTRY own; myops._table reports it as <SIG>.
//   FAST      fast: a Python entry point myops._C.<FN> (tensors first, then numbers, None or a
//             number, a str or a dtype; trailing defaults may be left out); none: no entry point
//   API_NAME  fn: the C++ API function is myops::<FN>; name: myops::<NAME>, an overload of the
//             op's default form (clamp(self, optional min, optional max))
// Light header: no torch (the types are spelled out).

// clang-format off
//                    SIG                      ENTRY    FAST  API_NAME  parameters
#define MYOPS_EW_SIG_unary(F, P)              F(generic, fast, fn)   P(const at::Tensor&, self, )
#define MYOPS_EW_SIG_gelu(F, P)               F(own, fast, fn)       P(const at::Tensor&, self, ) P(c10::string_view, approximate, = "none")
#define MYOPS_EW_SIG_cast(F, P)               F(own, fast, fn)       P(const at::Tensor&, self, ) P(c10::ScalarType, dtype, )
#define MYOPS_EW_SIG_scalar(F, P)             F(generic, fast, fn)   P(const at::Tensor&, self, ) P(const c10::Scalar&, other, )
#define MYOPS_EW_SIG_binary(F, P)             F(generic, fast, fn)   P(const at::Tensor&, self, ) P(const at::Tensor&, other, )
#define MYOPS_EW_SIG_alpha(F, P)              F(own, fast, fn)       P(const at::Tensor&, self, ) P(const at::Tensor&, other, ) P(const c10::Scalar&, alpha, = 1)
#define MYOPS_EW_SIG_scalar_alpha(F, P)       F(own, fast, fn)       P(const at::Tensor&, self, ) P(const c10::Scalar&, other, ) P(const c10::Scalar&, alpha, = 1)
#define MYOPS_EW_SIG_rscalar(F, P)            F(generic, none, fn)   P(const c10::Scalar&, self, ) P(const at::Tensor&, other, )
#define MYOPS_EW_SIG_rscalar_alpha(F, P)      F(own, none, fn)       P(const c10::Scalar&, self, ) P(const at::Tensor&, other, ) P(const c10::Scalar&, alpha, = 1)
#define MYOPS_EW_SIG_ternary(F, P)            F(own, fast, fn)       P(const at::Tensor&, a, ) P(const at::Tensor&, b, ) P(const at::Tensor&, c, )
#define MYOPS_EW_SIG_value(F, P)              F(own, fast, fn)       P(const at::Tensor&, self, ) P(const at::Tensor&, tensor1, ) P(const at::Tensor&, tensor2, ) P(const c10::Scalar&, value, = 1)
#define MYOPS_EW_SIG_where_scalar_self(F, P)  F(own, none, fn)       P(const at::Tensor&, condition, ) P(const c10::Scalar&, self, ) P(const at::Tensor&, other, )
#define MYOPS_EW_SIG_where_scalar_other(F, P) F(own, none, fn)       P(const at::Tensor&, condition, ) P(const at::Tensor&, self, ) P(const c10::Scalar&, other, )
#define MYOPS_EW_SIG_where_scalars(F, P)      F(own, none, fn)       P(const at::Tensor&, condition, ) P(const c10::Scalar&, self, ) P(const c10::Scalar&, other, )
#define MYOPS_EW_SIG_clamp_scalar(F, P)       F(own, fast, name)     P(const at::Tensor&, self, ) P(const std::optional<c10::Scalar>&, min, ) P(const std::optional<c10::Scalar>&, max, )
// own variants of the generic signatures: SIG_own is SIG (its parameters and facets), ENTRY own
#define MYOPS_EW_SIG_binary_own(F, P)         MYOPS_EW_SIG_OWN(binary, F, P)
#define MYOPS_EW_SIG_scalar_own(F, P)         MYOPS_EW_SIG_OWN(scalar, F, P)
#define MYOPS_EW_SIG_rscalar_own(F, P)        MYOPS_EW_SIG_OWN(rscalar, F, P)
// clang-format on
#define MYOPS_EW_SIG_OWN(SIG, F, P)                                                \
  MYOPS_EW_SIG_OWN_F(F, MYOPS_EW_SIG_##SIG(MYOPS_EW_SIG_F_REST, MYOPS_EW_SIG_EAT)) \
  MYOPS_EW_SIG_##SIG(MYOPS_EW_SIG_EAT, P)
#define MYOPS_EW_SIG_OWN_F(F, ...) F(own, __VA_ARGS__)
#define MYOPS_EW_SIG_F_REST(ENTRY, FAST, API_NAME) FAST, API_NAME

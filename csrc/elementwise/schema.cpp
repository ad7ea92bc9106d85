// The elementwise family's schemas (core/schema.h): one per line of the op table
// (myops/op_table.h), and the control ops that hand the table, its dtype sets and the layout rules
// to Python.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "core/dtypes.h"
#include "core/output_strides.h"
#include "core/schema.h"
#include "elementwise/elementwise_host.h"
#include "myops/op_signatures.h"
#include "myops/op_table.h"

namespace myops {
namespace {

std::vector<std::string> ew_table() {
  // the SIG column as written (an own variant: <SIG>_own) and its ENTRY
  static const char* const sigs[] = {
#define MYOPS_EW_SIG_NAME(FN, NAME, OVERLOAD, KIND, RULE, SIG, ...) #SIG "|" C10_STRINGIZE(MYOPS_EW_ENTRY(SIG)),
      MYOPS_EW_OPS(MYOPS_EW_SIG_NAME)
#undef MYOPS_EW_SIG_NAME
  };
  using namespace ew;
  std::vector<std::string> rows;
  for (int i = 0; i < kNumEwOps; ++i) {
    const auto& op = kOps[i];
    const int k = static_cast<int>(op.kind);
    rows.push_back(std::string(op.fn) + "|" + op.name + "|" + op.overload + "|" + kKindNames[k] + "|" +
                   std::to_string(kArity[k]) + "|" + kDtypesNames[static_cast<int>(kDtypes[k])] + "|" +
                   kRuleNames[static_cast<int>(op.rule)] + "|" + sigs[i] + "|" + op.aten + "|" +
                   (op.dropin_default ? "1" : "0"));
  }
  return rows;
}

// The elementwise layout rules (core/output_strides.h) on symbolic sizes, for the fake kernels.
// _ew_out_strides: input k has ranks[k] dims, its sizes and strides the next ranks[k] entries of
// `sizes` and `strides`.
std::vector<c10::SymInt> ew_out_strides(c10::SymIntArrayRef shape, c10::SymIntArrayRef sizes,
                                        c10::SymIntArrayRef strides, c10::IntArrayRef ranks) {
  TORCH_CHECK(sizes.size() == strides.size(), "myops._ew_out_strides: 'sizes' and 'strides' must have one length, got ",
              sizes.size(), " and ", strides.size());
  std::vector<ew::StridedDims<c10::SymInt>> ins;
  size_t at = 0;
  for (auto r : ranks) {
    TORCH_CHECK(r >= 0 && at + r <= sizes.size(), "myops._ew_out_strides: 'ranks' ", ranks, " do not fit ",
                sizes.size(), " sizes");
    ins.push_back({sizes.slice(at, r), strides.slice(at, r)});
    at += r;
  }
  TORCH_CHECK(at == sizes.size(), "myops._ew_out_strides: 'ranks' ", ranks, " do not fit ", sizes.size(), " sizes");
  return ew::output_strides_of<c10::SymInt>(shape, c10::ArrayRef<ew::StridedDims<c10::SymInt>>(ins));
}

std::vector<c10::SymInt> ew_preserve_strides(c10::SymIntArrayRef sizes, c10::SymIntArrayRef strides) {
  TORCH_CHECK(sizes.size() == strides.size(), "myops._ew_preserve_strides: 'sizes' and 'strides' must have one ",
              "length, got ", sizes.size(), " and ", strides.size());
  return ew::preserve_strides_of<c10::SymInt>(ew::StridedDims<c10::SymInt>{sizes, strides});
}

// The supported dtype sets (core/dtypes.h) for Python (myops._table.DTYPES): one
// "column|name,name,..." string per set of the op table's DTYPES column, Python's dtype names.
std::vector<std::string> dtype_sets() {
  std::vector<std::string> rows;
  for (int i = 0; i < static_cast<int>(std::size(ew::kDtypesNames)); ++i) {
    std::string names = dtype_names(ew::dtypes_in(static_cast<ew::EwDtypes>(i)));
    names.erase(std::remove(names.begin(), names.end(), ' '), names.end());
    rows.push_back(std::string(ew::kDtypesNames[i]) + "|" + names);
  }
  return rows;
}

}  // namespace
}  // namespace myops

MYOPS_SCHEMAS(m) {
  // unary: relu, gelu(approximate='none'|'tanh'), silu, sigmoid, cast; binary (broadcasting,
  // type promotion): add, sub (alpha), mul, div, maximum, minimum, and add / sub / mul / div /
  // where with a number (the Scalar overloads, aten's promotion for a wrapped number); ternary
  // (broadcasting): where, addcmul (value), clamp (Tensor bounds), clamp.Scalar (number bounds:
  // the same values, but only `self` has a gradient, with torch's formula for number bounds)
#define MYOPS_EW_DEF(FN, NAME, OVERLOAD, KIND, RULE, SIG, SCHEMA, DROPIN) \
  m.def((std::string(MYOPS_EW_QUALNAME(NAME, OVERLOAD)) + SCHEMA).c_str());
  MYOPS_EW_OPS(MYOPS_EW_DEF)
#undef MYOPS_EW_DEF
  // mul_scalar: mul.Scalar under its old name, kept for compatibility (CompositeImplicitAutograd,
  // csrc/elementwise/autograd.cpp: it calls mul.Scalar)
  m.def("mul_scalar(Tensor self, Scalar other) -> Tensor");
  // The op table for Python (myops._table: the fake kernels and the test tables read it): one
  // "fn|name|overload|kind|arity|dtypes|rule|sig|aten|dropin_default" string per op, in table order.
  m.def("_ew_table() -> str[]", &myops::ew_table);
  // The elementwise layout rules for the fake kernels (core/output_strides.h; the kernels'
  // planner reads the same rules): the output strides of inputs broadcast to `shape` (their sizes
  // and strides flattened, input k having ranks[k] dims), and the strides of `t.to(dtype)`.
  MYOPS_CONTROL_DEF(m, "_ew_out_strides(SymInt[] shape, SymInt[] sizes, SymInt[] strides, int[] ranks) -> SymInt[]",
                    myops::ew_out_strides);
  MYOPS_CONTROL_DEF(m, "_ew_preserve_strides(SymInt[] sizes, SymInt[] strides) -> SymInt[]",
                    myops::ew_preserve_strides);

  // The supported dtype sets for Python (core/dtypes.h; myops._table.DTYPES reads them): one
  // "column|name,..." string per set of the DTYPES column (All, NonBool, Float).
  m.def("_dtypes() -> str[]", &myops::dtype_sets);
}

// The elementwise family's schemas (core/schema.h): one per line of the op table
// (myops/op_table.h), and the control ops that hand the table, its dtype sets and the layout rules
// to Python.
#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/dtypes.h"
#include "core/output_strides.h"
#include "core/schema.h"
#include "elementwise/elementwise_host.h"
#include "elementwise/elementwise_rules.h"
#include "myops/op_table.h"

namespace myops {
namespace {

std::vector<std::string> ew_table() {
  // the SIG column as written (an own variant: <SIG>_own) and its ENTRY
  static const char* const sigs[] = {
#include "elementwise/generated/sigs.inc"
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

// The elementwise layout rules (core/output_strides.h) on symbolic sizes, for the tests.
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

// A dtype by Python's name ("float32"), as the fake kernels pass it.
at::ScalarType dtype_named(const std::string& name) {
  for (int i = 0; i < static_cast<int>(at::ScalarType::NumOptions); ++i) {
    const auto st = static_cast<at::ScalarType>(i);
    if (c10::getDtypeNames(st).first == name) return st;
  }
  TORCH_CHECK(false, "myops._elementwise_meta: unknown dtype ", name);
}

// The elementwise rules (elementwise/elementwise_rules.h) for the fake kernels: op `qualname`'s
// rule on its tensors (their sizes and strides flattened, tensor k having ranks[k] dims; dtypes
// and devices by Python's names), its numbers and its str / ScalarType argument, each in schema
// order; then the layout on the (symbolic) sizes. Returns the result's dtype (Python's name),
// device, sizes and strides.
std::tuple<std::string, std::string, std::vector<c10::SymInt>, std::vector<c10::SymInt>> elementwise_meta(
    const std::string& qualname, c10::SymIntArrayRef sizes, c10::SymIntArrayRef strides, c10::IntArrayRef ranks,
    const std::vector<std::string>& dtypes, const std::vector<std::string>& devices,
    const std::optional<c10::Scalar>& n0, const std::optional<c10::Scalar>& n1, const std::optional<std::string>& str,
    std::optional<at::ScalarType> dtype) {
  using namespace ew;
  TORCH_CHECK(sizes.size() == strides.size() && ranks.size() == dtypes.size() && ranks.size() == devices.size() &&
                  ranks.size() <= kMaxIn,
              "myops._elementwise_meta: the tensors' sizes, strides, ranks, dtypes and devices do not match");
  std::vector<TensorInfo> infos;
  std::vector<at::ScalarType> tdtypes;
  std::vector<c10::Device> tdevices;
  size_t at = 0;
  for (size_t k = 0; k < ranks.size(); ++k) {
    const auto r = static_cast<size_t>(ranks[k]);
    TORCH_CHECK(ranks[k] >= 0 && at + r <= sizes.size(), "myops._elementwise_meta: 'ranks' ", ranks, " do not fit ",
                sizes.size(), " sizes");
    tdtypes.push_back(dtype_named(dtypes[k]));
    tdevices.push_back(c10::Device(devices[k]));
    infos.emplace_back(sizes.slice(at, r), strides.slice(at, r), tdtypes.back(), tdevices.back());
    at += r;
  }
  const int op_index = [&] {
    for (int i = 0; i < kNumEwOps; ++i) {
      const auto& o = kOps[i];
      if ((o.overload[0] ? std::string(o.name) + "." + o.overload : std::string(o.name)) == qualname) return i;
    }
    TORCH_CHECK(false, "myops._elementwise_meta: no elementwise op ", qualname);
  }();
  // PyTorch's CPU rules on CPU tensors (a 0-d CPU tensor beside others goes with them)
  bool cpu = true;
  for (const auto& i : infos) {
    if (!(i.dim() == 0 && i.device.is_cpu())) {
      cpu = i.device.is_cpu();
      break;
    }
  }
  auto T = [&](size_t k) -> EwArg {
    TORCH_CHECK(k < infos.size(), "myops._elementwise_meta: ", qualname, " takes more tensors");
    return infos[k];
  };
  const std::optional<c10::Scalar>* numbers[] = {&n0, &n1};
  auto O = [&](int j) { return *numbers[j]; };
  auto N = [&](int j) {
    TORCH_CHECK(numbers[j]->has_value(), "myops._elementwise_meta: ", qualname, " takes a number");
    return **numbers[j];
  };
  auto S = [&] {
    TORCH_CHECK(str.has_value(), "myops._elementwise_meta: ", qualname, " takes a str");
    return c10::string_view(*str);
  };
  auto D = [&] {
    TORCH_CHECK(dtype.has_value(), "myops._elementwise_meta: ", qualname, " takes a dtype");
    return *dtype;
  };
  // each op's rule (elementwise/elementwise_rules.h) on its arguments, written out by
  // tools/gen_ops_elementwise.py
  const EwSpec s = [&]() -> EwSpec {
    switch (static_cast<EwOp>(op_index)) {
#include "elementwise/generated/meta.inc"
    }
    TORCH_CHECK(false, "myops._elementwise_meta: no rule for ", qualname);
  }();
  // the kernel's operands: the tensors in order, each number a 0-d CPU operand
  std::vector<StridedDims<c10::SymInt>> ins;
  std::vector<at::ScalarType> in_dt;
  std::vector<c10::Device> in_dev;
  size_t next = 0;
  for (int k = 0; k < s.nin; ++k) {
    if (s.number[k]) {
      ins.push_back({});
      in_dt.push_back(s.in_dtype[k]);
      in_dev.push_back(c10::kCPU);
    } else {
      const auto& i = infos.at(next++);
      ins.push_back({i.sizes, i.strides});
      in_dt.push_back(i.dtype);
      in_dev.push_back(i.device);
    }
  }
  auto l = ew_layout<c10::SymInt>(s, ins, in_dt, in_dev);
  return {std::string(c10::getDtypeNames(s.dtype).first), s.device.str(), std::move(l.sizes), std::move(l.strides)};
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
  m.def((std::string(#NAME) + (OVERLOAD[0] ? "." OVERLOAD : "") + SCHEMA).c_str());
  MYOPS_EW_OPS(MYOPS_EW_DEF)
#undef MYOPS_EW_DEF
  // mul_scalar: mul.Scalar under its old name, kept for compatibility (CompositeImplicitAutograd,
  // csrc/elementwise/autograd.cpp: it calls mul.Scalar)
  m.def("mul_scalar(Tensor self, Scalar other) -> Tensor");
  // The op table for Python (myops._table: the fake kernels and the test tables read it): one
  // "fn|name|overload|kind|arity|dtypes|rule|sig|aten|dropin_default" string per op, in table order.
  m.def("_ew_table() -> str[]", &myops::ew_table);
  // The elementwise layout rules (core/output_strides.h; the kernels' planner and the fake
  // kernels' rules read them), for tests/test_elementwise_layouts.py: the output strides of inputs broadcast to `shape`
  // (their sizes and strides flattened, input k having ranks[k] dims), and the strides of `t.to(dtype)`.
  MYOPS_CONTROL_DEF(m, "_ew_out_strides(SymInt[] shape, SymInt[] sizes, SymInt[] strides, int[] ranks) -> SymInt[]",
                    myops::ew_out_strides);
  MYOPS_CONTROL_DEF(m, "_ew_preserve_strides(SymInt[] sizes, SymInt[] strides) -> SymInt[]",
                    myops::ew_preserve_strides);

  // The elementwise rules for the fake kernels (elementwise/elementwise_rules.h: the checks, the
  // result's dtype, device, sizes and strides; python/myops/_fake.py passes the arguments)
  MYOPS_CONTROL_DEF(m,
                    "_elementwise_meta(str qualname, SymInt[] sizes, SymInt[] strides, int[] ranks, str[] dtypes, "
                    "str[] devices, Scalar? n0, Scalar? n1, str? str, ScalarType? dtype) -> (str, str, SymInt[], "
                    "SymInt[])",
                    myops::elementwise_meta);

  // The supported dtype sets for Python (core/dtypes.h; myops._table.DTYPES reads them): one
  // "column|name,..." string per set of the DTYPES column (All, NonBool, Float).
  m.def("_dtypes() -> str[]", &myops::dtype_sets);
}

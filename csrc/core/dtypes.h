#pragma once
// The storage dtypes myops' kernels run on, said once: the elementwise op table's DTYPES column
// (All, NonBool, Float), nonzero, max_pool2d_add's operands, the dispatch lists of the kernels
// and, through the control op myops::_dtypes (csrc/elementwise/schema.cpp), Python (myops._table.DTYPES: the
// fake kernels and the tests read it there).
// Light header (c10 only): usable from .cpp and .cu files.
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <string>

namespace myops {

// Every supported dtype, in the order of the messages and of Python's list: bool, the integers,
// then the floating types (float16, bfloat16, float32, float64). A comma list, so that it also
// serves as the type list of AT_DISPATCH_V2.
#define MYOPS_ALL_DTYPES \
  at::kBool, at::kByte, at::kChar, at::kShort, at::kInt, at::kLong, at::kHalf, at::kBFloat16, at::kFloat, at::kDouble

inline constexpr at::ScalarType kAllDtypes[] = {MYOPS_ALL_DTYPES};

// The op table's DTYPES column: All, NonBool (all but bool), Float (the floating types).
inline c10::ArrayRef<at::ScalarType> all_dtypes() { return kAllDtypes; }
inline c10::ArrayRef<at::ScalarType> nonbool_dtypes() { return all_dtypes().slice(1); }
inline c10::ArrayRef<at::ScalarType> float_dtypes() { return all_dtypes().slice(6); }

// Python's names of `dtypes` ("bool, uint8, ..., float64"), for messages.
inline std::string dtype_names(c10::ArrayRef<at::ScalarType> dtypes) {
  std::string names;
  for (auto s : dtypes) {
    if (!names.empty()) names += ", ";
    names += c10::getDtypeNames(s).first;
  }
  return names;
}

}  // namespace myops

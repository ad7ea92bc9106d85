#pragma once
// The typed dispatcher handles of the elementwise ops (myops/op_table.h), built once and shared
// by the C++ API (csrc/ops.cpp), the autograd formulas (each family's autograd.cpp) and the aten drop-in
// (dropin/aten_override.h): handles::<FN>() is the handle of myops::<NAME>[.<OVERLOAD>], found on
// first use (thread-safe), in the library kLib (myops; the CUDA emulation builds its own copy
// of the drop-in around myops_emu, see core/cuda/glue.h). The handles are written out by
// tools/gen_ops_elementwise.py (elementwise/generated/handles.inc). The autograd formulas' helpers
// that call them: elementwise/elementwise_grad.h.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/string_view.h>

#include <optional>
#include <string>

#include "myops/op_table.h"

namespace myops {
namespace ew {

template <class Sig>
c10::TypedOperatorHandle<Sig> find_handle(const char* lib_and_name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(lib_and_name, overload).typed<Sig>();
}

// The handles every myops file uses: handles::relu(), handles::add(), ... (generated: one
// function per op of the table; a struct with the same body and its own kLib makes another
// library's).
struct handles {
  static constexpr const char* kLib = "myops";
#include "elementwise/generated/handles.inc"
};

// handle<OP>(): the same handles by table entry (generic code: autograd's unary formulas).
template <EwOp OP>
inline const auto& handle();
#include "elementwise/generated/handle_of.inc"

}  // namespace ew
}  // namespace myops

#pragma once
// The typed dispatcher handles of the elementwise ops (myops/op_table.h), built once and shared
// by the C++ API (csrc/ops.cpp), the autograd formulas (each family's autograd.cpp) and the aten drop-in
// (dropin/aten_override.h): ops::<FN>() is the handle of myops::<NAME>[.<OVERLOAD>], found on
// first use (thread-safe), in the library LIB (myops; the CUDA emulation builds its own copy
// of the drop-in around myops_emu, see core/cuda/glue.h).
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/string_view.h>

#include <optional>
#include <string>

#include "myops/op_signatures.h"
#include "myops/op_table.h"

namespace myops {
namespace ew {

// MYOPS_EW_SIG_TYPE(SIG): the function type of a SIG of the table (myops/op_signatures.h).
#define MYOPS_EW_SIG_TYPE(SIG) at::Tensor(MYOPS_EW_TYPES(SIG))

template <class Sig>
c10::TypedOperatorHandle<Sig> find_handle(const char* lib_and_name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(lib_and_name, overload).typed<Sig>();
}

// MYOPS_EW_DEFINE_HANDLES(S, LIB) defines struct S with one handle per op of library LIB:
// S::FN() is myops::NAME[.OVERLOAD] for LIB "myops".
#define MYOPS_EW_HANDLE(FN, NAME, OVERLOAD, KIND, RULE, SIG, SCHEMA, DROPIN)                                  \
  static const c10::TypedOperatorHandle<MYOPS_EW_SIG_TYPE(SIG)>& FN() {                                       \
    static const auto h =                                                                                     \
        ::myops::ew::find_handle<MYOPS_EW_SIG_TYPE(SIG)>((std::string(kLib) + "::" #NAME).c_str(), OVERLOAD); \
    return h;                                                                                                 \
  }
#define MYOPS_EW_DEFINE_HANDLES(S, LIB)      \
  struct S {                                 \
    static constexpr const char* kLib = LIB; \
    MYOPS_EW_OPS(MYOPS_EW_HANDLE)            \
  }

// The handles every myops file uses: ops::relu(), ops::add(), ...
MYOPS_EW_DEFINE_HANDLES(ops, "myops");

// handle<OP>(): the same handles by table entry (generic code: autograd's unary formulas).
template <EwOp OP>
inline const auto& handle();
#define MYOPS_EW_HANDLE_OF(FN, ...)       \
  template <>                             \
  inline const auto& handle<EwOp::FN>() { \
    return ops::FN();                     \
  }
MYOPS_EW_OPS(MYOPS_EW_HANDLE_OF)
#undef MYOPS_EW_HANDLE_OF

}  // namespace ew
}  // namespace myops

// The nonzero family's schemas (core/schema.h): nonzero, its static and bounded forms, the
// composites over its bound (select_bounded.cpp), and its shape rule for the fake kernels.
#include <optional>
#include <string>

#include "core/schema.h"
#include "nonzero/nonzero_rules.h"

namespace myops {
namespace {

// nonzero, nonzero_static, nonzero_bounded (size).
void nonzero_meta(c10::string_view op, MYOPS_INFO_ARGS(self), std::optional<c10::SymInt> size) {
  const std::string name(op);
  nonzero_rules::check_input(MYOPS_INFO(self), name.c_str(), self_device.is_cuda());
  if (size.has_value()) check_size(*size, name.c_str());
}

}  // namespace
}  // namespace myops

MYOPS_SCHEMAS(m) {
  m.def("nonzero(Tensor self) -> Tensor");
  m.def("nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor");

  // ---- bounded selection (static output shapes plus the true count as a device scalar) ----
  // indices [size, ndim]: the first min(count, size) rows of nonzero(self), the rest fill_value;
  // count: 0-d int64 on self's device, the true number of nonzeros (may exceed size).
  m.def("nonzero_bounded(Tensor self, *, SymInt size, int fill_value=-1) -> (Tensor indices, Tensor count)");
  // values [size]: the first min(count, size) elements of self[mask], the rest fill_value.
  m.def(
      "masked_select_bounded(Tensor self, Tensor mask, *, SymInt size, Scalar fill_value=0) -> "
      "(Tensor values, Tensor count)");
  // rows [size, *self.shape[1:]]: the first min(count, size) rows of self[mask] (mask 1-D over
  // dim 0), the rest fill_value.
  m.def(
      "mask_rows_bounded(Tensor self, Tensor mask, *, SymInt size, Scalar fill_value=0) -> "
      "(Tensor rows, Tensor count)");

  MYOPS_CONTROL_DEF(m, "_nonzero_meta(str op, " MYOPS_INFO_SCHEMA("self") ", SymInt? size) -> ()", myops::nonzero_meta);
}

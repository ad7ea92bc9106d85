// The diagonal family's schemas (core/schema.h): the op, its backward, and their shape rule for
// the fake kernels.
#include <vector>

#include "core/schema.h"
#include "diagonal/diagonal_shape.h"

namespace myops {
namespace {

// diagonal (no grad_sizes) or diagonal_backward: the diagonal's sizes.
std::vector<c10::SymInt> diagonal_meta(c10::SymIntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2,
                                       at::OptionalSymIntArrayRef grad_sizes) {
  if (grad_sizes.has_value()) return diagonal_backward_sizes(*grad_sizes, sizes, offset, dim1, dim2).out_sizes;
  return diagonal_sizes(sizes, offset, dim1, dim2, "diagonal", "self").out_sizes;
}

}  // namespace
}  // namespace myops

MYOPS_SCHEMAS(m) {
  m.def("diagonal(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor");
  // Writes `grad` onto the diagonal of a zero tensor of shape `input_sizes`.
  m.def("diagonal_backward(Tensor grad, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor");

  // the diagonal's sizes (diagonal_backward's checks with grad_sizes)
  MYOPS_CONTROL_DEF(m,
                    "_diagonal_meta(SymInt[] sizes, int offset, int dim1, int dim2, SymInt[]? grad_sizes) -> SymInt[]",
                    myops::diagonal_meta);
}

// The max_pool2d_add family's schemas (core/schema.h): the op, its backward, and their shape rule
// for the fake kernels.
#include <tuple>
#include <utility>
#include <vector>

#include "core/schema.h"
#include "max_pool2d_add/max_pool2d_add_shape.h"

namespace myops {
namespace {

// max_pool2d_add (other) or its backward (other = grad_output): the result's sizes and strides.
std::tuple<std::vector<c10::SymInt>, std::vector<c10::SymInt>> max_pool2d_add_meta(
    MYOPS_INFO_ARGS(self), MYOPS_INFO_ARGS(other), c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
    c10::IntArrayRef padding, bool ceil_mode, bool backward) {
  if (backward) {
    const auto r = max_pool2d_add::backward_shape(MYOPS_INFO(other), MYOPS_INFO(self), kernel_size, stride, padding,
                                                  ceil_mode, "max_pool2d_add_backward");
    const TensorInfo info = MYOPS_INFO(self);
    return {info.sizes.vec(), myops::layout_strides<c10::SymInt>(info.sizes, r.channels_last)};
  }
  auto r = max_pool2d_add::forward_shape(MYOPS_INFO(self), MYOPS_INFO(other), kernel_size, stride, padding, ceil_mode,
                                         "max_pool2d_add");
  return {std::move(r.sizes), std::move(r.strides)};
}

}  // namespace
}  // namespace myops

MYOPS_SCHEMAS(m) {
  m.def(
      "max_pool2d_add(Tensor self, Tensor other, int[2] kernel_size=[3,3], int[2] stride=[2,2], "
      "int[2] padding=[1,1], bool ceil_mode=False) -> Tensor");
  // Gradient w.r.t. `self` only (the gradient of `other` is a sum over its broadcast dims).
  m.def(
      "max_pool2d_add_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
      "int[2] padding, bool ceil_mode) -> Tensor");

  // the result's sizes and strides (other: grad_output with backward)
  MYOPS_CONTROL_DEF(m,
                    "_max_pool2d_add_meta(" MYOPS_INFO_SCHEMA("self") ", " MYOPS_INFO_SCHEMA("other")
                    ", int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, bool backward) -> "
                    "(SymInt[], SymInt[])",
                    myops::max_pool2d_add_meta);
}

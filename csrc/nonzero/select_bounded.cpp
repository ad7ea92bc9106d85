// masked_select_bounded / mask_rows_bounded: composite ops (CompositeImplicitAutograd) on top of
// nonzero_bounded. One select pass over the mask gives the padded positions and the true count
// (a device scalar), then a gather and a masked fill of the padding: no host sync, static
// output shapes.
//
// Being composite they run wherever nonzero_bounded runs (CPU, CUDA), their gradient w.r.t.
// `self` comes from the ops they call (index_select, masked_fill), and torch.export records them
// as nonzero_bounded plus aten ops, all with static shapes.
#include <ATen/core/Tensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <ATen/ops/lt.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "core/checks.h"
#include "myops/ops.h"

namespace myops {
namespace {

// Rows [0, size) of `source` at the positions in column 0 of `indices` (padding -1 reads row 0)
// with the rows at or past `count` set to fill_value. `source` has at least one row.
at::Tensor gather_rows(const at::Tensor& source, const at::Tensor& indices, const at::Tensor& count, int64_t size,
                       const c10::Scalar& fill_value) {
  const at::Tensor rows = source.index_select(0, indices.select(1, 0).clamp_min(0));
  std::vector<int64_t> pad_shape(source.dim(), 1);
  pad_shape[0] = size;
  const at::Tensor pad = at::arange(size, count.options()).lt(count).logical_not().view(pad_shape);
  return rows.masked_fill(pad, fill_value);
}

std::tuple<at::Tensor, at::Tensor> masked_select_bounded_composite(const at::Tensor& self, const at::Tensor& mask,
                                                                   int64_t size, const c10::Scalar& fill_value) {
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "myops.masked_select_bounded: argument 'mask' must have dtype torch.bool, got ", mask.scalar_type());
  check_same_device(self, "self", mask, "mask", "masked_select_bounded");
  check_size(size, "masked_select_bounded");
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), mask.sizes());
  const at::Tensor flat_mask = mask.expand(shape).reshape({-1});
  const at::Tensor flat_self = self.expand(shape).reshape({-1});
  auto [indices, count] = myops::nonzero_bounded(flat_mask, size, -1);
  if (flat_self.numel() == 0) return {at::full({size}, fill_value, self.options()), count};
  return {gather_rows(flat_self, indices, count, size, fill_value), count};
}

std::tuple<at::Tensor, at::Tensor> mask_rows_bounded_composite(const at::Tensor& self, const at::Tensor& mask,
                                                               int64_t size, const c10::Scalar& fill_value) {
  TORCH_CHECK(self.dim() >= 1, "myops.mask_rows_bounded: argument 'self' must have at least 1 dim, got 0-D");
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "myops.mask_rows_bounded: argument 'mask' must have dtype torch.bool, got ", mask.scalar_type());
  TORCH_CHECK(mask.dim() == 1 && mask.size(0) == self.size(0),
              "myops.mask_rows_bounded: argument 'mask' must be 1-D with ", self.size(0),
              " elements (self's dim 0), got shape ", mask.sizes());
  check_same_device(self, "self", mask, "mask", "mask_rows_bounded");
  check_size(size, "mask_rows_bounded");
  auto [indices, count] = myops::nonzero_bounded(mask, size, -1);
  if (self.size(0) == 0) {
    std::vector<int64_t> out_shape = self.sizes().vec();
    out_shape[0] = size;
    return {at::full(out_shape, fill_value, self.options()), count};
  }
  return {gather_rows(self, indices, count, size, fill_value), count};
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CompositeImplicitAutograd, m) {
  m.impl("masked_select_bounded", &myops::masked_select_bounded_composite);
  m.impl("mask_rows_bounded", &myops::mask_rows_bounded_composite);
}

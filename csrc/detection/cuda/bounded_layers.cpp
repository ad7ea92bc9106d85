// linear_bounded / conv_bounded on CUDA (detection/bounded_layers.h). No host sync (the count stays
// on the device, so a CUDA graph can capture the op): the layer runs on every row, as
// at::linear / at::convolution on the whole input, and the rows at or past `count` are zeroed
// by a device-side mask. Only at:: ops: no kernel of its own.
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <torch/library.h>

#include <vector>

#include "detection/bounded_layers.h"
#include "core/cuda/glue.h"

namespace myops {
namespace {

struct Cuda {
  template <class Layer>
  static at::Tensor run(const Layer& layer, const at::Tensor& input, const at::Tensor& count) {
    layer.check(input, count);
    CudaGuard guard(input.device());
    at::Tensor out = layer(input).contiguous();
    std::vector<int64_t> shape(out.dim(), 1);
    shape[0] = out.size(0);
    const at::Tensor padding = at::arange(out.size(0), count.options()).ge(count).view(shape);
    return out.masked_fill_(padding, 0);  // out is the layer's new tensor: no input is written
  }
};

}  // namespace
}  // namespace myops

MYOPS_CUDA_LIBRARY_IMPL(m) {
  m.impl("linear_bounded", &myops::bounded::Kernels<myops::Cuda>::linear);
  m.impl("conv_bounded", &myops::bounded::Kernels<myops::Cuda>::conv);
}

// linear_bounded / conv_bounded on the CPU (detection/bounded_layers.h): the layer runs on the
// first `count` rows only, as at::linear / at::convolution on input[:count] (the same call with
// the same number of rows as eager on the real rows: the same bits), into a zero-padded result.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "detection/bounded_layers.h"

namespace myops {
namespace {

struct Cpu {
  template <class Layer>
  static at::Tensor run(const Layer& layer, const at::Tensor& input, const at::Tensor& count) {
    layer.check(input, count);
    const int64_t rows = input.size(0);
    const int64_t real = bounded::read_count(count, rows);
    const at::Tensor head = layer(input.narrow(0, 0, real));
    if (real == rows && head.is_contiguous()) return head;
    at::Tensor out =
        at::empty(bounded::sizes_with_rows(head, rows), head.options().memory_format(at::MemoryFormat::Contiguous));
    out.narrow(0, 0, real).copy_(head);
    out.narrow(0, real, rows - real).zero_();
    return out;
  }
};

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("linear_bounded", &myops::bounded::Kernels<myops::Cpu>::linear);
  m.impl("conv_bounded", &myops::bounded::Kernels<myops::Cpu>::conv);
}

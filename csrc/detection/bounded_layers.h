#pragma once
// linear_bounded / conv_bounded, shared by the CPU kernels (detection/cpu/bounded_layers.cpp) and the
// CUDA kernels (detection/cuda/bounded_layers.cpp): the input checks, the layers themselves, the count
// read on the CPU and the result's shape.
//
// Each op is torch's own layer (at::linear, at::convolution) over rows = dim 0 of `input`, of
// which only the first `count` are real: out[:count] is the layer on input[:count], the rows at
// or past count are defined as 0. `count` is a 0-d int64 tensor on the input's device (a value
// outside [0, R] is clamped). The result is contiguous. The CPU kernel runs the layer on the
// real rows only (the same call as on input[:count], so the same bits); the CUDA kernel, which
// must not read the count on the host (graph capture), runs it on every row and zeroes the
// padding on the device. cuBLAS picks its kernel by the row count, so there the real rows can
// differ from the layer on input[:count] in float32's last bits (docs/exactness.md).
#include <ATen/core/Tensor.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/linear.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/checks.h"

namespace myops {
namespace bounded {

// The checks read TensorInfo (core/checks.h): the fake kernels run them through the control op
// myops::_bounded_meta (csrc/detection/schema.cpp).
inline void check_count(const TensorInfo& input, const TensorInfo& count, const char* op) {
  TORCH_CHECK_VALUE(count.dim() == 0, "myops.", op, ": argument 'count' must be a 0-d tensor (the number of real ",
                    "rows), got shape ", count.sizes);
  TORCH_CHECK(count.dtype == at::kLong, "myops.", op, ": argument 'count' must have dtype int64, got ", count.dtype);
  check_same_device(input, "input", count, "count", op);
}

// The layers, with the checks the ops make themselves (the rest, weight, bias, dtypes and
// sizes, are at::linear's and at::convolution's own).
struct Linear {
  static constexpr const char* name = "linear_bounded";
  const at::Tensor& weight;
  const std::optional<at::Tensor>& bias;

  static void check(const TensorInfo& input, const TensorInfo& count) {
    TORCH_CHECK_VALUE(input.dim() == 2, "myops.", name, ": argument 'input' must be a 2-D [R, K] tensor (rows, ",
                      "features), got shape ", input.sizes);
    check_count(input, count, name);
  }
  at::Tensor operator()(const at::Tensor& rows) const { return at::linear(rows, weight, bias); }
};

struct Conv {
  static constexpr const char* name = "conv_bounded";
  const at::Tensor& weight;
  const std::optional<at::Tensor>& bias;
  at::IntArrayRef stride, padding, dilation;
  bool transposed;
  at::IntArrayRef output_padding;
  int64_t groups;

  static void check(const TensorInfo& input, const TensorInfo& count) {
    TORCH_CHECK_VALUE(input.dim() >= 3, "myops.", name, ": argument 'input' must be a batched [R, C, *spatial] ",
                      "tensor (rows first), got shape ", input.sizes);
    check_count(input, count, name);
  }
  at::Tensor operator()(const at::Tensor& rows) const {
    return at::convolution(rows, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  }
};

// The count of real rows of a CPU `count`, clamped to [0, rows] (a plain read: no dispatch).
inline int64_t read_count(const at::Tensor& count, int64_t rows) {
  return std::clamp<int64_t>(*count.const_data_ptr<int64_t>(), 0, rows);
}

// The result's sizes: the layer's on some of the rows (`head`), with `rows` rows.
inline std::vector<int64_t> sizes_with_rows(const at::Tensor& head, int64_t rows) {
  std::vector<int64_t> sizes = head.sizes().vec();
  sizes[0] = rows;
  return sizes;
}

// The two ops' kernels on one device, from its `Device::run(layer, input, count)` (the CPU's and
// CUDA's differ only there): the entry points registered for that device.
template <class Device>
struct Kernels {
  static at::Tensor linear(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           const at::Tensor& count) {
    return Device::run(Linear{weight, bias}, input, count);
  }
  static at::Tensor conv(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                         at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                         at::IntArrayRef output_padding, int64_t groups, const at::Tensor& count) {
    return Device::run(Conv{weight, bias, stride, padding, dilation, transposed, output_padding, groups}, input, count);
  }
};

}  // namespace bounded
}  // namespace myops

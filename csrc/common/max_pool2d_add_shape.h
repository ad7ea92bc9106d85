#pragma once
// Shape logic shared by the CPU and CUDA kernels of myops.max_pool2d_add (and its backward):
// argument checks, PyTorch's pooling output-size formula (ceil_mode included), the memory
// format of the result, and the broadcast strides of `other` over the pooled shape.
// Light header (no ATen.h): usable from .cpp and .cu translation units.
#include <ATen/core/Tensor.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <ATen/ops/empty.h>

#include "common/checks.h"

namespace myops {
namespace max_pool2d_add {

// Everything a kernel needs about one max_pool2d_add call (4-D view: unbatched input has N = 1).
struct Pool2d {
  int64_t N = 0, C = 0, H = 0, W = 0;  // input
  int64_t Ho = 0, Wo = 0;              // pooled output
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0;
  bool ceil_mode = false;
  bool batched = true;       // false for a 3-D [C, H, W] input
  bool channels_last = false;  // input (and result) are channels_last

  // Sizes of the pooled result as the user sees it ([N, C, Ho, Wo] or [C, Ho, Wo]).
  std::vector<int64_t> out_sizes() const {
    if (batched) return {N, C, Ho, Wo};
    return {C, Ho, Wo};
  }
  bool is_fast_3x3s2p1() const {
    return kH == 3 && kW == 3 && sH == 2 && sW == 2 && pH == 1 && pW == 1;
  }
};

// floor division that rounds toward -infinity (PyTorch's div_rtn).
inline int64_t div_rtn(int64_t x, int64_t y) {
  int64_t q = x / y, r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) --q;
  return q;
}

// PyTorch's pooling_output_shape (dilation 1): with ceil_mode the last window must start
// inside the input or the left padding.
inline int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, bool ceil_mode) {
  int64_t out = div_rtn(in + 2 * pad - (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Expands an int[2]-style argument given with 1 or 2 values. `empty_means` (may be null)
// is used when the list is empty (only for stride, like torch's max_pool2d).
inline std::array<int64_t, 2> pair_arg(c10::IntArrayRef v, const char* op, const char* arg,
                                       const std::array<int64_t, 2>* empty_means = nullptr) {
  if (v.empty() && empty_means) return *empty_means;
  TORCH_CHECK(v.size() == 1 || v.size() == 2, "myops.", op, ": argument '", arg,
              "' must be a single int or a list of two ints, got ", v.size(), " values ", v);
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

// Validates self and the pooling arguments; fills everything but the layout decision's inputs.
inline Pool2d make_pool2d(const at::Tensor& self, c10::IntArrayRef kernel_size,
                          c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                          const char* op) {
  check_dtype(self, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}, op, "self");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "myops.", op,
              ": argument 'self' must be a 3-D [C, H, W] or 4-D [N, C, H, W] tensor, got ",
              self.dim(), "-D with shape ", self.sizes());
  auto k = pair_arg(kernel_size, op, "kernel_size");
  auto s = pair_arg(stride, op, "stride", &k);
  auto p = pair_arg(padding, op, "padding");
  // torch's pooling takes these as C int: larger values raise its overflow error
  for (auto [arg, v] : {std::pair<const char*, std::array<int64_t, 2>>{"kernel_size", k}, {"stride", s},
                        {"padding", p}}) {
    for (int64_t x : v) {
      TORCH_CHECK(x >= std::numeric_limits<int>::min() && x <= std::numeric_limits<int>::max(), "myops.", op,
                  ": argument '", arg, "' value ", x, " cannot be converted to type int without overflow");
    }
  }
  TORCH_CHECK(k[0] > 0 && k[1] > 0, "myops.", op,
              ": argument 'kernel_size' must be positive, got ", c10::IntArrayRef(k));
  TORCH_CHECK(s[0] > 0 && s[1] > 0, "myops.", op, ": argument 'stride' must be positive, got ",
              c10::IntArrayRef(s));
  TORCH_CHECK(p[0] >= 0 && p[1] >= 0, "myops.", op,
              ": argument 'padding' must be non-negative, got ", c10::IntArrayRef(p));
  TORCH_CHECK(p[0] <= k[0] / 2 && p[1] <= k[1] / 2, "myops.", op,
              ": argument 'padding' must be at most half of kernel_size, got padding ",
              c10::IntArrayRef(p), " for kernel_size ", c10::IntArrayRef(k));
  Pool2d g;
  g.batched = self.dim() == 4;
  g.N = g.batched ? self.size(0) : 1;
  g.C = self.size(-3);
  g.H = self.size(-2);
  g.W = self.size(-1);
  TORCH_CHECK(g.C > 0 && g.H > 0 && g.W > 0, "myops.", op,
              ": argument 'self' must have non-zero C, H and W (only the batch dim may be 0), "
              "got shape ",
              self.sizes());
  g.kH = k[0], g.kW = k[1], g.sH = s[0], g.sW = s[1], g.pH = p[0], g.pW = p[1];
  g.ceil_mode = ceil_mode;
  g.Ho = pooled_size(g.H, g.kH, g.pH, g.sH, ceil_mode);
  g.Wo = pooled_size(g.W, g.kW, g.pW, g.sW, ceil_mode);
  TORCH_CHECK(g.Ho >= 1 && g.Wo >= 1, "myops.", op, ": argument 'self' of spatial size [", g.H,
              ", ", g.W, "] gives a pooled output of [", g.Ho, ", ", g.Wo,
              "] for kernel_size ", c10::IntArrayRef(k), ", stride ", c10::IntArrayRef(s),
              ", padding ", c10::IntArrayRef(p), ", ceil_mode ", ceil_mode,
              ": the pooled output must be at least 1 x 1");
  // Same rule as torch's max_pool2d output: channels_last when self's strides look like it.
  g.channels_last =
      g.batched && self.suggest_memory_format() == c10::MemoryFormat::ChannelsLast;
  return g;
}

inline c10::MemoryFormat memory_format(const Pool2d& g) {
  return g.channels_last ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::Contiguous;
}

// Raises unless `other` broadcasts to `target` without changing it (the result keeps the
// pooled shape).
inline void check_broadcasts_to(const at::Tensor& other, c10::IntArrayRef target, const char* op) {
  bool ok = other.dim() <= static_cast<int64_t>(target.size());
  for (int64_t i = 1; ok && i <= other.dim(); ++i) {
    int64_t s = other.size(-i), t = target[target.size() - i];
    ok = s == 1 || s == t;
  }
  TORCH_CHECK(ok, "myops.", op, ": argument 'other' of shape ", other.sizes(),
              " must broadcast to the pooled shape ", target);
}

// Element strides of `other` broadcast over the 4-D pooled shape [N, C, Ho, Wo] (0 on
// broadcast dims). `other` must already be checked with check_broadcasts_to.
inline std::array<int64_t, 4> broadcast_strides(const at::Tensor& other, const Pool2d& g) {
  std::array<int64_t, 4> st{0, 0, 0, 0};
  const int64_t sizes4[4] = {g.N, g.C, g.Ho, g.Wo};
  for (int64_t i = 1; i <= other.dim() && i <= 4; ++i) {
    int64_t d = 4 - i;
    st[d] = (other.size(-i) == 1 || sizes4[d] == 1) ? 0 : other.stride(-i);
  }
  return st;
}

// The forward call after the checks: self in its kernel layout (a view when already
// contiguous in it), `other` in the result dtype (a copy of other's own size only when its
// dtype differs; never expanded), its broadcast strides and the allocated result.
struct Forward {
  Pool2d g;
  at::Tensor self;   // contiguous in memory_format(g)
  at::Tensor other;  // result dtype, original (unexpanded) shape
  std::array<int64_t, 4> other_strides;
  at::Tensor out;    // result dtype, pooled shape, memory_format(g)
};

inline Forward prepare_forward(const at::Tensor& self, const at::Tensor& other,
                               c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                               c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  check_same_device(self, "self", other, "other", op);
  Forward f;
  f.g = make_pool2d(self, kernel_size, stride, padding, ceil_mode, op);
  check_dtype(other, {at::kBool, at::kByte, at::kChar, at::kShort, at::kInt, at::kLong, at::kFloat, at::kDouble,
                      at::kHalf, at::kBFloat16}, op, "other");
  auto sizes = f.g.out_sizes();
  check_broadcasts_to(other, sizes, op);
  // torch.result_type(self, other) with a floating self that has dims: a 0-d or integral / bool
  // other does not change it.
  const auto rtype = other.dim() == 0 || !c10::isFloatingType(other.scalar_type())
                         ? self.scalar_type()
                         : c10::promoteTypes(self.scalar_type(), other.scalar_type());
  f.self = self.is_contiguous(memory_format(f.g)) ? self : self.contiguous(memory_format(f.g));
  f.other = other.scalar_type() == rtype ? other : other.to(rtype);
  f.other_strides = broadcast_strides(f.other, f.g);
  f.out = at::empty(sizes, self.options().dtype(rtype).memory_format(memory_format(f.g)));
  return f;
}

// The backward call after the checks: grad_output in self's dtype (what autograd hands to
// max_pool2d's backward) and the zero-free result allocation (every element is written).
struct Backward {
  Pool2d g;
  at::Tensor self;  // contiguous in memory_format(g)
  at::Tensor grad;  // self's dtype, pooled shape, any strides
  std::array<int64_t, 4> grad_strides;
  at::Tensor grad_self;  // self's dtype and shape, memory_format(g)
};

inline Backward prepare_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                 c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                 c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  check_same_device(self, "self", grad_output, "grad_output", op);
  Backward b;
  b.g = make_pool2d(self, kernel_size, stride, padding, ceil_mode, op);
  check_dtype(grad_output, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}, op,
              "grad_output");
  auto sizes = b.g.out_sizes();
  TORCH_CHECK(grad_output.sizes() == c10::IntArrayRef(sizes), "myops.", op,
              ": argument 'grad_output' must have the pooled shape ", c10::IntArrayRef(sizes),
              ", got ", grad_output.sizes());
  b.self = self.is_contiguous(memory_format(b.g)) ? self : self.contiguous(memory_format(b.g));
  b.grad = grad_output.scalar_type() == self.scalar_type() ? grad_output
                                                           : grad_output.to(self.scalar_type());
  b.grad_strides = {0, 0, 0, 0};
  for (int64_t i = 1; i <= b.grad.dim(); ++i) b.grad_strides[4 - i] = b.grad.stride(-i);
  b.grad_self = at::empty(self.sizes(), self.options().memory_format(memory_format(b.g)));
  return b;
}

}  // namespace max_pool2d_add
}  // namespace myops

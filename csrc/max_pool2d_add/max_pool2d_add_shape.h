#pragma once
// Shape logic shared by the CPU and CUDA kernels of myops.max_pool2d_add (and its backward):
// argument checks, PyTorch's pooling output-size formula (ceil_mode included), the memory
// format of the result, and the broadcast strides of `other` over the pooled shape. The checks
// and the pooled shape (forward_shape / backward_shape) read TensorInfo (core/checks.h): the
// fake kernels run them on symbolic sizes through the control op myops::_max_pool2d_add_meta.
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

#include "core/checks.h"
#include "core/dtypes.h"

namespace myops {
namespace max_pool2d_add {

// Everything a kernel needs about one max_pool2d_add call (4-D view: unbatched input has N = 1).
struct Pool2d {
  int64_t N = 0, C = 0, H = 0, W = 0;  // input
  int64_t Ho = 0, Wo = 0;              // pooled output
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0;
  bool ceil_mode = false;
  bool batched = true;         // false for a 3-D [C, H, W] input
  bool channels_last = false;  // input (and result) are channels_last

  // Sizes of the pooled result as the user sees it ([N, C, Ho, Wo] or [C, Ho, Wo]).
  std::vector<int64_t> out_sizes() const {
    if (batched) return {N, C, Ho, Wo};
    return {C, Ho, Wo};
  }
  bool is_fast_3x3s2p1() const { return kH == 3 && kW == 3 && sH == 2 && sW == 2 && pH == 1 && pW == 1; }
};

// floor division that rounds toward -infinity (PyTorch's div_rtn).
inline int64_t div_rtn(int64_t x, int64_t y) {
  int64_t q = x / y, r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) --q;
  return q;
}

// floor division of a size that may be symbolic (c10::SymInt's `/` on two plain ints truncates;
// on a symbol it is Python's floor division, which does not guard).
inline c10::SymInt floor_div(const c10::SymInt& x, int64_t y) {
  if (auto v = x.maybe_as_int()) return div_rtn(*v, y);
  return x / y;
}

// PyTorch's pooling_output_shape (dilation 1): with ceil_mode the last window must start
// inside the input or the left padding.
inline c10::SymInt pooled_size(const c10::SymInt& in, int64_t k, int64_t pad, int64_t stride, bool ceil_mode) {
  c10::SymInt out = floor_div(in + (2 * pad - (k - 1) - 1 + (ceil_mode ? stride - 1 : 0)), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) out = out - 1;
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

// The checked arguments and the pooled result of one call.
struct PoolShape {
  std::array<int64_t, 2> k, s, p;
  std::vector<c10::SymInt> out_sizes;  // [N, C, Ho, Wo] or [C, Ho, Wo]
  bool channels_last = false;          // self (and the result) channels_last
};

// Validates self and the pooling arguments; the pooled sizes and the result's memory format.
inline PoolShape pool_shape(const TensorInfo& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                            c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  check_dtype(self.dtype, float_dtypes(), op, "self");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "myops.", op,
              ": argument 'self' must be a 3-D [C, H, W] or 4-D [N, C, H, W] tensor, got ", self.dim(),
              "-D with shape ", self.sizes);
  PoolShape r;
  auto& k = r.k;
  auto& s = r.s;
  auto& p = r.p;
  k = pair_arg(kernel_size, op, "kernel_size");
  s = pair_arg(stride, op, "stride", &k);
  p = pair_arg(padding, op, "padding");
  // torch's pooling takes these as C int: larger values raise its overflow error
  for (auto [arg, v] :
       {std::pair<const char*, std::array<int64_t, 2>>{"kernel_size", k}, {"stride", s}, {"padding", p}}) {
    for (int64_t x : v) {
      TORCH_CHECK(x >= std::numeric_limits<int>::min() && x <= std::numeric_limits<int>::max(), "myops.", op,
                  ": argument '", arg, "' value ", x, " cannot be converted to type int without overflow");
    }
  }
  TORCH_CHECK(k[0] > 0 && k[1] > 0, "myops.", op, ": argument 'kernel_size' must be positive, got ",
              c10::IntArrayRef(k));
  TORCH_CHECK(s[0] > 0 && s[1] > 0, "myops.", op, ": argument 'stride' must be positive, got ", c10::IntArrayRef(s));
  TORCH_CHECK(p[0] >= 0 && p[1] >= 0, "myops.", op, ": argument 'padding' must be non-negative, got ",
              c10::IntArrayRef(p));
  TORCH_CHECK(p[0] <= k[0] / 2 && p[1] <= k[1] / 2, "myops.", op,
              ": argument 'padding' must be at most half of kernel_size, got padding ", c10::IntArrayRef(p),
              " for kernel_size ", c10::IntArrayRef(k));
  const c10::SymInt &C = self.size(-3), &H = self.size(-2), &W = self.size(-1);
  MYOPS_SYM_CHECK(C.sym_gt(0) & H.sym_gt(0) & W.sym_gt(0), "myops.", op,
                  ": argument 'self' must have non-zero C, H and W (only the batch dim may be 0), got shape ",
                  self.sizes);
  const c10::SymInt Ho = pooled_size(H, k[0], p[0], s[0], ceil_mode);
  const c10::SymInt Wo = pooled_size(W, k[1], p[1], s[1], ceil_mode);
  MYOPS_SYM_CHECK(Ho.sym_ge(1) & Wo.sym_ge(1), "myops.", op, ": argument 'self' of spatial size [", H, ", ", W,
                  "] gives a pooled output of [", Ho, ", ", Wo, "] for kernel_size ", c10::IntArrayRef(k), ", stride ",
                  c10::IntArrayRef(s), ", padding ", c10::IntArrayRef(p), ", ceil_mode ", ceil_mode,
                  ": the pooled output must be at least 1 x 1");
  r.out_sizes.assign(self.sizes.begin(), self.sizes.end() - 2);
  r.out_sizes.push_back(Ho);
  r.out_sizes.push_back(Wo);
  // Same rule as torch's max_pool2d output: channels_last when self's strides look like it
  // (TensorImpl::suggest_memory_format's rule).
  r.channels_last = self.dim() == 4 && c10::is_channels_last_strides_2d<c10::SymInt>(self.sizes, self.strides);
  return r;
}

// The kernels' view of a checked call (concrete sizes).
inline Pool2d make_pool2d(const at::Tensor& self, const PoolShape& r, bool ceil_mode) {
  Pool2d g;
  g.batched = self.dim() == 4;
  g.N = g.batched ? self.size(0) : 1;
  g.C = self.size(-3);
  g.H = self.size(-2);
  g.W = self.size(-1);
  g.kH = r.k[0], g.kW = r.k[1], g.sH = r.s[0], g.sW = r.s[1], g.pH = r.p[0], g.pW = r.p[1];
  g.ceil_mode = ceil_mode;
  g.Ho = r.out_sizes[r.out_sizes.size() - 2].expect_int();
  g.Wo = r.out_sizes.back().expect_int();
  g.channels_last = r.channels_last;
  return g;
}

inline c10::MemoryFormat memory_format(const Pool2d& g) {
  return g.channels_last ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::Contiguous;
}

// Raises unless `other` broadcasts to `target` without changing it (the result keeps the
// pooled shape).
inline void check_broadcasts_to(const TensorInfo& other, c10::SymIntArrayRef target, const char* op) {
  const int64_t nt = static_cast<int64_t>(target.size());
  c10::SymBool ok = other.dim() <= nt;
  for (int64_t i = 1; i <= other.dim() && i <= nt; ++i) {
    const c10::SymInt& s = other.size(-i);
    ok = ok & (s.sym_eq(1) | s.sym_eq(target[nt - i]));
  }
  MYOPS_SYM_CHECK(ok, "myops.", op, ": argument 'other' of shape ", other.sizes, " must broadcast to the pooled shape ",
                  target);
}

// Every check of max_pool2d_add, in order; the pooled shape.
inline PoolShape forward_shape(const TensorInfo& self, const TensorInfo& other, c10::IntArrayRef kernel_size,
                               c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  check_same_device(self, "self", other, "other", op);
  PoolShape r = pool_shape(self, kernel_size, stride, padding, ceil_mode, op);
  check_dtype(other.dtype, all_dtypes(), op, "other");
  check_broadcasts_to(other, r.out_sizes, op);
  return r;
}

// Every check of max_pool2d_add_backward, in order; the pooled shape.
inline PoolShape backward_shape(const TensorInfo& grad_output, const TensorInfo& self, c10::IntArrayRef kernel_size,
                                c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  check_same_device(self, "self", grad_output, "grad_output", op);
  PoolShape r = pool_shape(self, kernel_size, stride, padding, ceil_mode, op);
  check_dtype(grad_output.dtype, float_dtypes(), op, "grad_output");
  c10::SymBool same = grad_output.dim() == static_cast<int64_t>(r.out_sizes.size());
  for (int64_t d = 0; d < grad_output.dim() && d < static_cast<int64_t>(r.out_sizes.size()); ++d) {
    same = same & grad_output.sizes[d].sym_eq(r.out_sizes[d]);
  }
  MYOPS_SYM_CHECK(same, "myops.", op, ": argument 'grad_output' must have the pooled shape ",
                  c10::SymIntArrayRef(r.out_sizes), ", got ", grad_output.sizes);
  return r;
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
  at::Tensor out;  // result dtype, pooled shape, memory_format(g)
};

inline Forward prepare_forward(const at::Tensor& self, const at::Tensor& other, c10::IntArrayRef kernel_size,
                               c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  Forward f;
  f.g = make_pool2d(self, forward_shape(self, other, kernel_size, stride, padding, ceil_mode, op), ceil_mode);
  auto sizes = f.g.out_sizes();
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

inline Backward prepare_backward(const at::Tensor& grad_output, const at::Tensor& self, c10::IntArrayRef kernel_size,
                                 c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  Backward b;
  b.g = make_pool2d(self, backward_shape(grad_output, self, kernel_size, stride, padding, ceil_mode, op), ceil_mode);
  b.self = self.is_contiguous(memory_format(b.g)) ? self : self.contiguous(memory_format(b.g));
  b.grad = grad_output.scalar_type() == self.scalar_type() ? grad_output : grad_output.to(self.scalar_type());
  b.grad_strides = {0, 0, 0, 0};
  for (int64_t i = 1; i <= b.grad.dim(); ++i) b.grad_strides[4 - i] = b.grad.stride(-i);
  b.grad_self = at::empty(self.sizes(), self.options().memory_format(memory_format(b.g)));
  return b;
}

}  // namespace max_pool2d_add
}  // namespace myops

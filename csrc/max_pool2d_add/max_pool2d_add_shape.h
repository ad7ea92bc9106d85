#pragma once
// Shape logic shared by the CPU and CUDA kernels of myops.max_pool2d_add (and its backward):
// argument checks, PyTorch's pooling output-size formula (ceil_mode included), the result's
// shape (the broadcast of the pooled shape and other's, as torch's add) and strides, and the
// kernels' 4-D view of it. The checks and the result's sizes and strides (forward_shape /
// backward_shape) read TensorInfo (core/checks.h): the fake kernels run them on symbolic sizes
// through the control op myops::_max_pool2d_add_meta.
// Light header (no ATen.h): usable from .cpp and .cu translation units.
#include <ATen/core/Tensor.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/result_type.h>

#include "core/checks.h"
#include "core/dtypes.h"
#include "core/output_strides.h"
#include "core/strided.h"

namespace myops {
namespace max_pool2d_add {

// Everything a kernel needs about one max_pool2d_add call (4-D view: unbatched input has N = 1).
// The forward's view is of the result [N, C, Ho, Wo]: when `other` broadcasts the pooled result
// up (`expands`), N folds the result's leading dims, a pooled dim of size 1 is read from input
// image 0 / channel 0 (xn / xc = 0) or window row / column 0 (sH / sW = 0) for every index.
struct Pool2d {
  int64_t N = 0, C = 0, H = 0, W = 0;  // N, C: the result's (the input's without `expands`)
  int64_t Ho = 0, Wo = 0;              // the result's spatial size
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0;
  int64_t xn = 0, xc = 0;  // element strides of the input's image and channel (0: broadcast)
  bool ceil_mode = false;
  bool batched = true;         // false for a 3-D [C, H, W] input
  bool channels_last = false;  // input (and result) are channels_last
  bool expands = false;        // the result is larger than the pooled shape

  // Sizes of the pooled result as the user sees it ([N, C, Ho, Wo] or [C, Ho, Wo]).
  std::vector<int64_t> out_sizes() const {
    if (batched) return {N, C, Ho, Wo};
    return {C, Ho, Wo};
  }
  // the 3x3 / stride 2 / pad 1 kernels' case (every CUDA variant): never when the result expands
  bool is_fast_3x3s2p1() const { return !expands && kH == 3 && kW == 3 && sH == 2 && sW == 2 && pH == 1 && pW == 1; }
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

// The dtypes torch's max_pool2d takes on self's device: the integers too on the CPU (not bool,
// not uint16 / 32 / 64), the floating types only on CUDA (its kernels dispatch on those).
inline c10::ArrayRef<at::ScalarType> pool_dtypes(c10::Device device) {
  return device.is_cuda() ? float_dtypes() : nonbool_dtypes();
}

// Validates self (one of `self_dtypes`) and the pooling arguments; the pooled sizes and the
// memory format of torch's pooled result.
inline PoolShape pool_shape(const TensorInfo& self, c10::ArrayRef<at::ScalarType> self_dtypes,
                            c10::IntArrayRef kernel_size, c10::IntArrayRef stride, c10::IntArrayRef padding,
                            bool ceil_mode, const char* op) {
  check_dtype(self.dtype, self_dtypes, op, "self");
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
  // torch's CPU channels_last kernel indexes a plane in the signed integer of the element's size:
  // an integer self of 1, 2 or 4 bytes must have H * W within it (torch raises otherwise)
  if (r.channels_last && c10::isIntegralType(self.dtype, false) && c10::elementSize(self.dtype) < 8) {
    const int64_t limit = (int64_t(1) << (8 * c10::elementSize(self.dtype) - 1)) - 1;
    MYOPS_SYM_CHECK((H * W).sym_le(limit), "myops.", op, ": a channels_last ", self.dtype,
                    " argument 'self' must have H * W <= ", limit,
                    " (torch's max_pool2d indexes its planes in an integer of the element's size), got ", H, " * ", W);
  }
  return r;
}

// torch's broadcast of the pooled shape with other's (its add's shape rule, infer_size); sets
// `expands` when the result is larger than the pooled shape.
inline std::vector<c10::SymInt> broadcast_sizes(c10::SymIntArrayRef pooled, const TensorInfo& other, bool& expands,
                                                const char* op) {
  const int64_t np = static_cast<int64_t>(pooled.size()), no = other.dim(), nd = std::max(np, no);
  std::vector<c10::SymInt> out(nd);
  expands = no > np;
  for (int64_t i = 1; i <= nd; ++i) {
    if (i > no) {
      out[nd - i] = pooled[np - i];
      continue;
    }
    const c10::SymInt& b = other.size(-i);
    if (i > np || TORCH_GUARD_SIZE_OBLIVIOUS(b.sym_eq(1))) {
      out[nd - i] = i > np ? b : pooled[np - i];
      continue;
    }
    const c10::SymInt& a = pooled[np - i];
    if (TORCH_GUARD_SIZE_OBLIVIOUS(a.sym_eq(1))) {
      out[nd - i] = b;
      expands = true;
      continue;
    }
    MYOPS_SYM_CHECK(a.sym_eq(b), "myops.", op, ": argument 'other' of shape ", other.sizes,
                    " must broadcast with the pooled shape ", pooled, ": size ", b, " against ", a, " at dimension ",
                    -i);
    out[nd - i] = a;
  }
  return out;
}

// The checked arguments and the result of one forward call.
struct ForwardShape {
  PoolShape pool;
  std::vector<c10::SymInt> sizes, strides;  // the result's: torch's add of the pooled result and other
  bool expands = false;                     // the result is larger than the pooled shape
};

// Every check of max_pool2d_add, in order (the pooling's, then the add's); the result's shape and
// strides: the pooled layout, or where other broadcasts it up the strides torch's add chooses
// (TensorIterator's rule, core/output_strides.h) for the pooled result and other.
inline ForwardShape forward_shape(const TensorInfo& self, const TensorInfo& other, c10::IntArrayRef kernel_size,
                                  c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  check_same_device(self, "self", other, "other", op);
  ForwardShape r;
  r.pool = pool_shape(self, pool_dtypes(self.device), kernel_size, stride, padding, ceil_mode, op);
  check_dtype(other.dtype, all_dtypes(), op, "other");
  r.sizes = broadcast_sizes(r.pool.out_sizes, other, r.expands, op);
  auto pooled_strides = layout_strides<c10::SymInt>(r.pool.out_sizes, r.pool.channels_last);
  if (!r.expands) {
    r.strides = std::move(pooled_strides);
    return r;
  }
  const ew::StridedDims<c10::SymInt> ins[2] = {{r.pool.out_sizes, pooled_strides}, {other.sizes, other.strides}};
  r.strides = ew::output_strides_of<c10::SymInt, ew::StridedDims<c10::SymInt>>(r.sizes, ins);
  return r;
}

// Every check of max_pool2d_add_backward, in order; the pooled shape.
inline PoolShape backward_shape(const TensorInfo& grad_output, const TensorInfo& self, c10::IntArrayRef kernel_size,
                                c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  check_same_device(self, "self", grad_output, "grad_output", op);
  PoolShape r = pool_shape(self, float_dtypes(), kernel_size, stride, padding, ceil_mode, op);
  check_dtype(grad_output.dtype, float_dtypes(), op, "grad_output");
  c10::SymBool same = grad_output.dim() == static_cast<int64_t>(r.out_sizes.size());
  for (int64_t d = 0; d < grad_output.dim() && d < static_cast<int64_t>(r.out_sizes.size()); ++d) {
    same = same & grad_output.sizes[d].sym_eq(r.out_sizes[d]);
  }
  MYOPS_SYM_CHECK(same, "myops.", op, ": argument 'grad_output' must have the pooled shape ",
                  c10::SymIntArrayRef(r.out_sizes), ", got ", grad_output.sizes);
  return r;
}

// The kernels' view of a checked call (concrete sizes): self's own, not expanded.
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
  g.xn = g.C * g.H * g.W;
  g.xc = g.channels_last ? 1 : g.H * g.W;
  return g;
}

inline c10::MemoryFormat memory_format(const Pool2d& g) {
  return g.channels_last ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::Contiguous;
}

// Element strides of `other` broadcast over the 4-D pooled shape [N, C, Ho, Wo] (0 on
// broadcast dims). `other` must broadcast to the pooled shape (the result does not expand).
inline std::array<int64_t, 4> broadcast_strides(const at::Tensor& other, const Pool2d& g) {
  std::array<int64_t, 4> st{0, 0, 0, 0};
  const int64_t sizes4[4] = {g.N, g.C, g.Ho, g.Wo};
  for (int64_t i = 1; i <= other.dim() && i <= 4; ++i) {
    int64_t d = 4 - i;
    st[d] = (other.size(-i) == 1 || sizes4[d] == 1) ? 0 : other.stride(-i);
  }
  return st;
}

// The stride of dims [0, n) of `t` taken as one dim (0 when they hold one element), or -1 when
// they cannot be.
inline int64_t folded_stride(const at::Tensor& t, int64_t n) {
  int64_t stride = 0, span = -1;  // span: elements the dims inside the current one step over
  for (int64_t d = n - 1; d >= 0; --d) {
    if (t.size(d) == 1) continue;
    if (span < 0) {
      stride = t.stride(d);
    } else if (t.stride(d) != span) {
      return -1;
    }
    span = t.stride(d) * t.size(d);
  }
  return stride;
}

// The forward call after the checks: self in its kernel layout (a view when already
// contiguous in it), `other` in the result dtype (a copy of other's own size only when its
// dtype differs; never expanded, but for leading dims that do not fold into one), its strides
// over the kernels' view, the result and the buffer the kernels write (the result itself when
// the kernels' layout is the result's).
struct Forward {
  Pool2d g;
  at::Tensor self;   // contiguous in memory_format(g)
  at::Tensor other;  // result dtype
  std::array<int64_t, 4> other_strides;
  at::Tensor out;     // result dtype, [N, C, Ho, Wo] of g in memory_format(g) (any shape of that memory)
  at::Tensor result;  // what the op returns
};

// Where `other` broadcasts the pooled result up: the kernels' view of the result (Pool2d's
// comment), self repeated in memory only where the result's leading dims repeat several input
// images, and the buffer.
inline void prepare_expanding(Forward& f, const at::Tensor& self, const at::Tensor& other) {
  Pool2d& g = f.g;
  const auto O = f.result.sizes();
  const int64_t nd = static_cast<int64_t>(O.size());
  int64_t N = 1;
  for (int64_t d = 0; d < nd - 3; ++d) N *= O[d];
  const int64_t C = O[nd - 3], Ho = O[nd - 2], Wo = O[nd - 1];
  if (g.C != C) g.channels_last = false;  // one channel: its channels_last and NCHW orders are one
  at::Tensor x = self;
  int64_t images = g.N;
  if (images > 1 && images != N) {
    std::vector<int64_t> lead(O.begin(), O.end() - 3);
    lead.insert(lead.end(), {g.C, g.H, g.W});
    x = x.expand(lead).reshape({N, g.C, g.H, g.W});
    images = N;
  }
  f.self = x.contiguous(memory_format(g));
  g.xn = images == 1 ? 0 : g.C * g.H * g.W;
  g.xc = g.C == 1 ? 0 : (g.channels_last ? 1 : g.H * g.W);
  if (g.Ho != Ho) g.sH = 0;  // a pooled row / column of 1: the same window for every index
  if (g.Wo != Wo) g.sW = 0;
  g.N = N, g.C = C, g.Ho = Ho, g.Wo = Wo;
  g.expands = true;

  at::Tensor o = f.other.expand(O);
  int64_t lead = folded_stride(o, nd - 3);
  if (lead < 0) {
    f.other = o.contiguous();
    o = f.other;
    lead = folded_stride(o, nd - 3);
  }
  f.other_strides = {lead, C == 1 ? 0 : o.stride(-3), Ho == 1 ? 0 : o.stride(-2), Wo == 1 ? 0 : o.stride(-1)};

  // the kernels write [N, C, Ho, Wo] in memory_format(g): the result when its strides are those
  const auto want = layout_strides<int64_t>(c10::IntArrayRef{N, C, Ho, Wo}, g.channels_last);
  bool same = true;
  int64_t inner = want[0];  // the stride of the innermost leading dim, the others outward
  for (int64_t d = nd - 1; d >= 0; --d) {
    int64_t expect;
    if (d >= nd - 3) {
      expect = want[d - (nd - 4)];
    } else {
      expect = inner;
      inner *= O[d];
    }
    same &= O[d] == 1 || f.result.stride(d) == expect;
  }
  f.out = same ? f.result : at::empty({N, C, Ho, Wo}, f.result.options().memory_format(memory_format(g)));
}

inline Forward prepare_forward(const at::Tensor& self, const at::Tensor& other, c10::IntArrayRef kernel_size,
                               c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode, const char* op) {
  Forward f;
  const ForwardShape r = forward_shape(self, other, kernel_size, stride, padding, ceil_mode, op);
  f.g = make_pool2d(self, r.pool, ceil_mode);
  // torch.result_type of the pooled result (self's dtype, dims) and other
  const auto rtype = at::result_type(self, other);
  // An integer self that the add promotes is pooled in the result dtype: the conversion is
  // monotone, so the maximum of the converted values is the converted maximum.
  const at::Tensor x =
      rtype != self.scalar_type() && c10::isIntegralType(self.scalar_type(), false) ? self.to(rtype) : self;
  f.other = other.scalar_type() == rtype ? other : other.to(rtype);
  if (!r.expands) {
    f.self = x.is_contiguous(memory_format(f.g)) ? x : x.contiguous(memory_format(f.g));
    f.other_strides = broadcast_strides(f.other, f.g);
    f.out = f.result = at::empty(f.g.out_sizes(), self.options().dtype(rtype).memory_format(memory_format(f.g)));
    return f;
  }
  f.result = at::empty_strided(C10_AS_INTARRAYREF_SLOW(r.sizes), C10_AS_INTARRAYREF_SLOW(r.strides),
                               self.options().dtype(rtype));
  if (f.result.numel() != 0) prepare_expanding(f, x, other);
  return f;
}

// The result, after the kernels have written f.out.
inline at::Tensor finish_forward(const Forward& f) {
  if (!f.out.is_same(f.result)) f.result.copy_(f.out.view(f.result.sizes()));
  return f.result;
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

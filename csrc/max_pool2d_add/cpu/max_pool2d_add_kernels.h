// Kernels of myops.max_pool2d_add on the CPU, included once per instruction set by
// max_pool2d_add.cpp (baseline) and max_pool2d_add_avx2.cpp (AVX2 + FMA), each with its own
// MYOPS_MP_CAP namespace so that the two instantiations never merge at link time.
// See max_pool2d_add.cpp for the algorithm and its exactness argument.
#ifndef MYOPS_MP_CAP
#error "define MYOPS_MP_CAP (the namespace for this instruction set) before including"
#endif
#include <ATen/Dispatch_v2.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>

#include <algorithm>
#include <tuple>
#include <type_traits>
#include <vector>

#include "max_pool2d_add/max_pool2d_add_shape.h"

namespace myops {
namespace max_pool2d_add {
namespace MYOPS_MP_CAP {

// torch's max-pool update rule: take v when it is larger or NaN (so the first maximum and the
// last NaN of the scan win); on integers the maximum.
template <typename M>
inline M sfold(M m, M v) {
  return (v > m || v != v) ? v : m;
}
template <typename M>
inline at::vec::Vectorized<M> vfold(const at::vec::Vectorized<M>& m, const at::vec::Vectorized<M>& v) {
  using Vec = at::vec::Vectorized<M>;
  if constexpr (std::is_integral_v<M>) {
    return at::vec::maximum(m, v);
  } else {
    return Vec::blendv(m, v, (v > m) | v.isnan());
  }
}

// Window [lo, hi) of output position o along a dim of size n (clipped like torch).
inline void window(int64_t o, int64_t k, int64_t s, int64_t p, int64_t n, int64_t& lo, int64_t& hi) {
  int64_t start = o * s - p;
  lo = std::max<int64_t>(start, 0);
  hi = std::min<int64_t>(start + k, n);
}

// Horizontal fold of one input row `x` (W positions of `inner` contiguous values each) into
// `hm` (Wo positions of `inner` values).
template <typename M>
void hmax_row(const M* x, M* hm, const Pool2d& g, int64_t inner) {
  using Vec = at::vec::Vectorized<M>;
  constexpr int64_t V = Vec::size();
  const int64_t W = g.W, Wo = g.Wo;
  if (inner == 1) {
    auto scalar_at = [&](int64_t ow) {
      int64_t lo, hi;
      window(ow, g.kW, g.sW, g.pW, W, lo, hi);
      M m = x[lo];
      for (int64_t iw = lo + 1; iw < hi; ++iw) m = sfold(m, x[iw]);
      hm[ow] = m;
    };
    if (g.kW == 3 && g.sW == 2) {
      // Columns 2*ow - p, +1, +2: even / odd / next even of a de-interleaved pair of vectors.
      // A vector block [ow0, ow0 + V) reads x[2*ow0 - p, 2*ow0 - p + 2V + 2).
      int64_t first = g.pW;  // first ow whose window starts inside the row (2*ow - p >= 0)
      int64_t ow = 0;
      for (; ow < std::min(first, Wo); ++ow) scalar_at(ow);
      for (; ow + V <= Wo && 2 * ow - g.pW + 2 * V + 2 <= W; ow += V) {
        const M* b = x + 2 * ow - g.pW;
        auto e0 = at::vec::deinterleave2(Vec::loadu(b), Vec::loadu(b + V));
        auto e2 = at::vec::deinterleave2(Vec::loadu(b + 2), Vec::loadu(b + 2 + V));
        Vec m = vfold(e0.first, e0.second);
        vfold(m, e2.first).store(hm + ow);
      }
      for (; ow < Wo; ++ow) scalar_at(ow);
    } else {
      for (int64_t ow = 0; ow < Wo; ++ow) scalar_at(ow);
    }
    return;
  }
  for (int64_t ow = 0; ow < Wo; ++ow) {
    int64_t lo, hi;
    window(ow, g.kW, g.sW, g.pW, W, lo, hi);
    M* dst = hm + ow * inner;
    int64_t c = 0;
    for (; c + V <= inner; c += V) {
      Vec m = Vec::loadu(x + lo * inner + c);
      for (int64_t iw = lo + 1; iw < hi; ++iw) m = vfold(m, Vec::loadu(x + iw * inner + c));
      m.store(dst + c);
    }
    for (; c < inner; ++c) {
      M m = x[lo * inner + c];
      for (int64_t iw = lo + 1; iw < hi; ++iw) m = sfold(m, x[iw * inner + c]);
      dst[c] = m;
    }
  }
}

// float copy of n half/bfloat16 values (exact)
template <typename S>
void row_to_float(const S* src, float* dst, int64_t n) {
  using VS = at::vec::Vectorized<S>;
  using VF = at::vec::Vectorized<float>;
  int64_t j = 0;
  if constexpr (VS::size() == 2 * VF::size()) {
    for (; j + VS::size() <= n; j += VS::size()) {
      auto ab = at::vec::convert_to_float<S>(VS::loadu(src + j));
      std::get<0>(ab).store(dst + j);
      std::get<1>(ab).store(dst + j + VF::size());
    }
  }
  for (; j < n; ++j) dst[j] = static_cast<float>(src[j]);
}

// out[j] = R(m[j] + float(o[j * os])) for half/bfloat16 R (the pooled value m is exact in R):
// torch's add of two R values, computed in float and rounded once.
template <typename R>
void add_store_reduced(const float* m, int64_t len, R* out, const R* o, int64_t os) {
  using VR = at::vec::Vectorized<R>;
  using VF = at::vec::Vectorized<float>;
  constexpr int64_t VFS = VF::size();
  int64_t j = 0;
  if constexpr (VR::size() == 2 * VF::size()) {
    for (; j + VR::size() <= len; j += VR::size()) {
      VF oa, ob;
      if (os == 1) {
        auto t = at::vec::convert_to_float<R>(VR::loadu(o + j));
        oa = std::get<0>(t);
        ob = std::get<1>(t);
      } else if (os == 0) {
        oa = ob = VF(static_cast<float>(o[0]));
      } else {
        __at_align__ float buf[2 * VFS];
        for (int64_t k = 0; k < 2 * VFS; ++k) buf[k] = static_cast<float>(o[(j + k) * os]);
        oa = VF::loadu(buf);
        ob = VF::loadu(buf + VFS);
      }
      VF a = VF::loadu(m + j) + oa, b = VF::loadu(m + j + VFS) + ob;
      at::vec::convert_from_float<R>(a, b).store(out + j);
    }
  }
  for (; j < len; ++j) out[j] = static_cast<R>(m[j] + static_cast<float>(o[j * os]));
}

// Vertical fold of `nrows` hmax rows over [j0, j0 + len), plus `other` (element stride os),
// cast and stored to out[0, len).
template <typename S, typename R, typename M>
void vmax_add_segment(const M* const* h, int64_t nrows, int64_t j0, int64_t len, R* out, const R* o, int64_t os,
                      M* tmp) {
  using Vec = at::vec::Vectorized<M>;
  constexpr int64_t V = Vec::size();
  constexpr bool kFast = std::is_same_v<S, R> && std::is_same_v<S, M>;  // float/float, double/double
  using MR = at::opmath_type<R>;
  int64_t j = 0;
  for (; j + V <= len; j += V) {
    Vec m = Vec::loadu(h[0] + j0 + j);
    for (int64_t r = 1; r < nrows; ++r) m = vfold(m, Vec::loadu(h[r] + j0 + j));
    if constexpr (kFast) {
      Vec ov;
      if (os == 1) {
        ov = Vec::loadu(o + j);
      } else if (os == 0) {
        ov = Vec(o[0]);
      } else {
        __at_align__ M buf[V];
        for (int64_t k = 0; k < V; ++k) buf[k] = o[(j + k) * os];
        ov = Vec::loadu(buf);
      }
      (m + ov).store(out + j);
    } else {
      m.store(tmp + j);
    }
  }
  for (; j < len; ++j) {
    M m = h[0][j0 + j];
    for (int64_t r = 1; r < nrows; ++r) m = sfold(m, h[r][j0 + j]);
    tmp[j] = m;
  }
  if constexpr (std::is_same_v<S, R> && !std::is_same_v<S, M>) {
    add_store_reduced<R>(tmp, len, out, o, os);
    return;
  }
  int64_t jstart = kFast ? (len / V) * V : 0;
  for (j = jstart; j < len; ++j) {
    // pooled value in self's dtype, then torch's add: both operands in R, summed in opmath(R).
    R pooled = static_cast<R>(static_cast<S>(tmp[j]));
    out[j] = static_cast<R>(static_cast<MR>(pooled) + static_cast<MR>(o[j * os]));
  }
}

template <typename S, typename R>
void forward_impl(const Forward& f) {
  using M = at::opmath_type<S>;  // float for half/bfloat16
  const Pool2d& g = f.g;
  const bool cl = g.channels_last;
  const int64_t inner = cl ? g.C : 1;
  const int64_t row_len = g.W * inner;    // one input row
  const int64_t hrow_len = g.Wo * inner;  // one horizontally folded row
  const S* in = f.self.const_data_ptr<S>();
  const R* oth = f.other.const_data_ptr<R>();
  R* out = f.out.mutable_data_ptr<R>();
  const auto os = f.other_strides;

  // Output rows per work item: the input rows they need, horizontally folded, should stay in
  // about 128 KiB of per-thread buffer. (sH is 0 where one pooled row is broadcast: every
  // output row reads the same input rows.)
  const int64_t sH = std::max<int64_t>(g.sH, 1);
  const int64_t budget = std::max<int64_t>(1, (int64_t(128) << 10) / (sizeof(M) * hrow_len));
  int64_t rows_per_chunk = std::max<int64_t>(1, (budget - g.kH) / sH + 1);
  rows_per_chunk = std::min(rows_per_chunk, g.Ho);
  const int64_t nchunks = (g.Ho + rows_per_chunk - 1) / rows_per_chunk;
  const int64_t planes = cl ? g.N : g.N * g.C;
  const int64_t items = planes * nchunks;
  // Cost hint: inputs touched per item.
  const int64_t item_cost = rows_per_chunk * sH * row_len + 1;
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / item_cost);

  at::parallel_for(0, items, grain, [&](int64_t begin, int64_t end) {
    const int64_t max_rows = std::min<int64_t>((rows_per_chunk - 1) * g.sH + g.kH, g.H);
    std::vector<M> hbuf(max_rows * hrow_len);
    std::vector<M> tmp(hrow_len);
    std::vector<M> conv(std::is_same_v<S, M> ? 0 : row_len);
    std::vector<const M*> rows(g.kH);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t plane = item / nchunks, chunk = item % nchunks;
      const int64_t oh0 = chunk * rows_per_chunk;
      const int64_t oh1 = std::min(oh0 + rows_per_chunk, g.Ho);
      const int64_t n = cl ? plane : plane / g.C;
      const int64_t c = cl ? 0 : plane % g.C;
      const S* src = in + n * g.xn + c * g.xc;
      int64_t ih_lo, ih_hi, tmp_lo, tmp_hi;
      window(oh0, g.kH, g.sH, g.pH, g.H, ih_lo, tmp_hi);
      window(oh1 - 1, g.kH, g.sH, g.pH, g.H, tmp_lo, ih_hi);
      for (int64_t ih = ih_lo; ih < ih_hi; ++ih) {
        const S* xs = src + ih * row_len;
        const M* x;
        if constexpr (std::is_same_v<S, M>) {
          x = xs;
        } else {
          row_to_float<S>(xs, conv.data(), row_len);
          x = conv.data();
        }
        hmax_row<M>(x, hbuf.data() + (ih - ih_lo) * hrow_len, g, inner);
      }
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        int64_t r0, r1;
        window(oh, g.kH, g.sH, g.pH, g.H, r0, r1);
        for (int64_t r = r0; r < r1; ++r) rows[r - r0] = hbuf.data() + (r - ih_lo) * hrow_len;
        const R* orow = oth + n * os[0] + c * os[1] + oh * os[2];
        if (!cl) {
          R* dst = out + (plane * g.Ho + oh) * g.Wo;
          vmax_add_segment<S, R, M>(rows.data(), r1 - r0, 0, g.Wo, dst, orow, os[3], tmp.data());
        } else {
          R* dst = out + (n * g.Ho + oh) * hrow_len;
          for (int64_t ow = 0; ow < g.Wo; ++ow) {
            vmax_add_segment<S, R, M>(rows.data(), r1 - r0, ow * g.C, g.C, dst + ow * g.C, orow + ow * os[3], os[1],
                                      tmp.data());
          }
        }
      }
    }
  });
}

// ---- backward --------------------------------------------------------------------------------
// grad_self[i] = sum of grad over the windows whose argmax (torch's rule, recomputed from self)
// is i. Per plane, outputs are visited in row-major order and accumulated in self's dtype, the
// order and precision of torch's CPU max_pool2d backward. Planes are independent (no races).
template <typename S>
void backward_impl(const Backward& b) {
  using M = at::opmath_type<S>;
  const Pool2d& g = b.g;
  const bool cl = g.channels_last;
  // element strides of self / grad_self (same layout) for c, h, w within one image
  const int64_t sc = cl ? 1 : g.H * g.W, sh = cl ? g.W * g.C : g.W, sw = cl ? g.C : 1;
  const int64_t img = g.C * g.H * g.W;
  const S* x = b.self.const_data_ptr<S>();
  const S* go = b.grad.const_data_ptr<S>();
  S* gi = b.grad_self.mutable_data_ptr<S>();
  const auto gs = b.grad_strides;
  const int64_t planes = g.N * g.C;
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 14) / (g.H * g.W));
  at::parallel_for(0, planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / g.C, c = p % g.C;
      const S* xp = x + n * img + c * sc;
      S* gp = gi + n * img + c * sc;
      for (int64_t h = 0; h < g.H; ++h)
        for (int64_t w = 0; w < g.W; ++w) gp[h * sh + w * sw] = S(0);
      const S* gop = go + n * gs[0] + c * gs[1];
      for (int64_t oh = 0; oh < g.Ho; ++oh) {
        int64_t h0, h1;
        window(oh, g.kH, g.sH, g.pH, g.H, h0, h1);
        for (int64_t ow = 0; ow < g.Wo; ++ow) {
          int64_t w0, w1;
          window(ow, g.kW, g.sW, g.pW, g.W, w0, w1);
          int64_t best = h0 * sh + w0 * sw;
          M m = static_cast<M>(xp[best]);
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) {
              M v = static_cast<M>(xp[h * sh + w * sw]);
              if (v > m || v != v) {
                m = v;
                best = h * sh + w * sw;
              }
            }
          }
          gp[best] += gop[oh * gs[2] + ow * gs[3]];
        }
      }
    }
  });
}

void forward(const Forward& f) {
  const at::ScalarType s = f.self.scalar_type(), r = f.out.scalar_type();
  AT_DISPATCH_V2(
      s, "myops.max_pool2d_add", AT_WRAP([&] {
        using S = scalar_t;
        if constexpr (std::is_integral_v<S>) {  // pooled in the result dtype (prepare_forward)
          TORCH_CHECK(r == s, "myops.max_pool2d_add: unsupported result dtype ", r, " for self of dtype ", s);
          forward_impl<S, S>(f);
        } else if (r == s) {
          forward_impl<S, S>(f);
        } else if (r == at::kDouble) {
          forward_impl<S, double>(f);
        } else if constexpr (!std::is_same_v<S, double> && !std::is_same_v<S, float>) {
          TORCH_CHECK(r == at::kFloat, "myops.max_pool2d_add: unsupported result dtype ", r, " for self of dtype ", s);
          forward_impl<S, float>(f);
        } else {
          TORCH_CHECK(false, "myops.max_pool2d_add: unsupported result dtype ", r, " for self of dtype ", s);
        }
      }),
      AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16, AT_EXPAND(AT_INTEGRAL_TYPES));
}

void backward(const Backward& b) {
  AT_DISPATCH_V2(b.self.scalar_type(), "myops.max_pool2d_add_backward", AT_WRAP([&] { backward_impl<scalar_t>(b); }),
                 AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16);
}

}  // namespace MYOPS_MP_CAP
}  // namespace max_pool2d_add
}  // namespace myops

// myops.diagonal and myops.diagonal_backward on CPU.
//
// Both ops are one strided copy over an N-d index space (see diagonal/diagonal_shape.h): the
// forward gathers the diagonal view of `self` into a contiguous tensor, the backward scatters
// `grad` into the diagonal view of a zero tensor. The copy walks its positions with an odometer
// (N-d index carried from the innermost dim; one division per dim per parallel chunk, none per
// element), moves contiguous inner runs with memcpy, and, when the innermost dim is strided in
// the source but the next dim is contiguous there (the diagonal over the leading dims of
// [n, n, C]), works in cache tiles so each source cache line is read from memory once.
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/checks.h"
#include "diagonal/diagonal_shape.h"
#include "core/uint_of.h"

namespace {

using myops::StridedCopyPlan;

// The type a copy moves per unit of N bytes.
template <int N>
struct Unit {
  using type = typename myops::UIntOf<N>::type;
};
struct U128 {
  uint64_t lo, hi;
};
template <>
struct Unit<16> {
  using type = U128;
};

// Elements per parallel chunk: the same threshold as torch's own copies. Going parallel earlier
// pays on an idle machine but costs milliseconds when the cores are shared (a worker thread
// waits for a time slice), so below it the copy stays on the calling thread.
constexpr int64_t kGrain = 32768;  // at::internal::GRAIN_SIZE

// One run of the innermost dim: n units from (dst, ds) <- (src, ss).
template <typename T>
inline void copy_run(T* dst, int64_t ds, const T* src, int64_t ss, int64_t n) {
  if (ds == 1 && ss == 1) {
    std::memcpy(dst, src, n * sizeof(T));
  } else if (ds == 1) {
    // The gather of the forward: unrolled so several independent loads are in flight. When
    // every element sits in its own cache line (and usually its own page, where the hardware
    // prefetchers stop), the lines are prefetched a few iterations ahead.
    int64_t k = 0;
    if (ss * static_cast<int64_t>(sizeof(T)) >= 64) {
      constexpr int64_t kAhead = 16;
      for (; k + 4 + kAhead <= n; k += 4) {
        __builtin_prefetch(src + (k + kAhead) * ss);
        __builtin_prefetch(src + (k + kAhead + 1) * ss);
        __builtin_prefetch(src + (k + kAhead + 2) * ss);
        __builtin_prefetch(src + (k + kAhead + 3) * ss);
        const T a = src[k * ss], b = src[(k + 1) * ss], c = src[(k + 2) * ss], d = src[(k + 3) * ss];
        dst[k] = a;
        dst[k + 1] = b;
        dst[k + 2] = c;
        dst[k + 3] = d;
      }
    }
    for (; k + 4 <= n; k += 4) {
      const T a = src[k * ss], b = src[(k + 1) * ss], c = src[(k + 2) * ss], d = src[(k + 3) * ss];
      dst[k] = a;
      dst[k + 1] = b;
      dst[k + 2] = c;
      dst[k + 3] = d;
    }
    for (; k < n; ++k) dst[k] = src[k * ss];
  } else if (ss == 1) {
    for (int64_t k = 0; k < n; ++k) dst[k * ds] = src[k];
  } else {
    for (int64_t k = 0; k < n; ++k) dst[k * ds] = src[k * ss];
  }
}

// General path: parallel over linear positions, odometer per chunk.
template <typename T>
void strided_copy_odometer(const StridedCopyPlan& p) {
  const auto& sh = p.shape;
  const int nd = sh.dim();
  const int64_t numel = sh.numel();
  const int64_t inner = sh.sizes[nd - 1];
  const int64_t ids = sh.strides[nd - 1][0], iss = sh.strides[nd - 1][1];
  T* const dst = reinterpret_cast<T*>(p.dst);
  const T* const src = reinterpret_cast<const T*>(p.src);

  at::parallel_for(0, numel, kGrain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(nd, 0);  // one allocation per chunk
    int64_t doff = 0, soff = 0;
    int64_t lin = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = lin % sh.sizes[d];
      lin /= sh.sizes[d];
      doff += idx[d] * sh.strides[d][0];
      soff += idx[d] * sh.strides[d][1];
    }
    int64_t pos = begin;
    while (true) {
      const int64_t n = std::min(inner - idx[nd - 1], end - pos);
      copy_run(dst + doff, ids, src + soff, iss, n);
      pos += n;
      if (pos >= end) break;
      // The run ended at the end of the innermost dim: rewind it and carry outwards.
      doff -= idx[nd - 1] * ids;
      soff -= idx[nd - 1] * iss;
      idx[nd - 1] = 0;
      for (int d = nd - 2; d >= 0; --d) {
        doff += sh.strides[d][0];
        soff += sh.strides[d][1];
        if (++idx[d] < sh.sizes[d]) break;
        doff -= idx[d] * sh.strides[d][0];
        soff -= idx[d] * sh.strides[d][1];
        idx[d] = 0;
      }
    }
  });
}

// Transpose-like path: innermost dim B is contiguous in dst and strided in src, the dim before
// it, A, is contiguous in src. Works on tiles of kTa x kTb so the kTb source lines touched by a
// tile are reused for kTa elements each before they leave the L1 cache.
template <typename T>
void strided_copy_tiled(const StridedCopyPlan& p) {
  constexpr int64_t kTa = 64 / sizeof(T) >= 8 ? 64 / sizeof(T) : 8;  // one cache line of A
  constexpr int64_t kTb = 64;
  const auto& sh = p.shape;
  const int nd = sh.dim();
  const int64_t nb = sh.sizes[nd - 1], na = sh.sizes[nd - 2];
  const int64_t bds = sh.strides[nd - 1][0], bss = sh.strides[nd - 1][1];
  const int64_t ads = sh.strides[nd - 2][0];  // a's src stride is 1
  int64_t outer = 1;
  for (int d = 0; d < nd - 2; ++d) outer *= sh.sizes[d];
  const int64_t ta = (na + kTa - 1) / kTa, tb = (nb + kTb - 1) / kTb;
  T* const dst = reinterpret_cast<T*>(p.dst);
  const T* const src = reinterpret_cast<const T*>(p.src);
  const int64_t tile_elems = kTa * kTb;

  at::parallel_for(0, outer * ta * tb, std::max<int64_t>(1, kGrain / tile_elems), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t ib = t % tb, rest = t / tb;
      const int64_t ia = rest % ta;
      int64_t o = rest / ta;
      int64_t doff = 0, soff = 0;
      for (int d = nd - 3; d >= 0; --d) {
        const int64_t i = o % sh.sizes[d];
        o /= sh.sizes[d];
        doff += i * sh.strides[d][0];
        soff += i * sh.strides[d][1];
      }
      const int64_t a0 = ia * kTa, a1 = std::min(na, a0 + kTa);
      const int64_t b0 = ib * kTb, b1 = std::min(nb, b0 + kTb);
      for (int64_t a = a0; a < a1; ++a) {
        T* d = dst + doff + a * ads + b0 * bds;
        const T* s = src + soff + a + b0 * bss;
        copy_run(d, bds, s, bss, b1 - b0);
      }
    }
  });
}

template <typename T>
void strided_copy_impl(const StridedCopyPlan& p) {
  const auto& sh = p.shape;
  const int nd = sh.dim();
  if (nd >= 2 && sh.strides[nd - 1][0] == 1 && sh.strides[nd - 1][1] >= 16 && sh.strides[nd - 2][1] == 1 &&
      sh.sizes[nd - 1] >= 16 && sh.sizes[nd - 2] >= 8) {
    strided_copy_tiled<T>(p);
  } else {
    strided_copy_odometer<T>(p);
  }
}

void strided_copy(const StridedCopyPlan& p) {
  if (p.shape.numel() == 0) return;
  switch (p.unit_bytes) {
    case 1:
      return strided_copy_impl<Unit<1>::type>(p);
    case 2:
      return strided_copy_impl<Unit<2>::type>(p);
    case 4:
      return strided_copy_impl<Unit<4>::type>(p);
    case 8:
      return strided_copy_impl<Unit<8>::type>(p);
    case 16:
      return strided_copy_impl<Unit<16>::type>(p);
    default:
      TORCH_CHECK(false, "myops.diagonal: internal error, unit of ", p.unit_bytes, " bytes");
  }
}

at::Tensor diagonal_cpu(const at::Tensor& self_in, int64_t offset, int64_t dim1, int64_t dim2) {
  const at::Tensor self = self_in.is_conj() || self_in.is_neg() ? self_in.resolve_conj().resolve_neg() : self_in;
  const auto g = myops::diagonal_geometry(self.sizes(), self.strides(), offset, dim1, dim2, "diagonal", "self");
  at::Tensor out = at::empty(g.out_sizes, self.options());
  if (out.numel() == 0) return out;
  const int64_t es = self.element_size();
  const auto plan =
      myops::plan_strided_copy(g.out_sizes, out.strides(), g.view_strides, es, static_cast<char*>(out.data_ptr()),
                               static_cast<const char*>(self.const_data_ptr()) + g.view_offset * es);
  strided_copy(plan);
  return out;
}

// The backward in one pass over the output: the dims before min(dim1, dim2) index independent
// blocks of the (contiguous) output, each holding its own part of the diagonal, so each block
// is zeroed and gets its diagonal elements while it is in the cache, instead of zeroing the
// whole output and then coming back for the diagonal. Returns false where that does not apply
// (too few blocks to share between threads, blocks larger than the L2 cache, or a unit size
// that not every block's pointers allow): the caller zeroes and scatters.
bool diagonal_backward_blocked(const at::Tensor& out, const at::Tensor& grad, const myops::DiagonalGeometry& g) {
  const int64_t a = std::min(g.dim1, g.dim2);
  const int64_t es = grad.element_size();
  int64_t outer = 1, block = 1;
  for (int64_t d = 0; d < out.dim(); ++d) (d < a ? outer : block) *= out.size(d);
  if (outer < 2 || block * es > (256 << 10) || outer * block < 2 * kGrain) return false;
  std::vector<int64_t> sizes(g.out_sizes.begin() + a, g.out_sizes.end());
  std::vector<int64_t> dst_st(g.view_strides.begin() + a, g.view_strides.end());
  std::vector<int64_t> src_st(grad.strides().begin() + a, grad.strides().end());
  char* const out0 = static_cast<char*>(out.data_ptr());
  const char* const grad0 = static_cast<const char*>(grad.const_data_ptr());
  const auto plan = myops::plan_strided_copy(sizes, dst_st, src_st, es, out0 + g.view_offset * es, grad0);
  // the unit was chosen for block 0: every block's pointers must allow it too
  if ((block * es) % plan.unit_bytes != 0) return false;
  for (int64_t d = 0; d < a; ++d) {
    if ((grad.stride(d) * es) % plan.unit_bytes != 0) return false;
  }
  at::parallel_for(0, outer, std::max<int64_t>(1, kGrain / std::max<int64_t>(block, 1)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t o = begin; o < end; ++o) {
                       int64_t goff = 0, rest = o;
                       for (int64_t d = a - 1; d >= 0; --d) {
                         goff += (rest % grad.size(d)) * grad.stride(d);
                         rest /= grad.size(d);
                       }
                       char* blk = out0 + o * block * es;
                       std::memset(blk, 0, block * es);
                       auto q = plan;
                       q.dst = blk + g.view_offset * es;
                       q.src = grad0 + goff * es;
                       strided_copy(q);  // runs on this thread: nested parallel_for is sequential
                     }
                   });
  return true;
}

at::Tensor diagonal_backward_cpu(const at::Tensor& grad_in, c10::IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                                 int64_t dim2) {
  const auto g = myops::diagonal_backward_geometry(grad_in.sizes(), input_sizes, offset, dim1, dim2);
  const at::Tensor grad = grad_in.is_conj() || grad_in.is_neg() ? grad_in.resolve_conj().resolve_neg() : grad_in;
  at::Tensor out = at::empty(input_sizes, grad.options());
  if (grad.numel() > 0 && diagonal_backward_blocked(out, grad, g)) return out;
  out.zero_();
  if (grad.numel() == 0) return out;
  const int64_t es = grad.element_size();
  const auto plan = myops::plan_strided_copy(g.out_sizes, g.view_strides, grad.strides(), es,
                                             static_cast<char*>(out.data_ptr()) + g.view_offset * es,
                                             static_cast<const char*>(grad.const_data_ptr()));
  strided_copy(plan);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("diagonal", &diagonal_cpu);
  m.impl("diagonal_backward", &diagonal_backward_cpu);
}

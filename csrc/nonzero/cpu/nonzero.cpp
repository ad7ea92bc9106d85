// nonzero / nonzero_static on CPU.
//
// Two parallel passes over the SAME partition of the row-major linear index space into chunks:
//   1. count the nonzero elements of every chunk (vectorizable loop over each contiguous row),
//   2. exclusive-scan the counts (tiny, serial), allocate the exact result, and let every chunk
//      write its coordinates from its own output offset.
// The N-d index of a chunk's first element is computed once (one division per dim); after that
// the walk carries the index like an odometer, so no element is ever divided.
//
// "Nonzero" is decided on the bit pattern: integers and bool compare against 0, floating types
// ignore the sign bit, so -0.0 counts as zero and NaN as nonzero, exactly like `x != 0`.
//
// Output layout (matches torch 2.14 on CPU): nonzero returns [nnz, ndim] with strides (1, nnz),
// i.e. a column-major buffer holding one row of nnz coordinates per dim; nonzero_static returns a
// contiguous [size, ndim] tensor whose rows past nnz hold fill_value.
#include <ATen/Dispatch_v2.h>
#include <ATen/EmptyTensor.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/checks.h"
#include "core/dtypes.h"
#include "nonzero/nonzero_rules.h"
#include "core/strided.h"
#include "core/uint_of.h"

namespace myops {
namespace {

// The unsigned storage type of a dtype and the mask of the bits that make it nonzero
// (nonzero/nonzero_rules.h).
template <typename T>
struct Bits {
  using type = typename UIntOf<sizeof(T)>::type;
  static constexpr type mask = static_cast<type>(nonzero_rules::mask(
      std::is_floating_point_v<T> || std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>, sizeof(T)));
};

// Smallest chunk worth a task of its own; a tensor this small runs inline on the caller.
constexpr int64_t kMinChunk = int64_t(1) << 15;

// The partition shared by both passes: `nchunks` ranges of `chunk` linear positions.
struct Partition {
  int64_t numel = 0, chunk = 1, nchunks = 0;
  explicit Partition(int64_t n) : numel(n) {
    const int64_t tasks = std::max<int64_t>(1, 4 * at::get_num_threads());
    chunk = std::max(kMinChunk, (n + tasks - 1) / tasks);
    nchunks = (n + chunk - 1) / chunk;
  }
  int64_t begin(int64_t c) const { return c * chunk; }
  int64_t end(int64_t c) const { return std::min(numel, (c + 1) * chunk); }

  template <typename F>
  void for_each(const F& f) const {
    if (nchunks <= 1) {
      if (nchunks == 1) f(0);
      return;
    }
    at::parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) f(c);
    });
  }
};

// Walks the linear positions [begin, end) of a row-major space (sizes / element strides,
// outermost first, nd >= 1) one innermost-row segment at a time:
// fn(element offset of the segment's first element, its inner index, its length).
// `idx` (nd entries) holds the N-d index of the segment's first element during the call.
template <typename F>
void walk_rows(const int64_t* sizes, const int64_t* strides, int nd, int64_t begin, int64_t end, int64_t* idx,
               const F& fn) {
  int64_t rem = begin, off = 0;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rem % sizes[d];
    rem /= sizes[d];
    off += idx[d] * strides[d];
  }
  const int64_t inner = sizes[nd - 1], inner_stride = strides[nd - 1];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t j0 = idx[nd - 1];
    const int64_t n = std::min(inner - j0, end - pos);
    fn(off, j0, n);
    pos += n;
    if (pos >= end) break;
    // carry into the outer dims
    off -= j0 * inner_stride;
    idx[nd - 1] = 0;
    for (int d = nd - 2; d >= 0; --d) {
      ++idx[d];
      off += strides[d];
      if (idx[d] < sizes[d]) break;
      off -= idx[d] * strides[d];
      idx[d] = 0;
    }
  }
}

// Number of nonzero elements among p[0], p[s], ..., p[(n-1)*s].
template <typename U, U MASK>
int64_t count_row(const U* p, int64_t n, int64_t s) {
  int64_t total = 0;
  if (s == 1) {
    // blocks with a 32-bit accumulator so the compiler vectorizes the compare-and-add
    while (n > 0) {
      const int64_t m = std::min<int64_t>(n, 1 << 16);
      uint32_t c = 0;
      for (int64_t i = 0; i < m; ++i) c += (p[i] & MASK) != 0;
      total += c;
      p += m;
      n -= m;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) total += (p[i * s] & MASK) != 0;
  }
  return total;
}

// Where coordinate d of result row k goes: out[k * row_stride + d * col_stride].
struct OutLayout {
  int64_t* out;
  int64_t row_stride, col_stride;
};

// Writes the coordinates of the nonzero elements of one row segment (n elements at p with
// element stride s, inner indices j0.., outer indices idx[0..nd-2]) to result rows k.., never
// past row `kend`. Returns the next free row.
template <typename U, U MASK>
int64_t write_row(const U* p, int64_t n, int64_t s, int64_t j0, const int64_t* idx, int nd, const OutLayout& o,
                  int64_t k, int64_t kend, bool dense) {
  int64_t* inner_col = o.out + (nd - 1) * o.col_stride;
  const int64_t rs = o.row_stride;
  if (dense) {
    // branch-free: write every element's coordinates at row k, advance k only if it is nonzero
    if (nd == 1) {
      for (int64_t t = 0; t < n && k < kend; ++t) {
        inner_col[k * rs] = j0 + t;
        k += (p[t * s] & MASK) != 0;
      }
    } else {
      for (int64_t t = 0; t < n && k < kend; ++t) {
        for (int d = 0; d < nd - 1; ++d) o.out[k * rs + d * o.col_stride] = idx[d];
        inner_col[k * rs] = j0 + t;
        k += (p[t * s] & MASK) != 0;
      }
    }
    return k;
  }
  int64_t t = 0;
  if (sizeof(U) == 1 && s == 1) {
    // sparse bytes: skip zero 8-byte words
    for (;;) {
      for (; t + 8 <= n; t += 8) {
        uint64_t w;
        std::memcpy(&w, p + t, 8);
        if (w != 0) break;
      }
      const int64_t stop = std::min(n, t + 8);
      for (; t < stop; ++t) {
        if ((p[t] & MASK) != 0) {
          if (k >= kend) return k;
          for (int d = 0; d < nd - 1; ++d) o.out[k * rs + d * o.col_stride] = idx[d];
          inner_col[k * rs] = j0 + t;
          ++k;
        }
      }
      if (t >= n) return k;
    }
  }
  for (; t < n; ++t) {
    if ((p[t * s] & MASK) != 0) {
      if (k >= kend) return k;
      for (int d = 0; d < nd - 1; ++d) o.out[k * rs + d * o.col_stride] = idx[d];
      inner_col[k * rs] = j0 + t;
      ++k;
    }
  }
  return k;
}

// The iteration space of `self`: its own sizes and strides (a 0-d tensor is walked as [1]),
// plus a coalesced copy used where only element offsets matter (the counting pass).
struct Space {
  std::vector<int64_t> sizes, strides, csizes, cstrides;
  explicit Space(const at::Tensor& self) {
    sizes = self.sizes().vec();
    strides = self.strides().vec();
    if (sizes.empty()) {
      sizes = {1};
      strides = {1};
    }
    StridedShape<1> sh;
    sh.sizes = sizes;
    for (auto st : strides) sh.strides.push_back({st});
    sh.coalesce();
    csizes = sh.sizes;
    for (auto& st : sh.strides) cstrides.push_back(st[0]);
  }
};

// Pass 1 over the partition: per-chunk counts, turned into exclusive offsets; returns the total.
template <typename U, U MASK>
int64_t count_chunks(const U* data, const Space& sp, const Partition& part, std::vector<int64_t>& offsets) {
  offsets.assign(part.nchunks + 1, 0);
  const int nd = static_cast<int>(sp.csizes.size());
  part.for_each([&](int64_t c) {
    std::vector<int64_t> idx(nd);
    int64_t cnt = 0;
    walk_rows(sp.csizes.data(), sp.cstrides.data(), nd, part.begin(c), part.end(c), idx.data(),
              [&](int64_t off, int64_t, int64_t n) { cnt += count_row<U, MASK>(data + off, n, sp.cstrides[nd - 1]); });
    offsets[c + 1] = cnt;
  });
  for (int64_t c = 0; c < part.nchunks; ++c) offsets[c + 1] += offsets[c];
  return offsets[part.nchunks];
}

// Pass 2: every chunk writes its coordinates to rows [offsets[c], min(offsets[c+1], limit)).
// `ndim` is the rank of `self` (0 for a 0-d tensor: nothing to write).
template <typename U, U MASK>
void write_chunks(const U* data, const Space& sp, int ndim, const Partition& part, const std::vector<int64_t>& offsets,
                  int64_t limit, const OutLayout& o) {
  if (ndim == 0) return;
  const int nd = ndim;
  const int64_t inner_stride = sp.strides[nd - 1];
  part.for_each([&](int64_t c) {
    int64_t k = offsets[c];
    const int64_t kend = std::min(offsets[c + 1], limit);
    if (k >= kend) return;
    const int64_t len = part.end(c) - part.begin(c);
    // more than ~1 in 4 nonzero: branch-free writes beat mispredicted branches
    const bool dense = 4 * (offsets[c + 1] - offsets[c]) > len;
    std::vector<int64_t> idx(nd);
    walk_rows(sp.sizes.data(), sp.strides.data(), nd, part.begin(c), part.end(c), idx.data(),
              [&](int64_t off, int64_t j0, int64_t n) {
                if (k < kend)
                  k = write_row<U, MASK>(data + off, n, inner_stride, j0, idx.data(), nd, o, k, kend, dense);
              });
  });
}

template <typename scalar_t>
at::Tensor nonzero_impl(const at::Tensor& self) {
  using U = typename Bits<scalar_t>::type;
  constexpr U mask = Bits<scalar_t>::mask;
  const int ndim = static_cast<int>(self.dim());
  const auto opts = self.options().dtype(at::kLong);
  const int64_t numel = self.numel();
  if (numel == 0) return at::empty_strided({0, ndim}, {1, 0}, opts);
  const U* data = reinterpret_cast<const U*>(self.const_data_ptr());
  Space sp(self);
  Partition part(numel);
  std::vector<int64_t> offsets;
  const int64_t nnz = count_chunks<U, mask>(data, sp, part, offsets);
  at::Tensor out = at::empty_strided({nnz, ndim}, {1, nnz}, opts);
  if (nnz > 0) {
    write_chunks<U, mask>(data, sp, ndim, part, offsets, nnz, OutLayout{out.data_ptr<int64_t>(), 1, nnz});
  }
  return out;
}

// nonzero_static's result [size, ndim]; stores the true number of nonzeros at *nnz_out, or,
// with a null nnz_out (nonzero_static), skips the passes when there is nothing to write.
template <typename scalar_t>
at::Tensor nonzero_static_impl(const at::Tensor& self, int64_t size, int64_t fill_value, int64_t* nnz_out) {
  using U = typename Bits<scalar_t>::type;
  constexpr U mask = Bits<scalar_t>::mask;
  const int ndim = static_cast<int>(self.dim());
  at::Tensor out = at::empty({size, ndim}, self.options().dtype(at::kLong));
  int64_t* o = out.data_ptr<int64_t>();
  int64_t nnz = 0;
  const int64_t numel = self.numel();
  if (numel > 0 && (nnz_out != nullptr || (size > 0 && ndim > 0))) {
    const U* data = reinterpret_cast<const U*>(self.const_data_ptr());
    Space sp(self);
    Partition part(numel);
    std::vector<int64_t> offsets;
    nnz = count_chunks<U, mask>(data, sp, part, offsets);
    if (size > 0) write_chunks<U, mask>(data, sp, ndim, part, offsets, size, OutLayout{o, ndim, 1});
  }
  if (nnz_out != nullptr) *nnz_out = nnz;
  if (ndim > 0) std::fill(o + std::min(nnz, size) * ndim, o + size * ndim, fill_value);
  return out;
}

at::Tensor nonzero_cpu(const at::Tensor& in) {
  const at::Tensor self = nonzero_rules::real_input(in);
  nonzero_rules::check_input(self, "nonzero", /*cuda=*/false);
  at::Tensor out;
  AT_DISPATCH_V2(self.scalar_type(), "myops.nonzero", AT_WRAP([&] { out = nonzero_impl<scalar_t>(self); }),
                 AT_EXPAND(MYOPS_ALL_DTYPES));
  return out;
}

// nonzero_static / nonzero_bounded: one counting and one writing pass; `nnz` gets the count.
at::Tensor select_static(const at::Tensor& in, int64_t size, int64_t fill_value, int64_t* nnz, const char* op) {
  const at::Tensor self = nonzero_rules::real_input(in);
  nonzero_rules::check_input(self, op, /*cuda=*/false);
  check_size(size, op);
  at::Tensor out;
  AT_DISPATCH_V2(self.scalar_type(), "myops.nonzero_static",
                 AT_WRAP([&] { out = nonzero_static_impl<scalar_t>(self, size, fill_value, nnz); }),
                 AT_EXPAND(MYOPS_ALL_DTYPES));
  return out;
}

at::Tensor nonzero_static_cpu(const at::Tensor& self, int64_t size, int64_t fill_value) {
  return select_static(self, size, fill_value, nullptr, "nonzero_static");
}

std::tuple<at::Tensor, at::Tensor> nonzero_bounded_cpu(const at::Tensor& self, int64_t size, int64_t fill_value) {
  int64_t nnz = 0;
  at::Tensor out = select_static(self, size, fill_value, &nnz, "nonzero_bounded");
  // a plain CPU allocation, not a dispatcher call: the second output costs what it must
  at::Tensor count = at::detail::empty_cpu({}, at::kLong);
  *count.data_ptr<int64_t>() = nnz;
  return {out, count};
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("nonzero", &myops::nonzero_cpu);
  m.impl("nonzero_static", &myops::nonzero_static_cpu);
  m.impl("nonzero_bounded", &myops::nonzero_bounded_cpu);
}

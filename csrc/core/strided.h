#pragma once
// N-d strided addressing shared by the kernels: merge dimensions that can be merged, then map a
// linear (row-major) position to one element offset per operand with fast integer division.
// Header-only and torch-free apart from c10's SmallVector-free std::vector: usable from .cu files.
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/fast_divmod.h"
#include "core/macros.h"

namespace myops {

// Strides of a contiguous (row-major) tensor of `sizes`, as torch computes them (a zero-size
// dim counts as 1, so the strides of empty tensors match torch's too); in the sizes' integer
// type (int64_t, or c10::SymInt for the fake kernels' rule, core/output_strides.h).
template <typename Sizes, typename T = std::decay_t<decltype(std::declval<const Sizes&>()[0])>>
inline std::vector<T> contiguous_strides(const Sizes& sizes) {
  std::vector<T> st(sizes.size());
  T s = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : T(1);
  }
  return st;
}

// Sizes and per-operand element strides of an N-d iteration space, outermost dim first.
template <int NARGS>
struct StridedShape {
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, NARGS>> strides;  // strides[d][arg]

  int64_t numel() const {
    int64_t n = 1;
    for (auto s : sizes) n *= s;
    return n;
  }
  int dim() const { return static_cast<int>(sizes.size()); }

  // Drops size-1 dims and merges dim d into d+1 wherever every operand has
  // stride[d] == stride[d+1] * size[d+1]. Leaves at least one dim.
  void coalesce() {
    std::vector<int64_t> ns;
    std::vector<std::array<int64_t, NARGS>> nst;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 1) continue;
      if (!ns.empty()) {
        bool mergeable = true;
        for (int a = 0; a < NARGS; ++a) {
          if (nst.back()[a] != strides[d][a] * sizes[d]) mergeable = false;
        }
        if (mergeable) {
          ns.back() *= sizes[d];
          nst.back() = strides[d];
          continue;
        }
      }
      ns.push_back(sizes[d]);
      nst.push_back(strides[d]);
    }
    if (ns.empty()) {
      ns.push_back(1);
      std::array<int64_t, NARGS> z{};
      nst.push_back(z);
    }
    sizes = std::move(ns);
    strides = std::move(nst);
  }

  // Largest element offset any operand reaches (strides are non-negative in torch).
  int64_t max_offset(int arg) const {
    int64_t m = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] > 0) m += (sizes[d] - 1) * strides[d][arg];
    }
    return m;
  }
};

// Device-copyable linear-position -> per-operand offset map. index_t is uint32_t when every
// position and offset is below 2^31, uint64_t otherwise. Dims are stored innermost first.
template <int NARGS, typename index_t>
struct OffsetCalc {
  int ndim = 0;
  FastDivmod<index_t> div[MYOPS_MAX_DIMS];
  index_t stride[MYOPS_MAX_DIMS][NARGS];

  OffsetCalc() = default;
  // `shape.dim()` must be <= MYOPS_MAX_DIMS (coalesce first).
  explicit OffsetCalc(const StridedShape<NARGS>& shape) {
    ndim = shape.dim();
    for (int i = 0; i < ndim; ++i) {
      int d = ndim - 1 - i;
      div[i] = FastDivmod<index_t>(static_cast<index_t>(shape.sizes[d] > 0 ? shape.sizes[d] : 1));
      for (int a = 0; a < NARGS; ++a) stride[i][a] = static_cast<index_t>(shape.strides[d][a]);
    }
  }

  MYOPS_HD void get(index_t linear, index_t (&off)[NARGS]) const {
    MYOPS_UNROLL
    for (int a = 0; a < NARGS; ++a) off[a] = 0;
    MYOPS_UNROLL
    for (int i = 0; i < MYOPS_MAX_DIMS; ++i) {
      if (i == ndim) break;
      index_t q, r;
      div[i].divmod(linear, q, r);
      linear = q;
      MYOPS_UNROLL
      for (int a = 0; a < NARGS; ++a) off[a] += r * stride[i][a];
    }
  }
};

}  // namespace myops

#pragma once
// The layout rules of torch's results, said once for two integer types:
//  - layout_strides: a dense result in the contiguous or channels_last layout;
//  - output_strides_of: the output strides TensorIterator chooses for inputs broadcast to a shape;
//  - preserve_strides_of: the strides of `t.to(dtype)` (empty_like, memory_format=preserve).
// int64_t on tensors: the kernels' planner (elementwise/elementwise_host.h, per call). c10::SymInt on
// sizes and strides: the elementwise rules' layout (ew_layout, elementwise/elementwise_rules.h) that
// the fake kernels run (python/myops/_fake.py), so that torch.compile and torch.export see the
// layout the kernels produce, and the control ops myops::_ew_out_strides / _ew_preserve_strides
// (csrc/elementwise/schema.cpp) that tests/test_elementwise_layouts.py checks them with. c10::SymInt's comparisons
// guard on symbolic values as Python's do, so the rule reads the same for both.
#include <ATen/core/Tensor.h>
#include <c10/core/Contiguity.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/SymInt.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "core/strided.h"

namespace myops {

// Strides of a dense tensor of `sizes` in torch's contiguous or (4-D) channels_last layout
// (c10's, as empty(memory_format=...) lays it out).
template <typename T>
std::vector<T> layout_strides(c10::ArrayRef<T> sizes, bool channels_last) {
  if (channels_last) return c10::get_channels_last_strides_2d<T>(sizes);
  return myops::contiguous_strides(sizes);  // qualified: not c10's (ADL on IntArrayRef)
}

namespace ew {

// ---- an operand as the rules see it: sizes, strides and c10's layout flags ----------------------
// A tensor answers from its cached flags (the fast path). Sizes and strides alone (StridedDims)
// compute the same flags with the c10 functions TensorImpl computes its own with.
inline at::IntArrayRef dims_sizes(const at::Tensor* t) { return t->sizes(); }
inline at::IntArrayRef dims_strides(const at::Tensor* t) { return t->strides(); }
inline bool dims_contiguous(const at::Tensor* t) { return t->is_contiguous(); }
inline bool dims_channels_last(const at::Tensor* t) { return t->is_contiguous(at::MemoryFormat::ChannelsLast); }
inline bool dims_dense(const at::Tensor* t) { return t->is_non_overlapping_and_dense(); }

template <typename T>
struct StridedDims {
  c10::ArrayRef<T> sizes, strides;
};
template <typename T>
c10::ArrayRef<T> dims_sizes(const StridedDims<T>& d) {
  return d.sizes;
}
template <typename T>
c10::ArrayRef<T> dims_strides(const StridedDims<T>& d) {
  return d.strides;
}
template <typename T>
bool dims_contiguous(const StridedDims<T>& d) {
  T numel = 1;
  for (const auto& s : d.sizes) numel *= s;
  return c10::_compute_contiguous<T>(d.sizes, d.strides, numel);
}
template <typename T>
bool dims_channels_last(const StridedDims<T>& d) {
  return c10::_compute_channels_last_contiguous_2d<T>(d.sizes, d.strides);
}
// TensorImpl::is_non_overlapping_and_dense: contiguous in a memory format (an empty tensor is
// contiguous), or dense in some order of its dims
template <typename T>
bool dims_dense(const StridedDims<T>& d) {
  if (dims_contiguous(d)) return true;
  if (d.sizes.size() == 4 && dims_channels_last(d)) return true;
  if (d.sizes.size() == 5 && c10::_compute_channels_last_contiguous_3d<T>(d.sizes, d.strides)) return true;
  return c10::_compute_non_overlapping_and_dense<T>(d.sizes, d.strides);
}

// TensorIterator's dimension order (reorder_dimensions; ATen's infer_dense_strides sorts the same
// way): perm[0] the fastest-moving dim, from the reversed dims (C order) by an insertion sort
// that moves a dim outward while should_swap(outer, inner) > 0 and stops at the first < 0.
template <typename ShouldSwap>
std::vector<int64_t> sorted_dims(int64_t nd, ShouldSwap should_swap) {
  std::vector<int64_t> perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  for (int64_t i = 1; i < nd; ++i) {
    int64_t dim1 = i;
    for (int64_t dim0 = i - 1; dim0 >= 0; --dim0) {
      int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
  return perm;
}

// Output strides exactly as PyTorch's TensorIterator chooses them for inputs `ins` broadcast to
// `shape`: its "fast setup" (all inputs the same shape and all contiguous / all channels_last /
// all dense with equal strides) and otherwise its stable ordering of the dimensions by the
// inputs' strides (broadcast dims ignored), the output dense in that order.
template <typename T, typename Dims>
std::vector<T> output_strides_of(c10::ArrayRef<T> shape, c10::ArrayRef<Dims> ins) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (nd == 0) return {};
  bool same_shape = true;
  for (const auto& t : ins) same_shape &= dims_sizes(t).equals(dims_sizes(ins[0]));
  if (same_shape) {
    bool contig = true, cl = true, dense = true;
    for (const auto& t : ins) {
      contig &= dims_contiguous(t);
      cl &= dims_channels_last(t);
      dense &= dims_dense(t);
    }
    if (contig || cl) return myops::layout_strides<T>(shape, /*channels_last=*/!contig);  // cl: 4-d only
    if (dense) {
      bool eq = true;
      for (const auto& t : ins) eq &= dims_strides(t).equals(dims_strides(ins.back()));
      if (eq) return dims_strides(ins.back()).vec();
    }
  }
  // Broadcast strides of every input (0 on broadcast and missing leading dims).
  std::vector<std::vector<T>> bst;
  bst.reserve(ins.size());
  for (const auto& t : ins) {
    const auto sz = dims_sizes(t);
    const auto sd = dims_strides(t);
    const int64_t td = static_cast<int64_t>(sz.size());
    std::vector<T> s(nd, T(0));
    const int64_t off = nd - td;
    for (int64_t i = 0; i < td; ++i) {
      if (!(sz[i] == 1 && shape[off + i] != 1)) s[off + i] = sd[i];
    }
    bst.push_back(std::move(s));
  }
  auto perm = sorted_dims(nd, [&](int64_t d0, int64_t d1) -> int {
    for (const auto& s : bst) {
      const T& s0 = s[d0];
      const T& s1 = s[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  });
  bool inverted = true;
  for (int64_t j = 0; j < nd; ++j) inverted &= perm[j] == nd - 1 - j;
  if (inverted) return myops::contiguous_strides(shape);  // qualified: not c10's (ADL on IntArrayRef)
  std::vector<T> st(nd);
  T next = 1;
  for (int64_t j = 0; j < nd; ++j) {
    st[perm[j]] = next;
    next *= shape[perm[j]];
  }
  return st;
}

// Strides of `t.to(dtype)` (empty_like, memory_format=preserve): t's own strides when it is dense
// and non-overlapping, else ATen's infer_dense_strides: dense strides in t's own dim order (the
// order above, on t alone; a size-0 dim counts as 1).
template <typename T, typename Dims>
std::vector<T> preserve_strides_of(const Dims& t) {
  const auto sizes = dims_sizes(t);
  const auto strides = dims_strides(t);
  if (dims_dense(t)) return strides.vec();
  const int64_t nd = static_cast<int64_t>(sizes.size());
  auto perm = sorted_dims(nd, [&](int64_t d0, int64_t d1) -> int {
    const T& s0 = strides[d0];
    const T& s1 = strides[d1];
    if (s0 == 0 || s1 == 0) return 0;
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    return sizes[d0] > sizes[d1] ? 1 : 0;
  });
  std::vector<T> out(nd);
  T cur = 1;
  for (int64_t j = 0; j < nd; ++j) {
    out[perm[j]] = cur;
    if (sizes[perm[j]] > 1) cur *= sizes[perm[j]];
  }
  return out;
}

}  // namespace ew
}  // namespace myops

#pragma once
// Shape logic of myops.diagonal / myops.diagonal_backward shared by the CPU and CUDA glue,
// and the byte-level strided-copy plan both devices execute.
//
// The diagonal of `self` over (dim1, dim2) is a strided view: its dims are the other dims in
// order followed by the diagonal dim, whose stride is stride[dim1] + stride[dim2], and it starts
// `offset * stride[dim2]` (offset >= 0) or `-offset * stride[dim1]` (offset < 0) elements in.
// Forward gathers that view into a contiguous tensor; backward scatters a gradient into the
// same view of a zero tensor. Both are one strided copy dst[i] = src[i] over an N-d index space.
//
// Light header (c10 only): usable from .cpp and .cu files.
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/strided.h"

namespace myops {

struct DiagonalGeometry {
  int64_t dim1 = 0, dim2 = 0;       // wrapped
  std::vector<int64_t> out_sizes;   // other dims in order, then the diagonal
  std::vector<int64_t> view_strides;  // strides of the diagonal view of the input, in elements
  int64_t view_offset = 0;          // element offset of the view's first element (from data_ptr)
};

// Wraps a possibly negative dim; raises naming the op and the argument when out of range.
inline int64_t diagonal_wrap_dim(int64_t dim, int64_t ndim, const char* op, const char* arg) {
  TORCH_CHECK_INDEX(dim >= -ndim && dim < ndim, "myops.", op, ": argument '", arg,
              "' must be in the range [", -ndim, ", ", ndim - 1, "] for a ", ndim,
              "-D tensor, got ", dim);
  return dim < 0 ? dim + ndim : dim;
}

// Length of the diagonal, never negative, without overflow for any int64 offset.
inline int64_t diagonal_length(int64_t size1, int64_t size2, int64_t offset) {
  int64_t n;
  if (offset >= 0) {
    n = offset >= size2 ? 0 : std::min(size1, size2 - offset);
  } else {
    n = offset <= -size1 ? 0 : std::min(size1 + offset, size2);
  }
  return std::max<int64_t>(n, 0);
}

// `tensor_arg` names the tensor whose sizes are given (for the rank message).
inline DiagonalGeometry diagonal_geometry(c10::IntArrayRef sizes, c10::IntArrayRef strides,
                                          int64_t offset, int64_t dim1, int64_t dim2,
                                          const char* op, const char* tensor_arg) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  if (ndim < 2) {
    // torch.diagonal wraps the dims (a 0-d tensor as if 1-D): dims that are in range are then
    // the same dim (RuntimeError), others out of range (IndexError); same types here
    const int64_t n = ndim > 0 ? ndim : 1;
    const bool in_range = dim1 >= -n && dim1 < n && dim2 >= -n && dim2 < n;
    TORCH_CHECK(!in_range, "myops.", op, ": argument 'dim2' must refer to a different dim than 'dim1', got dim1=",
                dim1, " and dim2=", dim2, " (argument '", tensor_arg, "' is a ", ndim, "-D tensor)");
    TORCH_CHECK_INDEX(false, "myops.", op, ": argument '", tensor_arg, "' must have at least 2 dims, got a ", ndim,
                      "-D tensor");
  }
  DiagonalGeometry g;
  g.dim1 = diagonal_wrap_dim(dim1, ndim, op, "dim1");
  g.dim2 = diagonal_wrap_dim(dim2, ndim, op, "dim2");
  TORCH_CHECK(g.dim1 != g.dim2, "myops.", op,
              ": argument 'dim2' must refer to a different dim than 'dim1', got dim1=", dim1,
              " and dim2=", dim2, " (both dim ", g.dim1, " of a ", ndim, "-D tensor)");
  const int64_t n = diagonal_length(sizes[g.dim1], sizes[g.dim2], offset);
  for (int64_t d = 0; d < ndim; ++d) {
    if (d == g.dim1 || d == g.dim2) continue;
    g.out_sizes.push_back(sizes[d]);
    g.view_strides.push_back(strides[d]);
  }
  g.out_sizes.push_back(n);
  g.view_strides.push_back(strides[g.dim1] + strides[g.dim2]);
  if (n > 0) {  // an empty diagonal may start past the end: leave the offset at 0
    g.view_offset = offset >= 0 ? offset * strides[g.dim2] : -offset * strides[g.dim1];
  }
  return g;
}

// The checks of diagonal_backward, shared by its CPU and CUDA kernels: `input_sizes` must be
// valid and `grad` must have the shape of the diagonal. Returns the geometry of the diagonal
// view of a contiguous tensor of `input_sizes`.
inline DiagonalGeometry diagonal_backward_geometry(c10::IntArrayRef grad_sizes,
                                                   c10::IntArrayRef input_sizes, int64_t offset,
                                                   int64_t dim1, int64_t dim2) {
  for (auto s : input_sizes) {
    TORCH_CHECK(s >= 0, "myops.diagonal_backward: argument 'input_sizes' must be non-negative, got ",
                input_sizes);
  }
  const auto in_strides = contiguous_strides(input_sizes);
  DiagonalGeometry g =
      diagonal_geometry(input_sizes, in_strides, offset, dim1, dim2, "diagonal_backward", "input_sizes");
  TORCH_CHECK(grad_sizes.equals(g.out_sizes),
              "myops.diagonal_backward: argument 'grad' must have the shape of the diagonal ",
              c10::IntArrayRef(g.out_sizes), ", got ", grad_sizes);
  return g;
}

// A strided copy dst[pos] = src[pos] over an N-d index space, expressed in units of
// `unit_bytes` (1, 2, 4, 8 or 16). Operand 0 is dst, operand 1 is src.
struct StridedCopyPlan {
  StridedShape<2> shape;  // coalesced; strides in units
  int unit_bytes = 1;
  char* dst = nullptr;
  const char* src = nullptr;

  // True when dst is row-major contiguous over `shape` (the forward gather).
  bool dst_contiguous() const {
    int64_t expect = 1;
    for (int d = shape.dim() - 1; d >= 0; --d) {
      if (shape.sizes[d] != 1 && shape.strides[d][0] != expect) return false;
      expect *= shape.sizes[d];
    }
    return true;
  }
};

// Builds the plan for copying elements of `elem_bytes` bytes: the copy is first written over
// bytes (an extra innermost dim of elem_bytes bytes), dims are merged, and then the widest unit
// (<= 16 bytes) is chosen that divides both pointers, every outer stride and the innermost run
// (which must be contiguous in both operands). So a contiguous run of 4 floats moves as one
// 16-byte unit, a copy that depends only on element size is instantiated once per unit size,
// and a misaligned pointer just gets a narrower unit.
inline StridedCopyPlan plan_strided_copy(c10::IntArrayRef sizes, c10::IntArrayRef dst_strides,
                                         c10::IntArrayRef src_strides, int64_t elem_bytes,
                                         char* dst, const char* src) {
  StridedCopyPlan p;
  p.dst = dst;
  p.src = src;
  auto& s = p.shape;
  for (size_t d = 0; d < sizes.size(); ++d) {
    s.sizes.push_back(sizes[d]);
    s.strides.push_back({dst_strides[d] * elem_bytes, src_strides[d] * elem_bytes});
  }
  s.sizes.push_back(elem_bytes);
  s.strides.push_back({1, 1});
  s.coalesce();
  const int nd = s.dim();
  const bool inner_unit = s.strides[nd - 1][0] == 1 && s.strides[nd - 1][1] == 1;
  int64_t v = 16;
  for (; v > 1; v /= 2) {
    if (!inner_unit || s.sizes[nd - 1] % v != 0) continue;
    if (reinterpret_cast<uintptr_t>(dst) % v != 0 || reinterpret_cast<uintptr_t>(src) % v != 0) {
      continue;
    }
    bool ok = true;
    for (int d = 0; d < nd - 1; ++d) {
      if (s.strides[d][0] % v != 0 || s.strides[d][1] % v != 0) ok = false;
    }
    if (ok) break;
  }
  if (v > 1) {
    s.sizes[nd - 1] /= v;
    for (int d = 0; d < nd - 1; ++d) {
      s.strides[d][0] /= v;
      s.strides[d][1] /= v;
    }
    if (s.sizes[nd - 1] == 1) s.coalesce();  // the inner run became one unit: drop that dim
  }
  p.unit_bytes = static_cast<int>(v);
  return p;
}

}  // namespace myops

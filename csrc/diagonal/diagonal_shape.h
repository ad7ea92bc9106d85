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
// The checks and the diagonal's sizes (diagonal_sizes, diagonal_backward_sizes) take sizes as
// c10::SymInt: the fake kernels run them on symbolic sizes through the control op
// myops::_diagonal_meta (csrc/diagonal/schema.cpp).
//
// Light header (no ATen.h): usable from .cpp and .cu files.
#include <c10/core/SymInt.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/checks.h"
#include "core/strided.h"

namespace myops {

struct DiagonalGeometry {
  int64_t dim1 = 0, dim2 = 0;         // wrapped
  std::vector<int64_t> out_sizes;     // other dims in order, then the diagonal
  std::vector<int64_t> view_strides;  // strides of the diagonal view of the input, in elements
  int64_t view_offset = 0;            // element offset of the view's first element (from data_ptr)
};

// Wraps a possibly negative dim; raises naming the op and the argument when out of range.
inline int64_t diagonal_wrap_dim(int64_t dim, int64_t ndim, const char* op, const char* arg) {
  TORCH_CHECK_INDEX(dim >= -ndim && dim < ndim, "myops.", op, ": argument '", arg, "' must be in the range [", -ndim,
                    ", ", ndim - 1, "] for a ", ndim, "-D tensor, got ", dim);
  return dim < 0 ? dim + ndim : dim;
}

// Length of the diagonal, never negative, without overflow for any int64 offset (size2 - offset
// and size1 + offset stay in range for sizes >= 0); no guard on symbolic sizes.
inline c10::SymInt diagonal_length(const c10::SymInt& size1, const c10::SymInt& size2, int64_t offset) {
  const c10::SymInt n = offset >= 0 ? size1.min(size2 - offset) : (size1 + offset).min(size2);
  return n.max(0);
}

// The wrapped dims and the diagonal's sizes: the other dims in order, then the diagonal.
struct DiagonalSizes {
  int64_t dim1 = 0, dim2 = 0;
  std::vector<c10::SymInt> out_sizes;
};

// `tensor_arg` names the tensor whose sizes are given (for the rank message).
inline DiagonalSizes diagonal_sizes(c10::SymIntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2,
                                    const char* op, const char* tensor_arg) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  if (ndim < 2) {
    // torch.diagonal wraps the dims (a 0-d tensor as if 1-D): dims that are in range are then
    // the same dim (RuntimeError), others out of range (IndexError); same types here
    const int64_t n = ndim > 0 ? ndim : 1;
    const bool in_range = dim1 >= -n && dim1 < n && dim2 >= -n && dim2 < n;
    TORCH_CHECK(!in_range, "myops.", op, ": argument 'dim2' must refer to a different dim than 'dim1', got dim1=", dim1,
                " and dim2=", dim2, " (argument '", tensor_arg, "' is a ", ndim, "-D tensor)");
    TORCH_CHECK_INDEX(false, "myops.", op, ": argument '", tensor_arg, "' must have at least 2 dims, got a ", ndim,
                      "-D tensor");
  }
  DiagonalSizes r;
  r.dim1 = diagonal_wrap_dim(dim1, ndim, op, "dim1");
  r.dim2 = diagonal_wrap_dim(dim2, ndim, op, "dim2");
  TORCH_CHECK(r.dim1 != r.dim2, "myops.", op,
              ": argument 'dim2' must refer to a different dim than 'dim1', got dim1=", dim1, " and dim2=", dim2,
              " (both dim ", r.dim1, " of a ", ndim, "-D tensor)");
  for (int64_t d = 0; d < ndim; ++d) {
    if (d != r.dim1 && d != r.dim2) r.out_sizes.push_back(sizes[d]);
  }
  r.out_sizes.push_back(diagonal_length(sizes[r.dim1], sizes[r.dim2], offset));
  return r;
}

// The checks of diagonal_backward: `input_sizes` must be valid and `grad` must have the shape of
// the diagonal.
inline DiagonalSizes diagonal_backward_sizes(c10::SymIntArrayRef grad_sizes, c10::SymIntArrayRef input_sizes,
                                             int64_t offset, int64_t dim1, int64_t dim2) {
  for (const auto& s : input_sizes) {
    MYOPS_SYM_CHECK(s.sym_ge(0), "myops.diagonal_backward: argument 'input_sizes' must be non-negative, got ",
                    input_sizes);
  }
  DiagonalSizes r = diagonal_sizes(input_sizes, offset, dim1, dim2, "diagonal_backward", "input_sizes");
  c10::SymBool same = grad_sizes.size() == r.out_sizes.size();
  for (size_t d = 0; d < grad_sizes.size() && d < r.out_sizes.size(); ++d) {
    same = same & grad_sizes[d].sym_eq(r.out_sizes[d]);
  }
  MYOPS_SYM_CHECK(same, "myops.diagonal_backward: argument 'grad' must have the shape of the diagonal ",
                  c10::SymIntArrayRef(r.out_sizes), ", got ", grad_sizes);
  return r;
}

// The geometry of the diagonal view of a tensor of `sizes` and `strides` (concrete), after the
// checks of diagonal_sizes.
inline DiagonalGeometry diagonal_geometry_of(const DiagonalSizes& r, c10::IntArrayRef strides, int64_t offset) {
  DiagonalGeometry g;
  g.dim1 = r.dim1;
  g.dim2 = r.dim2;
  for (const auto& s : r.out_sizes) g.out_sizes.push_back(s.expect_int());
  for (int64_t d = 0; d < static_cast<int64_t>(strides.size()); ++d) {
    if (d != g.dim1 && d != g.dim2) g.view_strides.push_back(strides[d]);
  }
  g.view_strides.push_back(strides[g.dim1] + strides[g.dim2]);
  if (g.out_sizes.back() > 0) {  // an empty diagonal may start past the end: leave the offset at 0
    g.view_offset = offset >= 0 ? offset * strides[g.dim2] : -offset * strides[g.dim1];
  }
  return g;
}

inline DiagonalGeometry diagonal_geometry(c10::IntArrayRef sizes, c10::IntArrayRef strides, int64_t offset,
                                          int64_t dim1, int64_t dim2, const char* op, const char* tensor_arg) {
  return diagonal_geometry_of(
      diagonal_sizes(c10::fromIntArrayRefKnownNonNegative(sizes), offset, dim1, dim2, op, tensor_arg), strides, offset);
}

// The geometry of the diagonal view of a contiguous tensor of `input_sizes`, after the checks of
// diagonal_backward_sizes.
inline DiagonalGeometry diagonal_backward_geometry(c10::IntArrayRef grad_sizes, c10::IntArrayRef input_sizes,
                                                   int64_t offset, int64_t dim1, int64_t dim2) {
  // copied into SymInts: a user's size may be negative (and any int64 is a SymInt by value)
  const std::vector<c10::SymInt> in(input_sizes.begin(), input_sizes.end());
  const DiagonalSizes r =
      diagonal_backward_sizes(c10::fromIntArrayRefKnownNonNegative(grad_sizes), in, offset, dim1, dim2);
  return diagonal_geometry_of(r, contiguous_strides(input_sizes), offset);
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
                                         c10::IntArrayRef src_strides, int64_t elem_bytes, char* dst, const char* src) {
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

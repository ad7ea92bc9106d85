// at::Tensor glue and registration of myops.diagonal / myops.diagonal_backward on CUDA.
// The kernels live in diagonal.cu behind a plain launcher; this file computes the geometry,
// allocates, plans the copy and launches under a device guard on the current stream.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include "core/checks.h"
#include "diagonal/cuda/diagonal_cuda.h"
#include "diagonal/diagonal_shape.h"
#include "core/cuda/glue.h"

namespace {

at::Tensor diagonal_cuda(const at::Tensor& self_in, int64_t offset, int64_t dim1, int64_t dim2) {
  myops::CudaGuard guard(self_in.device());
  at::Tensor self = self_in.is_conj() || self_in.is_neg() ? self_in.resolve_conj().resolve_neg() : self_in;
  auto g = myops::diagonal_geometry(self.sizes(), self.strides(), offset, dim1, dim2, "diagonal", "self");
  at::Tensor out = at::empty(g.out_sizes, self.options());
  if (out.numel() == 0) return out;
  const int64_t es = self.element_size();
  auto plan = [&] {
    return myops::plan_strided_copy(g.out_sizes, out.strides(), g.view_strides, es, static_cast<char*>(out.data_ptr()),
                                    static_cast<const char*>(self.const_data_ptr()) + g.view_offset * es);
  };
  auto p = plan();
  if (p.shape.dim() > MYOPS_MAX_DIMS) {
    // More unmergeable dims than the kernel takes: copy the input to contiguous first, after
    // which the view merges into at most 4 dims (before dim1, between, after dim2, diagonal).
    self = self.contiguous();
    g = myops::diagonal_geometry(self.sizes(), self.strides(), offset, dim1, dim2, "diagonal", "self");
    p = plan();
  }
  myops::diagonal_strided_copy_cuda(p, myops::current_stream());
  return out;
}

at::Tensor diagonal_backward_cuda(const at::Tensor& grad_in, c10::IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                                  int64_t dim2) {
  const auto g = myops::diagonal_backward_geometry(grad_in.sizes(), input_sizes, offset, dim1, dim2);
  myops::CudaGuard guard(grad_in.device());
  at::Tensor grad = grad_in.is_conj() || grad_in.is_neg() ? grad_in.resolve_conj().resolve_neg() : grad_in;
  at::Tensor out = at::zeros(input_sizes, grad.options());
  if (grad.numel() == 0) return out;
  const int64_t es = grad.element_size();
  auto plan = [&] {
    return myops::plan_strided_copy(g.out_sizes, g.view_strides, grad.strides(), es,
                                    static_cast<char*>(out.data_ptr()) + g.view_offset * es,
                                    static_cast<const char*>(grad.const_data_ptr()));
  };
  auto p = plan();
  if (p.shape.dim() > MYOPS_MAX_DIMS) {
    grad = grad.contiguous();  // then both operands merge into at most 4 dims
    p = plan();
  }
  myops::diagonal_strided_copy_cuda(p, myops::current_stream());
  return out;
}

}  // namespace

MYOPS_CUDA_LIBRARY_IMPL(m) {
  m.impl("diagonal", &diagonal_cuda);
  m.impl("diagonal_backward", &diagonal_backward_cuda);
}

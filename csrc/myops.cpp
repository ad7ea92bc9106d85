// Every myops schema lives here, in one TORCH_LIBRARY block, and nothing else does.
// Kernels register their implementations in their own files with
// TORCH_LIBRARY_IMPL(myops, CPU|CUDA, m), autograd in csrc/autograd.cpp
// (TORCH_LIBRARY_IMPL(myops, Autograd, m)); fake kernels are registered from Python
// (python/myops/_fake.py).
//
// This file, the kernels and the autograd make up libmyops.so, which links LibTorch only and
// loads in a process with no Python. The Python module myops._C (csrc/python/) links it.
#include <torch/library.h>

TORCH_LIBRARY(myops, m) {
  // The fake (meta) kernels are Python functions in myops._fake: a process that loads this
  // library from C++ and then traces from Python is told which module to import.
  m.set_python_module("myops._fake");

  // ---- nonzero family -------------------------------------------------------------------
  m.def("nonzero(Tensor self) -> Tensor");
  m.def("nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor");

  // ---- elementwise: unary -----------------------------------------------------------------
  m.def("relu(Tensor self) -> Tensor");
  m.def("gelu(Tensor self, *, str approximate='none') -> Tensor");
  m.def("silu(Tensor self) -> Tensor");
  m.def("sigmoid(Tensor self) -> Tensor");
  m.def("mul_scalar(Tensor self, Scalar other) -> Tensor");
  m.def("cast(Tensor self, ScalarType dtype) -> Tensor");

  // ---- elementwise: binary (broadcasting, type promotion) --------------------------------
  m.def("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("mul(Tensor self, Tensor other) -> Tensor");
  m.def("div(Tensor self, Tensor other) -> Tensor");
  m.def("maximum(Tensor self, Tensor other) -> Tensor");
  m.def("minimum(Tensor self, Tensor other) -> Tensor");

  // ---- elementwise: ternary (broadcasting) ------------------------------------------------
  m.def("where(Tensor condition, Tensor self, Tensor other) -> Tensor");
  m.def("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor");
  m.def("clamp(Tensor self, Tensor min, Tensor max) -> Tensor");
  // Number bounds (torch.clamp's own overload for them): the same values, but only `self` has
  // a gradient, with torch's formula for number bounds.
  m.def("clamp.Scalar(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor");

  // ---- max_pool2d_add ---------------------------------------------------------------------
  m.def(
      "max_pool2d_add(Tensor self, Tensor other, int[2] kernel_size=[3,3], int[2] stride=[2,2], "
      "int[2] padding=[1,1], bool ceil_mode=False) -> Tensor");
  // Gradient w.r.t. `self` only (the gradient of `other` is a sum over its broadcast dims).
  m.def(
      "max_pool2d_add_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
      "int[2] padding, bool ceil_mode) -> Tensor");

  // ---- diagonal ---------------------------------------------------------------------------
  m.def("diagonal(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor");
  // Writes `grad` onto the diagonal of a zero tensor of shape `input_sizes`.
  m.def("diagonal_backward(Tensor grad, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor");
}

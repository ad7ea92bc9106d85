// The library myops: its one TORCH_LIBRARY block (here) and, in each family's folder, a
// schema.cpp with that family's schemas (TORCH_LIBRARY_FRAGMENT through MYOPS_SCHEMAS,
// core/schema.h). Kernels register their implementations in their own files with
// TORCH_LIBRARY_IMPL(myops, CPU|CUDA, m), autograd in each family's autograd.cpp
// (TORCH_LIBRARY_IMPL(myops, Autograd, m)); fake kernels are registered from Python
// (python/myops/_fake.py).
//
// This file, the schemas, the kernels and the autograd make up libmyops.so, which links LibTorch
// only and loads in a process with no Python. The Python module myops._C (csrc/python/) links it.
#include <torch/library.h>

TORCH_LIBRARY(myops, m) {
  // The fake (meta) kernels are Python functions in myops._fake: a process that loads this
  // library from C++ and then traces from Python is told which module to import.
  m.set_python_module("myops._fake");

  // ---- library-wide control ops (no tensors: their kernels register as
  // CompositeImplicitAutograd) ----
  // Which CPU build runs (csrc/elementwise/cpu/elementwise.cpp; core/cpu_isa.h).
  m.def("_cpu_isa() -> str");
}

#pragma once
// How a family declares its schemas: csrc/<family>/schema.cpp holds
//
//   MYOPS_SCHEMAS(m) {
//     m.def("nms(Tensor boxes, Tensor scores, float iou_threshold) -> Tensor");
//   }
//
// a TORCH_LIBRARY_FRAGMENT(myops, m) whose ops name myops._fake as the Python module of their
// fake kernels (a process that loads libmyops from C++ and then traces from Python is told which
// module to import). The one TORCH_LIBRARY(myops, m) is csrc/myops.cpp. The order in which the
// fragments register does not matter: no schema refers to another.
//
// A family's shape rules for the fake kernels (python/myops/_fake.py) are control ops,
// myops::_<family>_meta: each runs the family's checks (written once, in the header at the top of
// csrc/<family>/, for the CPU and CUDA kernels) on the sizes of the fake kernel's tensors, which
// may be symbolic. A tensor comes as its sizes, strides, dtype and device (TensorInfo,
// core/checks.h): MYOPS_INFO_ARGS(t) in the C++ signature, MYOPS_INFO(t) the TensorInfo it
// makes, MYOPS_INFO_SCHEMA("t") in the schema.
#include <torch/library.h>

#include "core/checks.h"

#define MYOPS_SCHEMAS(m)                        \
  static void myops_schemas(torch::Library& m); \
  TORCH_LIBRARY_FRAGMENT(myops, m) {            \
    m.set_python_module("myops._fake");         \
    myops_schemas(m);                           \
  }                                             \
  static void myops_schemas(torch::Library& m)

#define MYOPS_INFO_ARGS(t) \
  c10::SymIntArrayRef t##_sizes, c10::SymIntArrayRef t##_strides, at::ScalarType t##_dtype, c10::Device t##_device
#define MYOPS_INFO(t) ::myops::TensorInfo(t##_sizes, t##_strides, t##_dtype, t##_device)
#define MYOPS_INFO_SCHEMA(t) "SymInt[] " t "_sizes, SymInt[] " t "_strides, ScalarType " t "_dtype, Device " t "_device"

// A control op with no tensors (a shape rule, a table for Python): CompositeExplicitAutograd, so
// that it runs as it is under every tracer (no graph node).
#define MYOPS_CONTROL_DEF(m, SCHEMA, FN) \
  (m).def(SCHEMA, torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(FN)))

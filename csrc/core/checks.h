#pragma once
// Input checks with messages that name the op, the argument, what was expected and what was
// received, e.g. "myops.nonzero_static: argument 'size' must be >= 0, got -3".
//
// The checks on shapes read a TensorInfo: a tensor's sizes and strides as c10::SymInt, its dtype
// and device. The kernels make one from a tensor (a view of its sizes: nothing is copied); the
// fake kernels (python/myops/_fake.py) hand the same checks the symbolic sizes of a FakeTensor
// through the families' control ops (csrc/<family>/schema.cpp), so that each check and its message are
// written once. A condition on sizes is a c10::SymBool checked with MYOPS_SYM_CHECK*, which
// behaves as torch._check: it guards on a backed symbol and becomes a runtime assert for an
// unbacked one (a data-dependent size, e.g. nonzero's).
// Light header: usable from .cpp and .cu files.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/core/SymBool.h>
#include <c10/core/SymInt.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <string>

// MYOPS_CHECK(cond, "op", "arg", <message pieces...>)
#define MYOPS_CHECK(cond, op, arg, ...) TORCH_CHECK((cond), "myops." op ": argument '" arg "' ", __VA_ARGS__)

// Checks of a c10::SymBool (or a bool): RuntimeError, ValueError, IndexError.
#define MYOPS_SYM_CHECK(cond, ...) TORCH_CHECK(::c10::SymBool(cond).expect_true(__FILE__, __LINE__), __VA_ARGS__)
#define MYOPS_SYM_CHECK_VALUE(cond, ...) \
  TORCH_CHECK_VALUE(::c10::SymBool(cond).expect_true(__FILE__, __LINE__), __VA_ARGS__)
#define MYOPS_SYM_CHECK_INDEX(cond, ...) \
  TORCH_CHECK_INDEX(::c10::SymBool(cond).expect_true(__FILE__, __LINE__), __VA_ARGS__)

namespace myops {

// A one-element tensor in host memory: an operand that the device glue folds into a kernel
// launch as a scalar (elementwise/elementwise_host.h), as torch's CUDA kernels take a CPU scalar.
inline bool host_scalar(const at::Tensor& t) { return t.is_cpu() && t.numel() == 1; }

// What the checks read of a tensor (see the top of this file).
struct TensorInfo {
  c10::SymIntArrayRef sizes, strides;
  at::ScalarType dtype;
  c10::Device device;

  TensorInfo(c10::SymIntArrayRef sizes, c10::SymIntArrayRef strides, at::ScalarType dtype, c10::Device device)
      : sizes(sizes), strides(strides), dtype(dtype), device(device) {}
  TensorInfo(const at::Tensor& t)  // NOLINT: implicit, so that the checks take tensors as they are
      : sizes(t.sym_sizes()), strides(t.sym_strides()), dtype(t.scalar_type()), device(t.device()) {}
  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  // size(d), d wrapped (the caller has checked the rank)
  const c10::SymInt& size(int64_t d) const { return sizes[d < 0 ? d + dim() : d]; }
};

// Raises unless `dtype` is one of `allowed`: NotImplementedError, as torch's kernels raise for a
// dtype they have no implementation for; with `not_implemented = false` RuntimeError (where
// torch raises that: a non-bool condition of where, torchvision's nms).
inline void check_dtype(at::ScalarType dtype, c10::ArrayRef<at::ScalarType> allowed, const char* op, const char* arg,
                        bool not_implemented = true) {
  for (auto s : allowed) {
    if (dtype == s) return;
  }
  std::string names;
  for (auto s : allowed) {
    if (!names.empty()) names += ", ";
    names += c10::toString(s);
  }
  const std::string msg =
      c10::str("myops.", op, ": argument '", arg, "' must have dtype in {", names, "}, got ", dtype);
  TORCH_CHECK_NOT_IMPLEMENTED(!not_implemented, msg);
  TORCH_CHECK(false, msg);
}
inline void check_dtype(const at::Tensor& t, c10::ArrayRef<at::ScalarType> allowed, const char* op, const char* arg,
                        bool not_implemented = true) {
  check_dtype(t.scalar_type(), allowed, op, arg, not_implemented);
}

// Raises unless `a` and `b` are on the same device.
inline void check_same_device(c10::Device a, const char* arg_a, c10::Device b, const char* arg_b, const char* op) {
  TORCH_CHECK(a == b, "myops.", op, ": expected all tensors on the same device, got '", arg_a, "' on ", a, " and '",
              arg_b, "' on ", b);
}
inline void check_same_device(const at::Tensor& a, const char* arg_a, const at::Tensor& b, const char* arg_b,
                              const char* op) {
  check_same_device(a.device(), arg_a, b.device(), arg_b, op);
}
inline void check_same_device(const TensorInfo& a, const char* arg_a, const TensorInfo& b, const char* arg_b,
                              const char* op) {
  check_same_device(a.device, arg_a, b.device, arg_b, op);
}

// A static output size (nonzero_static, the bounded ops, nms_static): raises unless >= 0.
inline void check_size(const c10::SymInt& size, const char* op) {
  MYOPS_SYM_CHECK(size.sym_ge(0), "myops.", op, ": argument 'size' must be >= 0, got ", size);
}

}  // namespace myops

#pragma once
// Input checks with messages that name the op, the argument, what was expected and what was
// received, e.g. "myops.nonzero_static: argument 'size' must be >= 0, got -3".
// Light header: usable from .cpp and .cu files.
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <initializer_list>

// MYOPS_CHECK(cond, "op", "arg", <message pieces...>)
#define MYOPS_CHECK(cond, op, arg, ...) \
  TORCH_CHECK((cond), "myops." op ": argument '" arg "' ", __VA_ARGS__)

namespace myops {

// A one-element tensor in host memory: an operand that the device glue folds into a kernel
// launch as a scalar (common/elementwise_host.h), as torch's CUDA kernels take a CPU scalar.
inline bool host_scalar(const at::Tensor& t) { return t.is_cpu() && t.numel() == 1; }

// Raises unless `t` has one of `allowed` dtypes: NotImplementedError, as torch's kernels raise
// for a dtype they have no implementation for; with `not_implemented = false` RuntimeError
// (where torch raises that: a non-bool condition of where, torchvision's nms).
inline void check_dtype(const at::Tensor& t, std::initializer_list<at::ScalarType> allowed,
                        const char* op, const char* arg, bool not_implemented = true) {
  for (auto s : allowed) {
    if (t.scalar_type() == s) return;
  }
  std::string names;
  for (auto s : allowed) {
    if (!names.empty()) names += ", ";
    names += c10::toString(s);
  }
  const std::string msg = c10::str("myops.", op, ": argument '", arg, "' must have dtype in {", names,
                                   "}, got ", t.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(!not_implemented, msg);
  TORCH_CHECK(false, msg);
}

// Raises unless `a` and `b` are on the same device.
inline void check_same_device(const at::Tensor& a, const char* arg_a, const at::Tensor& b,
                              const char* arg_b, const char* op) {
  TORCH_CHECK(a.device() == b.device(), "myops.", op, ": expected all tensors on the same device, got '",
              arg_a, "' on ", a.device(), " and '", arg_b, "' on ", b.device());
}

}  // namespace myops

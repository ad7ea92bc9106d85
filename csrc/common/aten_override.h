#pragma once
// The aten drop-in behind myops.enable(): while enabled, kernels registered for aten:: overloads
// on the CPU and CUDA dispatch keys compute the calls that a myops op computes exactly as torch
// does, and hand every other call to torch's own kernel for that backend.
//
// - Registration: one torch::Library per op and backend, created when the op is first enabled
//   and destroyed when it is last disabled, which deregisters the kernels and restores torch's
//   (csrc/aten_override.cpp). The kernels sit on the backend keys, below Autograd, so ATen's
//   autograd formulas, autocast, functionalization and the Python key all stay torch's.
// - Routing: a call routes when its op is enabled process-wide (myops.enable) or in the calling
//   thread's scope (myops.replace_torch_ops), and the arguments are ones the myops kernel takes
//   (strided, real dtypes myops supports, devices, overload options); then the myops op runs,
//   called through the dispatcher on the backend key (never through myops' Autograd key).
// - Hand-back: any other call goes to at::cpu::<op> / at::cuda::<op>, torch's kernel for that
//   backend, which bypasses the dispatcher (calling at::<op> would re-enter the override). A
//   myops kernel that refuses a call (c10::Error) also hands it back: torch then decides, and
//   raises its own error for bad input.
//
// This header is included by csrc/aten_override.cpp (CPU) and csrc/cuda/aten_override_cuda.cpp
// (CUDA); each instantiates Kernels<Backend> with its backend's traits (key and torch kernels).
// No Python anywhere: the override works in a LibTorch process.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/Exception.h>
#include <c10/util/string_view.h>
#include <torch/library.h>

#include <limits>
#include <optional>

#include "common/checks.h"

// The library of the ops the drop-in calls, and of its control ops: myops (the CUDA emulation
// builds the drop-in again around its own, myops_emu: cuda/glue.h).
#ifndef MYOPS_OVERRIDE_LIBRARY
#define MYOPS_OVERRIDE_LIBRARY myops
#endif

namespace myops {
namespace aten_override {

// The overridable ops, one bit each. Names and defaults: kOpTable in aten_override.cpp.
enum Op : int {
  kNonzero,
  kNonzeroStatic,
  kWhere,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kRelu,
  kAddcmul,
  kClamp,
  kGelu,
  kSilu,
  kSigmoid,
  kNms,  // torchvision::nms (registered only while torchvision's ops are loaded)
  kNumOps
};

// --- routing state (csrc/aten_override.cpp) ---------------------------------------------------

// True when `op` routes for a call made now by this thread: enabled process-wide or in this
// thread's scope, and the thread is not already inside a myops kernel the override called.
bool routing_on(Op op);
// Counts one call that reached the override while routing was on: routed or handed back.
void count(Op op, bool routed);

// Marks this thread as inside a myops kernel called by the override: aten calls that kernel
// makes go straight to torch (no recursion, no counting).
class Nested {
 public:
  Nested();
  ~Nested();
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;

 private:
  bool prev_;
};

// A backend: its dispatch key and a function registering the aten overloads of one op into a
// torch::Library for that key. csrc/aten_override.cpp adds the CPU backend; the CUDA build adds
// CUDA from csrc/cuda/aten_override_cuda.cpp (at load time). One backend per key: a later one
// for the same key replaces the earlier (the CUDA emulation's CUDA backend takes the CPU key).
using Registrar = void (*)(torch::Library& m, Op op);
bool add_backend(c10::DispatchKey key, Registrar reg);

// --- the checks every override shares ---------------------------------------------------------

// The dtypes the myops elementwise and nonzero kernels take.
inline bool myops_dtype(at::ScalarType s) {
  switch (s) {
    case at::kBool:
    case at::kByte:
    case at::kChar:
    case at::kShort:
    case at::kInt:
    case at::kLong:
    case at::kHalf:
    case at::kBFloat16:
    case at::kFloat:
    case at::kDouble:
      return true;
    default:
      return false;
  }
}

inline bool reduced_float(at::ScalarType s) { return s == at::kHalf || s == at::kBFloat16; }

// A plain strided tensor of a myops dtype (no lazy negation) on device type `dev`; with `cpu_scalar_ok`, a 0-d CPU tensor (a wrapped Python number) is accepted beside
// tensors on another device, as torch's TensorIterator accepts it.
inline bool plain(const at::Tensor& t, c10::DeviceType dev, bool cpu_scalar_ok = false) {
  if (!t.defined() || t.layout() != c10::kStrided || !myops_dtype(t.scalar_type()) || t.is_neg()) {
    return false;
  }
  const auto d = t.device().type();
  return d == dev || (cpu_scalar_ok && d == c10::DeviceType::CPU && t.dim() == 0);
}

// An int or float 1 (not True, not complex); any Scalar, uint64 ones past int64 included
// (toLong() would raise for those).
inline bool is_one(const c10::Scalar& s) {
  return !s.isSymbolic() && (s.isIntegral(/*includeBool=*/false) || s.isFloatingPoint()) && s.equal(1);
}

// Runs `mine` (the myops op) when routing is on for `op` and `supported`, else `theirs`
// (torch's kernel for this backend). See the file comment.
template <class Mine, class Theirs>
inline auto route(Op op, bool supported, Mine&& mine, Theirs&& theirs) -> decltype(theirs()) {
  if (!routing_on(op)) return theirs();
  if (supported) {
    try {
      Nested nested;
      auto r = mine();
      count(op, true);
      return r;
    } catch (const c10::AcceleratorError&) {
      throw;  // a device error (a failed launch, a fault) is the kernel's, not a refusal
    } catch (const c10::Error&) {
      // the myops op refused the call: torch decides (and raises its own error if it is bad)
    }
  }
  count(op, false);
  return theirs();
}

// The myops op `name`, called on dispatch key `key` with signature Sig (below its Autograd key:
// we are already below aten's).
#define MYOPS_OVERRIDE_CALL(NAME, SIG, ...)                                                       \
  [&] {                                                                                          \
    static const auto handle =                                                                   \
        c10::Dispatcher::singleton().findSchemaOrThrow(C10_STRINGIZE(MYOPS_OVERRIDE_LIBRARY) "::" NAME, "") \
            .typed<SIG>();                                                                       \
    return handle.redispatch(c10::DispatchKeySet(B::key), __VA_ARGS__);                          \
  }()

// The overriding kernels for one backend. B provides:
//   static constexpr c10::DispatchKey key;          // CPU or CUDA
//   static constexpr c10::DeviceType device;        // the device type of that key
//   static constexpr bool cuda;                      // CUDA's routing rules (host scalars, limits)
//   static bool fuses_like_torch();                  // torch's kernels fuse a * b + c (FMA) as myops'
//   static at::Tensor nonzero(const at::Tensor&) ... // torch's kernels (at::cpu:: / at::cuda::)
template <class B>
struct Kernels {
  static constexpr bool kCuda = B::cuda;

  static bool on(const at::Tensor& t) { return plain(t, B::device); }
  // an operand of a TensorIterator op: on this device, or a 0-d CPU tensor beside CUDA ones
  static bool operand(const at::Tensor& t) { return plain(t, B::device, /*cpu_scalar_ok=*/kCuda); }
  // at least one operand on this device (torch's CUDA kernels take CPU scalars only beside one)
  static bool any_on(std::initializer_list<const at::Tensor*> ts) {
    for (auto* t : ts) {
      if (t->device().type() == B::device) return true;
    }
    return false;
  }

  // ---- nonzero family ---------------------------------------------------------------------

  static at::Tensor nonzero(const at::Tensor& self) {
    // torch's CUDA nonzero is limited to INT_MAX elements: keep its behaviour there
    bool ok = on(self) && (!kCuda || self.numel() <= std::numeric_limits<int32_t>::max());
    return route(
        kNonzero, ok, [&] { return MYOPS_OVERRIDE_CALL("nonzero", at::Tensor(const at::Tensor&), self); },
        [&] { return B::nonzero(self); });
  }

  static at::Tensor nonzero_static(const at::Tensor& self, c10::SymInt size, int64_t fill_value) {
    bool ok = on(self) && !size.is_heap_allocated() && size.as_int_unchecked() >= 0 &&
              (!kCuda || self.numel() <= std::numeric_limits<int32_t>::max());
    return route(
        kNonzeroStatic, ok,
        [&] {
          return MYOPS_OVERRIDE_CALL("nonzero_static", at::Tensor(const at::Tensor&, c10::SymInt, int64_t), self,
                                     size, fill_value);
        },
        [&] { return B::nonzero_static(self, size, fill_value); });
  }

  // ---- ternary ------------------------------------------------------------------------------

  static at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
    bool ok = on(condition) && condition.scalar_type() == at::kBool && operand(self) && operand(other);
    return route(
        kWhere, ok,
        [&] {
          return MYOPS_OVERRIDE_CALL("where", at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&),
                                     condition, self, other);
        },
        [&] { return B::where(condition, self, other); });
  }

  static at::Tensor addcmul(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                            const c10::Scalar& value) {
    // Floating addcmul is self + value * t1 * t2 with the add fused (an FMA), as torch's vector
    // kernels compute it: routed where torch's are those (B::fuses_like_torch). value != 1 on
    // half/bfloat16 stays torch's: the rounding of value * t1 * t2 there is not pinned down.
    const bool any_float = at::isFloatingType(self.scalar_type()) || at::isFloatingType(t1.scalar_type()) ||
                           at::isFloatingType(t2.scalar_type());
    const bool any_reduced =
        reduced_float(self.scalar_type()) || reduced_float(t1.scalar_type()) || reduced_float(t2.scalar_type());
    bool ok = on(self) && on(t1) && on(t2) && !value.isComplex() && (!any_float || B::fuses_like_torch()) &&
              (is_one(value) || !any_reduced);
    return route(
        kAddcmul, ok,
        [&] {
          return MYOPS_OVERRIDE_CALL(
              "addcmul", at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const c10::Scalar&),
              self, t1, t2, value);
        },
        [&] { return B::addcmul(self, t1, t2, value); });
  }

  static at::Tensor clamp(const at::Tensor& self, const std::optional<at::Tensor>& min,
                          const std::optional<at::Tensor>& max) {
    // myops.clamp takes both bounds as tensors; one-sided clamps stay torch's
    bool ok = on(self) && min.has_value() && max.has_value() && on(*min) && on(*max);
    return route(
        kClamp, ok,
        [&] {
          return MYOPS_OVERRIDE_CALL("clamp", at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&),
                                     self, *min, *max);
        },
        [&] { return B::clamp(self, min, max); });
  }

  // ---- binary -------------------------------------------------------------------------------

  static bool binary_ok(const at::Tensor& self, const at::Tensor& other) {
    return operand(self) && operand(other) && any_on({&self, &other});
  }
  // alpha other than 1: integral results only. On floating types torch fuses a + alpha * b
  // in its vector loop but not in its scalar one (a wrapped-number operand), and rounds
  // alpha * b first for half/bfloat16 scalars: left to torch.
  static bool alpha_ok(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
    if (is_one(alpha)) return true;
    return alpha.isIntegral(/*includeBool=*/true) && !at::isFloatingType(self.scalar_type()) &&
           !at::isFloatingType(other.scalar_type());
  }

  using BinarySig = at::Tensor(const at::Tensor&, const at::Tensor&);
  using AlphaSig = at::Tensor(const at::Tensor&, const at::Tensor&, const c10::Scalar&);

  static at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
    return route(
        kAdd, binary_ok(self, other) && alpha_ok(self, other, alpha),
        [&] { return MYOPS_OVERRIDE_CALL("add", AlphaSig, self, other, alpha); },
        [&] { return B::add(self, other, alpha); });
  }

  static at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
    return route(
        kSub, binary_ok(self, other) && alpha_ok(self, other, alpha),
        [&] { return MYOPS_OVERRIDE_CALL("sub", AlphaSig, self, other, alpha); },
        [&] { return B::sub(self, other, alpha); });
  }

  static at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
    return route(
        kMul, binary_ok(self, other), [&] { return MYOPS_OVERRIDE_CALL("mul", BinarySig, self, other); },
        [&] { return B::mul(self, other); });
  }

  static at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
    // torch's CUDA kernel divides by a CPU scalar as a multiply by its reciprocal: left to torch
    const bool ok = binary_ok(self, other) && !(kCuda && host_scalar(other));
    return route(
        kDiv, ok, [&] { return MYOPS_OVERRIDE_CALL("div", BinarySig, self, other); },
        [&] { return B::div(self, other); });
  }

  static at::Tensor maximum(const at::Tensor& self, const at::Tensor& other) {
    return route(
        kMaximum, binary_ok(self, other), [&] { return MYOPS_OVERRIDE_CALL("maximum", BinarySig, self, other); },
        [&] { return B::maximum(self, other); });
  }

  static at::Tensor minimum(const at::Tensor& self, const at::Tensor& other) {
    return route(
        kMinimum, binary_ok(self, other), [&] { return MYOPS_OVERRIDE_CALL("minimum", BinarySig, self, other); },
        [&] { return B::minimum(self, other); });
  }

  // ---- unary --------------------------------------------------------------------------------

  using UnarySig = at::Tensor(const at::Tensor&);

  static at::Tensor relu(const at::Tensor& self) {
    return route(
        kRelu, on(self) && self.scalar_type() != at::kBool,
        [&] { return MYOPS_OVERRIDE_CALL("relu", UnarySig, self); }, [&] { return B::relu(self); });
  }

  static at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
    bool ok = on(self) && at::isFloatingType(self.scalar_type()) && (approximate == "none" || approximate == "tanh");
    return route(
        kGelu, ok,
        [&] { return MYOPS_OVERRIDE_CALL("gelu", at::Tensor(const at::Tensor&, c10::string_view), self, approximate); },
        [&] { return B::gelu(self, approximate); });
  }

  static at::Tensor silu(const at::Tensor& self) {
    return route(
        kSilu, on(self) && at::isFloatingType(self.scalar_type()),
        [&] { return MYOPS_OVERRIDE_CALL("silu", UnarySig, self); }, [&] { return B::silu(self); });
  }

  static at::Tensor sigmoid(const at::Tensor& self) {
    return route(
        kSigmoid, on(self), [&] { return MYOPS_OVERRIDE_CALL("sigmoid", UnarySig, self); },
        [&] { return B::sigmoid(self); });
  }

  // ---- torchvision::nms ---------------------------------------------------------------------
  //
  // Registered on this backend's Autograd key (torchvision has no kernel there: nms is not
  // differentiable), so torchvision's own CPU / CUDA kernel stays in place below it and the
  // hand-back is a redispatch to it. Routed only when the next key below autograd is this
  // backend itself: a FakeTensor, functionalization or a Python mode goes to torchvision's path.
  static at::Tensor tv_nms(c10::DispatchKeySet ks, const at::Tensor& dets, const at::Tensor& scores,
                           double iou_threshold) {
    using Sig = at::Tensor(const at::Tensor&, const at::Tensor&, double);
    static const auto torchvision_nms = c10::Dispatcher::singleton().findSchemaOrThrow("torchvision::nms", "").typed<Sig>();
    const c10::DispatchKeySet below = ks & c10::after_autograd_keyset;
    const c10::DispatchKeySet plain_keys =
        below - c10::DispatchKeySet({c10::DispatchKey::ADInplaceOrView, c10::DispatchKey::BackendSelect});
    const bool ok = plain_keys.highestPriorityTypeId() == B::key && on(dets) && on(scores);
    return route(
        kNms, ok, [&] { return MYOPS_OVERRIDE_CALL("nms", Sig, dets, scores, iou_threshold); },
        [&] { return torchvision_nms.redispatch(below, dets, scores, iou_threshold); });
  }

  // ---- registration -------------------------------------------------------------------------

  // The aten overloads of `op` (functional forms only: myops has no out= or in-place kernels,
  // and computing those through a temporary would cost a copy; add_, add.out, ... stay torch's).
  static void register_op(torch::Library& m, Op op) {
    switch (op) {
      case kNonzero: m.impl("nonzero", TORCH_FN(nonzero)); break;
      case kNonzeroStatic: m.impl("nonzero_static", TORCH_FN(nonzero_static)); break;
      case kWhere: m.impl("where.self", TORCH_FN(where)); break;
      case kAdd: m.impl("add.Tensor", TORCH_FN(add)); break;
      case kSub: m.impl("sub.Tensor", TORCH_FN(sub)); break;
      case kMul: m.impl("mul.Tensor", TORCH_FN(mul)); break;
      case kDiv: m.impl("div.Tensor", TORCH_FN(div)); break;
      case kMaximum: m.impl("maximum", TORCH_FN(maximum)); break;
      case kMinimum: m.impl("minimum", TORCH_FN(minimum)); break;
      case kRelu: m.impl("relu", TORCH_FN(relu)); break;
      case kAddcmul: m.impl("addcmul", TORCH_FN(addcmul)); break;
      case kClamp: m.impl("clamp.Tensor", TORCH_FN(clamp)); break;
      case kGelu: m.impl("gelu", TORCH_FN(gelu)); break;
      case kSilu: m.impl("silu", TORCH_FN(silu)); break;
      case kSigmoid: m.impl("sigmoid", TORCH_FN(sigmoid)); break;
      case kNms: m.impl("nms", TORCH_FN(tv_nms)); break;
      case kNumOps: break;
    }
  }
};

// torch's kernels for one backend, from the per-backend entry points in
// ATen/ops/<op>_<backend>_dispatch.h (NS: at::cpu or at::cuda). Used inside a backend struct.
#define MYOPS_OVERRIDE_TORCH_KERNELS(NS)                                                                   \
  static at::Tensor nonzero(const at::Tensor& s) { return NS::nonzero(s); }                                \
  static at::Tensor nonzero_static(const at::Tensor& s, c10::SymInt size, int64_t fill) {                  \
    return NS::nonzero_static_symint(s, std::move(size), fill);                                            \
  }                                                                                                        \
  static at::Tensor where(const at::Tensor& c, const at::Tensor& s, const at::Tensor& o) {                \
    return NS::where(c, s, o);                                                                             \
  }                                                                                                        \
  static at::Tensor add(const at::Tensor& s, const at::Tensor& o, const c10::Scalar& a) {                  \
    return NS::add(s, o, a);                                                                               \
  }                                                                                                        \
  static at::Tensor sub(const at::Tensor& s, const at::Tensor& o, const c10::Scalar& a) {                  \
    return NS::sub(s, o, a);                                                                               \
  }                                                                                                        \
  static at::Tensor mul(const at::Tensor& s, const at::Tensor& o) { return NS::mul(s, o); }                \
  static at::Tensor div(const at::Tensor& s, const at::Tensor& o) { return NS::div(s, o); }                \
  static at::Tensor maximum(const at::Tensor& s, const at::Tensor& o) { return NS::maximum(s, o); }        \
  static at::Tensor minimum(const at::Tensor& s, const at::Tensor& o) { return NS::minimum(s, o); }        \
  static at::Tensor relu(const at::Tensor& s) { return NS::relu(s); }                                      \
  static at::Tensor addcmul(const at::Tensor& s, const at::Tensor& a, const at::Tensor& b,                 \
                            const c10::Scalar& v) {                                                        \
    return NS::addcmul(s, a, b, v);                                                                        \
  }                                                                                                        \
  static at::Tensor clamp(const at::Tensor& s, const std::optional<at::Tensor>& lo,                        \
                          const std::optional<at::Tensor>& hi) {                                           \
    return NS::clamp(s, lo, hi);                                                                           \
  }                                                                                                        \
  static at::Tensor gelu(const at::Tensor& s, c10::string_view approximate) { return NS::gelu(s, approximate); } \
  static at::Tensor silu(const at::Tensor& s) { return NS::silu(s); }                                      \
  static at::Tensor sigmoid(const at::Tensor& s) { return NS::sigmoid(s); }

}  // namespace aten_override
}  // namespace myops

#pragma once
// The aten drop-in behind myops.enable(): while enabled, kernels registered for aten:: overloads
// on the CPU and CUDA dispatch keys compute the calls that a myops op computes exactly as torch
// does, and hand every other call to torch's own kernel for that backend.
//
// - Registration: one torch::Library per op and backend, created for every op at the first
//   enable or scope and kept: from then on, enable, disable and scopes only set the state the
//   kernels read, so no thread's call ever meets a dispatcher that is changing
//   (csrc/dropin/aten_override.cpp). A kernel whose op is not routed for the calling thread
//   hands the call to torch's. The kernels sit on the backend keys, below Autograd, so ATen's
//   autograd formulas, autocast, functionalization and the Python key all stay torch's, and
//   every mode reaches them (inference_mode skips the Autograd keys, not the backend's).
//   torchvision::nms has one kernel on BackendSelect, just above the backends (tv_nms).
// - Routing: a call routes when its op is enabled process-wide (myops.enable) or in the calling
//   thread's scope (myops.replace_torch_ops), and the arguments are ones the myops kernel takes
//   (strided, real dtypes myops supports, devices, overload options); then the myops op runs,
//   called through the dispatcher on the backend key (never through myops' Autograd key).
// - Hand-back: any other call goes to at::cpu::<op> / at::cuda::<op>, torch's kernel for that
//   backend, which bypasses the dispatcher (calling at::<op> would re-enter the override). A
//   myops kernel that refuses a call (c10::Error) also hands it back: torch then decides, and
//   raises its own error for bad input. Each hand-back is counted with its reason (Why).
//
// This header is included by csrc/dropin/aten_override.cpp (CPU) and csrc/dropin/cuda/aten_override_cuda.cpp
// (CUDA); each instantiates Kernels<Backend> with its backend's traits (key and torch kernels).
// No Python anywhere: the override works in a LibTorch process.
#include <ATen/CompositeExplicitAutogradFunctions.h>  // hand-backs of the composite routes
#include <ATen/ScalarOps.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/Exception.h>
#include <c10/util/string_view.h>
#include <torch/library.h>

#include <limits>
#include <optional>

#include "core/checks.h"
#include "elementwise/elementwise_handles.h"

// The library of the ops the drop-in calls, and of its control ops: myops (the CUDA emulation
// builds the drop-in again around its own, myops_emu: core/cuda/glue.h).
#ifndef MYOPS_OVERRIDE_LIBRARY
#define MYOPS_OVERRIDE_LIBRARY myops
#endif

namespace myops {
namespace aten_override {

// The overridable ops, one bit each: nonzero, nonzero_static, the routable ops of the
// elementwise table (myops/op_table.h: op_<fn>, in table order), torchvision's nms. Names and
// defaults: kOpTable in aten_override.cpp.
enum Op : int {
  kNonzero,
  kNonzeroStatic,
#include "elementwise/generated/dropin_ops.inc"
  kNms,  // torchvision::nms (registered only while torchvision's ops are loaded)
  kNumOps
};
static_assert(kNumOps <= 64, "myops: the drop-in's op masks are 64 bits");

// --- routing state (csrc/dropin/aten_override.cpp) ---------------------------------------------------

// True when `op` routes for a call made now by this thread: enabled process-wide or in this
// thread's scope, and the thread is not already inside a myops kernel the override called.
bool routing_on(Op op);
// Why a call that reached the override while routing was on went to torch's kernel (the
// statistics count each reason; names: kWhyNames in aten_override.cpp).
enum Why : int {
  kArguments,  // arguments (dtype, device, layout, options) or a dispatch layer myops does not take
  kRefused,    // the myops kernel raised for them: torch decides (and raises its own error)
  kNumWhy
};
// Counts one call that reached the override while routing was on: routed, or handed back (why).
void count(Op op, bool routed, Why why = kArguments);

// The state that enable, disable and scopes change (the control ops, and myops._C's entries for
// Python's scopes, csrc/python/dropin.cpp). A mask has bit `op` for each Op. No call changes the
// dispatcher's tables once the kernels are registered (see aten_override.cpp).
void enable_mask(uint64_t mask);          // adds `mask` to the process-wide routing
int64_t scope_enter_mask(uint64_t mask);  // routes `mask` in this thread too; returns the token
void scope_exit_token(int64_t token);     // ends the innermost scope of this thread (its token)
// Each op's counters, in Op order: routed, then handed back for each Why: this thread's or every
// thread's. `out` holds kNumCounters values.
constexpr int kNumCounters = kNumOps * (1 + kNumWhy);
void counters(bool this_thread, uint64_t* out);

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
// torch::Library for that key. csrc/dropin/aten_override.cpp adds the CPU backend; the CUDA build adds
// CUDA from csrc/dropin/cuda/aten_override_cuda.cpp (at load time). One backend per key: a later one
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

// A plain strided tensor of a myops dtype (no lazy negation) on device type `dev`; with `cpu_scalar_ok`, a 0-d CPU
// tensor (a wrapped Python number) is accepted beside tensors on another device, as torch's TensorIterator accepts it.
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

// Runs `mine` (the myops op) when routing is on for `op` and `supported()`, else `theirs`
// (torch's kernel for this backend). See the file comment. `supported` is only called when
// routing is on: an op that is not routed for this thread costs a thread-local read and an
// atomic load on top of torch's kernel.
template <class Supported, class Mine, class Theirs>
inline auto route(Op op, Supported&& supported, Mine&& mine, Theirs&& theirs) -> decltype(theirs()) {
  if (!routing_on(op)) return theirs();
  const bool ok = supported();
  if (ok) {
    try {
      Nested nested;
      auto r = mine();
      count(op, /*routed=*/true);
      return r;
    } catch (const c10::AcceleratorError&) {
      throw;  // a device error (a failed launch, a fault) is the kernel's, not a refusal
    } catch (const c10::Error&) {
      // the myops op refused the call: torch decides (and raises its own error if it is bad)
    }
  }
  count(op, /*routed=*/false, ok ? kRefused : kArguments);
  return theirs();
}

// The typed handles of the elementwise ops in the library the drop-in calls (elementwise/elementwise_handles.h).
// Internal linkage: the CUDA emulation's copy (myops_emu) must not bind to libmyops' (myops) when
// both libraries are loaded (inline functions' statics are shared across shared objects).
namespace {
struct override_handles {
  static constexpr const char* kLib = C10_STRINGIZE(MYOPS_OVERRIDE_LIBRARY);
#include "elementwise/generated/handles.inc"
};
}  // namespace

// The myops op `name` (signature SIG), called on dispatch key `key` (below its Autograd key: we
// are already below aten's).
#define MYOPS_OVERRIDE_CALL(NAME, SIG, ...)                                                                \
  [&] {                                                                                                    \
    static const auto handle = c10::Dispatcher::singleton()                                                \
                                   .findSchemaOrThrow(C10_STRINGIZE(MYOPS_OVERRIDE_LIBRARY) "::" NAME, "") \
                                   .typed<SIG>();                                                          \
    return handle.redispatch(c10::DispatchKeySet(B::key), __VA_ARGS__);                                    \
  }()
// The elementwise op FN of the table, likewise.
#define MYOPS_OVERRIDE_EW(FN, ...) override_handles::FN().redispatch(c10::DispatchKeySet(B::key), __VA_ARGS__)

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
    const auto ok = [&] { return on(self) && (!kCuda || self.numel() <= std::numeric_limits<int32_t>::max()); };
    return route(
        kNonzero, ok, [&] { return MYOPS_OVERRIDE_CALL("nonzero", at::Tensor(const at::Tensor&), self); },
        [&] { return B::nonzero(self); });
  }

  static at::Tensor nonzero_static(const at::Tensor& self, c10::SymInt size, int64_t fill_value) {
    const auto ok = [&] {
      return on(self) && !size.is_heap_allocated() && size.as_int_unchecked() >= 0 &&
             (!kCuda || self.numel() <= std::numeric_limits<int32_t>::max());
    };
    return route(
        kNonzeroStatic, ok,
        [&] {
          return MYOPS_OVERRIDE_CALL("nonzero_static", at::Tensor(const at::Tensor&, c10::SymInt, int64_t), self, size,
                                     fill_value);
        },
        [&] { return B::nonzero_static(self, size, fill_value); });
  }

  // ---- ternary ------------------------------------------------------------------------------

  static at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
    const auto ok = [&] {
      return on(condition) && condition.scalar_type() == at::kBool && operand(self) && operand(other);
    };
    return route(
        op_where, ok, [&] { return MYOPS_OVERRIDE_EW(where, condition, self, other); },
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
    const auto ok = [&] {
      return on(self) && on(t1) && on(t2) && !value.isComplex() && (!any_float || B::fuses_like_torch()) &&
             (is_one(value) || !any_reduced);
    };
    return route(
        op_addcmul, ok, [&] { return MYOPS_OVERRIDE_EW(addcmul, self, t1, t2, value); },
        [&] { return B::addcmul(self, t1, t2, value); });
  }

  static at::Tensor clamp(const at::Tensor& self, const std::optional<at::Tensor>& min,
                          const std::optional<at::Tensor>& max) {
    // myops.clamp takes both bounds as tensors; one-sided clamps stay torch's
    const auto ok = [&] { return on(self) && min.has_value() && max.has_value() && on(*min) && on(*max); };
    return route(
        op_clamp, ok, [&] { return MYOPS_OVERRIDE_EW(clamp, self, *min, *max); },
        [&] { return B::clamp(self, min, max); });
  }

  // ---- binary -------------------------------------------------------------------------------

  static bool binary_ok(const at::Tensor& self, const at::Tensor& other) {
    return operand(self) && operand(other) && any_on({&self, &other});
  }
  // alpha other than 1: integral results only. On floating types torch fuses a + alpha * b
  // in its vector loop but not in its scalar one (a wrapped-number operand), and rounds
  // alpha * b first for half/bfloat16 scalars: left to torch.
  // `floating`: an operand (tensor or number) is floating.
  static bool alpha_ok(bool floating, const c10::Scalar& alpha) {
    return is_one(alpha) || (alpha.isIntegral(/*includeBool=*/true) && !floating);
  }
  static bool alpha_ok(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
    return alpha_ok(at::isFloatingType(self.scalar_type()) || at::isFloatingType(other.scalar_type()), alpha);
  }

  static at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
    return route(
        op_add, [&] { return binary_ok(self, other) && alpha_ok(self, other, alpha); },
        [&] { return MYOPS_OVERRIDE_EW(add, self, other, alpha); }, [&] { return B::add(self, other, alpha); });
  }

  static at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
    return route(
        op_sub, [&] { return binary_ok(self, other) && alpha_ok(self, other, alpha); },
        [&] { return MYOPS_OVERRIDE_EW(sub, self, other, alpha); }, [&] { return B::sub(self, other, alpha); });
  }

  static at::Tensor maximum(const at::Tensor& self, const at::Tensor& other) {
    return route(
        op_maximum, [&] { return binary_ok(self, other); }, [&] { return MYOPS_OVERRIDE_EW(maximum, self, other); },
        [&] { return B::maximum(self, other); });
  }

  static at::Tensor minimum(const at::Tensor& self, const at::Tensor& other) {
    return route(
        op_minimum, [&] { return binary_ok(self, other); }, [&] { return MYOPS_OVERRIDE_EW(minimum, self, other); },
        [&] { return B::minimum(self, other); });
  }

  // ---- a number operand: aten's Scalar overloads ------------------------------------------------
  // Routed as the Tensor forms route a wrapped number (the same kernels, the same rules); torch's
  // hand-back is aten's own composite: the Tensor form with a wrapped-number tensor.
  static bool number_ok(const at::Tensor& self, const c10::Scalar& s) {
    return on(self) && !s.isComplex() && !s.isSymbolic();
  }
  static at::Tensor wrapped(const c10::Scalar& s) { return at::native::wrapped_scalar_tensor(s); }
  static bool number_alpha_ok(const at::Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha) {
    return number_ok(self, other) && alpha_ok(at::isFloatingType(self.scalar_type()) || other.isFloatingPoint(), alpha);
  }

  static at::Tensor add_scalar(const at::Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha) {
    const auto ok = [&] { return number_alpha_ok(self, other, alpha); };
    return route(
        op_add_scalar, ok, [&] { return MYOPS_OVERRIDE_EW(add_scalar, self, other, alpha); },
        [&] { return B::add(self, wrapped(other), alpha); });
  }

  static at::Tensor sub_scalar(const at::Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha) {
    const auto ok = [&] { return number_alpha_ok(self, other, alpha); };
    return route(
        op_sub_scalar, ok, [&] { return MYOPS_OVERRIDE_EW(sub_scalar, self, other, alpha); },
        [&] { return B::sub(self, wrapped(other), alpha); });
  }

  // ---- unary --------------------------------------------------------------------------------

  static at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
    const auto ok = [&] {
      return on(self) && at::isFloatingType(self.scalar_type()) && (approximate == "none" || approximate == "tanh");
    };
    return route(
        op_gelu, ok, [&] { return MYOPS_OVERRIDE_EW(gelu, self, approximate); },
        [&] { return B::gelu(self, approximate); });
  }

  // ---- the table's ops with the generic ENTRY (myops/op_signatures.h) ------------------------
  // Routed for operands this kernel takes (on this device; a number as the Tensor forms route a
  // wrapped number) of a dtype the op takes: the kernel's DTYPES, any for the *IntToFloat rules.
  // The hand-back of a Scalar overload is aten's own composite: the Tensor form with a
  // wrapped-number tensor.
  static bool takes(ew::EwOp op, at::ScalarType s) {
    const auto& info = ew::kOps[static_cast<int>(op)];
    if (info.rule == ew::EwRule::IntToFloat || info.rule == ew::EwRule::PromoteIntToFloat ||
        info.rule == ew::EwRule::PromoteNumberIntToFloat) {
      return true;
    }
    switch (ew::dtypes_of(info.kind)) {
      case ew::EwDtypes::NonBool:
        return s != at::kBool;
      case ew::EwDtypes::Float:
        return at::isFloatingType(s);
      case ew::EwDtypes::All:
        break;
    }
    return true;
  }

  // The kernels of the generic ops, one per signature; each op's is written out by
  // tools/gen_ops_elementwise.py (elementwise/generated/dropin_kernels.inc): `mine` is the op's
  // handle, `theirs` torch's kernel. No aten overload takes the number first (aten's ScalarSelf
  // forms are myops'): the generator refuses a routed rscalar op.
  template <class H, class Theirs>
  static at::Tensor route_unary(Op op, ew::EwOp e, const H& mine, Theirs theirs, const at::Tensor& self) {
    return route(
        op, [&] { return on(self) && takes(e, self.scalar_type()); },
        [&] { return mine.redispatch(c10::DispatchKeySet(B::key), self); }, [&] { return theirs(self); });
  }
  template <class H, class Theirs>
  static at::Tensor route_binary(Op op, ew::EwOp e, const H& mine, Theirs theirs, const at::Tensor& self,
                                 const at::Tensor& other) {
    const auto ok = [&] {
      return binary_ok(self, other) && takes(e, self.scalar_type()) && takes(e, other.scalar_type());
    };
    return route(
        op, ok, [&] { return mine.redispatch(c10::DispatchKeySet(B::key), self, other); },
        [&] { return theirs(self, other); });
  }
  template <class H, class Theirs>
  static at::Tensor route_scalar(Op op, ew::EwOp e, const H& mine, Theirs theirs, const at::Tensor& self,
                                 const c10::Scalar& other) {
    const auto ok = [&] { return number_ok(self, other) && takes(e, self.scalar_type()); };
    return route(
        op, ok, [&] { return mine.redispatch(c10::DispatchKeySet(B::key), self, other); },
        [&] { return theirs(self, wrapped(other)); });
  }
#include "elementwise/generated/dropin_kernels.inc"

  // pow on floating operands (the kernel's dtypes); on CUDA a host scalar exponent stays torch's
  static at::Tensor pow(const at::Tensor& self, const at::Tensor& exponent) {
    const auto ok = [&] {
      return binary_ok(self, exponent) && at::isFloatingType(self.scalar_type()) &&
             at::isFloatingType(exponent.scalar_type()) && !(kCuda && host_scalar(exponent));
    };
    return route(
        op_pow, ok, [&] { return MYOPS_OVERRIDE_EW(pow, self, exponent); }, [&] { return B::pow(self, exponent); });
  }

  static at::Tensor pow_scalar(const at::Tensor& self, const c10::Scalar& exponent) {
    const auto ok = [&] {
      return on(self) && at::isFloatingType(self.scalar_type()) && !exponent.isComplex() && !exponent.isSymbolic();
    };
    return route(
        op_pow_scalar, ok, [&] { return MYOPS_OVERRIDE_EW(pow_scalar, self, exponent); },
        [&] { return B::pow(self, exponent); });
  }

  // ---- registration -------------------------------------------------------------------------

  // The aten overloads of `op` (functional forms only: myops has no out= or in-place kernels,
  // and computing those through a temporary would cost a copy; add_, add.out, ... stay torch's).
  static void register_op(torch::Library& m, Op op) {
    switch (op) {
      case kNonzero:
        m.impl("nonzero", TORCH_FN(nonzero));
        break;
      case kNonzeroStatic:
        m.impl("nonzero_static", TORCH_FN(nonzero_static));
        break;
#include "elementwise/generated/dropin_register.inc"
      case kNms:
        break;  // one kernel for every backend, on BackendSelect (aten_override.cpp)
      case kNumOps:
        break;
    }
  }
};

// torch's kernels for one backend: MYOPS_OVERRIDE_TORCH_NS::<fn> (at::cpu or at::cuda: the
// per-backend entry points of ATen/CPUFunctions.h / ATen/CUDAFunctions.h, which bypass the
// dispatcher). Define MYOPS_OVERRIDE_TORCH_NS, then use this inside a backend struct, followed by
// elementwise/generated/dropin_torch.inc: one per routable op of the table (written out by
// tools/gen_ops_elementwise.py; at::compositeexplicitautograd::<fn> for an op the table routes as
// composite, ATen/CompositeExplicitAutogradFunctions.h).
#define MYOPS_OVERRIDE_TORCH_KERNELS                                                             \
  static at::Tensor nonzero(const at::Tensor& s) { return MYOPS_OVERRIDE_TORCH_NS::nonzero(s); } \
  static at::Tensor nonzero_static(const at::Tensor& s, c10::SymInt size, int64_t fill) {        \
    return MYOPS_OVERRIDE_TORCH_NS::nonzero_static_symint(s, std::move(size), fill);             \
  }

}  // namespace aten_override
}  // namespace myops

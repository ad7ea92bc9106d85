// The aten drop-in (see csrc/dropin/aten_override.h): routing state, counters, the registration
// of the overriding kernels, the CPU backend, and the control ops, callable from Python
// (myops.enable / disable / replace_torch_ops) and from C++ through the dispatcher:
//
//   myops::_override_ops() -> str[]                     every overridable op, in counter order
//   myops::_override_defaults() -> str[]                the ops enable() routes when none are named
//   myops::_override_enable(str[] ops) -> ()            route `ops` in every thread (adds to the set)
//   myops::_override_disable() -> ()                    stop routing process-wide
//   myops::_override_enabled() -> str[]                 the ops routed process-wide now
//   myops::_override_scoped() -> str[]                  the ops this thread's open scopes route
//   myops::_override_registered() -> str[]              the ops whose aten kernels are overridden
//   myops::_override_unregister() -> ()                 torch's kernels back in the dispatcher
//   myops::_override_scope_enter(str[] ops) -> int      route `ops` in this thread; returns a token
//   myops::_override_scope_exit(str[] ops, int token) -> ()   ends that scope (LIFO per thread)
//   myops::_override_stats(bool this_thread=False) -> int[]   [routed, handed back] per op
//   myops::_override_why() -> str[]                     the reasons a call is handed back
//   myops::_override_stats_why(bool this_thread=False) -> int[]   handed back per op and reason
//
// Threads: the dispatcher's tables change once, at the first enable or scope (every op's kernels
// are registered then, and stay), and never while routing is on: enable, disable and scopes
// only set the state the kernels read (a process-wide mask, a thread-local one), so a scope in
// one thread never changes what another thread's call dispatches to. PyTorch does not support
// registering kernels while other threads dispatch. The one call that deregisters,
// _override_unregister, is explicit, refused while any routing is on, and unsafe while other
// threads run torch ops (docs/dropin.md, "Threads").
//
// No Python here: the override works in a process that has no interpreter.
#include "dropin/aten_override.h"
#include "core/cpu_isa.h"

#include <ATen/Version.h>
#include <ATen/CPUFunctions.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace myops {
namespace aten_override {
namespace {

struct OpInfo {
  const char* name;
  // Routed by enable() / replace_torch_ops() when no ops are named. Off: the transcendental
  // ops, which agree with torch within a few ulp but not bit for bit (docs/exactness.md).
  bool default_on;
};

constexpr OpInfo kOpTable[kNumOps] = {
    {"nonzero", true},
    {"nonzero_static", true},
#include "elementwise/generated/dropin_table.inc"
    {"nms", true},
};

constexpr const char* kWhyNames[kNumWhy] = {"arguments", "refused"};

// kNms overrides torchvision::nms (tv_nms below); it is registered only if torchvision's ops are
// loaded when the op is enabled.
bool torchvision_loaded() { return c10::Dispatcher::singleton().findSchema({"torchvision::nms", ""}).has_value(); }

// Process-wide routing (enable), the open scopes of every thread together, and the counters of
// every thread together.
std::atomic<uint64_t> g_mask{0};
std::atomic<int64_t> g_open_scopes{0};
std::atomic<uint64_t> g_routed[kNumOps];
std::atomic<uint64_t> g_handed_back[kNumOps][kNumWhy];

// Per thread: the scoped routing (replace_torch_ops), the nesting flag and this thread's counters.
struct ThreadState {
  uint64_t mask = 0;
  bool nested = false;
  uint64_t routed[kNumOps] = {};
  uint64_t handed_back[kNumOps][kNumWhy] = {};
};
thread_local ThreadState t_state;

constexpr uint64_t kAllOps = kNumOps == 64 ? ~uint64_t{0} : (uint64_t{1} << kNumOps) - 1;

// The registered kernels: per op, one torch::Library per backend holding the op's overriding
// kernels, made at the first enable or scope and kept (destroying a Library deregisters its
// kernels: only _override_unregister does). g_registered: the ops registered, read without the
// lock by enable and scopes (a scope's whole cost once everything is registered).
struct Registry {
  std::mutex mu;
  std::vector<std::pair<c10::DispatchKey, Registrar>> backends;
  std::vector<std::unique_ptr<torch::Library>> libs[kNumOps];
};
std::atomic<uint64_t> g_registered{0};

Registry& registry() {
  // Never destroyed: at exit the kernels simply stay registered (no work against a dispatcher
  // that may already be gone).
  static Registry* r = new Registry();
  return *r;
}

// Drops the dispatcher's "Overriding a previously registered kernel" warning, which is the
// point of this registration; passes every other warning on.
class DropOverrideWarning : public c10::WarningHandler {
 public:
  explicit DropOverrideWarning(c10::WarningHandler* next) : next_(next) {}
  void process(const c10::Warning& w) override {
    if (w.msg().find("Overriding a previously registered kernel") != std::string::npos) return;
    if (next_) next_->process(w);
  }

 private:
  c10::WarningHandler* next_;
};

at::Tensor tv_nms(c10::DispatchKeySet ks, const at::Tensor& dets, const at::Tensor& scores, double iou_threshold);

// Registers the kernels of every op not registered yet: all of them at once, so that later
// enables and scopes find the dispatcher as it is (torchvision::nms: once torchvision's ops are
// loaded). Caller holds r.mu.
void register_locked(Registry& r) {
  DropOverrideWarning drop(c10::WarningUtils::get_warning_handler());
  c10::WarningUtils::WarningHandlerGuard guard(&drop);
  uint64_t done = g_registered.load();
  for (int op = 0; op < kNumOps; ++op) {
    if (done >> op & 1u) continue;
    if (op == kNms) {
      if (!torchvision_loaded()) continue;
      auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "torchvision", c10::DispatchKey::BackendSelect,
                                                  __FILE__, __LINE__);
      lib->impl("nms", TORCH_FN(tv_nms));
      r.libs[op].push_back(std::move(lib));
    } else {
      for (auto& [key, reg] : r.backends) {
        auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", key, __FILE__, __LINE__);
        reg(*lib, static_cast<Op>(op));
        r.libs[op].push_back(std::move(lib));
      }
    }
    done |= uint64_t{1} << op;
  }
  g_registered.store(done);
}

// Before routing `mask`: its kernels registered. Once they are, one atomic load. An op that
// cannot be registered yet (nms before torchvision's ops are loaded) is looked for again at the
// next enable or scope that names it.
void ensure_registered(uint64_t mask) {
  if ((mask & ~g_registered.load(std::memory_order_acquire)) == 0) return;
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  register_locked(r);
}

std::string op_list() {
  std::string s;
  for (int op = 0; op < kNumOps; ++op) s += std::string(op ? ", " : "") + kOpTable[op].name;
  return s;
}

uint64_t mask_of(const std::vector<std::string>& names, const char* caller) {
  uint64_t mask = 0;
  for (const auto& n : names) {
    int found = -1;
    for (int op = 0; op < kNumOps; ++op) {
      if (n == kOpTable[op].name) found = op;
    }
    TORCH_CHECK(found >= 0, "myops.", caller, ": unknown op '", n, "'; the ops that can be routed are: ", op_list());
    mask |= uint64_t{1} << found;
  }
  return mask;
}

std::vector<std::string> names_of(uint64_t mask) {
  std::vector<std::string> v;
  for (int op = 0; op < kNumOps; ++op) {
    if (mask >> op & 1u) v.emplace_back(kOpTable[op].name);
  }
  return v;
}

// ---- torchvision::nms -------------------------------------------------------------------------
//
// One kernel for every backend, on the BackendSelect key: the last key above the backend's, which
// every call reaches (grad mode, no_grad, inference_mode, which skips the Autograd keys, and
// autocast, whose torchvision kernel casts to float and calls nms again), and below the Python,
// Fake and Functionalize layers. torchvision's own CPU / CUDA kernel stays in place below it, so
// the hand-back is a redispatch to it. Routed when the key below is a plain backend key on which
// the drop-in's library has an nms kernel (CPU; CUDA in a CUDA build) and both tensors are plain
// on that device; sparse, quantized, meta, ... calls are handed back.
at::Tensor tv_nms(c10::DispatchKeySet ks, const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  using Sig = at::Tensor(const at::Tensor&, const at::Tensor&, double);
  static const auto torchvision_nms =
      c10::Dispatcher::singleton().findSchemaOrThrow("torchvision::nms", "").typed<Sig>();
  static const auto mine =
      c10::Dispatcher::singleton().findSchemaOrThrow(C10_STRINGIZE(MYOPS_OVERRIDE_LIBRARY) "::nms", "").typed<Sig>();
  const c10::DispatchKeySet below =
      ks & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, c10::DispatchKey::BackendSelect);
  const c10::DispatchKey key = below.highestPriorityTypeId();
  const bool backend = key == c10::DispatchKey::CPU || key == c10::DispatchKey::CUDA;
  const auto ok = [&] {
    return backend && mine.hasKernelForDispatchKey(key) && plain(dets, dets.device().type()) &&
           plain(scores, dets.device().type());
  };
  return route(
      kNms, ok, [&] { return mine.redispatch(c10::DispatchKeySet(key), dets, scores, iou_threshold); },
      [&] { return torchvision_nms.redispatch(below, dets, scores, iou_threshold); });
}

// ---- the control ops --------------------------------------------------------------------------

std::vector<std::string> ops_all() { return names_of(kAllOps); }

std::vector<std::string> ops_default() {
  uint64_t m = 0;
  for (int op = 0; op < kNumOps; ++op) m |= kOpTable[op].default_on ? uint64_t{1} << op : 0u;
  return names_of(m);
}

void enable(std::vector<std::string> ops) { enable_mask(mask_of(ops, "enable")); }

void disable() { g_mask.store(0); }

std::vector<std::string> ops_enabled() { return names_of(g_mask.load()); }

std::vector<std::string> ops_scoped() { return names_of(t_state.mask); }

std::vector<std::string> ops_registered() { return names_of(g_registered.load()); }

void unregister() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  TORCH_CHECK(g_mask.load() == 0 && g_open_scopes.load() == 0,
              "myops.replace.unregister: the drop-in is routing (an enable() or an open replace_torch_ops() block in "
              "some thread); disable it and close every block first");
  g_registered.store(0);
  for (auto& libs : r.libs) libs.clear();
}

int64_t scope_enter(std::vector<std::string> ops) { return scope_enter_mask(mask_of(ops, "replace_torch_ops")); }

void scope_exit(std::vector<std::string> /*ops*/, int64_t token) { scope_exit_token(token); }

uint64_t handed_back(int op, int why, bool this_thread) {
  return this_thread ? t_state.handed_back[op][why] : g_handed_back[op][why].load();
}

std::vector<int64_t> stats(bool this_thread) {
  std::vector<int64_t> v;
  v.reserve(2 * kNumOps);
  for (int op = 0; op < kNumOps; ++op) {
    v.push_back(static_cast<int64_t>(this_thread ? t_state.routed[op] : g_routed[op].load()));
    uint64_t back = 0;
    for (int why = 0; why < kNumWhy; ++why) back += handed_back(op, why, this_thread);
    v.push_back(static_cast<int64_t>(back));
  }
  return v;
}

std::vector<std::string> why_names() { return {kWhyNames, kWhyNames + kNumWhy}; }

std::vector<int64_t> stats_why(bool this_thread) {
  std::vector<int64_t> v;
  v.reserve(static_cast<size_t>(kNumOps) * kNumWhy);
  for (int op = 0; op < kNumOps; ++op) {
    for (int why = 0; why < kNumWhy; ++why) v.push_back(static_cast<int64_t>(handed_back(op, why, this_thread)));
  }
  return v;
}

// ---- the CPU backend --------------------------------------------------------------------------

struct CpuBackend {
  static constexpr c10::DispatchKey key = c10::DispatchKey::CPU;
  static constexpr c10::DeviceType device = c10::DeviceType::CPU;
  static constexpr bool cuda = false;
  // torch fuses a * b + c in its AVX2 / AVX-512 kernels, not in its default ones (a CPU without
  // AVX2, or ATEN_CPU_CAPABILITY=default); myops in its AVX2 / AVX-512 builds, not in its
  // baseline one (elementwise/cpu/elementwise_simd_math.h, AddUnfused). Routed where the two agree: a CPU
  // runs them at the same level unless ATEN_CPU_CAPABILITY or MYOPS_CPU_ISA says otherwise.
  static bool fuses_like_torch() {
    static const bool same = [] {
      const std::string cap = at::get_cpu_capability();
      const bool torch_fuses = cap == "AVX2" || cap == "AVX512";
      return torch_fuses == (cpu_isa() != CpuIsa::Baseline);
    }();
    return same;
  }
#define MYOPS_OVERRIDE_TORCH_NS at::cpu
  MYOPS_OVERRIDE_TORCH_KERNELS
#include "elementwise/generated/dropin_torch.inc"
#undef MYOPS_OVERRIDE_TORCH_NS
};

[[maybe_unused]] const bool cpu_added = add_backend(c10::DispatchKey::CPU, &Kernels<CpuBackend>::register_op);

}  // namespace

// ---- the routing state, for the kernels -------------------------------------------------------

bool routing_on(Op op) {
  const auto& t = t_state;
  return !t.nested && ((g_mask.load(std::memory_order_relaxed) | t.mask) >> op & 1u);
}

void count(Op op, bool routed, Why why) {
  auto& t = t_state;
  if (routed) {
    g_routed[op].fetch_add(1, std::memory_order_relaxed);
    ++t.routed[op];
  } else {
    g_handed_back[op][why].fetch_add(1, std::memory_order_relaxed);
    ++t.handed_back[op][why];
  }
}

void enable_mask(uint64_t mask) {
  ensure_registered(mask);  // the kernels first, then the routing
  g_mask.fetch_or(mask & kAllOps);
}

int64_t scope_enter_mask(uint64_t mask) {
  ensure_registered(mask);
  auto& t = t_state;
  const uint64_t prev = t.mask;
  t.mask = prev | (mask & kAllOps);
  g_open_scopes.fetch_add(1, std::memory_order_relaxed);
  return static_cast<int64_t>(prev);
}

void scope_exit_token(int64_t token) {
  t_state.mask = static_cast<uint64_t>(token);
  g_open_scopes.fetch_sub(1, std::memory_order_relaxed);
}

void counters(bool this_thread, uint64_t* out) {
  const auto& t = t_state;
  for (int op = 0; op < kNumOps; ++op) {
    *out++ = this_thread ? t.routed[op] : g_routed[op].load(std::memory_order_relaxed);
    for (int why = 0; why < kNumWhy; ++why) {
      *out++ = this_thread ? t.handed_back[op][why] : g_handed_back[op][why].load(std::memory_order_relaxed);
    }
  }
}

Nested::Nested() : prev_(t_state.nested) { t_state.nested = true; }
Nested::~Nested() { t_state.nested = prev_; }

bool add_backend(c10::DispatchKey key, Registrar reg) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& b : r.backends) {
    if (b.first == key) {
      b.second = reg;
      return true;
    }
  }
  r.backends.emplace_back(key, reg);
  return true;
}

}  // namespace aten_override
}  // namespace myops

// The control ops' schemas are in csrc/dropin/schema.cpp (for myops_emu: copied by the emulation's loader).
TORCH_LIBRARY_IMPL(MYOPS_OVERRIDE_LIBRARY, CompositeImplicitAutograd, m) {
  namespace ao = myops::aten_override;
  m.impl("_override_ops", &ao::ops_all);
  m.impl("_override_defaults", &ao::ops_default);
  m.impl("_override_enable", &ao::enable);
  m.impl("_override_disable", &ao::disable);
  m.impl("_override_enabled", &ao::ops_enabled);
  m.impl("_override_scoped", &ao::ops_scoped);
  m.impl("_override_registered", &ao::ops_registered);
  m.impl("_override_unregister", &ao::unregister);
  m.impl("_override_scope_enter", &ao::scope_enter);
  m.impl("_override_scope_exit", &ao::scope_exit);
  m.impl("_override_stats", &ao::stats);
  m.impl("_override_why", &ao::why_names);
  m.impl("_override_stats_why", &ao::stats_why);
}

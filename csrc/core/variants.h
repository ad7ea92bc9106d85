#pragma once
// CUDA kernel variants chosen at run time (docs/design.md, "Kernel variants").
//
// kTunable is the one place that names each tunable kernel's variants; kTuning is the one
// committed tuning table of the defaults per GPU architecture. The selection of one process:
//   1. the override set by myops::_set_cuda_variant(spec) (the GPU sweep; the emulation's tests
//      call it through myops_emu::_emu_variant), else
//   2. MYOPS_CUDA_VARIANT=op:name,... read once, at the first selection, else
//   3. kTuning's entry for the device's architecture (compute capability major * 10 + minor),
//      else the op's first variant.
// A spec naming an unknown op or variant is refused with a ValueError that lists what exists
// (an invalid MYOPS_CUDA_VARIANT: at every call of a tunable op, as it is never silently ignored).
// No torch headers beyond c10's exception: the .cu glue includes it.
#include <c10/util/Exception.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

// Every name below lies in an inline namespace that the CUDA emulation renames
// (core/cuda/emulation.h defines MYOPS_VARIANTS_NS), so that its copy never binds to libmyops'
// when both are loaded (inline functions and their statics are shared across shared objects).
#if !defined(MYOPS_VARIANTS_NS)
#define MYOPS_VARIANTS_NS variants_lib
#endif

namespace myops {
inline namespace MYOPS_VARIANTS_NS {

struct TunableOp {
  const char* op;
  std::vector<const char*> names;  // names[0]: the fallback where kTuning has no entry
};

// Every tunable kernel and its variants. Which one should win on an H200, and why, is written
// beside each kernel's variants (nonzero: csrc/nonzero/cuda/nonzero.cu; max_pool2d_add:
// csrc/max_pool2d_add/cuda/max_pool2d_add.cu; binary16: csrc/elementwise/cuda/elementwise_binary.cu).
inline const std::vector<TunableOp>& tunable_ops() {
  static const std::vector<TunableOp> kTunable = {
      // nonzero_static and nonzero_bounded (one kernel): "cub": CUB's DeviceSelect::Flagged then
      // the tail fill; "lookback": one pass, decoupled look-back over atomic-counter tiles
      {"nonzero_static", {"cub", "lookback"}},
      // nonzero / where(cond) / argwhere: "cub": worst-case buffer or count pass, then CUB's select;
      // "lookback": the same policy with the look-back select pass
      {"nonzero", {"cub", "lookback"}},
      // max_pool2d_add's 3x3 / stride 2 / pad 1 forward: "scalar": one output per thread; "wide":
      // two outputs per thread (NCHW) or a 16-byte pack of channels (channels_last); "tile": a block
      // stages its outputs' input rows in shared memory, every window read from there
      {"max_pool2d_add", {"scalar", "wide", "tile"}},
      // add / sub / mul of two float16 or bfloat16 tensors (any layout, broadcast included):
      // "float": each element in float, rounded once (torch's opmath); "paired": two elements per
      // __half2 / __nv_bfloat162 instruction (elementwise_binary.cu: why the bits are the same)
      {"binary16", {"float", "paired"}},
  };
  return kTunable;
}

// The tuning table: (architecture, op, variant). sm_90 (H100 / H200): today's kernels, until a
// GPU sweep (gpu/gpu_session.py sweep) says otherwise.
struct TuningEntry {
  int arch;
  const char* op;
  const char* variant;
};
inline const std::vector<TuningEntry>& tuning_table() {
  static const std::vector<TuningEntry> kTuning = {
      {90, "nonzero_static", "cub"},
      {90, "nonzero", "cub"},
      {90, "max_pool2d_add", "scalar"},
      {90, "binary16", "float"},
  };
  return kTuning;
}

namespace variants_detail {

inline const TunableOp* find_op(const std::string& op) {
  for (const auto& t : tunable_ops()) {
    if (op == t.op) return &t;
  }
  return nullptr;
}

inline std::string known() {
  std::string s;
  for (const auto& t : tunable_ops()) {
    for (const char* n : t.names) s += (s.empty() ? "" : ", ") + std::string(t.op) + ":" + n;
  }
  return s;
}

// "op:name,op:name" -> [(op, name)], validated; `where` names the spec's source in errors.
inline std::vector<std::pair<std::string, std::string>> parse(const std::string& spec, const char* where) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos <= spec.size() && !spec.empty()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    TORCH_CHECK_VALUE(colon != std::string::npos, where, ": '", item, "' is not op:variant (known: ", known(), ")");
    const std::string op = item.substr(0, colon), name = item.substr(colon + 1);
    const TunableOp* t = find_op(op);
    TORCH_CHECK_VALUE(t != nullptr, where, ": unknown op '", op, "' (known: ", known(), ")");
    bool found = false;
    for (const char* n : t->names) found = found || name == n;
    TORCH_CHECK_VALUE(found, where, ": unknown variant '", name, "' of ", op, " (known: ", known(), ")");
    out.emplace_back(op, name);
  }
  return out;
}

// The process's selection state.
struct State {
  std::mutex mu;
  bool env_read = false;
  std::string env_error;  // a refused MYOPS_CUDA_VARIANT
  std::vector<std::pair<std::string, std::string>> env, override_;
  std::string override_spec;
};
inline State& state() {
  static State s;
  return s;
}

}  // namespace variants_detail

// The variant of `op` (a kTunable name) to run on a device of architecture `arch`.
inline std::string cuda_variant(const char* op, int arch) {
  namespace d = variants_detail;
  auto& s = d::state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.env_read) {
    s.env_read = true;
    const char* env = std::getenv("MYOPS_CUDA_VARIANT");
    if (env != nullptr) {
      try {
        s.env = d::parse(env, "MYOPS_CUDA_VARIANT");
      } catch (const c10::Error& e) {
        s.env_error = e.what_without_backtrace();
      }
    }
  }
  TORCH_CHECK_VALUE(s.env_error.empty(), s.env_error);
  for (const auto* list : {&s.override_, &s.env}) {
    for (auto it = list->rbegin(); it != list->rend(); ++it) {
      if (it->first == op) return it->second;
    }
  }
  for (const auto& e : tuning_table()) {
    if (e.arch == arch && std::string(e.op) == op) return e.variant;
  }
  const TunableOp* t = d::find_op(op);
  TORCH_CHECK(t != nullptr, "myops: internal error, '", op, "' is not a tunable op");
  return t->names[0];
}

// Sets the override ("" clears it; validated first, so a refused spec changes nothing); returns
// the previous one.
inline std::string set_cuda_variant(const std::string& spec) {
  auto parsed = variants_detail::parse(spec, "myops._set_cuda_variant");
  auto& s = variants_detail::state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.override_ = std::move(parsed);
  return std::exchange(s.override_spec, spec);
}

// Every "op:variant", in kTunable's order.
inline std::vector<std::string> cuda_variants() {
  std::vector<std::string> out;
  for (const auto& t : tunable_ops()) {
    for (const char* n : t.names) out.push_back(std::string(t.op) + ":" + n);
  }
  return out;
}

// The default "op:variant" of every tunable op on architecture `arch` (no override, no env).
inline std::vector<std::string> cuda_variant_defaults(int arch) {
  std::vector<std::string> out;
  for (const auto& t : tunable_ops()) {
    std::string v = t.names[0];
    for (const auto& e : tuning_table()) {
      if (e.arch == arch && std::string(e.op) == t.op) v = e.variant;
    }
    out.push_back(std::string(t.op) + ":" + v);
  }
  return out;
}

}  // namespace MYOPS_VARIANTS_NS
}  // namespace myops

// The CPU build in use (core/cpu_isa.h): the best this CPU runs, or the one MYOPS_CPU_ISA forces,
// chosen once per process. Its own file, with no op registration, so that every library that
// asks (libmyops, the CUDA emulation's drop-in) links the same rule.
#include "core/cpu_isa.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace myops {

namespace {

// The best level this CPU can run.
CpuIsa cpu_supported() {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))) {
    return CpuIsa::Baseline;
  }
  if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))) {
    return CpuIsa::Avx2;
  }
  return __builtin_cpu_supports("avx512bf16") ? CpuIsa::Avx512Bf16 : CpuIsa::Avx512;
#else
  return CpuIsa::Baseline;
#endif
}

// Whether the environment names a build (MYOPS_CPU_ISA set, or MYOPS_CPU_BASELINE).
bool isa_named() {
  const char* env = std::getenv("MYOPS_CPU_ISA");
  return (env != nullptr && *env != '\0') || std::getenv("MYOPS_CPU_BASELINE") != nullptr;
}

CpuIsa choose_isa() {
  const CpuIsa best = cpu_supported();
  if (!isa_named()) return best;
  const char* env = std::getenv("MYOPS_CPU_ISA");
  if (env == nullptr || *env == '\0') return CpuIsa::Baseline;  // MYOPS_CPU_BASELINE
  std::string v(env);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  CpuIsa want;
  if (v == "baseline" || v == "default") {
    want = CpuIsa::Baseline;
  } else if (v == "avx2") {
    want = CpuIsa::Avx2;
  } else if (v == "avx512") {
    want = CpuIsa::Avx512;
  } else if (v == "avx512_bf16") {
    want = CpuIsa::Avx512Bf16;
  } else {
    TORCH_CHECK(false, "myops: MYOPS_CPU_ISA='", env,
                "' is not a CPU build; expected one of baseline, avx2, avx512, avx512_bf16 (or unset: "
                "the best this CPU runs, here ",
                cpu_isa_name(best), ")");
  }
  TORCH_CHECK(want <= best, "myops: MYOPS_CPU_ISA='", env, "' asks for the ", cpu_isa_name(want),
              " build, which this CPU cannot run (the best it runs is ", cpu_isa_name(best), ")");
  return want;
}

}  // namespace

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Baseline:
      return "baseline";
    case CpuIsa::Avx2:
      return "avx2";
    case CpuIsa::Avx512:
      return "avx512";
    case CpuIsa::Avx512Bf16:
      return "avx512_bf16";
  }
  return "unknown";
}

// Read once; a bad value throws here on every call (a static whose initializer throws is
// initialized again at the next call).
CpuIsa cpu_isa() {
  static const CpuIsa isa = choose_isa();
  return isa;
}

bool cpu_isa_forced() {
  static const bool forced = isa_named();
  return forced;
}

}  // namespace myops

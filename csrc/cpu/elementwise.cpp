// Elementwise ops on CPU: the shared front ends (common/elementwise_ops.h) plan each call;
// the loops (cpu/elementwise_kernels.h: the shared functors over the merged iteration space,
// at::parallel_for, at::vec::Vectorized) run in the AVX2 build (elementwise_avx2.cpp) when the
// CPU supports it, else in the baseline build compiled here; on CPUs with AVX-512 the ops on
// floating dtypes (all but cast and where) run in the AVX-512 build (elementwise_avx512.cpp).
#include <torch/library.h>

#include <cstdlib>

#define MYOPS_CPU_ENTRY run_cpu_baseline
#include "cpu/elementwise_kernels.h"
#include "cpu/add_alpha_torch_order.h"

namespace myops {
namespace ew {
void run_cpu_avx2(EwKind kind, const EwPlan& p, const EwParams& prm);    // elementwise_avx2.cpp
void run_cpu_avx512(EwKind kind, const EwPlan& p, const EwParams& prm);  // elementwise_avx512.cpp
}  // namespace ew

namespace {

// MYOPS_CPU_BASELINE=1 in the environment forces the baseline build (to test it).
bool forced_baseline() {
  static const bool forced = std::getenv("MYOPS_CPU_BASELINE") != nullptr;
  return forced;
}

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                         __builtin_cpu_supports("f16c") && !forced_baseline();
  return ok;
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool ok = cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
                         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                         __builtin_cpu_supports("avx512dq");
  return ok;
#else
  return false;
#endif
}

// What the AVX-512 build covers: every op but cast and where, on the floating dtypes.
bool in_avx512_build(ew::EwKind kind, at::ScalarType dt) {
  return kind != ew::EwKind::Cast && kind != ew::EwKind::Where && at::isFloatingType(dt);
}

struct CpuBackend {
  static at::Tensor cast(const at::Tensor& t, at::ScalarType dt) { return ew::Ops<CpuBackend>::cast(t, dt); }

  static void run(ew::EwKind kind, const ew::EwPlan& p, const ew::EwParams& prm) {
    if (ew::add_alpha_needs_torch_order(kind, p, prm)) {
      ew::run_add_alpha_torch_order(p, prm);  // PyTorch's two precisions, element for element
    } else if (in_avx512_build(kind, p.dtype) && cpu_has_avx512()) {
      ew::run_cpu_avx512(kind, p, prm);
    } else if (cpu_has_avx2()) {
      ew::run_cpu_avx2(kind, p, prm);
    } else {
      ew::run_cpu_baseline(kind, p, prm);
    }
  }
};

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) { myops::ew::register_all<myops::CpuBackend>(m); }

// Elementwise ops on CPU: the shared front ends (common/elementwise_ops.h) plan each call;
// the loops (cpu/elementwise_kernels.h: the shared functors over the merged iteration space,
// at::parallel_for, at::vec::Vectorized) run in the AVX2 build (elementwise_avx2.cpp) when the
// CPU supports it, else in the baseline build compiled here.
#include <torch/library.h>

#define MYOPS_CPU_ENTRY run_cpu_baseline
#include "cpu/elementwise_kernels.h"

namespace myops {
namespace ew {
void run_cpu_avx2(EwKind kind, const EwPlan& p, const EwParams& prm);  // elementwise_avx2.cpp
}  // namespace ew

namespace {

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                         __builtin_cpu_supports("f16c");
  return ok;
#else
  return false;
#endif
}

struct CpuBackend {
  static at::Tensor cast(const at::Tensor& t, at::ScalarType dt) { return ew::Ops<CpuBackend>::cast(t, dt); }

  static void run(ew::EwKind kind, const ew::EwPlan& p, const ew::EwParams& prm) {
    if (cpu_has_avx2()) {
      ew::run_cpu_avx2(kind, p, prm);
    } else {
      ew::run_cpu_baseline(kind, p, prm);
    }
  }
};

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) { myops::ew::register_all<myops::CpuBackend>(m); }

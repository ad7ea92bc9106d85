// Elementwise ops on CPU: the shared front ends (common/elementwise_ops.h) plan each call;
// the loops (cpu/elementwise_kernels.h: the shared functors over the merged iteration space,
// at::parallel_for, at::vec::Vectorized) run in the build cpu_isa() picks (cpu/cpu_isa.h):
// the AVX2 build (elementwise_avx2.cpp), else the baseline build compiled here; at the AVX-512
// level the ops on floating dtypes (all but cast and where) run in the AVX-512 build
// (elementwise_avx512.cpp), the rest in the AVX2 build. This file also registers
// myops::_cpu_isa() -> str, which names the level (chosen in cpu/cpu_isa.cpp).
#include <torch/library.h>

#include <string>

#include "cpu/cpu_isa.h"

#define MYOPS_CPU_ENTRY run_cpu_baseline
#include "cpu/elementwise_kernels.h"

namespace myops {
namespace ew {
void run_cpu_avx2(EwKind kind, const EwPlan& p, const EwParams& prm);    // elementwise_avx2.cpp
void run_cpu_avx512(EwKind kind, const EwPlan& p, const EwParams& prm);  // elementwise_avx512.cpp
}  // namespace ew

namespace {

std::string cpu_isa_op() { return cpu_isa_name(cpu_isa()); }

// What the AVX-512 build covers: every op but cast and where, on the floating dtypes.
bool in_avx512_build(ew::EwKind kind, at::ScalarType dt) {
  return kind != ew::EwKind::Cast && kind != ew::EwKind::Where && at::isFloatingType(dt);
}

struct CpuBackend {
  static constexpr bool kCpuRules = true;
  static at::Tensor cast(const at::Tensor& t, at::ScalarType dt) { return ew::Ops<CpuBackend>::cast(t, dt); }

  static void run(ew::EwKind kind, const ew::EwPlan& p, const ew::EwParams& prm) {
    const CpuIsa isa = cpu_isa();
    if (isa >= CpuIsa::Avx512 && in_avx512_build(kind, p.dtype)) {
      ew::run_cpu_avx512(kind, p, prm);
    } else if (isa >= CpuIsa::Avx2) {
      ew::run_cpu_avx2(kind, p, prm);
    } else {
      ew::run_cpu_baseline(kind, p, prm);
    }
  }
};

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) { myops::ew::register_all<myops::CpuBackend>(m); }

// Not an op on tensors: which CPU build runs (for benchmarks, demos and bug reports), from
// Python (torch.ops.myops._cpu_isa()) or C++ (through the dispatcher).
TORCH_LIBRARY_FRAGMENT(myops, m) { m.def("_cpu_isa() -> str", &myops::cpu_isa_op); }

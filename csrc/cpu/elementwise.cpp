// Elementwise ops on CPU: the shared front ends (common/elementwise_ops.h) plan each call;
// the loops (cpu/elementwise_kernels.h: the shared functors over the merged iteration space,
// at::parallel_for, at::vec::Vectorized) run in the build cpu_isa() picks (cpu/cpu_isa.h):
// the AVX2 build (elementwise_avx2.cpp), else the baseline build compiled here; at the AVX-512
// level the ops on floating dtypes (all but cast and where) run in the AVX-512 build
// (elementwise_avx512.cpp), the rest in the AVX2 build. This file also implements
// myops::_cpu_isa() -> str, which names the level (chosen in cpu/cpu_isa.cpp).
#include <ATen/Context.h>
#include <torch/library.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#endif

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

// oneDNN's bfloat16 / float16 support as torch asks it (mkldnn_bf16_device_check /
// mkldnn_fp16_device_check: ideep's has_bf16_type_support / has_fp16_type_support, i.e. oneDNN's
// mayiuse): bfloat16 from AVX-512 F/BW/VL/DQ on, float16 from AVX512-FP16 (with AVX512-BF16 and
// VNNI) on; both with AVX2-VNNI-2 (AVX-VNNI, AVX-VNNI-INT8, AVX-NE-CONVERT).
struct OneDnnReduced {
  bool bf16 = false, fp16 = false;
};
OneDnnReduced onednn_reduced() {
  OneDnnReduced r;
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  __builtin_cpu_init();
  const bool core = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  unsigned a0 = 0, b0 = 0, c0 = 0, d0 = 0, a1 = 0, b1 = 0, c1 = 0, d1 = 0;
  __get_cpuid_count(7, 0, &a0, &b0, &c0, &d0);
  __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
  const bool avx512_fp16 = (d0 >> 23) & 1, avx512_vnni = (c0 >> 11) & 1, avx512_bf16 = (a1 >> 5) & 1;
  const bool avx2_vnni_2 = __builtin_cpu_supports("avx2") && ((a1 >> 4) & 1) && ((d1 >> 4) & 1) && ((d1 >> 5) & 1);
  r.bf16 = core || avx2_vnni_2;
  r.fp16 = (core && avx512_vnni && avx512_bf16 && avx512_fp16) || avx2_vnni_2;
#endif
  return r;
}

}  // namespace

namespace ew {
TorchCpuGelu torch_cpu_gelu_path(const at::Tensor& self) {
  if (!at::hasMKLDNN() || !at::globalContext().userEnabledMkldnn()) return TorchCpuGelu::Own;
  if (!self.is_contiguous() || self.numel() <= 1) return TorchCpuGelu::Own;
  static const OneDnnReduced reduced = onednn_reduced();
  const at::ScalarType dt = self.scalar_type();
  if (!(dt == at::kFloat || (dt == at::kBFloat16 && reduced.bf16) || (dt == at::kHalf && reduced.fp16))) {
    return TorchCpuGelu::Own;
  }
  for (const int64_t s : self.strides()) {
    if (s == 0) return TorchCpuGelu::OneDnnRef;
  }
  return TorchCpuGelu::OneDnnJit;
}
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
// Python (torch.ops.myops._cpu_isa()) or C++ (through the dispatcher). Schema in csrc/myops.cpp.
TORCH_LIBRARY_IMPL(myops, CompositeImplicitAutograd, m) { m.impl("_cpu_isa", &myops::cpu_isa_op); }

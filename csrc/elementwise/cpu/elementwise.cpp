// Elementwise ops on CPU: the shared front ends (elementwise/elementwise_front.h) plan each call;
// the loops (elementwise/cpu/elementwise_kernels.h: the shared functors over the merged iteration space,
// at::parallel_for, at::vec::Vectorized) run in the build cpu_isa() picks (core/cpu_isa.h):
// the AVX2 build (elementwise_avx2.cpp), else the baseline build compiled here; at the AVX-512
// level the ops on floating dtypes (all but cast and where) run in the AVX-512 build
// (elementwise_avx512.cpp), the rest in the AVX2 build. This file also implements
// myops::_cpu_isa() -> str, which names the level (chosen in core/cpu_isa.cpp).
#include <ATen/Context.h>
#include <torch/library.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include <string>

#include "core/cpu_isa.h"

#define MYOPS_CPU_ENTRY run_cpu_baseline
#include "elementwise/cpu/elementwise_kernels.h"

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

// Whether this CPU runs a 512-bit instruction as two 256-bit halves: AMD's Zen 4 (family 19h,
// the only one of that family with AVX-512). Later AMD families and Intel's AVX-512 cores have
// full-width units.
bool half_width_avx512() {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  const bool amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;  // "AuthenticAMD"
  if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return false;
  const unsigned family = ((a >> 8) & 0xf) + (((a >> 8) & 0xf) == 0xf ? ((a >> 20) & 0xff) : 0);
  return family == 0x19;
#else
  return false;
#endif
}

// The kinds whose math the AVX-512 build computes differently (its own exp / log / erf / pow
// and the hardware bfloat16 rounding), not merely twice as wide.
bool avx512_math(ew::EwKind kind) {
  switch (kind) {
    case ew::EwKind::Gelu:
    case ew::EwKind::Silu:
    case ew::EwKind::Sigmoid:
    case ew::EwKind::Exp:
    case ew::EwKind::Log:
    case ew::EwKind::Tanh:
    case ew::EwKind::Pow:
      return true;
    default:
      return false;
  }
}

// What the AVX-512 build covers: every op but cast and where, on the floating dtypes. On a
// half-width core, left to its default (MYOPS_CPU_ISA unset), only the kinds of avx512_math and
// the streamed outputs (float / double, elementwise_store.h's streams(), not compute_bound_kind) take it; the rest run
// the AVX2 build, the one torch itself runs for them (torch registers its AVX-512 kernels for a few ops only). Measured
// on an EPYC (Zen 4) VM, one thread, torch 2.14.1, torch time / myops time (the AVX-512 build, the AVX2 build): add /
// sub / mul / div / maximum / minimum float32 at 2^20 (0.88-0.93x, 0.99-1.02x), mul of x[1:] float32 at 2^22 (0.83x,
// 0.98x), sqrt / rsqrt bfloat16 (0.82-0.87x, 1.01-1.02x), abs / neg float16 at 2^22 (0.92x, 0.98-1.02x); but gelu
// bfloat16 (1.19x, 0.64x), pow (1.8x, 0.54x), relu float32 at 2^22, streamed (1.04x, 0.93x). A forced build
// (MYOPS_CPU_ISA) runs every op it covers, to be tested or timed whole.
bool in_avx512_build(ew::EwKind kind, const ew::EwPlan& p) {
  if (kind == ew::EwKind::Cast || kind == ew::EwKind::Where || !at::isFloatingType(p.dtype)) return false;
  static const bool choose = half_width_avx512() && !cpu_isa_forced();
  int64_t total = p.numel * int64_t(c10::elementSize(p.dtype));
  for (int k = 0; k < p.nin; ++k) total += p.folded[k] ? 0 : int64_t(p.in[k].nbytes());
  const bool streamed = (p.dtype == at::kFloat || p.dtype == at::kDouble) && !compute_bound_kind(kind) &&
                        streams(p.numel * int64_t(c10::elementSize(p.dtype)), total);
  return !choose || avx512_math(kind) || streamed;
}

struct CpuBackend {
  static constexpr bool kCpuRules = true;
  static at::Tensor cast(const at::Tensor& t, at::ScalarType dt) { return ew::FrontEnd<CpuBackend>::cast(t, dt); }

  static void run(ew::EwKind kind, const ew::EwPlan& p, const ew::EwParams& prm) {
    const CpuIsa isa = cpu_isa();
    if (isa >= CpuIsa::Avx512 && in_avx512_build(kind, p)) {
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

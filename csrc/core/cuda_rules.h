#pragma once
// Whose rules the code compiled here follows where PyTorch's CUDA and CPU kernels differ (the
// functors' few such corners), and the device intrinsics those rules name.
//
// The one place, with core/cuda/glue.h, core/cuda/launch.h and core/cuda/cub.h, that tells the CUDA emulation
// apart (MYOPS_CUDA_EMULATION: tests/test_cuda_emulation.py builds the CUDA kernels with the host
// compiler, no GPU). Kernel code tests MYOPS_CUDA_RULES only: set in device code and in the
// emulation's build of the CUDA kernels.
#include <cmath>
#include <type_traits>

#if defined(__CUDA_ARCH__) || defined(MYOPS_CUDA_EMULATION)
#define MYOPS_CUDA_RULES 1
#endif

namespace myops {
#if defined(__CUDA_ARCH__)
// ::max / ::min of two floating values as PyTorch's CUDA kernels call them (fmaxf / fminf: ties
// between -0.0 and +0.0 are the hardware's)
template <typename T>
__device__ __forceinline__ T cuda_fmax(T a, T b) {
  return ::max(a, b);
}
template <typename T>
__device__ __forceinline__ T cuda_fmin(T a, T b) {
  return ::min(a, b);
}
// 1 / sqrt(x) as PyTorch's CUDA rsqrt (and pow(x, -0.5)) computes it: CUDA's rsqrt (rsqrtf
// for float: not correctly rounded, so not 1 / sqrt(x))
template <typename T>
__device__ __forceinline__ T cuda_rsqrt(T x) {
  return ::rsqrt(x);
}
#elif defined(MYOPS_CUDA_EMULATION)
template <typename T>
inline T cuda_rsqrt(T x) {
  return T(1) / std::sqrt(x);  // host stand-in: within CUDA's error bound, not its bits
}
template <typename T>
inline T cuda_fmax(T a, T b) {
  return std::fmax(a, b);  // ::max's host stand-in
}
template <typename T>
inline T cuda_fmin(T a, T b) {
  return std::fmin(a, b);  // ::min's host stand-in
}
#endif

// a * b and a + b each rounded to nearest on their own, in every build: nvcc contracts a * b + c
// into one fused multiply-add (--fmad=true, its default), which rounds once; where PyTorch
// computes the two as separate tensor ops (each result rounded), the kernel must too. On the host
// (the CPU kernels, and the CUDA emulation, which contracts as nvcc does:
// tests/cuda_emulation/loader.py) an empty asm statement holds the rounded result in its
// register, so the compiler cannot fuse it into the next operation whatever -ffp-contract says.
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
#else
template <typename T>
inline T rounded(T v) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    __asm__("" : "+x"(v));
    return v;
  }
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    __asm__("" : "+w"(v));
    return v;
  }
#endif
  volatile T t = v;  // any other type or compiler: through memory
  return t;
}
template <typename T>
inline T mul_rn(T a, T b) {
  return rounded<T>(a * b);
}
template <typename T>
inline T add_rn(T a, T b) {
  return rounded<T>(a + b);
}
#endif
}  // namespace myops

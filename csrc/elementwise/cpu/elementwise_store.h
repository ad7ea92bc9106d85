#pragma once
// The store policy of the CPU elementwise loops (elementwise/cpu/elementwise_kernels.h): storage-type
// adaptors (load, compute in the op math type, round back, cast to the output dtype) and how a
// row is written (non-temporal stores for outputs that are not resident).
#include <ATen/Parallel.h>

#include <cstdio>

#include "elementwise/cpu/elementwise_torch_order.h"

namespace myops {
namespace {

// ---- storage-type adaptors ------------------------------------------------------------------

// Loads storage values, computes in OpMath<T>, rounds back to T.
template <typename T, class F>
struct InOpMath {
  F f;
  template <class... A>
  T operator()(A... a) const {
    using C = opmath_t<T>;
    return static_cast<T>(f(static_cast<C>(a)...));
  }
};

// c ? a : b as a bitwise select on the storage bits: the same bits as the branch, but no
// branch to mispredict on a random condition, so the compiler vectorizes the dense loops.

template <typename T>
struct WhereSelect {
  T operator()(bool c, T a, T b) const {
    using U = typename UIntOf<sizeof(T)>::type;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(T));
    std::memcpy(&ub, &b, sizeof(T));
    const U m = static_cast<U>(U(0) - static_cast<U>(c));
    const U r = static_cast<U>((ua & m) | (ub & static_cast<U>(~m)));
    T out;
    std::memcpy(&out, &r, sizeof(T));
    return out;
  }
};

// Conversion with PyTorch's semantics (c10::convert: float->int truncates, x->bool is x != 0),
// from storage type to storage type (no compute type).
template <typename Out, typename In>
struct CastTo {
  Out operator()(In v) const { return c10::convert<Out>(v); }
};

// Without a SIMD capability (this file is built with the compiler's baseline flags)
// Vectorized<T> is a plain array whose operations are out-of-line loops: slower than the
// scalar loops below, which the compiler vectorizes itself. Use it only where it maps to SIMD.
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
constexpr bool kUseVectorized = true;
#else
constexpr bool kUseVectorized = false;
#endif

// Non-temporal ("streaming") stores for outputs far larger than the caches: the written lines
// skip the read-for-ownership a normal store makes, so a memory-bound op moves a quarter
// fewer bytes (add: 2 reads + 1 write instead of 2 + 1 + 1). Same bits; only the cache
// policy changes. float and double rows of the SIMD builds only; the caller fences.
constexpr int64_t kStreamBytes = int64_t(16) << 20;
template <typename T>
constexpr bool kCanStream =
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
    std::is_same<T, float>::value || std::is_same<T, double>::value;
#else
    false;
#endif

// The level-3 cache one core's data lives in (on AMD one CCX's, not the socket's sum that
// sysconf reports), in bytes, from Linux's sysfs; 0 when unknown.
inline int64_t l3_bytes() {
  static const int64_t bytes = [] {
    int64_t v = 0;
#if defined(__linux__)
    int level = 0;
    if (FILE* f = std::fopen("/sys/devices/system/cpu/cpu0/cache/index3/level", "r")) {
      if (std::fscanf(f, "%d", &level) != 1) level = 0;
      std::fclose(f);
    }
    if (FILE* f = level == 3 ? std::fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r") : nullptr) {
      long long n = 0;
      char unit = 0;
      if (std::fscanf(f, "%lld%c", &n, &unit) >= 1) v = n << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0);
      std::fclose(f);
    }
#endif
    return v;
  }();
  return bytes;
}

// Whether an op streams its output: one of kStreamBytes and up, unless its operands together
// (`total` bytes) fit the L3 and several threads write it. Then plain stores keep the output in
// the cache, as torch's do, where streamed stores wait on DRAM: relu float32 at 2^22 (16 MiB
// in and out, a 32 MiB L3, 2 threads) took 213-217 us streamed, 173-179 us plain, torch 182-238
// us. One thread cannot move the lines through the caches that fast, and streaming still wins
// there (428-449 us streamed, 559 us plain, torch 521-570 us). An unknown L3 streams.
inline bool streams(int64_t out_bytes, int64_t total) {
  return out_bytes >= kStreamBytes && (total > l3_bytes() || at::get_num_threads() == 1);
}

template <typename T>
inline void stream_store(T* p, const Vectorized<T>& v) {
#if defined(CPU_CAPABILITY_AVX512)
  if constexpr (std::is_same<T, float>::value) _mm512_stream_ps(p, v);
  if constexpr (std::is_same<T, double>::value) _mm512_stream_pd(p, v);
#elif defined(CPU_CAPABILITY_AVX2)
  if constexpr (std::is_same<T, float>::value) _mm256_stream_ps(p, v);
  if constexpr (std::is_same<T, double>::value) _mm256_stream_pd(p, v);
#else
  v.store(p);
#endif
}

// Whether an output's pages are already in memory (a block the allocator reused) rather than
// fresh (a new mmap: glibc serves blocks over its mmap threshold, at most 32 MiB, that way, so
// every call past 32 MiB gets one). A fresh page faults in on the first write and the kernel
// zeroes it through the cache; a streamed store to such a line then costs more than a plain
// store (measured, [32,64,56,56] float32: 0.87x torch streamed, 1.0x plain), while on reused
// pages streaming wins (0.87x plain, 1.0x streamed). 16 pages spread over the output decide
// (a reused block can be partly fresh; 16 mincore calls cost microseconds against the
// >= 16 MiB the op writes): all resident, stream. Unknown (not Linux, mincore fails): stream.
inline bool pages_resident(const void* p, int64_t bytes) {
#if defined(__linux__)
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  constexpr int kSamples = 16;
  for (int k = 0; k < kSamples; ++k) {
    const uintptr_t at =
        (reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes / kSamples * k + bytes / (2 * kSamples))) &
        ~(page - 1);
    unsigned char v = 0;
    if (mincore(reinterpret_cast<void*>(at), page, &v) != 0) return true;
    if ((v & 1) == 0) return false;
  }
  return true;
#else
  (void)p;
  (void)bytes;
  return true;
#endif
}

inline void stream_fence() {
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
  _mm_sfence();
#endif
}

template <typename T>
constexpr bool is_vec_float =
    kUseVectorized && (std::is_same<T, float>::value || std::is_same<T, double>::value ||
                       std::is_same<T, c10::Half>::value || std::is_same<T, c10::BFloat16>::value);

// Contiguous float <-> half / bfloat16 conversion with the library's vector routines
// (hardware conversion in the AVX2 build). Returns false where it does not apply.
template <typename Out, typename In>
bool vec_cast(const In* in, Out* out, int64_t n) {
  constexpr bool reduced_out = std::is_same<Out, c10::Half>::value || std::is_same<Out, c10::BFloat16>::value;
  constexpr bool reduced_in = std::is_same<In, c10::Half>::value || std::is_same<In, c10::BFloat16>::value;
  if constexpr (kUseVectorized && std::is_same<In, float>::value && reduced_out) {
    at::vec::convert(in, out, n);
    return true;
  } else if constexpr (kUseVectorized && reduced_in && std::is_same<Out, float>::value) {
    using V = Vectorized<In>;
    constexpr int64_t W = V::size();
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      auto lohi = at::vec::convert_to_float<In>(V::loadu(in + i));
      std::get<0>(lohi).store(out + i);
      std::get<1>(lohi).store(out + i + W / 2);
    }
    for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
    return true;
  } else {
    (void)in;
    (void)out;
    (void)n;
    return false;
  }
}

}  // namespace
}  // namespace myops

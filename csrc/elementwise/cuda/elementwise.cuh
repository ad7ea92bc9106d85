#pragma once
// The CUDA elementwise template (after OneFlow's elementwise/cuda/elementwise.cuh): an op is a small
// functor on storage values; everything about launching and vectorizing lives here.
//
//   launch<Out, In...>(desc, g)   g(In...) -> Out, with an optional
//                                 `void apply2(Out* o, const In* i...) const` for pairs
//
// * Packs: Pack<T, N> with N = 16 / max(sizeof(Out), sizeof(In)...) (at most 8), so the
//   widest operand moves 16 bytes per load/store.
// * Block 256, grid = min(units / 256, SMs * max threads per SM / 256 * 32 waves) with the
//   device attributes cached per device; grid-stride loop; the tail (< N elements) is done by
//   the first threads of the same launch.
// * Alignment per operand: each operand uses pack loads only if its own pointer (and, for
//   strided operands, its outer strides) allow it, else N scalar accesses; one misaligned view
//   (x[1:]) does not drop the other operands to scalar accesses.
// * Apply2 (detected at compile time): used for even N, e.g. float2 -> half2 casts.
// * Linear path (same-shape dense operands, the plan's `linear`): pack index -> address, no
//   division. Strided path (broadcast / non-contiguous, dims already merged on the host):
//   OffsetCalc with fast divmod, 32-bit when every index and offset fits, else 64-bit; when the
//   innermost dim is a multiple of N, one offset computation per pack and pack loads along the
//   innermost dim for operands that are contiguous there (stride-0 operands load one value).
// * Folded operands (one-element host tensors) arrive as values in the kernel parameters.
#include <ATen/Dispatch_v2.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <cstring>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>

#include "elementwise/elementwise_functors.h"
#include "core/strided.h"
#include "elementwise/cuda/elementwise_launch.h"
#include "core/cuda/launch.h"

namespace myops {
namespace ew {
namespace cuda {

constexpr int kBlock = 256;
constexpr int kWaves = 32;

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <typename... T>
struct MaxSize;
template <typename T>
struct MaxSize<T> {
  static constexpr int value = sizeof(T);
};
template <typename T, typename... R>
struct MaxSize<T, R...> {
  static constexpr int value = sizeof(T) > MaxSize<R...>::value ? sizeof(T) : MaxSize<R...>::value;
};

template <typename... T>
constexpr int pack_size() {
  constexpr int n = 16 / MaxSize<T...>::value;
  return n > 8 ? 8 : (n < 1 ? 1 : n);
}

// ---- Apply2 detection ----------------------------------------------------------------------------

template <class G, class = void>
struct HasApply2 : std::false_type {};
template <class G>
struct HasApply2<G, std::void_t<decltype(&G::apply2)>> : std::true_type {};

// ---- storage-level adaptors -----------------------------------------------------------------------

// Functors whose result is one of their operands (relu, maximum, minimum, clamp).
template <class F>
struct Selects : std::false_type {};
template <>
struct Selects<Relu> : std::true_type {};
template <>
struct Selects<Maximum> : std::true_type {};
template <>
struct Selects<Minimum> : std::true_type {};
template <>
struct Selects<Clamp> : std::true_type {};

// The first NaN among storage values (the caller knows there is one).
template <typename C, typename T, typename... R>
__device__ __forceinline__ T first_nan(T a, R... r) {
  if constexpr (sizeof...(R) == 0) {
    return a;
  } else {
    return static_cast<C>(a) != static_cast<C>(a) ? a : first_nan<C>(r...);
  }
}

// Converts storage values to the compute type, applies F, rounds back (PyTorch's opmath).
// A selecting functor's NaN result is returned as its operand is stored: torch's CUDA kernels
// for these ops return the half / bfloat16 operand itself, whose NaN sign and payload the
// round trip through float would not keep (the device's float -> half conversion makes every
// NaN canonical). The functors test the operands for NaN in argument order, as torch's do.
template <typename T, class F>
struct InOpMath {
  F f;
  template <class... A>
  __device__ __forceinline__ T operator()(A... a) const {
    using C = opmath_t<T>;
    if constexpr (Selects<F>::value && !std::is_same<C, T>::value) {
      const C r = f(static_cast<C>(a)...);
      return r != r ? first_nan<C>(a...) : static_cast<T>(r);
    } else {
      return static_cast<T>(f(static_cast<C>(a)...));
    }
  }
};

template <typename T>
struct WhereSelect {
  __device__ __forceinline__ T operator()(bool c, T a, T b) const { return c ? a : b; }
};

// Conversion with PyTorch's semantics (c10::convert), storage type to storage type.
template <typename Out, typename In>
struct CastTo {
  __device__ __forceinline__ Out operator()(In v) const { return c10::convert<Out>(v); }
};
// Paired conversions: round-to-nearest-even like the scalar c10 conversions, two at a time.
template <>
struct CastTo<c10::Half, float> {
  __device__ __forceinline__ c10::Half operator()(float v) const { return c10::convert<c10::Half>(v); }
  __device__ __forceinline__ void apply2(c10::Half* o, const float* i) const {
    __half2 h = __float22half2_rn(make_float2(i[0], i[1]));
    o[0] = c10::Half(__low2half(h));
    o[1] = c10::Half(__high2half(h));
  }
};
template <>
struct CastTo<c10::BFloat16, float> {
  __device__ __forceinline__ c10::BFloat16 operator()(float v) const { return c10::convert<c10::BFloat16>(v); }
  __device__ __forceinline__ void apply2(c10::BFloat16* o, const float* i) const {
    __nv_bfloat162 h = __float22bfloat162_rn(make_float2(i[0], i[1]));
    o[0] = c10::BFloat16(__low2bfloat16(h));
    o[1] = c10::BFloat16(__high2bfloat16(h));
  }
};
template <>
struct CastTo<float, c10::Half> {
  __device__ __forceinline__ float operator()(c10::Half v) const { return static_cast<float>(v); }
  __device__ __forceinline__ void apply2(float* o, const c10::Half* i) const {
    float2 f = __half22float2(__halves2half2(static_cast<__half>(i[0]), static_cast<__half>(i[1])));
    o[0] = f.x;
    o[1] = f.y;
  }
};

// ---- device attributes (cached per device) -------------------------------------------------------

inline int max_blocks(int device) {
  constexpr int kMaxDevices = 64;
  static std::once_flag once[kMaxDevices];
  static int cache[kMaxDevices];
  auto query = [device]() {
    int sms = 0, threads = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    int b = sms * (threads / kBlock) * kWaves;
    return b > 0 ? b : 1;
  };
  if (device < 0 || device >= kMaxDevices) return query();
  std::call_once(once[device], [&] { cache[device] = query(); });
  return cache[device];
}

inline unsigned grid_for(int64_t units, int device) {
  int64_t g = (units + kBlock - 1) / kBlock;
  int64_t cap = max_blocks(device);
  if (g > cap) g = cap;
  if (g < 1) g = 1;
  return static_cast<unsigned>(g);
}

// ---- kernel arguments ----------------------------------------------------------------------------

template <int NIN>
struct Args {
  void* out;
  const void* in[NIN > 0 ? NIN : 1];
  alignas(16) unsigned char scalar[NIN > 0 ? NIN : 1][16];
  unsigned fold_mask;        // bit k: input k is a folded value
  unsigned pack_mask;        // bit 0: output, bit k+1: input k use pack accesses
  int64_t istride[NIN + 1];  // innermost element stride of each operand (strided path)
  int64_t n;
};

template <typename T>
__device__ __forceinline__ T read_value(const unsigned char* bytes) {
  T v;
  memcpy(&v, bytes, sizeof(T));
  return v;
}

// ---- per-pack loads / stores ---------------------------------------------------------------------

template <int N, int K, typename T, int NIN, typename index_t>
__device__ __forceinline__ void load_pack(Pack<T, N>& x, const Args<NIN>& a, index_t off, index_t step, T sv) {
  if ((a.fold_mask >> K) & 1u) {
#pragma unroll
    for (int j = 0; j < N; ++j) x.v[j] = sv;
  } else if ((a.pack_mask >> (K + 1)) & 1u) {
    x = *reinterpret_cast<const Pack<T, N>*>(static_cast<const T*>(a.in[K]) + off);
  } else {
    const T* p = static_cast<const T*>(a.in[K]) + off;
#pragma unroll
    for (int j = 0; j < N; ++j) x.v[j] = p[j * step];
  }
}

template <int N, typename T, int NIN, typename index_t>
__device__ __forceinline__ void store_pack(const Pack<T, N>& o, const Args<NIN>& a, index_t off, index_t step) {
  if (a.pack_mask & 1u) {
    *reinterpret_cast<Pack<T, N>*>(static_cast<T*>(a.out) + off) = o;
  } else {
    T* p = static_cast<T*>(a.out) + off;
#pragma unroll
    for (int j = 0; j < N; ++j) p[j * step] = o.v[j];
  }
}

template <int N, class G, typename Out, typename... In>
__device__ __forceinline__ void apply_pack(const G& g, Pack<Out, N>& o, const Pack<In, N>&... x) {
  if constexpr (HasApply2<G>::value && N % 2 == 0) {
#pragma unroll
    for (int j = 0; j < N; j += 2) g.apply2(&o.v[j], &x.v[j]...);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) o.v[j] = g(x.v[j]...);
  }
}

template <typename T, int K, int NIN, typename index_t>
__device__ __forceinline__ T load_one(const Args<NIN>& a, index_t off, T sv) {
  if ((a.fold_mask >> K) & 1u) return sv;
  return static_cast<const T*>(a.in[K])[off];
}

// ---- kernels -----------------------------------------------------------------------------------

// Same-layout dense operands: pack p covers elements [p*N, p*N+N).
template <int N, typename Out, typename... In, class G, size_t... I>
__device__ __forceinline__ void linear_impl(const G& g, const Args<sizeof...(In)>& a, std::index_sequence<I...>) {
  const int64_t npack = a.n / N;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::tuple<In...> sv{read_value<In>(a.scalar[I])...};
  for (int64_t p = tid; p < npack; p += step) {
    std::tuple<Pack<In, N>...> x;
    (load_pack<N, I>(std::get<I>(x), a, p * N, int64_t(1), std::get<I>(sv)), ...);
    Pack<Out, N> o;
    apply_pack<N>(g, o, std::get<I>(x)...);
    store_pack<N>(o, a, p * N, int64_t(1));
  }
  const int64_t i = npack * N + tid;  // the tail, in the same launch
  if (i < a.n) {
    static_cast<Out*>(a.out)[i] = g(load_one<In, I>(a, i, std::get<I>(sv))...);
  }
}

template <int N, typename Out, class G, typename... In>
__global__ void __launch_bounds__(kBlock) linear_kernel(G g, Args<sizeof...(In)> a) {
  linear_impl<N, Out, In...>(g, a, std::index_sequence_for<In...>{});
}

// Broadcast / strided operands. With `vec` (innermost size % N == 0) a pack never crosses a
// row: one offset computation per pack, then per-operand pack or strided accesses.
template <int N, typename index_t, typename Out, typename... In, class G, size_t... I>
__device__ __forceinline__ void strided_impl(const G& g, const Args<sizeof...(In)>& a,
                                             const OffsetCalc<sizeof...(In) + 1, index_t>& oc, bool vec,
                                             std::index_sequence<I...>) {
  constexpr int NARGS = sizeof...(In) + 1;
  const index_t n = static_cast<index_t>(a.n);
  const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x;
  index_t tid = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::tuple<In...> sv{read_value<In>(a.scalar[I])...};
  if (vec) {
    const index_t npack = n / N;
    for (index_t p = tid; p < npack; p += step) {
      index_t off[NARGS];
      oc.get(p * N, off);
      std::tuple<Pack<In, N>...> x;
      (load_pack<N, I>(std::get<I>(x), a, off[I + 1], static_cast<index_t>(a.istride[I + 1]), std::get<I>(sv)), ...);
      Pack<Out, N> o;
      apply_pack<N>(g, o, std::get<I>(x)...);
      store_pack<N>(o, a, off[0], static_cast<index_t>(a.istride[0]));
    }
  } else {
    for (index_t i = tid; i < n; i += step) {
      index_t off[NARGS];
      oc.get(i, off);
      static_cast<Out*>(a.out)[off[0]] = g(load_one<In, I>(a, off[I + 1], std::get<I>(sv))...);
    }
  }
}

template <int N, typename index_t, typename Out, class G, typename... In>
__global__ void __launch_bounds__(kBlock)
    strided_kernel(G g, Args<sizeof...(In)> a, OffsetCalc<sizeof...(In) + 1, index_t> oc, bool vec) {
  strided_impl<N, index_t, Out, In...>(g, a, oc, vec, std::index_sequence_for<In...>{});
}

// ---- host launcher --------------------------------------------------------------------------------

inline bool aligned(const void* p, int bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <typename Out, typename... In, class G>
void launch(const Desc& d, const G& g) {
  constexpr int NIN = sizeof...(In);
  constexpr int NARGS = NIN + 1;
  constexpr int N = pack_size<Out, In...>();
  TORCH_INTERNAL_ASSERT(d.nin == NIN, "myops: elementwise launch with ", d.nin, " inputs, kernel takes ", NIN);
  if (d.numel == 0) return;
  const int elsize[NARGS] = {int(sizeof(Out)), int(sizeof(In))...};

  Args<NIN> a{};
  a.out = d.out;
  a.n = d.numel;
  for (int k = 0; k < NIN; ++k) {
    a.in[k] = d.in[k];
    std::memcpy(a.scalar[k], d.scalar[k], 16);
    if (d.folded[k]) a.fold_mask |= 1u << k;
  }
  const void* ptr[NARGS];
  ptr[0] = d.out;
  for (int k = 0; k < NIN; ++k) ptr[k + 1] = d.in[k];

  if (d.linear) {
    for (int k = 0; k < NARGS; ++k) {
      bool fold = k > 0 && d.folded[k - 1];
      if (!fold && aligned(ptr[k], N * elsize[k])) a.pack_mask |= 1u << k;
      a.istride[k] = 1;
    }
    const int64_t npack = d.numel / N;
    const int64_t units = npack > d.numel - npack * N ? npack : d.numel - npack * N;
    MYOPS_LAUNCH(grid_for(units, d.device), kBlock, d.stream, linear_kernel<N, Out, G, In...>)(g, a);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }

  // Strided: merged dims, outermost first.
  StridedShape<NARGS> shape;
  for (int i = 0; i < d.ndim; ++i) {
    shape.sizes.push_back(d.sizes[i]);
    std::array<int64_t, NARGS> st{};
    for (int k = 0; k < NARGS; ++k) st[k] = d.strides[i][k];
    shape.strides.push_back(st);
  }
  const int inner = d.ndim - 1;
  const bool vec = N > 1 && d.sizes[inner] % N == 0;
  for (int k = 0; k < NARGS; ++k) {
    a.istride[k] = d.strides[inner][k];
    bool fold = k > 0 && d.folded[k - 1];
    if (fold || !vec || d.strides[inner][k] != 1 || !aligned(ptr[k], N * elsize[k])) continue;
    bool ok = true;
    for (int i = 0; i < inner; ++i) ok &= d.strides[i][k] % N == 0;
    if (ok) a.pack_mask |= 1u << k;
  }
  bool fits32 = d.numel < (int64_t(1) << 31);
  for (int k = 0; k < NARGS; ++k) fits32 &= shape.max_offset(k) < (int64_t(1) << 31);
  const int64_t units = vec ? d.numel / N : d.numel;
  const unsigned grid = grid_for(units, d.device);
  if (fits32) {
    OffsetCalc<NARGS, uint32_t> oc(shape);
    MYOPS_LAUNCH(grid, kBlock, d.stream, strided_kernel<N, uint32_t, Out, G, In...>)(g, a, oc, vec);
  } else {
    OffsetCalc<NARGS, uint64_t> oc(shape);
    MYOPS_LAUNCH(grid, kBlock, d.stream, strided_kernel<N, uint64_t, Out, G, In...>)(g, a, oc, vec);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Reads the compute-type value the glue wrote into a Desc byte field.
template <typename C>
inline C host_value(const unsigned char* bytes) {
  C v;
  std::memcpy(&v, bytes, sizeof(C));
  return v;
}

// Runs functor F (on compute types) with output and all inputs of storage type T; a binary
// functor with a bound scalar (d.bind) runs as a unary one. kBindRight = false: the caller
// handles d.bind == 1 itself (div: a reciprocal), so no kernel is instantiated for it.
template <typename T, int NIN, bool kBindRight = true, class F>
void launch_same(const Desc& d, const F& f) {
  using C = opmath_t<T>;
  if constexpr (NIN == 2) {
    if (d.bind == 0) return launch<T, T>(d, InOpMath<T, BindLeft<F, C>>{{f, host_value<C>(d.bound)}});
    if constexpr (kBindRight) {
      if (d.bind == 1) return launch<T, T>(d, InOpMath<T, BindRight<F, C>>{{f, host_value<C>(d.bound)}});
    }
    TORCH_INTERNAL_ASSERT(d.bind < 0 || kBindRight, "myops: launch_same got a divisor to bind");
    launch<T, T, T>(d, InOpMath<T, F>{f});
  } else if constexpr (NIN == 1) {
    launch<T, T>(d, InOpMath<T, F>{f});
  } else {
    launch<T, T, T, T>(d, InOpMath<T, F>{f});
  }
}

// ---- the kernel of each kind (myops/op_table.h) ---------------------------------------------

// The generic kernel runs the plain functor K with every operand of the result dtype, on the
// kind's DTYPES; a .cu file specializes run_dtype for the custom kinds it compiles.
template <EwKind K>
struct CudaKernel {
  template <typename T>
  static void run_dtype(const Desc& d) {
    launch_same<T, arity_of(K)>(d, typename FunctorOf<K>::type{});
  }
  static void run(const Desc& d) {
    AT_DISPATCH_V2(static_cast<c10::ScalarType>(d.dtype), kKindNames[static_cast<int>(K)], AT_WRAP([&] {
                     if constexpr (ew::in_dtypes<scalar_t>(dtypes_of(K))) {
                       CudaKernel::template run_dtype<scalar_t>(d);
                     } else {
                       TORCH_INTERNAL_ASSERT(false, "myops: ", kKindNames[static_cast<int>(K)], " got dtype ", d.dtype);
                     }
                   }),
                   AT_EXPAND(AT_ALL_TYPES), c10::kBool, c10::kHalf, c10::kBFloat16);
  }
};

// The launcher of one .cu file: the kinds whose CUDA_UNIT is U.
template <CudaUnit U>
void launch_unit(EwKind kind, const Desc& d) {
  switch (kind) {
#define MYOPS_EW_CUDA_CASE(KIND, ...)                                                  \
  case EwKind::KIND:                                                                   \
    if constexpr (unit_of(EwKind::KIND) == U) return CudaKernel<EwKind::KIND>::run(d); \
    break;
    MYOPS_EW_KERNELS(MYOPS_EW_CUDA_CASE)
#undef MYOPS_EW_CUDA_CASE
  }
  TORCH_INTERNAL_ASSERT(false, "myops: ", kKindNames[static_cast<int>(kind)], " is not compiled in this CUDA unit");
}

}  // namespace cuda
}  // namespace ew
}  // namespace myops

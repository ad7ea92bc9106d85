// myops.max_pool2d_add (CUDA): result = max_pool2d(self, k, s, p, ceil_mode) + other, one pass.
//
// One thread per output element (grid-stride): it scans its window in torch's row-major order
// (clipped to the input, i.e. -inf padding) with torch's rule `v > m || isnan(v)`, adds the
// broadcast `other` (read through its strides, stride 0 on broadcast dims) and writes the
// result. Threads are numbered in the memory order of the result, so stores are coalesced and
// the window loads of a warp are contiguous: NCHW numbers (plane, oh, ow) with ow fastest,
// channels_last numbers (n, oh, ow, c) with c fastest. The default 3x3 / stride 2 / pad 1 case
// is a compile-time specialization (window unrolled); other sizes take the generic kernel.
// 32-bit indexing when every position and offset fits, 64-bit otherwise.
//
// Backward: one thread per input element gathers the gradient of every window that contains it
// and whose argmax (recomputed from self with torch's rule) is that element, in row-major window
// order, accumulated in opmath: torch's CUDA max_pool2d backward order and precision. No atomics.
#include <ATen/Dispatch_v2.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <torch/library.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "core/fast_divmod.h"
#include "max_pool2d_add/max_pool2d_add_shape.h"
#include "core/cuda/glue.h"
#include "core/cuda/launch.h"
#include "core/variants.h"

namespace myops {
namespace {

using max_pool2d_add::Backward;
using max_pool2d_add::Forward;
using max_pool2d_add::Pool2d;

constexpr int kThreads = 256;

// Pooling geometry and the three divisors that split a linear position (by value into kernels).
template <typename index_t>
struct Geom {
  int C, H, W, Ho, Wo;
  int kH, kW, sH, sW, pH, pW;
  FastDivmod<index_t> d0, d1, d2;  // innermost first (see the kernels)
  index_t o0, o1, o2, o3;          // strides of `other` / `grad` over [N, C, Ho, Wo]
  index_t xn, xc;                  // strides of self's image and channel (0: broadcast, Pool2d)
};

int sm_count(int device) {
  static std::atomic<int> cache[128];
  if (device < 0 || device >= 128) device = 0;
  int v = cache[device].load(std::memory_order_relaxed);
  if (v == 0) {
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
    cache[device].store(v, std::memory_order_relaxed);
  }
  return v;
}

int64_t grid_for(int64_t total, int device) {
  int64_t blocks = (total + kThreads - 1) / kThreads;
  int64_t cap = int64_t(sm_count(device)) * (2048 / kThreads) * 8;
  return blocks < cap ? blocks : cap;
}

// Splits a linear position of an [N, C, Y, X] index space (NCHW order, or NHWC when kCL; the
// divisors g.d0..d2 are X, Y, C or C, X, Y accordingly) into (n, c, y, x), and returns the start
// of plane (n, c) of `self` with its element strides along h (sh) and w (sw). kXs: through
// g.xn / g.xc (the forward: image 0 / channel 0 where the result repeats them); the backward
// keeps the dense formula (the strides cost its double kernels register spills).
template <bool kCL, bool kXs, typename S, typename index_t>
__device__ __forceinline__ const S* locate(index_t lin, const S* in, const Geom<index_t>& g, index_t& n, index_t& c,
                                           index_t& y, index_t& x, index_t& sh, index_t& sw) {
  index_t t, u;
  if constexpr (kCL) {  // lin = ((n * Y + y) * X + x) * C + c
    g.d0.divmod(lin, t, c);
    g.d1.divmod(t, u, x);
    g.d2.divmod(u, n, y);
    sh = index_t(g.W) * g.C;
    sw = g.C;
    if constexpr (kXs) return in + n * g.xn + c * g.xc;
    return in + n * index_t(g.H) * g.W * g.C + c;
  } else {  // lin = ((n * C + c) * Y + y) * X + x
    g.d0.divmod(lin, t, x);
    g.d1.divmod(t, u, y);
    g.d2.divmod(u, n, c);
    sh = g.W;
    sw = 1;
    if constexpr (kXs) return in + n * g.xn + c * g.xc;
    return in + (n * index_t(g.C) + c) * g.H * g.W;
  }
}

// K* > 0: compile-time window (unrolled); K* == 0: runtime window from g.
template <typename S, typename R, typename index_t, bool kCL, int KH, int KW, int SH, int SW, int PH, int PW>
__global__ void __launch_bounds__(kThreads) max_pool2d_add_kernel(const S* __restrict__ in, const R* __restrict__ oth,
                                                                  R* __restrict__ out, index_t total, Geom<index_t> g) {
  using M = at::opmath_type<S>;
  using MR = at::opmath_type<R>;
  const int kH = KH > 0 ? KH : g.kH, kW = KW > 0 ? KW : g.kW;
  const int sH = KH > 0 ? SH : g.sH, sW = KH > 0 ? SW : g.sW;
  const int pH = KH > 0 ? PH : g.pH, pW = KH > 0 ? PW : g.pW;
  const index_t step = index_t(gridDim.x) * blockDim.x;
  for (index_t lin = index_t(blockIdx.x) * blockDim.x + threadIdx.x; lin < total; lin += step) {
    index_t n, c, oh, ow, sh, sw;
    const S* base = locate<kCL, true>(lin, in, g, n, c, oh, ow, sh, sw);
    const int hstart = int(oh) * sH - pH, wstart = int(ow) * sW - pW;
    M m = -std::numeric_limits<M>::infinity();
    if constexpr (KH > 0) {  // compile-time window: unrolled, each position tested
#pragma unroll
      for (int i = 0; i < KH; ++i) {
        const int ih = hstart + i;
        if (ih < 0 || ih >= g.H) continue;
#pragma unroll
        for (int j = 0; j < KW; ++j) {
          const int iw = wstart + j;
          if (iw < 0 || iw >= g.W) continue;
          const M v = static_cast<M>(base[index_t(ih) * sh + index_t(iw) * sw]);
          if (v > m || v != v) m = v;
        }
      }
    } else {  // runtime window: clipped to the input first (a window may be far larger)
      const int h0 = max(hstart, 0), h1 = int(min(int64_t(hstart) + kH, int64_t(g.H)));
      const int w0 = max(wstart, 0), w1 = int(min(int64_t(wstart) + kW, int64_t(g.W)));
      for (int ih = h0; ih < h1; ++ih) {
        for (int iw = w0; iw < w1; ++iw) {
          const M v = static_cast<M>(base[index_t(ih) * sh + index_t(iw) * sw]);
          if (v > m || v != v) m = v;
        }
      }
    }
    // torch: pooled in self's dtype, then add with both operands in R, summed in opmath(R).
    const R pooled = static_cast<R>(static_cast<S>(m));
    const R o = oth[n * g.o0 + c * g.o1 + oh * g.o2 + ow * g.o3];
    out[lin] = static_cast<R>(static_cast<MR>(pooled) + static_cast<MR>(o));
  }
}

// The "wide" variant of the 3x3 / stride 2 / pad 1 same-dtype kernel (core/variants.h), the same
// arithmetic and NaN rule per output:
//  * NCHW: two outputs per thread along w. Their windows share a column: 15 loads for 2 outputs
//    instead of 18, and one index split per pair. Work items (n, c, oh, w pair), pair fastest.
//  * channels_last: kVec = 16 / sizeof(S) channels per thread, every window position one 16-byte
//    load, the result one 16-byte store, one index split per pack. Work items (n, oh, ow, channel
//    pack); only when C % kVec == 0 and self and the result are 16-byte aligned (else "scalar").
// Expected on an H200: "wide" for channels_last (the scalar kernel issues 4-byte loads strided by
// C across a warp's window reads and a division chain per output; packs cut both by kVec, the
// case where myops trails Inductor most), a small gain for NCHW (fewer loads and divisions, the
// same bytes). The GPU sweep decides; sm_90's default stays "scalar" until it does.
template <typename S>
struct alignas(16) Pack16 {
  S v[16 / sizeof(S)];
};

template <typename S, typename index_t, bool kCL>
__global__ void __launch_bounds__(kThreads)
    max_pool2d_add_wide_kernel(const S* __restrict__ in, const S* __restrict__ oth, S* __restrict__ out, index_t items,
                               Geom<index_t> g) {
  using M = at::opmath_type<S>;
  constexpr int V = kCL ? int(16 / sizeof(S)) : 2;  // outputs per thread
  const index_t step = index_t(gridDim.x) * blockDim.x;
  for (index_t lin = index_t(blockIdx.x) * blockDim.x + threadIdx.x; lin < items; lin += step) {
    index_t t, u, n, c0, oh, ow0;
    M m[V];
#pragma unroll
    for (int v = 0; v < V; ++v) m[v] = -std::numeric_limits<M>::infinity();
    if constexpr (kCL) {  // lin = ((n * Ho + oh) * Wo + ow) * (C / V) + pack
      index_t pack;
      g.d0.divmod(lin, t, pack);
      g.d1.divmod(t, u, ow0);
      g.d2.divmod(u, n, oh);
      c0 = pack * V;
      const S* base = in + n * index_t(g.H) * g.W * g.C + c0;
      const int hs = int(oh) * 2 - 1, ws = int(ow0) * 2 - 1;
#pragma unroll
      for (int i = 0; i < 3; ++i) {
        const int ih = hs + i;
        if (ih < 0 || ih >= g.H) continue;
#pragma unroll
        for (int j = 0; j < 3; ++j) {
          const int iw = ws + j;
          if (iw < 0 || iw >= g.W) continue;
          const Pack16<S> p = *reinterpret_cast<const Pack16<S>*>(base + (index_t(ih) * g.W + index_t(iw)) * g.C);
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const M x = static_cast<M>(p.v[v]);
            if (x > m[v] || x != x) m[v] = x;
          }
        }
      }
      Pack16<S> r;
      const S* o = oth + n * g.o0 + c0 * g.o1 + oh * g.o2 + ow0 * g.o3;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        r.v[v] = static_cast<S>(static_cast<M>(static_cast<S>(m[v])) + static_cast<M>(o[index_t(v) * g.o1]));
      }
      *reinterpret_cast<Pack16<S>*>(out + lin * V) = r;  // the result's memory order is the work items'
    } else {                                             // lin = ((n * C + c) * Ho + oh) * ceil(Wo / 2) + pair
      index_t pair;
      g.d0.divmod(lin, t, pair);
      g.d1.divmod(t, u, oh);
      g.d2.divmod(u, n, c0);
      ow0 = pair * 2;
      const bool second = int(ow0) + 1 < g.Wo;
      const S* base = in + (n * index_t(g.C) + c0) * g.H * g.W;
      const int hs = int(oh) * 2 - 1, ws = int(ow0) * 2 - 1;
#pragma unroll
      for (int i = 0; i < 3; ++i) {  // row-major in each window, as torch scans it
        const int ih = hs + i;
        if (ih < 0 || ih >= g.H) continue;
        const S* row = base + index_t(ih) * g.W;
#pragma unroll
        for (int k = 0; k < 5; ++k) {  // columns ws .. ws + 4: output 0 takes 0..2, output 1 takes 2..4
          const int iw = ws + k;
          if (iw < 0 || iw >= g.W) continue;
          const M x = static_cast<M>(row[iw]);
          if (k <= 2 && (x > m[0] || x != x)) m[0] = x;
          if (k >= 2 && second && (x > m[1] || x != x)) m[1] = x;
        }
      }
      const index_t o = ((n * index_t(g.C) + c0) * g.Ho + oh) * g.Wo + ow0;
      const S* ob = oth + n * g.o0 + c0 * g.o1 + oh * g.o2 + ow0 * g.o3;
      out[o] = static_cast<S>(static_cast<M>(static_cast<S>(m[0])) + static_cast<M>(ob[0]));
      if (second) out[o + 1] = static_cast<S>(static_cast<M>(static_cast<S>(m[1])) + static_cast<M>(ob[g.o3]));
    }
  }
}

// Launches the wide kernel when the call qualifies (see above); false: it does not.
template <typename S, typename index_t, bool kCL>
bool launch_wide(const Pool2d& p, Geom<index_t> g, const S* in, const S* oth, S* out, int device, cudaStream_t stream) {
  constexpr int64_t V = kCL ? int64_t(16 / sizeof(S)) : 2;
  int64_t items;
  if constexpr (kCL) {
    const auto aligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; };
    if (p.C % V != 0 || !aligned(in) || !aligned(out)) return false;
    items = p.N * p.Ho * p.Wo * (p.C / V);
    g.d0 = FastDivmod<index_t>(index_t(p.C / V));
    g.d1 = FastDivmod<index_t>(index_t(p.Wo));
    g.d2 = FastDivmod<index_t>(index_t(p.Ho));
  } else {
    items = p.N * p.C * p.Ho * ((p.Wo + 1) / 2);
    g.d0 = FastDivmod<index_t>(index_t((p.Wo + 1) / 2));
    g.d1 = FastDivmod<index_t>(index_t(p.Ho));
    g.d2 = FastDivmod<index_t>(index_t(p.C));
  }
  const unsigned blocks = unsigned(grid_for(items, device));
  MYOPS_LAUNCH(blocks, kThreads, stream, max_pool2d_add_wide_kernel<S, index_t, kCL>)(in, oth, out, index_t(items), g);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

// The "tile" variant of the 3x3 / stride 2 / pad 1 same-dtype kernel (core/variants.h): a block
// takes a tile of outputs, stages the input rows its windows cover in shared memory (coalesced
// loads, -inf outside the input: as never taking a clipped position, since -inf > m is never
// true and no 3x3 / pad 1 window is all padding), then every thread reads its windows from there
// in torch's row-major order with torch's rule. Each input element is loaded about once per tile
// (the scalar kernel: up to 9 window reads per element through L1). One wave of resident blocks
// (8 of 256 threads per SM) takes the tiles in grid-stride order.
//  * NCHW: 8 x 32 outputs of one plane; shared: 17 x 65 input elements.
//  * channels_last: 4 x 8 output positions x 32 channels of one image; shared: 9 x 17 x 32.
// Expected on an H200: "tile" for NCHW (its stride-2 window reads stay in shared memory, one
// global read per element instead of overlapping cached ones); for channels_last "wide" (its
// 16-byte channel packs move more per instruction than 32 single channels). The sweep decides.
template <bool kCL>
struct TileShape {
  static constexpr int kH = kCL ? 4 : 8, kW = kCL ? 8 : 32, kC = kCL ? 32 : 1;  // outputs per tile
  static constexpr int kInH = 2 * kH + 1, kInW = 2 * kW + 1;                    // input rows / columns
  static constexpr int kIn = kInH * kInW * kC;
  static constexpr int kOut = kH * kW * kC;
};

template <typename S, typename index_t, bool kCL>
__global__ void __launch_bounds__(kThreads)
    max_pool2d_add_tile_kernel(const S* __restrict__ in, const S* __restrict__ oth, S* __restrict__ out, index_t tiles,
                               Geom<index_t> g) {
  using M = at::opmath_type<S>;
  using T = TileShape<kCL>;
  MYOPS_SHARED(S, s_in, T::kIn);
  const S pad = static_cast<S>(-std::numeric_limits<M>::infinity());
  for (index_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    index_t t, u, n, c0, ty, tx;
    if constexpr (kCL) {  // tile = ((n * tilesY + ty) * tilesX + tx) * chunks + chunk
      index_t chunk;
      g.d0.divmod(tile, t, chunk);
      g.d1.divmod(t, u, tx);
      g.d2.divmod(u, n, ty);
      c0 = chunk * T::kC;
    } else {  // tile = ((n * C + c) * tilesY + ty) * tilesX + tx
      g.d0.divmod(tile, t, tx);
      g.d1.divmod(t, u, ty);
      g.d2.divmod(u, n, c0);
    }
    const int oh0 = int(ty) * T::kH, ow0 = int(tx) * T::kW;
    const int hs = 2 * oh0 - 1, ws = 2 * ow0 - 1;
    const S* base = kCL ? in + n * index_t(g.H) * g.W * g.C + c0 : in + (n * index_t(g.C) + c0) * g.H * g.W;
    __syncthreads();  // the previous tile's windows are read
    for (int i = threadIdx.x; i < T::kIn; i += blockDim.x) {
      const int k = i % T::kC, pos = i / T::kC;  // channel fastest (channels_last), then column, row
      const int ih = hs + pos / T::kInW, iw = ws + pos % T::kInW;
      const bool inside = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W && int(c0) + k < g.C;
      s_in[i] = inside ? base[(index_t(ih) * g.W + iw) * (kCL ? index_t(g.C) : index_t(1)) + k] : pad;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < T::kOut; i += blockDim.x) {
      const int k = i % T::kC, pos = i / T::kC;
      const int y = pos / T::kW, x = pos % T::kW;
      const index_t oh = oh0 + y, ow = ow0 + x, c = c0 + k;
      if (int(oh) >= g.Ho || int(ow) >= g.Wo || int(c) >= g.C) continue;
      M m = -std::numeric_limits<M>::infinity();
#pragma unroll
      for (int r = 0; r < 3; ++r) {
#pragma unroll
        for (int j = 0; j < 3; ++j) {
          const M v = static_cast<M>(s_in[((2 * y + r) * T::kInW + 2 * x + j) * T::kC + k]);
          if (v > m || v != v) m = v;
        }
      }
      const S o = oth[n * g.o0 + c * g.o1 + oh * g.o2 + ow * g.o3];
      const index_t at = kCL ? ((n * g.Ho + oh) * g.Wo + ow) * g.C + c : ((n * g.C + c) * g.Ho + oh) * g.Wo + ow;
      out[at] = static_cast<S>(static_cast<M>(static_cast<S>(m)) + static_cast<M>(o));
    }
  }
}

template <typename S, typename index_t, bool kCL>
void launch_tile(const Pool2d& p, Geom<index_t> g, const S* in, const S* oth, S* out, int device, cudaStream_t stream) {
  using T = TileShape<kCL>;
  const int64_t ty = (p.Ho + T::kH - 1) / T::kH, tx = (p.Wo + T::kW - 1) / T::kW;
  int64_t tiles;
  if constexpr (kCL) {
    const int64_t chunks = (p.C + T::kC - 1) / T::kC;
    tiles = p.N * ty * tx * chunks;
    g.d0 = FastDivmod<index_t>(index_t(chunks));
    g.d1 = FastDivmod<index_t>(index_t(tx));
    g.d2 = FastDivmod<index_t>(index_t(ty));
  } else {
    tiles = p.N * p.C * ty * tx;
    g.d0 = FastDivmod<index_t>(index_t(tx));
    g.d1 = FastDivmod<index_t>(index_t(ty));
    g.d2 = FastDivmod<index_t>(index_t(p.C));
  }
  const int64_t cap = int64_t(sm_count(device)) * (2048 / kThreads);  // one wave of resident blocks
  const unsigned blocks = unsigned(tiles < cap ? tiles : cap);
  MYOPS_LAUNCH_COOP(blocks, kThreads, stream, max_pool2d_add_tile_kernel<S, index_t, kCL>)(in, oth, out, index_t(tiles),
                                                                                           g);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename index_t>
Geom<index_t> make_geom(const Pool2d& p, const std::array<int64_t, 4>& st) {
  // the kernels hold plane sizes and window parameters in int
  for (int64_t v : {p.C, p.H, p.W, p.Ho, p.Wo, p.kH, p.kW, p.sH, p.sW, p.pH, p.pW}) {
    TORCH_CHECK(v <= std::numeric_limits<int>::max() / 2,
                "myops.max_pool2d_add: on CUDA, every size and pooling "
                "parameter must be below 2^30, got ",
                v);
  }
  Geom<index_t> g;
  g.C = int(p.C), g.H = int(p.H), g.W = int(p.W), g.Ho = int(p.Ho), g.Wo = int(p.Wo);
  g.kH = int(p.kH), g.kW = int(p.kW), g.sH = int(p.sH), g.sW = int(p.sW);
  g.pH = int(p.pH), g.pW = int(p.pW);
  g.o0 = index_t(st[0]), g.o1 = index_t(st[1]), g.o2 = index_t(st[2]), g.o3 = index_t(st[3]);
  g.xn = index_t(p.xn), g.xc = index_t(p.xc);
  return g;
}

int64_t max_offset(const std::array<int64_t, 4>& st, const int64_t (&sizes)[4]) {
  int64_t m = 0;
  for (int d = 0; d < 4; ++d) m += (sizes[d] - 1) * st[d];
  return m;
}

template <typename S, typename R, typename index_t, bool kCL>
void launch_forward(const Forward& f, int device, cudaStream_t stream) {
  const Pool2d& p = f.g;
  Geom<index_t> g = make_geom<index_t>(p, f.other_strides);
  if (kCL) {
    g.d0 = FastDivmod<index_t>(index_t(p.C));
    g.d1 = FastDivmod<index_t>(index_t(p.Wo));
    g.d2 = FastDivmod<index_t>(index_t(p.Ho));
  } else {
    g.d0 = FastDivmod<index_t>(index_t(p.Wo));
    g.d1 = FastDivmod<index_t>(index_t(p.Ho));
    g.d2 = FastDivmod<index_t>(index_t(p.C));
  }
  const index_t total = index_t(f.out.numel());
  const S* in = f.self.const_data_ptr<S>();
  const R* oth = f.other.const_data_ptr<R>();
  R* out = f.out.mutable_data_ptr<R>();
  const unsigned blocks = unsigned(grid_for(f.out.numel(), device));
  // The unrolled 3x3 / stride 2 / pad 1 kernel serves the same-dtype calls; mixed dtypes
  // (rare) share the generic kernel to keep the number of instantiations down.
  if constexpr (std::is_same_v<S, R>) {
    if (p.is_fast_3x3s2p1()) {
      const std::string variant = cuda_variant("max_pool2d_add", device_arch(c10::DeviceIndex(device)));
      if (variant == "wide" && launch_wide<S, index_t, kCL>(p, g, in, oth, out, device, stream)) return;
      if (variant == "tile") return launch_tile<S, index_t, kCL>(p, g, in, oth, out, device, stream);
      MYOPS_LAUNCH(blocks, kThreads, stream, max_pool2d_add_kernel<S, R, index_t, kCL, 3, 3, 2, 2, 1, 1>)(in, oth, out,
                                                                                                          total, g);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
  }
  MYOPS_LAUNCH(blocks, kThreads, stream, max_pool2d_add_kernel<S, R, index_t, kCL, 0, 0, 0, 0, 0, 0>)(in, oth, out,
                                                                                                      total, g);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename S, typename R>
void forward_typed(const Forward& f, int device, cudaStream_t stream) {
  const Pool2d& p = f.g;
  const int64_t sizes[4] = {p.N, p.C, p.Ho, p.Wo};
  const int64_t lim = std::numeric_limits<int32_t>::max();
  const bool small = f.self.numel() < lim && f.out.numel() < lim && max_offset(f.other_strides, sizes) < lim;
  if (small) {
    if (p.channels_last)
      launch_forward<S, R, uint32_t, true>(f, device, stream);
    else
      launch_forward<S, R, uint32_t, false>(f, device, stream);
  } else {
    if (p.channels_last)
      launch_forward<S, R, uint64_t, true>(f, device, stream);
    else
      launch_forward<S, R, uint64_t, false>(f, device, stream);
  }
}

at::Tensor max_pool2d_add_cuda(const at::Tensor& self, const at::Tensor& other, at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode) {
  check_same_device(self, "self", other, "other", "max_pool2d_add");  // before the guard
  CudaGuard guard(self.device());
  Forward f = max_pool2d_add::prepare_forward(self, other, kernel_size, stride, padding, ceil_mode, "max_pool2d_add");
  if (f.result.numel() == 0) return f.result;
  const int device = self.get_device();
  cudaStream_t stream = current_stream();
  const at::ScalarType s = f.self.scalar_type(), r = f.out.scalar_type();
  AT_DISPATCH_V2(s, "myops.max_pool2d_add", AT_WRAP([&] {
                   using S = scalar_t;
                   if (r == s) {
                     forward_typed<S, S>(f, device, stream);
                   } else if (r == at::kDouble) {
                     forward_typed<S, double>(f, device, stream);
                   } else if constexpr (!std::is_same_v<S, double> && !std::is_same_v<S, float>) {
                     TORCH_CHECK(r == at::kFloat, "myops.max_pool2d_add: unsupported result dtype ", r,
                                 " for self of dtype ", s);
                     forward_typed<S, float>(f, device, stream);
                   } else {
                     TORCH_CHECK(false, "myops.max_pool2d_add: unsupported result dtype ", r, " for self of dtype ", s);
                   }
                 }),
                 AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16);
  return max_pool2d_add::finish_forward(f);
}

// ---- backward --------------------------------------------------------------------------------
template <typename S, typename index_t, bool kCL>
__global__ void __launch_bounds__(kThreads)
    max_pool2d_add_backward_kernel(const S* __restrict__ in, const S* __restrict__ grad, S* __restrict__ grad_in,
                                   index_t total, Geom<index_t> g) {
  using M = at::opmath_type<S>;
  const index_t step = index_t(gridDim.x) * blockDim.x;
  for (index_t lin = index_t(blockIdx.x) * blockDim.x + threadIdx.x; lin < total; lin += step) {
    index_t n, c, ih, iw, sh, sw;
    const S* base = locate<kCL, false>(lin, in, g, n, c, ih, iw, sh, sw);
    const int h = int(ih), w = int(iw);
    // output windows that contain (h, w)
    const int ph0 = (h + g.pH < g.kH) ? 0 : (h + g.pH - g.kH) / g.sH + 1;
    const int ph1 = min((h + g.pH) / g.sH + 1, g.Ho);
    const int pw0 = (w + g.pW < g.kW) ? 0 : (w + g.pW - g.kW) / g.sW + 1;
    const int pw1 = min((w + g.pW) / g.sW + 1, g.Wo);
    M acc = M(0);
    S copied = S(0);  // the gradient of the last window whose argmax this is, as stored
    const S* gbase = grad + n * g.o0 + c * g.o1;
    for (int oh = ph0; oh < ph1; ++oh) {
      const int h0 = max(oh * g.sH - g.pH, 0), h1 = min(oh * g.sH - g.pH + g.kH, g.H);
      for (int ow = pw0; ow < pw1; ++ow) {
        const int w0 = max(ow * g.sW - g.pW, 0), w1 = min(ow * g.sW - g.pW + g.kW, g.W);
        M m = -std::numeric_limits<M>::infinity();
        // torch's argmax of a window with no element above -inf: its NCHW kernel keeps the
        // window's first element, its channels_last (NHWC) kernel plane index 0, i.e. (0, 0):
        // such a window's gradient then goes to (0, 0) if the window covers it, else nowhere.
        int bh = kCL ? 0 : h0, bw = kCL ? 0 : w0;
        for (int y = h0; y < h1; ++y) {
          for (int x = w0; x < w1; ++x) {
            const M v = static_cast<M>(base[index_t(y) * sh + index_t(x) * sw]);
            if (v > m || v != v) {
              m = v;
              bh = y;
              bw = x;
            }
          }
        }
        if (bh == h && bw == w) {
          copied = gbase[index_t(oh) * g.o2 + index_t(ow) * g.o3];
          acc += static_cast<M>(copied);
        }
      }
    }
    // torch's NHWC kernel copies the gradient of an element covered by exactly one window (a
    // -0.0 or a NaN keeps its bits); it sums from 0 otherwise, as its NCHW kernel always does
    const bool one_window = kCL && ph1 - ph0 == 1 && pw1 - pw0 == 1;
    grad_in[lin] = one_window ? copied : static_cast<S>(acc);
  }
}

template <typename S, typename index_t, bool kCL>
void launch_backward(const Backward& b, int device, cudaStream_t stream) {
  const Pool2d& p = b.g;
  Geom<index_t> g = make_geom<index_t>(p, b.grad_strides);
  if (kCL) {
    g.d0 = FastDivmod<index_t>(index_t(p.C));
    g.d1 = FastDivmod<index_t>(index_t(p.W));
    g.d2 = FastDivmod<index_t>(index_t(p.H));
  } else {
    g.d0 = FastDivmod<index_t>(index_t(p.W));
    g.d1 = FastDivmod<index_t>(index_t(p.H));
    g.d2 = FastDivmod<index_t>(index_t(p.C));
  }
  const unsigned blocks = unsigned(grid_for(b.grad_self.numel(), device));
  MYOPS_LAUNCH(blocks, kThreads, stream, max_pool2d_add_backward_kernel<S, index_t, kCL>)(
      b.self.const_data_ptr<S>(), b.grad.const_data_ptr<S>(), b.grad_self.mutable_data_ptr<S>(),
      index_t(b.grad_self.numel()), g);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor max_pool2d_add_backward_cuda(const at::Tensor& grad_output, const at::Tensor& self,
                                        at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                        bool ceil_mode) {
  check_same_device(self, "self", grad_output, "grad_output", "max_pool2d_add_backward");
  CudaGuard guard(self.device());
  Backward b = max_pool2d_add::prepare_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                                                "max_pool2d_add_backward");
  if (b.grad_self.numel() == 0) return b.grad_self;
  const int device = self.get_device();
  cudaStream_t stream = current_stream();
  const Pool2d& p = b.g;
  const int64_t sizes[4] = {p.N, p.C, p.Ho, p.Wo};
  const int64_t lim = std::numeric_limits<int32_t>::max();
  const bool small = b.self.numel() < lim && max_offset(b.grad_strides, sizes) < lim;
  AT_DISPATCH_V2(self.scalar_type(), "myops.max_pool2d_add_backward", AT_WRAP([&] {
                   if (small) {
                     if (p.channels_last)
                       launch_backward<scalar_t, uint32_t, true>(b, device, stream);
                     else
                       launch_backward<scalar_t, uint32_t, false>(b, device, stream);
                   } else {
                     if (p.channels_last)
                       launch_backward<scalar_t, uint64_t, true>(b, device, stream);
                     else
                       launch_backward<scalar_t, uint64_t, false>(b, device, stream);
                   }
                 }),
                 AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16);
  return b.grad_self;
}

}  // namespace
}  // namespace myops

MYOPS_CUDA_LIBRARY_IMPL(m) {
  m.impl("max_pool2d_add", &myops::max_pool2d_add_cuda);
  m.impl("max_pool2d_add_backward", &myops::max_pool2d_add_backward_cuda);
}

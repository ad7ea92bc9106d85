// The CUDA strided copy behind myops.diagonal (gather the diagonal view into a contiguous
// tensor) and myops.diagonal_backward (scatter a gradient into the diagonal view of a zero
// tensor). One kernel for any rank: the plan (diagonal/diagonal_shape.h) has merged dims and
// widened the copy unit (a contiguous inner run moves in 16-byte units when aligned); here each
// thread maps output positions to source offsets with fast integer division. Consecutive
// threads take consecutive positions, so the contiguous output is written coalesced. The kernel
// is instantiated per unit size (1/2/4/8/16 bytes), not per dtype.
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "diagonal/cuda/diagonal_cuda.h"
#include "core/strided.h"
#include "core/cuda/launch.h"

namespace {

using myops::OffsetCalc;
using myops::StridedCopyPlan;
using myops::StridedShape;

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // positions per thread per tile (independent loads in flight)

template <int N>
struct Unit;
template <>
struct Unit<1> {
  using type = unsigned char;
};
template <>
struct Unit<2> {
  using type = unsigned short;
};
template <>
struct Unit<4> {
  using type = unsigned int;
};
template <>
struct Unit<8> {
  using type = uint2;
};
template <>
struct Unit<16> {
  using type = uint4;
};

// dst contiguous over the index space (forward): the calculator carries the source only.
template <typename T, typename index_t>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(T* __restrict__ dst, const T* __restrict__ src, OffsetCalc<1, index_t> calc, index_t n) {
  const index_t tile = index_t(kThreads) * kUnroll;
  const index_t step = index_t(gridDim.x) * tile;
  for (index_t base = index_t(blockIdx.x) * tile; base < n; base += step) {
    T v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const index_t i = base + threadIdx.x + index_t(k) * kThreads;
      if (i < n) {
        index_t off[1];
        calc.get(i, off);
        v[k] = __ldg(src + off[0]);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const index_t i = base + threadIdx.x + index_t(k) * kThreads;
      if (i < n) dst[i] = v[k];
    }
  }
}

// Both operands strided (backward scatter into the diagonal view).
template <typename T, typename index_t>
__global__ void __launch_bounds__(kThreads)
    strided_copy_kernel(T* __restrict__ dst, const T* __restrict__ src, OffsetCalc<2, index_t> calc, index_t n) {
  const index_t tile = index_t(kThreads) * kUnroll;
  const index_t step = index_t(gridDim.x) * tile;
  for (index_t base = index_t(blockIdx.x) * tile; base < n; base += step) {
    T v[kUnroll];
    index_t doff[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const index_t i = base + threadIdx.x + index_t(k) * kThreads;
      if (i < n) {
        index_t off[2];
        calc.get(i, off);
        doff[k] = off[0];
        v[k] = __ldg(src + off[1]);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const index_t i = base + threadIdx.x + index_t(k) * kThreads;
      if (i < n) dst[doff[k]] = v[k];
    }
  }
}

unsigned int grid_for(int64_t n) {
  const int64_t tile = int64_t(kThreads) * kUnroll;
  const int64_t blocks = (n + tile - 1) / tile;
  // Grid-stride loops cover anything beyond the cap.
  return static_cast<unsigned int>(blocks < (int64_t(1) << 30) ? blocks : (int64_t(1) << 30));
}

template <typename index_t>
bool fits(const StridedShape<2>& s, int64_t n) {
  // FastDivmod<uint32_t> is exact below 2^31, FastDivmod<uint64_t> below 2^63.
  const int64_t lim = sizeof(index_t) == 4 ? (int64_t(1) << 31) : INT64_MAX;
  return n < lim && s.max_offset(0) < lim && s.max_offset(1) < lim;
}

template <typename T, typename index_t>
void launch_typed(const StridedCopyPlan& p, cudaStream_t stream) {
  const int64_t n = p.shape.numel();
  T* dst = reinterpret_cast<T*>(p.dst);
  const T* src = reinterpret_cast<const T*>(p.src);
  if (p.dst_contiguous()) {
    StridedShape<1> s1;
    s1.sizes = p.shape.sizes;
    for (const auto& st : p.shape.strides) s1.strides.push_back({st[1]});
    MYOPS_LAUNCH(grid_for(n), kThreads, stream, gather_kernel<T, index_t>)(dst, src, OffsetCalc<1, index_t>(s1),
                                                                           static_cast<index_t>(n));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  } else {
    MYOPS_LAUNCH(grid_for(n), kThreads, stream, strided_copy_kernel<T, index_t>)(
        dst, src, OffsetCalc<2, index_t>(p.shape), static_cast<index_t>(n));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

template <int N>
void launch_unit(const StridedCopyPlan& p, cudaStream_t stream) {
  using T = typename Unit<N>::type;
  if (fits<uint32_t>(p.shape, p.shape.numel())) {
    launch_typed<T, uint32_t>(p, stream);
  } else {
    launch_typed<T, uint64_t>(p, stream);
  }
}

}  // namespace

namespace myops {

void diagonal_strided_copy_cuda(const StridedCopyPlan& p, cudaStream_t stream) {
  TORCH_CHECK(p.shape.dim() <= MYOPS_MAX_DIMS, "myops.diagonal: internal error, ", p.shape.dim(),
              " dims after merging (at most ", MYOPS_MAX_DIMS, ")");
  if (p.shape.numel() == 0) return;
  switch (p.unit_bytes) {
    case 1:
      return launch_unit<1>(p, stream);
    case 2:
      return launch_unit<2>(p, stream);
    case 4:
      return launch_unit<4>(p, stream);
    case 8:
      return launch_unit<8>(p, stream);
    case 16:
      return launch_unit<16>(p, stream);
    default:
      TORCH_CHECK(false, "myops.diagonal: internal error, unit of ", p.unit_bytes, " bytes");
  }
}

}  // namespace myops

#pragma once
// Device side of nonzero: flag readers, the coordinate-writing output iterator, and the CUB
// launch templates. Included by nonzero.cu (contiguous input) and nonzero_strided.cu.
//
// The select pass is cub::DeviceSelect::If over a counting iterator of linear positions
// (int64 num_items: CUB 3.x streams partitions of < 2^31 items itself, offsets stay 64-bit).
// The selection predicate reads the element (through strides when needed), and the output
// iterator is a thrust::tabulate_output_iterator whose functor turns (rank r, linear index i)
// into the N-d coordinates of i and writes them to a column-major [ndim, pitch] buffer. CUB's
// two-phase scatter hands consecutive ranks to consecutive threads, so every coordinate row is
// written coalesced. No separate index kernel; for 1-D the functor writes i itself.
#include <c10/cuda/CUDAException.h>

#include <cstdint>
#include <limits>

#include "core/fast_divmod.h"
#include "core/macros.h"
#include "core/strided.h"
#include "core/cuda/cub.h"  // CUB, thrust, the caching allocator (or the emulation's stand-ins)
#include "nonzero/cuda/nonzero.h"

namespace myops {
namespace nonzero_cuda {
namespace detail {

// Bits of the element at element offset `off` (read-only path).
MYOPS_HD uint64_t load_bits(const void* p, int64_t off, int elem_size) {
#if defined(__CUDA_ARCH__)
  switch (elem_size) {
    case 1:
      return __ldg(static_cast<const unsigned char*>(p) + off);
    case 2:
      return __ldg(static_cast<const unsigned short*>(p) + off);
    case 4:
      return __ldg(static_cast<const unsigned int*>(p) + off);
    default:
      return __ldg(static_cast<const unsigned long long*>(p) + off);
  }
#else
  switch (elem_size) {
    case 1:
      return static_cast<const unsigned char*>(p)[off];
    case 2:
      return static_cast<const unsigned short*>(p)[off];
    case 4:
      return static_cast<const unsigned int*>(p)[off];
    default:
      return static_cast<const unsigned long long*>(p)[off];
  }
#endif
}

// Is the element at linear position i nonzero? (contiguous input)
struct ContiguousFlag {
  const void* data;
  uint64_t mask;
  int elem_size;
  MYOPS_HD bool operator()(int64_t i) const { return (load_bits(data, i, elem_size) & mask) != 0; }
};

// Same through strides: positions and offsets < 2^31 (32-bit fast division).
struct StridedFlag {
  const void* data;
  uint64_t mask;
  int elem_size;
  OffsetCalc<1, uint32_t> calc;
  MYOPS_HD bool operator()(int64_t i) const {
    uint32_t off[1];
    calc.get(static_cast<uint32_t>(i), off);
    return (load_bits(data, off[0], elem_size) & mask) != 0;
  }
};

// The flag as a 0/1 count for the reduction.
template <typename Flag>
struct FlagCount {
  Flag flag;
  MYOPS_HD int64_t operator()(int64_t i) const { return flag(i) ? 1 : 0; }
};

// (rank r, linear index i) -> coordinates of i written at out[d * pitch + r], for r < limit.
// MAXDIV is the compile-time bound on the number of divisions (ndim - 1): the loop is fully
// unrolled so the divisors stay in kernel parameters / registers. index_t = uint32_t when every
// linear index is < 2^31, uint64_t otherwise.
template <typename index_t, int MAXDIV>
struct CoordWriter {
  int64_t* out;
  int64_t pitch;
  int64_t limit;
  int ndim;
  FastDivmod<index_t> div[MAXDIV > 0 ? MAXDIV : 1];  // div[k]: size of dim ndim-1-k

  CoordWriter() = default;
  explicit CoordWriter(const CoordSpec& s) : out(s.out), pitch(s.pitch), limit(s.limit), ndim(s.ndim) {
    for (int k = 0; k < MAXDIV && k + 1 < ndim; ++k) {
      div[k] = FastDivmod<index_t>(static_cast<index_t>(s.sizes[ndim - 1 - k]));
    }
  }

  MYOPS_HD void operator()(int64_t rank, int64_t linear) const {
    if (rank >= limit) return;
    int64_t* o = out + rank;
    index_t v = static_cast<index_t>(linear);
#pragma unroll
    for (int k = 0; k < MAXDIV; ++k) {
      if (k + 1 >= ndim) break;
      index_t q, r;
      div[k].divmod(v, q, r);
      o[static_cast<int64_t>(ndim - 1 - k) * pitch] = static_cast<int64_t>(r);
      v = q;
    }
    if (ndim > 0) o[0] = static_cast<int64_t>(v);
  }
};

inline void check_items(int64_t numel) {
  TORCH_CHECK(MYOPS_CUB_64BIT_ITEMS || numel <= std::numeric_limits<int32_t>::max(),
              "myops.nonzero: an input of more than 2^31 - 1 elements needs the CUB of CUDA 12.8 or "
              "newer; this build's is older (got ",
              numel, " elements)");
}

template <typename Flag, typename Writer>
void launch_select(const Flag& flag, const Writer& writer, int64_t numel, int64_t* d_count, cudaStream_t stream) {
  thrust::counting_iterator<int64_t> first(0);
  auto out = thrust::make_tabulate_output_iterator(writer);
  size_t bytes = 0;
  C10_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, first, out, d_count, numel, flag, stream));
  auto temp = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
  C10_CUDA_CHECK(cub::DeviceSelect::If(temp.get(), bytes, first, out, d_count, numel, flag, stream));
}

template <typename Flag>
void count_impl(const Flag& flag, int64_t numel, int64_t* d_count, cudaStream_t stream) {
  check_items(numel);
  auto it = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), FlagCount<Flag>{flag});
  size_t bytes = 0;
  C10_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, it, d_count, numel, stream));
  auto temp = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
  C10_CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), bytes, it, d_count, numel, stream));
}

template <typename Flag>
void select_coords_impl(const Flag& flag, const CoordSpec& spec, int64_t numel, int64_t* d_count, cudaStream_t stream) {
  check_items(numel);
  if (spec.ndim <= 1) {
    // 0-d: nothing to write; 1-D: the linear index is the coordinate
    launch_select(flag, CoordWriter<uint64_t, 0>(spec), numel, d_count, stream);
  } else if (numel <= std::numeric_limits<int32_t>::max()) {
    if (spec.ndim <= 4) {
      launch_select(flag, CoordWriter<uint32_t, 3>(spec), numel, d_count, stream);
    } else {
      launch_select(flag, CoordWriter<uint32_t, kMaxRank - 1>(spec), numel, d_count, stream);
    }
  } else {
    launch_select(flag, CoordWriter<uint64_t, kMaxRank - 1>(spec), numel, d_count, stream);
  }
}

}  // namespace detail
}  // namespace nonzero_cuda
}  // namespace myops

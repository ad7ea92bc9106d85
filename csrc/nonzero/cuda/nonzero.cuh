#pragma once
// Device side of nonzero: the typed flag readers, the coordinate-writing output iterator, and the
// CUB launch templates. Included by nonzero_contiguous.cu and nonzero_strided.cu.
//
// The select pass is cub::DeviceSelect::Flagged: the items are a counting iterator of linear
// positions, the flags an iterator of "is nonzero" bools, and the output iterator a
// thrust::tabulate_output_iterator whose functor turns (rank r, linear index i) into the N-d
// coordinates of i and writes them to a column-major [ndim, pitch] buffer. CUB's two-phase scatter
// hands consecutive ranks to consecutive threads, so every coordinate row is written coalesced.
// No separate index kernel; for 1-D the functor writes i itself.
//
// Speed (issue #46; the shape of torch's own CUDA nonzero, which also runs DeviceReduce then
// DeviceSelect::Flagged over a typed input):
//  * The element type is a template parameter (Bits: the unsigned integer of the element's size,
//    nonzero/nonzero_bits.h's mask test), dispatched once on the host (with_bits). A run-time
//    switch on the size per item put a branch between every load and its use, so the loads of a
//    thread's items were issued one after another; typed, CUB's unrolled per-thread loop issues
//    them all before the first use.
//  * Flags are loaded by CUB itself (DeviceSelect::Flagged's flag iterator is a transform of the
//    typed data pointer, contiguous input), as torch does, not from inside a selection predicate:
//    the items (positions) are then computed, never loaded.
//  * The counting pass accumulates in int32 with a 32-bit num_items (uint32 offsets inside CUB)
//    whenever the input has < 2^31 elements: twice the items per thread of the int64 reduction
//    and no 64-bit index arithmetic. Only inputs past that count in int64.
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

template <typename T>
struct Tag {
  using type = T;
};

// f(Tag<Bits>{}) with Bits the unsigned integer of `elem_size` bytes (1, 2, 4 or 8): the one
// run-time switch on the element size, on the host.
template <typename F>
void with_bits(int elem_size, F&& f) {
  switch (elem_size) {
    case 1:
      return f(Tag<unsigned char>{});
    case 2:
      return f(Tag<unsigned short>{});
    case 4:
      return f(Tag<unsigned int>{});
    case 8:
      return f(Tag<unsigned long long>{});
    default:
      TORCH_CHECK(false, "myops.nonzero: internal error, element size ", elem_size);
  }
}

// Bits at p through the read-only path.
template <typename Bits>
MYOPS_HD Bits load_ro(const Bits* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

// Is an element with these bits nonzero? (the mask drops the sign bit of floating types: -0.0 is
// zero, NaN is nonzero, exactly like `x != 0`)
template <typename Bits>
struct NonzeroBits {
  Bits mask;
  MYOPS_HD bool operator()(Bits b) const { return (b & mask) != 0; }
};

// The same for the element at linear position i of a strided input: positions and offsets
// < 2^31 (32-bit fast division).
template <typename Bits>
struct StridedFlag {
  const Bits* data;
  NonzeroBits<Bits> test;
  OffsetCalc<1, uint32_t> calc;
  MYOPS_HD bool operator()(int64_t i) const {
    uint32_t off[1];
    calc.get(static_cast<uint32_t>(i), off);
    return test(load_ro(data + off[0]));
  }
};

// The flag iterators: flag i = "element at linear position i is nonzero".
template <typename Bits>
auto contiguous_flags(const FlagSource& f) {
  return thrust::make_transform_iterator(static_cast<const Bits*>(f.data),
                                         NonzeroBits<Bits>{static_cast<Bits>(f.mask)});
}
template <typename Bits>
auto strided_flags(const FlagSource& f) {
  return thrust::make_transform_iterator(
      thrust::counting_iterator<int64_t>(0),
      StridedFlag<Bits>{static_cast<const Bits*>(f.data), NonzeroBits<Bits>{static_cast<Bits>(f.mask)}, f.calc});
}

// A flag as a count, and the sum of counts (in Count's width: the reduction's accumulator).
template <typename Count>
struct AsCount {
  MYOPS_HD Count operator()(bool flag) const { return flag ? 1 : 0; }
};
struct AddCounts {
  template <typename Count>
  MYOPS_HD Count operator()(Count a, Count b) const {
    return a + b;
  }
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

constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();

inline void check_items(int64_t numel) {
  TORCH_CHECK(MYOPS_CUB_64BIT_ITEMS || numel <= kMax32,
              "myops.nonzero: an input of more than 2^31 - 1 elements needs the CUB of CUDA 12.8 or "
              "newer; this build's is older (got ",
              numel, " elements)");
}

// CUB's two-phase call: call(nullptr, bytes) sizes the scratch, call(temp, bytes) runs.
template <typename Call>
void run_cub(const Call& call) {
  size_t bytes = 0;
  C10_CUDA_CHECK(call(nullptr, bytes));
  auto temp = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
  C10_CUDA_CHECK(call(temp.get(), bytes));
}

template <typename Flags, typename Writer>
void launch_select(const Flags& flags, const Writer& writer, int64_t numel, int64_t* d_count, cudaStream_t stream) {
  const thrust::counting_iterator<int64_t> first(0);
  const auto out = thrust::make_tabulate_output_iterator(writer);
  run_cub([&](void* temp, size_t& bytes) {
    return cub::DeviceSelect::Flagged(temp, bytes, first, flags, out, d_count, numel, stream);
  });
}

// kHuge: the input may have more than 2^31 - 1 elements (contiguous input only; the strided
// readers never see one, nonzero.cu makes a contiguous copy first).
template <bool kHuge, typename Flags>
void count_impl(const Flags& flags, int64_t numel, int64_t* d_count, cudaStream_t stream) {
  check_items(numel);
  if (numel <= kMax32) {
    const auto counts = thrust::make_transform_iterator(flags, AsCount<int32_t>{});
    const auto n = static_cast<int32_t>(numel);
    run_cub([&](void* temp, size_t& bytes) {
      return cub::DeviceReduce::Reduce(temp, bytes, counts, d_count, n, AddCounts{}, int32_t{0}, stream);
    });
  } else if constexpr (kHuge) {
    const auto counts = thrust::make_transform_iterator(flags, AsCount<int64_t>{});
    run_cub(
        [&](void* temp, size_t& bytes) { return cub::DeviceReduce::Sum(temp, bytes, counts, d_count, numel, stream); });
  } else {
    TORCH_CHECK(false, "myops.nonzero: internal error, a strided input of ", numel, " elements");
  }
}

template <bool kHuge, typename Flags>
void select_coords_impl(const Flags& flags, const CoordSpec& spec, int64_t numel, int64_t* d_count,
                        cudaStream_t stream) {
  check_items(numel);
  if (spec.ndim <= 1) {
    // 0-d: nothing to write; 1-D: the linear index is the coordinate
    launch_select(flags, CoordWriter<uint64_t, 0>(spec), numel, d_count, stream);
  } else if (numel <= kMax32) {
    if (spec.ndim <= 4) {
      launch_select(flags, CoordWriter<uint32_t, 3>(spec), numel, d_count, stream);
    } else {
      launch_select(flags, CoordWriter<uint32_t, kMaxRank - 1>(spec), numel, d_count, stream);
    }
  } else if constexpr (kHuge) {
    launch_select(flags, CoordWriter<uint64_t, kMaxRank - 1>(spec), numel, d_count, stream);
  } else {
    TORCH_CHECK(false, "myops.nonzero: internal error, a strided input of ", numel, " elements");
  }
}

}  // namespace detail
}  // namespace nonzero_cuda
}  // namespace myops

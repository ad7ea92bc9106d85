#pragma once
// Host-side interface between the nonzero glue (nonzero.cu: tensors, checks, memory policy,
// registration) and the CUB launchers (nonzero_contiguous.cu, nonzero_strided.cu). No torch types.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "nonzero/nonzero_bits.h"
#include "core/strided.h"

namespace myops {
namespace nonzero_cuda {

// Highest rank whose coordinates the CUDA kernels write (nonzero/nonzero_bits.h).
constexpr int kMaxRank = nonzero_rules::kMaxCudaRank;

// How to read the "is nonzero" flag of the element at linear (row-major) position i: load
// `elem_size` bytes and test `bits & mask` (the mask drops the sign bit of floating types, so
// -0.0 is zero and NaN is nonzero, exactly like `x != 0`). The launchers turn elem_size into a
// compile-time type once (nonzero.cuh).
struct FlagSource {
  const void* data = nullptr;
  int elem_size = 1;  // 1, 2, 4 or 8
  uint64_t mask = ~uint64_t(0);
  bool contiguous = true;
  // When !contiguous: linear position -> element offset (coalesced dims, every position and
  // offset < 2^31; the glue makes a contiguous copy otherwise).
  OffsetCalc<1, uint32_t> calc;
};

// Where the coordinates of the r-th selected element go: out[d * pitch + r] for d < ndim (a
// column-major [ndim, pitch] buffer, which is torch's [nnz, ndim] result with strides (1, pitch)),
// written only for r < limit (nonzero_static drops the rest).
struct CoordSpec {
  int64_t* out = nullptr;
  int64_t pitch = 0;
  int64_t limit = 0;
  int ndim = 0;
  int64_t sizes[kMaxRank] = {};
};

// ONE stream-compaction pass (cub::DeviceSelect::Flagged over a counting iterator) that writes the
// coordinates of every selected element and stores the number of nonzeros at *d_count (device).
// Asynchronous on `stream`; never synchronizes with the host.
void select_coords(const FlagSource& flags, const CoordSpec& spec, int64_t numel, int64_t* d_count,
                   cudaStream_t stream);

// Counting pass only (cub::DeviceReduce of the flags): *d_count = number of nonzeros.
void count_nonzero(const FlagSource& flags, int64_t numel, int64_t* d_count, cudaStream_t stream);

// out[d * pitch + r] = fill_value for every d < ndim and r in [min(*d_count, size), size); a null
// d_count means 0. Reads the count on the device: no host synchronization.
void fill_tail(int64_t* out, int64_t pitch, int ndim, int64_t size, const int64_t* d_count, int64_t fill_value,
               cudaStream_t stream);

// The "lookback" variant's select pass (nonzero_lookback.cu; core/variants.h): one memset and ONE
// kernel that writes the coordinates of the first spec.limit selected elements and stores the
// count at *d_count (when not null); with `fill`, the same kernel also writes fill_value to rows
// [min(count, spec.limit), spec.limit) (nonzero_static's tail). numel > 0. Asynchronous on
// `stream`; never synchronizes with the host.
void select_lookback(const FlagSource& flags, const CoordSpec& spec, int64_t numel, int64_t* d_count, bool fill,
                     int64_t fill_value, cudaStream_t stream);

// The per-layout halves of select_coords / count_nonzero (split over two .cu files so that they
// compile in parallel); select_coords / count_nonzero / fill_tail are defined in nonzero.cu.
void select_coords_contiguous(const FlagSource&, const CoordSpec&, int64_t, int64_t*, cudaStream_t);
void select_coords_strided(const FlagSource&, const CoordSpec&, int64_t, int64_t*, cudaStream_t);
void count_nonzero_contiguous(const FlagSource&, int64_t, int64_t*, cudaStream_t);
void count_nonzero_strided(const FlagSource&, int64_t, int64_t*, cudaStream_t);

}  // namespace nonzero_cuda
}  // namespace myops

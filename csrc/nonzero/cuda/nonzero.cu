// nonzero / nonzero_static on CUDA: checks, memory policy, result layout, the sync-free tail fill
// of nonzero_static, and registration. The CUB select / count passes are instantiated in
// nonzero_contiguous.cu and nonzero_strided.cu (device code in nonzero.cuh); this file includes no
// CUB and only light torch headers.
//
// Result layout (as torch's CUDA kernels): [n, ndim] int64 with strides (1, max(n, 1)), i.e. the
// transpose of a contiguous [ndim, n] buffer holding one row of coordinates per dim.
//
// Memory policy of nonzero (docs/design.md, "Memory policy"). The result always owns exactly
// nnz * ndim * 8 bytes.
//  * Worst case <= kWorstCaseCapBytes (16 MiB, i.e. numel * ndim * 8 <= 16 MiB): allocate the
//    worst-case [ndim, numel] buffer, run ONE select pass that writes the coordinates, read the
//    count once (the only host sync), then copy the first nnz columns into an exact result
//    (cudaMemcpy2DAsync; no copy at all when every element is nonzero). Temporary memory: at
//    most 16 MiB plus CUB's scratch.
//  * Above the cap: the exact two-pass path. A counting pass (cub::DeviceReduce), read the count
//    (the only host sync), allocate the exact result, then the same select pass writes the
//    coordinates straight into it. Temporary memory: CUB's scratch only.
//  The cap is also where the one-pass path stops paying: its trim copy moves 2 * nnz * ndim * 8
//  bytes, while the counting pass reads the input once more; at 16 MiB both cost a few
//  microseconds, below it the saved launch and pass win, above it a dense input would lose.
// nonzero_static never synchronizes: the count stays on the device, the output iterator drops
// rows >= size, and a kernel that reads the device count fills the remaining rows.
//
// Variants (core/variants.h; docs/design.md, "Kernel variants"), chosen per call:
//  * nonzero_static (also nonzero_bounded): "cub" (CUB's DeviceSelect::Flagged - its init and
//    select kernels - then fill_tail: 3 launches) or "lookback" (a memset and ONE kernel,
//    nonzero_lookback.cu, whose spare blocks also fill the tail).
//  * nonzero: "cub" or "lookback": the memory policy above either way, the select pass CUB's or
//    the look-back kernel (which stores the count itself; the count pass stays CUB's reduce).
//  Expected to win on an H200: "lookback" (why: beside the kernel, nonzero_lookback.cu). The
//  tuning table keeps "cub" on sm_90 until the GPU sweep has measured both.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <torch/library.h>

#include <algorithm>

#include <cstdint>
#include <limits>
#include <tuple>

#include "core/checks.h"
#include "nonzero/nonzero_rules.h"
#include "core/strided.h"
#include "core/cuda/glue.h"
#include "core/cuda/launch.h"
#include "core/variants.h"
#include "nonzero/cuda/nonzero.h"

namespace myops {
namespace nonzero_cuda {
namespace {

// One block row per coordinate dim (blockIdx.y); rows [min(*count, size), size) get fill_value.
__global__ void fill_tail_kernel(int64_t* out, int64_t pitch, int64_t size, const int64_t* count, int64_t fill_value) {
  const int64_t c = count == nullptr ? 0 : *count;
  const int64_t start = c < size ? c : size;
  int64_t* row = out + static_cast<int64_t>(blockIdx.y) * pitch;
  for (int64_t r = start + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < size;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    row[r] = fill_value;
  }
}

}  // namespace

void select_coords(const FlagSource& flags, const CoordSpec& spec, int64_t numel, int64_t* d_count,
                   cudaStream_t stream) {
  if (flags.contiguous) {
    select_coords_contiguous(flags, spec, numel, d_count, stream);
  } else {
    select_coords_strided(flags, spec, numel, d_count, stream);
  }
}

void count_nonzero(const FlagSource& flags, int64_t numel, int64_t* d_count, cudaStream_t stream) {
  if (flags.contiguous) {
    count_nonzero_contiguous(flags, numel, d_count, stream);
  } else {
    count_nonzero_strided(flags, numel, d_count, stream);
  }
}

void fill_tail(int64_t* out, int64_t pitch, int ndim, int64_t size, const int64_t* d_count, int64_t fill_value,
               cudaStream_t stream) {
  if (size <= 0 || ndim <= 0) return;
  constexpr int kThreads = 256;
  // enough blocks for the whole tail in one sweep, capped (grid-stride loop beyond)
  const int64_t blocks = std::min<int64_t>((size + kThreads - 1) / kThreads, 1024);
  dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(ndim));
  MYOPS_LAUNCH(grid, kThreads, stream, fill_tail_kernel)(out, pitch, size, d_count, fill_value);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace nonzero_cuda
}  // namespace myops

namespace myops {
namespace {

using nonzero_cuda::CoordSpec;
using nonzero_cuda::FlagSource;

constexpr int64_t kWorstCaseCapBytes = int64_t(16) << 20;

// How the kernels read the flags of `self`. Non-contiguous inputs are read through strides
// (coalesced dims, 32-bit offsets); a contiguous copy is made (into `keep`) only when the
// coalesced rank exceeds MYOPS_MAX_DIMS or a position / offset does not fit in 31 bits.
FlagSource make_flags(const at::Tensor& self, at::Tensor& keep) {
  FlagSource f;
  f.elem_size = static_cast<int>(self.element_size());
  f.mask = nonzero_rules::mask_of(self.scalar_type());
  const at::Tensor* src = &self;
  if (!self.is_contiguous()) {
    StridedShape<1> sh;
    for (int64_t d = 0; d < self.dim(); ++d) {
      sh.sizes.push_back(self.size(d));
      sh.strides.push_back({self.stride(d)});
    }
    sh.coalesce();
    const int64_t lim = std::numeric_limits<int32_t>::max();
    if (sh.dim() == 1 && sh.strides[0][0] == 1) {
      // contiguous after dropping size-1 dims: read directly
    } else if (sh.dim() <= MYOPS_MAX_DIMS && self.numel() <= lim && sh.max_offset(0) <= lim) {
      f.contiguous = false;
      f.calc = OffsetCalc<1, uint32_t>(sh);
    } else {
      keep = self.contiguous();
      src = &keep;
    }
  }
  f.data = src->const_data_ptr();
  return f;
}

CoordSpec make_spec(const at::Tensor& self, int64_t* out, int64_t pitch, int64_t limit) {
  CoordSpec s;
  s.out = out;
  s.pitch = pitch;
  s.limit = limit;
  s.ndim = static_cast<int>(self.dim());
  for (int d = 0; d < s.ndim; ++d) s.sizes[d] = self.size(d);
  return s;
}

// [n, ndim] with strides (1, max(n, 1)), owning exactly n * ndim * 8 bytes.
at::Tensor column_major(int64_t ndim, int64_t n, const at::TensorOptions& opts) {
  return at::empty({ndim, n}, opts).t();
}

// The only host synchronization of nonzero.
int64_t read_count(const at::Tensor& d_count, cudaStream_t stream) {
  return read_device_int64(d_count.const_data_ptr<int64_t>(), stream);
}

// Is the look-back variant selected for `op` on self's device?
bool lookback(const char* op, const at::Tensor& self) {
  return cuda_variant(op, device_arch(self.device().index())) == "lookback";
}

at::Tensor nonzero_on_cuda(const at::Tensor& in) {
  const at::Tensor self = nonzero_rules::real_input(in);
  nonzero_rules::check_input(self, "nonzero", /*cuda=*/true);
  CudaGuard guard(self.device());
  const cudaStream_t stream = current_stream();
  const auto opts = self.options().dtype(at::kLong);
  const int64_t ndim = self.dim();
  const int64_t numel = self.numel();
  if (numel == 0) return column_major(ndim, 0, opts);
  const bool use_lookback = lookback("nonzero", self);

  at::Tensor keep;
  const FlagSource flags = make_flags(self, keep);
  at::Tensor d_count = temporary({1}, opts);
  int64_t* count = d_count.data_ptr<int64_t>();
  auto select = [&](const CoordSpec& spec) {
    if (use_lookback) {
      nonzero_cuda::select_lookback(flags, spec, numel, count, /*fill=*/false, 0, stream);
    } else {
      nonzero_cuda::select_coords(flags, spec, numel, count, stream);
    }
  };

  const bool one_pass = ndim == 0 || numel <= kWorstCaseCapBytes / (8 * ndim);
  if (one_pass) {
    at::Tensor buf = temporary({ndim, numel}, opts);  // worst case: every element selected
    select(make_spec(self, buf.data_ptr<int64_t>(), numel, numel));
    const int64_t nnz = read_count(d_count, stream);
    TORCH_CHECK(nnz >= 0 && nnz <= numel, "myops.nonzero: internal error, count ", nnz);
    if (nnz == numel) return buf.t();  // already exact
    at::Tensor out = column_major(ndim, nnz, opts);
    if (nnz > 0 && ndim > 0) {
      // trim: the first nnz entries of each of the ndim rows (the source pitch is <= 16 MiB, far
      // below cudaMemcpy2D's pitch limit)
      C10_CUDA_CHECK(cudaMemcpy2DAsync(out.data_ptr(), nnz * sizeof(int64_t), buf.const_data_ptr(),
                                       numel * sizeof(int64_t), nnz * sizeof(int64_t), ndim, cudaMemcpyDeviceToDevice,
                                       stream));
    }
    return out;  // `buf` goes back to the caching allocator, stream-ordered
  }

  nonzero_cuda::count_nonzero(flags, numel, count, stream);
  const int64_t nnz = read_count(d_count, stream);
  TORCH_CHECK(nnz >= 0 && nnz <= numel, "myops.nonzero: internal error, count ", nnz);
  at::Tensor out = column_major(ndim, nnz, opts);
  if (nnz > 0) select(make_spec(self, out.data_ptr<int64_t>(), nnz, nnz));
  return out;
}

// nonzero_static / nonzero_bounded: the one select pass (it stores the true count in `d_count`,
// a 0-d int64 on the device) and the tail fill that reads it. Never synchronizes. An undefined
// `d_count` (nonzero_static) means the count is not wanted: a scratch one is used when needed.
at::Tensor select_static(const at::Tensor& in, int64_t size, int64_t fill_value, const at::Tensor& d_count,
                         const char* op) {
  const at::Tensor self = nonzero_rules::real_input(in);
  nonzero_rules::check_input(self, op, /*cuda=*/true);
  check_size(size, op);
  CudaGuard guard(self.device());
  const cudaStream_t stream = current_stream();
  const auto opts = self.options().dtype(at::kLong);
  const int64_t ndim = self.dim();
  at::Tensor out = column_major(ndim, size, opts);
  if (!d_count.defined() && (size == 0 || ndim == 0)) return out;  // nothing to write or count
  const int64_t numel = self.numel();
  if (numel == 0) {
    if (d_count.defined()) d_count.zero_();
    nonzero_cuda::fill_tail(out.data_ptr<int64_t>(), size, static_cast<int>(ndim), size, nullptr, fill_value, stream);
    return out;
  }
  at::Tensor keep;
  const FlagSource flags = make_flags(self, keep);
  // a 0-d self has ndim == 0: the pass only counts (limit 0 writes no coordinates)
  const int64_t limit = ndim == 0 ? 0 : size;
  if (lookback("nonzero_static", self)) {  // the count only when wanted, the tail in the same kernel
    int64_t* count = d_count.defined() ? d_count.data_ptr<int64_t>() : nullptr;
    nonzero_cuda::select_lookback(flags, make_spec(self, out.data_ptr<int64_t>(), size, limit), numel, count,
                                  /*fill=*/true, fill_value, stream);
    return out;
  }
  const at::Tensor count_t = d_count.defined() ? d_count : temporary({}, opts);
  int64_t* count = count_t.data_ptr<int64_t>();
  nonzero_cuda::select_coords(flags, make_spec(self, out.data_ptr<int64_t>(), size, limit), numel, count, stream);
  nonzero_cuda::fill_tail(out.data_ptr<int64_t>(), size, static_cast<int>(ndim), size, count, fill_value, stream);
  return out;
}

at::Tensor nonzero_static_on_cuda(const at::Tensor& self, int64_t size, int64_t fill_value) {
  return select_static(self, size, fill_value, at::Tensor(), "nonzero_static");
}

std::tuple<at::Tensor, at::Tensor> nonzero_bounded_on_cuda(const at::Tensor& self, int64_t size, int64_t fill_value) {
  at::Tensor d_count = at::empty({}, self.options().dtype(at::kLong));
  at::Tensor out = select_static(self, size, fill_value, d_count, "nonzero_bounded");
  return {out, d_count};
}

}  // namespace
}  // namespace myops

MYOPS_CUDA_LIBRARY_IMPL(m) {
  m.impl("nonzero", &myops::nonzero_on_cuda);
  m.impl("nonzero_static", &myops::nonzero_static_on_cuda);
  m.impl("nonzero_bounded", &myops::nonzero_bounded_on_cuda);
}

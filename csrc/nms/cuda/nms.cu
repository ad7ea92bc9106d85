// nms / batched_nms / nms_static / batched_nms_static on CUDA.
//
// Two kernels after torchvision's stable score sort (the boxes gathered in score order):
//  1. iou_mask_kernel: torchvision's 64-box tiling. Block (col, row) with row <= col compares the
//     64 boxes of row tile `row` with the 64 of column tile `col` and writes one 64-bit word per
//     row box: bit t set when column box col*64+t (later in score order) has IoU > threshold with
//     it. IoU is torchvision's devIoU arithmetic (accumulate type: float for half and float,
//     double for double; the threshold a float). For the class-aware sweep (batched_nms's
//     per-class path) boxes of different classes never set a bit.
//  2. sweep_kernel: the greedy pass ON THE DEVICE (torchvision copies the mask to the host). One
//     block walks the tiles in order: thread 0 decides the kept boxes of the current tile from
//     the removed-bits word and the tile's own words (loaded into shared memory by the block;
//     serial, 64 steps), then all threads OR the kept rows into the removed bits of later tiles. It writes the first
//     `size` kept indices (original numbering), pads the rest with -1 and stores the true count on the device.
// nms_static / batched_nms_static never synchronize with the host; nms / batched_nms run the same
// passes with size = N and read the count once (their only host sync) to trim the result.
//
// batched_nms takes torchvision's paths: above nms_common::vanilla_above elements of `boxes`
// the per-class path, done here as ONE class-aware sweep (same survivors; the order is the score
// order, torchvision's final sort of the kept scores - equal unless kept scores tie), otherwise
// the coordinate trick (shifted boxes, one nms) computed with torchvision's own ops.
//
// Memory: the mask is N * ceil(N / 64) words (N^2 / 8 bytes), as torchvision's.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cstdint>
#include <tuple>

#include "core/checks.h"
#include "nms/nms_common.h"
#include "nms/cuda/iou.cuh"
#include "core/cuda/glue.h"
#include "core/cuda/launch.h"

namespace myops {
namespace {

using nms_iou::iou_above;

constexpr int kTile = 64;  // boxes per mask word
// The sweep's threads meet at barriers: it launches with MYOPS_LAUNCH_COOP (the emulation runs its
// 256 threads as fibers) and keeps its shared memory in MYOPS_SHARED. The mask kernel's threads
// never talk.
constexpr int kSweepThreads = 256;
constexpr int64_t kMaxBoxes = int64_t(65535) * kTile;  // grid.y limit of the mask kernel

// Class identity for the class-aware sweep: integral idxs as int64, floating as double (NaN
// equals nothing, as torchvision's `idxs == class_id`).
struct Classes {
  const int64_t* i = nullptr;
  const double* d = nullptr;
  __device__ bool same(int64_t a, int64_t b) const {
    if (i != nullptr) return i[a] == i[b];
    if (d != nullptr) return d[a] == d[b];
    return true;
  }
};

// grid (col tiles, row tiles), kTile threads; boxes: [n, 4] contiguous in score order.
template <typename T>
__global__ void iou_mask_kernel(int64_t n, int64_t tiles, float threshold, const T* boxes, Classes cls,
                                uint64_t* mask) {
  const int64_t row = blockIdx.y, col = blockIdx.x;
  if (row > col) return;
  const int64_t row_size = n - row * kTile < kTile ? n - row * kTile : kTile;
  const int64_t col_size = n - col * kTile < kTile ? n - col * kTile : kTile;
  const int t = threadIdx.x;
  if (t >= row_size) return;
  const int64_t i = row * kTile + t;
  const T* a = boxes + i * 4;
  uint64_t bits = 0;
  for (int64_t k = (row == col ? t + 1 : 0); k < col_size; ++k) {
    const int64_t j = col * kTile + k;
    if (cls.same(i, j) && iou_above(a, boxes + j * 4, threshold)) bits |= uint64_t(1) << k;
  }
  mask[i * tiles + col] = bits;
}

// One block. removed: `tiles` zeroed words (scratch). order: sorted position -> original index.
// Per tile: the block loads the tile's own mask words (row k's word for this tile) into shared
// memory, thread 0 walks its 64 boxes (serial, from shared memory), then all threads OR the
// rows of the kept boxes into the removed bits of the later tiles.
__global__ void sweep_kernel(int64_t n, int64_t tiles, const uint64_t* mask, const int64_t* order, uint64_t* removed,
                             int64_t* keep, int64_t size, int64_t* count) {
  MYOPS_SHARED(uint64_t, own, kTile);
  MYOPS_SHARED(int64_t, kept, kTile);
  MYOPS_SHARED(int, nkept_s, 1);
  MYOPS_SHARED(int64_t, total_s, 1);
  int& nkept = *nkept_s;
  int64_t& total = *total_s;
  if (threadIdx.x == 0) total = 0;
  for (int64_t tile = 0; tile < tiles; ++tile) {
    const int64_t base = tile * kTile;
    const int64_t m = n - base < kTile ? n - base : kTile;
    for (int64_t k = threadIdx.x; k < m; k += blockDim.x) own[k] = mask[(base + k) * tiles + tile];
    __syncthreads();
    if (threadIdx.x == 0) {
      uint64_t word = removed[tile];
      int c = 0;
      for (int k = 0; k < m; ++k) {
        if (!((word >> k) & 1)) {
          kept[c++] = base + k;
          word |= own[k];
          if (total < size) keep[total] = order[base + k];
          ++total;
        }
      }
      nkept = c;
    }
    __syncthreads();
    const int c = nkept;
    for (int64_t w = tile + 1 + threadIdx.x; w < tiles; w += blockDim.x) {
      uint64_t acc = removed[w];
      for (int k = 0; k < c; ++k) acc |= mask[kept[k] * tiles + w];
      removed[w] = acc;
    }
    __syncthreads();
  }
  const int64_t start = total < size ? total : size;
  for (int64_t r = start + threadIdx.x; r < size; r += blockDim.x) keep[r] = -1;
  if (threadIdx.x == 0) *count = total;
}

// Greedy NMS of (boxes, scores) on the device: keep [size] (padded with -1) and count (0-d),
// no host sync. `classes`, when defined, makes the sweep class-aware.
std::tuple<at::Tensor, at::Tensor> nms_device(const at::Tensor& boxes, const at::Tensor& scores,
                                              const at::Tensor& classes, double iou_threshold, int64_t size) {
  const auto lopts = boxes.options().dtype(at::kLong);
  const int64_t n = boxes.size(0);
  TORCH_CHECK(n <= kMaxBoxes, "myops.nms: at most ", kMaxBoxes, " boxes on CUDA, got ", n);
  const cudaStream_t stream = current_stream();
  at::Tensor keep = at::empty({size}, lopts);
  at::Tensor count = at::empty({}, lopts);
  if (n == 0) {
    keep.fill_(-1);
    count.zero_();
    return {keep, count};
  }
  const at::Tensor order = std::get<1>(scores.sort(/*stable=*/true, 0, /*descending=*/true));
  const at::Tensor sorted = boxes.index_select(0, order).contiguous();
  Classes cls;
  at::Tensor cls_sorted;
  if (classes.defined()) {
    cls_sorted = classes.index_select(0, order).contiguous();
    if (cls_sorted.scalar_type() == at::kDouble) {
      cls.d = cls_sorted.const_data_ptr<double>();
    } else {
      cls.i = cls_sorted.const_data_ptr<int64_t>();
    }
  }
  const int64_t tiles = (n + kTile - 1) / kTile;
  at::Tensor mask = at::empty({n * tiles}, lopts);
  at::Tensor removed = at::zeros({tiles}, lopts);
  uint64_t* m = reinterpret_cast<uint64_t*>(mask.data_ptr<int64_t>());
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(tiles));
  const float thr = static_cast<float>(iou_threshold);
  switch (sorted.scalar_type()) {
    case at::kHalf:
      MYOPS_LAUNCH(grid, kTile, stream, iou_mask_kernel<c10::Half>)(n, tiles, thr, sorted.const_data_ptr<c10::Half>(),
                                                                    cls, m);
      break;
    case at::kFloat:
      MYOPS_LAUNCH(grid, kTile, stream, iou_mask_kernel<float>)(n, tiles, thr, sorted.const_data_ptr<float>(), cls, m);
      break;
    default:
      MYOPS_LAUNCH(grid, kTile, stream, iou_mask_kernel<double>)(n, tiles, thr, sorted.const_data_ptr<double>(), cls,
                                                                 m);
      break;
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  MYOPS_LAUNCH_COOP(1, kSweepThreads, stream, sweep_kernel)(n, tiles, m, order.const_data_ptr<int64_t>(),
                                                            reinterpret_cast<uint64_t*>(removed.data_ptr<int64_t>()),
                                                            keep.data_ptr<int64_t>(), size, count.data_ptr<int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {keep, count};
}

void check_boxes_scores(const at::Tensor& boxes, const at::Tensor& scores, const char* op) {
  nms_common::check_boxes_scores(boxes, scores, op, /*cpu=*/false);
}

// The class keys of batched_nms's per-class path (see Classes).
at::Tensor class_keys(const at::Tensor& idxs) {
  return idxs.to(at::isFloatingType(idxs.scalar_type()) ? at::kDouble : at::kLong);
}

std::tuple<at::Tensor, at::Tensor> batched_device(const at::Tensor& boxes, const at::Tensor& scores,
                                                  const at::Tensor& idxs, double iou_threshold, int64_t size) {
  if (boxes.numel() > nms_common::vanilla_above(false)) {
    return nms_device(boxes, scores, class_keys(idxs), iou_threshold, size);
  }
  if (boxes.numel() == 0) return nms_device(boxes, scores, at::Tensor(), iou_threshold, size);
  return nms_device(nms_common::offset_boxes(boxes, idxs), scores, at::Tensor(), iou_threshold, size);
}

// The one host sync of nms / batched_nms: read the count, trim.
at::Tensor trim(const std::tuple<at::Tensor, at::Tensor>& r) {
  const at::Tensor& keep = std::get<0>(r);
  const at::Tensor& count = std::get<1>(r);
  return keep.narrow(0, 0, read_device_int64(count.const_data_ptr<int64_t>(), current_stream()));
}

at::Tensor nms_cuda(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold) {
  check_boxes_scores(boxes, scores, "nms");
  CudaGuard guard(boxes.device());
  return trim(nms_device(boxes, scores, at::Tensor(), iou_threshold, boxes.size(0)));
}

at::Tensor batched_nms_cuda(const at::Tensor& boxes, const at::Tensor& scores, const at::Tensor& idxs,
                            double iou_threshold) {
  check_boxes_scores(boxes, scores, "batched_nms");
  nms_common::check_idxs(boxes, idxs, "batched_nms");
  CudaGuard guard(boxes.device());
  return trim(batched_device(boxes, scores, idxs, iou_threshold, boxes.size(0)));
}

std::tuple<at::Tensor, at::Tensor> nms_static_cuda(const at::Tensor& boxes, const at::Tensor& scores,
                                                   double iou_threshold, int64_t size) {
  check_boxes_scores(boxes, scores, "nms_static");
  check_size(size, "nms_static");
  CudaGuard guard(boxes.device());
  return nms_device(boxes, scores, at::Tensor(), iou_threshold, size);
}

std::tuple<at::Tensor, at::Tensor> batched_nms_static_cuda(const at::Tensor& boxes, const at::Tensor& scores,
                                                           const at::Tensor& idxs, double iou_threshold, int64_t size) {
  check_boxes_scores(boxes, scores, "batched_nms_static");
  nms_common::check_idxs(boxes, idxs, "batched_nms_static");
  check_size(size, "batched_nms_static");
  CudaGuard guard(boxes.device());
  return batched_device(boxes, scores, idxs, iou_threshold, size);
}

}  // namespace
}  // namespace myops

MYOPS_CUDA_LIBRARY_IMPL(m) {
  m.impl("nms", &myops::nms_cuda);
  m.impl("batched_nms", &myops::batched_nms_cuda);
  m.impl("nms_static", &myops::nms_static_cuda);
  m.impl("batched_nms_static", &myops::batched_nms_static_cuda);
}

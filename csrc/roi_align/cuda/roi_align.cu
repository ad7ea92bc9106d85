// roi_align_levels on CUDA: RoI k pooled on features[levels[k]] with spatial_scale[levels[k]].
//
// One thread per output element (k, c, ph, pw) in a grid-stride loop. The arithmetic is
// torchvision's CUDA kernel's (roi_align/roi_align_common.h, with CUDA's fmax for the size clamp):
// per point val = w1*v1 + w2*v2 + w3*v3 + w4*v4 (an empty point: 0), acc += val, acc / count,
// written in the same expression order and compiled with nvcc's default contraction, as
// torchvision's kernel is, so that the same multiply-adds fuse.
//
// The level pointers, sizes and scales travel by value in one struct (at most kMaxLevels). No
// host sync: a level or batch index out of range is not checked on the host (the CPU kernel
// raises); its RoI's output is NaN and nothing outside the inputs is read. A RoI of level
// kNoLevel (-1) is padding: its output is 0 and its row of `rois` is not read.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "core/checks.h"
#include "core/op_math.h"  // OpMath: float for half, as torchvision's kernel computes max / ceil
#include "roi_align/roi_align_common.h"
#include "core/cuda/glue.h"
#include "core/cuda/launch.h"

namespace myops {
namespace {

using roi_align::kMaxLevels;
using roi_align::Point;

constexpr int kThreads = 256;

template <typename T>
struct Levels {
  const T* data[kMaxLevels];
  int height[kMaxLevels];
  int width[kMaxLevels];
  T scale[kMaxLevels];
  int64_t count;     // levels in use
  int64_t batch;     // N
  int64_t channels;  // C
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    roi_align_levels_kernel(int64_t total, Levels<T> lv, const T* rois, const int64_t* levels, int pooled_height,
                            int pooled_width, int sampling_ratio, bool aligned, T* out) {
  using Acc = typename OpMath<T>::type;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; index < total; index += step) {
    const int pw = static_cast<int>(index % pooled_width);
    const int ph = static_cast<int>((index / pooled_width) % pooled_height);
    const int64_t c = (index / pooled_width / pooled_height) % lv.channels;
    const int64_t k = index / pooled_width / pooled_height / lv.channels;
    const T* roi = rois + k * 5;
    const int64_t l = levels[k];
    if (l == roi_align::kNoLevel) {  // a padded RoI: 0, nothing read
      out[index] = static_cast<T>(0);
      continue;
    }
    if (!(l >= 0 && l < lv.count) || !roi_align::batch_index_ok(roi[0], lv.batch)) {
      out[index] = static_cast<T>(std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    const int height = lv.height[l], width = lv.width[l];
    const int64_t batch = static_cast<int>(roi[0]);
    const T* plane = lv.data[l] + (batch * lv.channels + c) * (int64_t(height) * width);
    const auto g = roi_align::geometry<T, Acc, /*kCudaMax=*/true>(roi, lv.scale[l], pooled_height, pooled_width,
                                                                  sampling_ratio, aligned);
    T acc = 0.;
    for (int iy = 0; iy < g.grid_h; iy++) {
      const T y = roi_align::sample(g.start_h, ph, g.bin_h, iy, g.grid_h);
      for (int ix = 0; ix < g.grid_w; ix++) {
        const T x = roi_align::sample(g.start_w, pw, g.bin_w, ix, g.grid_w);
        Point<T> p;
        T val = 0;
        if (roi_align::bilinear(height, width, y, x, p)) {
          const T v1 = plane[p.pos1], v2 = plane[p.pos2], v3 = plane[p.pos3], v4 = plane[p.pos4];
          val = (p.w1 * v1 + p.w2 * v2 + p.w3 * v3 + p.w4 * v4);
        }
        acc += val;
      }
    }
    acc /= g.count;
    out[index] = acc;
  }
}

int sm_count(int device) {
  int v = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
  return v;
}

template <typename T>
void launch(const std::vector<at::Tensor>& feats, at::ArrayRef<double> spatial_scale, const at::Tensor& rois,
            const at::Tensor& levels, int pooled_height, int pooled_width, int sampling_ratio, bool aligned,
            at::Tensor& out) {
  Levels<T> lv{};
  for (size_t l = 0; l < feats.size(); ++l) {
    lv.data[l] = feats[l].const_data_ptr<T>();
    lv.height[l] = static_cast<int>(feats[l].size(2));
    lv.width[l] = static_cast<int>(feats[l].size(3));
    lv.scale[l] = static_cast<T>(spatial_scale[l]);  // torchvision takes the scale as T
  }
  lv.count = static_cast<int64_t>(feats.size());
  lv.batch = feats[0].size(0);
  lv.channels = feats[0].size(1);
  const int64_t total = out.numel();
  const int device = out.device().index();
  const int64_t cap = int64_t(sm_count(device)) * (2048 / kThreads) * 8;
  const int64_t blocks = (total + kThreads - 1) / kThreads < cap ? (total + kThreads - 1) / kThreads : cap;
  MYOPS_LAUNCH(unsigned(blocks), kThreads, current_stream(), roi_align_levels_kernel<T>)(
      total, lv, rois.const_data_ptr<T>(), levels.const_data_ptr<int64_t>(), pooled_height, pooled_width,
      sampling_ratio, aligned, out.mutable_data_ptr<T>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor roi_align_levels_cuda(at::TensorList features, const at::Tensor& rois, const at::Tensor& levels,
                                 at::ArrayRef<double> spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                 int64_t sampling_ratio, bool aligned) {
  roi_align::check_inputs(features, rois, levels, spatial_scale, pooled_height, pooled_width, sampling_ratio);
  const at::Tensor& f0 = features[0];
  CudaGuard guard(f0.device());
  const int64_t K = rois.size(0), C = f0.size(1);
  at::Tensor out =
      at::empty({K, C, pooled_height, pooled_width}, f0.options().memory_format(at::MemoryFormat::Contiguous));
  if (out.numel() == 0) return out;
  const std::vector<at::Tensor> feats = roi_align::contiguous_features(features);
  const at::Tensor r = rois.contiguous();
  const at::Tensor lv = levels.contiguous();
  const int ph = static_cast<int>(pooled_height), pw = static_cast<int>(pooled_width);
  const int sr = sampling_ratio < 0 ? 0 : static_cast<int>(sampling_ratio);
  switch (f0.scalar_type()) {
    case at::kHalf:
      launch<c10::Half>(feats, spatial_scale, r, lv, ph, pw, sr, aligned, out);
      break;
    case at::kFloat:
      launch<float>(feats, spatial_scale, r, lv, ph, pw, sr, aligned, out);
      break;
    default:
      launch<double>(feats, spatial_scale, r, lv, ph, pw, sr, aligned, out);
      break;
  }
  return out;
}

}  // namespace
}  // namespace myops

MYOPS_CUDA_LIBRARY_IMPL(m) { m.impl("roi_align_levels", &myops::roi_align_levels_cuda); }

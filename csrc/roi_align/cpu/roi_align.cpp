// roi_align_levels on CPU: RoI k pooled on features[levels[k]] with spatial_scale[levels[k]],
// each RoI's result bit-identical to torchvision.ops.roi_align's CPU kernel on that one level
// (torchvision 0.29; half, float, double). The arithmetic is in roi_align/roi_align_common.h; the
// structure is torchvision's: per RoI the sampling points' positions and weights are computed
// once (an empty point: positions 0, weights 0, so it adds 0 * features[0]), then per channel
// and output element acc += w1*v1 + w2*v2 + w3*v3 + w4*v4 over the points in row order, and
// acc / count. No fused multiply-add: contraction is off for this file (below).
//
// Unlike torchvision: RoIs run in parallel (at::parallel_for), offsets are 64-bit, and a level
// or batch index out of range raises IndexError before anything is computed. A RoI of level
// kNoLevel (-1) is not read: its output is 0.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/checks.h"
#include "roi_align/roi_align_common.h"
#include "core/zeroed_output.h"

// torchvision's kernel rounds every product and sum on its own (x86-64's baseline has no FMA);
// a build with FMA enabled must not contract them. After the includes: it applies to this
// file's functions only.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace myops {
namespace {

using roi_align::Point;

template <typename T>
void pool(const std::vector<at::Tensor>& feats, const T* rois, const int64_t* levels,
          at::ArrayRef<double> spatial_scale, int64_t K, int64_t C, int PH, int PW, int sampling_ratio, bool aligned,
          bool zeroed, T* out) {
  using Acc = at::opmath_type<T>;
  const size_t L = feats.size();
  std::vector<const T*> data(L);
  std::vector<int> H(L), W(L);
  std::vector<T> scale(L);
  for (size_t l = 0; l < L; ++l) {
    data[l] = feats[l].const_data_ptr<T>();
    H[l] = static_cast<int>(feats[l].size(2));
    W[l] = static_cast<int>(feats[l].size(3));
    scale[l] = static_cast<T>(spatial_scale[l]);  // torchvision takes the scale as T
  }
  at::parallel_for(0, K, 1, [&](int64_t begin, int64_t end) {
    std::vector<Point<T>> points;
    for (int64_t k = begin; k < end; ++k) {
      const T* roi = rois + k * 5;
      const int64_t l = levels[k];
      if (l == roi_align::kNoLevel) {  // a padded RoI: zeros, no work
        if (!zeroed) std::fill_n(out + k * C * PH * PW, C * PH * PW, T(0));
        continue;
      }
      const int height = H[l], width = W[l];
      const auto g = roi_align::geometry<T, Acc, /*kCudaMax=*/false>(roi, scale[l], PH, PW, sampling_ratio, aligned);
      const int64_t batch = static_cast<int>(roi[0]);  // checked: in [0, N)
      points.resize(size_t(PH) * PW * g.grid_h * g.grid_w);
      size_t i = 0;
      for (int ph = 0; ph < PH; ++ph) {
        for (int pw = 0; pw < PW; ++pw) {
          for (int iy = 0; iy < g.grid_h; ++iy) {
            const T y = roi_align::sample(g.start_h, ph, g.bin_h, iy, g.grid_h);
            for (int ix = 0; ix < g.grid_w; ++ix) {
              const T x = roi_align::sample(g.start_w, pw, g.bin_w, ix, g.grid_w);
              Point<T>& p = points[i++];
              if (!roi_align::bilinear(height, width, y, x, p)) {
                p.pos1 = p.pos2 = p.pos3 = p.pos4 = 0;
                p.w1 = p.w2 = p.w3 = p.w4 = T(0);
              }
            }
          }
        }
      }
      const int64_t plane = int64_t(height) * width;
      for (int64_t c = 0; c < C; ++c) {
        const T* v = data[l] + (batch * C + c) * plane;
        T* o = out + (k * C + c) * PH * PW;
        const Point<T>* p = points.data();
        for (int ph = 0; ph < PH; ++ph) {
          for (int pw = 0; pw < PW; ++pw) {
            T acc = 0.;
            for (int iy = 0; iy < g.grid_h; ++iy) {
              for (int ix = 0; ix < g.grid_w; ++ix, ++p) {
                acc += p->w1 * v[p->pos1] + p->w2 * v[p->pos2] + p->w3 * v[p->pos3] + p->w4 * v[p->pos4];
              }
            }
            acc /= g.count;
            o[ph * PW + pw] = acc;
          }
        }
      }
    }
  });
}

// The data checks: every level in [0, L) or kNoLevel, every batch index of a RoI with a level
// in [0, N). Returns whether some RoI is padding (kNoLevel).
template <typename T>
bool check_indices(const T* rois, const int64_t* levels, int64_t K, int64_t L, int64_t N) {
  bool padding = false;
  for (int64_t k = 0; k < K; ++k) {
    if (levels[k] == roi_align::kNoLevel) {
      padding = true;
      continue;
    }
    TORCH_CHECK_INDEX(levels[k] >= 0 && levels[k] < L, "myops.roi_align_levels: levels[", k, "] = ", levels[k],
                      " is out of range for ", L, " feature maps");
    const T b = rois[k * 5];
    TORCH_CHECK_INDEX(roi_align::batch_index_ok(b, N), "myops.roi_align_levels: rois[", k,
                      ", 0] = ", static_cast<double>(b), " is not a batch index of the ", N, " images");
  }
  return padding;
}

at::Tensor roi_align_levels_cpu(at::TensorList features, const at::Tensor& rois, const at::Tensor& levels,
                                at::ArrayRef<double> spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                int64_t sampling_ratio, bool aligned) {
  roi_align::check_inputs(features, rois, levels, spatial_scale, pooled_height, pooled_width, sampling_ratio);
  const at::Tensor& f0 = features[0];
  const int64_t K = rois.size(0), N = f0.size(0), C = f0.size(1);
  const at::Tensor r = rois.contiguous();
  const at::Tensor lv = levels.contiguous();
  bool padding = false;
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(f0.scalar_type(), "roi_align_levels", [&] {
    padding = check_indices(r.const_data_ptr<scalar_t>(), lv.const_data_ptr<int64_t>(), K,
                            static_cast<int64_t>(features.size()), N);
  });
  bool zeroed = false;
  at::Tensor out = zeroed_output({K, C, pooled_height, pooled_width}, f0.options(), padding, &zeroed);
  if (out.numel() == 0) return out;
  const std::vector<at::Tensor> feats = roi_align::contiguous_features(features);
  const int sr = sampling_ratio < 0 ? 0 : static_cast<int>(sampling_ratio);
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(f0.scalar_type(), "roi_align_levels", [&] {
    pool<scalar_t>(feats, r.const_data_ptr<scalar_t>(), lv.const_data_ptr<int64_t>(), spatial_scale, K, C,
                   static_cast<int>(pooled_height), static_cast<int>(pooled_width), sr, aligned, zeroed,
                   out.mutable_data_ptr<scalar_t>());
  });
  return out;
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("roi_align_levels", &myops::roi_align_levels_cpu); }

// heatmaps_to_keypoints / paste_masks on the CPU (detection/detection_decode.h): torchvision's
// per-detection loops over the real rows only, each row's resampling the very call torchvision
// makes (at::upsample_bicubic2d / at::upsample_bilinear2d to that row's own size, so the same
// bits), one row's resampled map at a time per thread (freed before the next), rows in parallel.
// The padding rows are not read: keypoints and scores 0, and a pasted mask's padding costs
// nothing (core/zeroed_output.h).
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/upsample_bicubic2d.h>
#include <ATen/ops/upsample_bilinear2d.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "detection/bounded_layers.h"
#include "detection/detection_decode.h"
#include "core/zeroed_output.h"

// torchvision's float32 position arithmetic rounds each product and sum on its own.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace myops {
namespace {

template <typename T>
void keypoints_rows(const at::Tensor& maps, const T* rois, int64_t real, float* xy, float* scores) {
  const int64_t K = maps.size(1);
  at::parallel_for(0, real, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* roi = rois + r * 4;
      const T width = decode::roi_extent(roi[0], roi[2]), height = decode::roi_extent(roi[1], roi[3]);
      // torchvision's int() of the size raises on a NaN or an infinite box
      TORCH_CHECK_VALUE(std::isfinite(width) && std::isfinite(height), "myops.heatmaps_to_keypoints: rois[", r, "] = (",
                        roi[0], ", ", roi[1], ", ", roi[2], ", ", roi[3], ") is not a finite box");
      const int64_t w = static_cast<int64_t>(std::ceil(width)), h = static_cast<int64_t>(std::ceil(height));
      // torchvision: F.interpolate(maps[r][:, None], size=(h, w), mode="bicubic", align_corners=False)
      const at::Tensor map = at::upsample_bicubic2d(maps.select(0, r).unsqueeze(1), {h, w}, false).contiguous();
      const T* v = map.const_data_ptr<T>();
      for (int64_t k = 0; k < K; ++k) {
        const T* plane = v + k * h * w;
        int64_t best_i = 0;
        T best = plane[0];
        for (int64_t i = 1; i < h * w && best == best; ++i) {
          if (decode::beats(plane[i], i, best, best_i)) {
            best = plane[i];
            best_i = i;
          }
        }
        const int64_t x_int = best_i % w, y_int = best_i / w;
        float* p = xy + (r * K + k) * 3;
        p[0] = decode::keypoint_coord(x_int, width, w, roi[0]);
        p[1] = decode::keypoint_coord(y_int, height, h, roi[1]);
        p[2] = 1.f;
        scores[r * K + k] = static_cast<float>(best);
      }
    }
  });
}

std::tuple<at::Tensor, at::Tensor> heatmaps_to_keypoints_cpu(const at::Tensor& maps, const at::Tensor& rois,
                                                             const at::Tensor& count) {
  decode::check_keypoints(maps, rois, count);
  const int64_t R = maps.size(0), K = maps.size(1);
  const auto f32 = maps.options().dtype(at::kFloat);
  at::Tensor xy = at::zeros({R, K, 3}, f32);
  at::Tensor scores = at::zeros({R, K}, f32);
  const int64_t real = bounded::read_count(count, R);
  if (real == 0 || K == 0) return {xy, scores};
  const at::Tensor m = maps.contiguous();
  const at::Tensor r = rois.contiguous();
  AT_DISPATCH_FLOATING_TYPES(maps.scalar_type(), "heatmaps_to_keypoints", [&] {
    keypoints_rows<scalar_t>(m, r.const_data_ptr<scalar_t>(), real, xy.mutable_data_ptr<float>(),
                             scores.mutable_data_ptr<float>());
  });
  return {xy, scores};
}

// Row d of image n pasted: torchvision's paste_mask_in_image (the mask resized to the box's
// integer size, the part inside the image copied in place).
template <typename T>
void paste_row(const at::Tensor& mask, const int64_t* box, int64_t im_h, int64_t im_w, int64_t W, T* out) {
  const int64_t w = std::max<int64_t>(box[2] - box[0] + 1, 1), h = std::max<int64_t>(box[3] - box[1] + 1, 1);
  const int64_t x0 = std::max<int64_t>(box[0], 0), x1 = std::min<int64_t>(box[2] + 1, im_w);
  const int64_t y0 = std::max<int64_t>(box[1], 0), y1 = std::min<int64_t>(box[3] + 1, im_h);
  if (x0 >= x1 || y0 >= y1) return;
  const at::Tensor resized = at::upsample_bilinear2d(mask.unsqueeze(0).unsqueeze(0), {h, w}, false).contiguous();
  const T* src = resized.const_data_ptr<T>();
  for (int64_t y = y0; y < y1; ++y) {
    std::copy_n(src + (y - box[1]) * w + (x0 - box[0]), x1 - x0, out + y * W + x0);
  }
}

at::Tensor paste_masks_cpu(const at::Tensor& masks, const at::Tensor& boxes, const at::Tensor& count,
                           at::IntArrayRef image_size) {
  decode::check_paste(masks, boxes, count, image_size);
  const int64_t N = masks.size(0), D = masks.size(1);
  const auto [H, W] = decode::canvas(image_size);
  const at::Tensor c = count.contiguous();
  const int64_t* counts = c.const_data_ptr<int64_t>();
  std::vector<int64_t> real(N);
  for (int64_t n = 0; n < N; ++n) real[n] = std::clamp<int64_t>(counts[n], 0, D);
  // mostly zeros whatever the count (the pixels outside each box): fresh zeroed pages
  bool zeroed = false;
  at::Tensor out = zeroed_output({N, D, H, W}, masks.options(), /*padding=*/true, &zeroed);
  if (!zeroed) out.zero_();
  if (out.numel() == 0) return out;
  const at::Tensor m = masks.contiguous();
  const at::Tensor b = boxes.contiguous();
  const int64_t* bx = b.const_data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_TYPES(masks.scalar_type(), "paste_masks", [&] {
    scalar_t* o = out.mutable_data_ptr<scalar_t>();
    at::parallel_for(0, N * D, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = i / D, d = i % D;
        if (d >= real[n]) continue;
        paste_row<scalar_t>(m.select(0, n).select(0, d), bx + i * 4, image_size[2 * n], image_size[2 * n + 1], W,
                            o + i * H * W);
      }
    });
  });
  return out;
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("heatmaps_to_keypoints", &myops::heatmaps_to_keypoints_cpu);
  m.impl("paste_masks", &myops::paste_masks_cpu);
}

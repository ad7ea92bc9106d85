#pragma once
// roi_align_levels, shared by the CPU kernel (roi_align/cpu/roi_align.cpp) and the CUDA kernel
// (roi_align/cuda/roi_align.cu): the input checks, and the per-RoI geometry and per-point bilinear
// weights of torchvision's RoIAlign, written as torchvision's kernels write them (the same
// operations, in the same types, in the same order) so that each device's result is its
// torchvision kernel's, bit for bit:
//   start = roi * scale - offset (offset 0.5 if aligned), size = end - start (at least 1 unless
//   aligned), bin = size / pooled, grid = sampling_ratio if > 0 else ceil(size / pooled);
//   sample y = start_h + ph * bin_h + (T)(iy + .5f) * bin_h / (T)grid_h (likewise x);
//   a point outside [-1, H] x [-1, W] (or NaN) is empty; else clamped at 0, low = (int)y, the
//   last row/column clamps, ly = y - low, hy = 1 - ly, w1 = hy*hx, w2 = hy*lx, w3 = ly*hx,
//   w4 = ly*lx.
// The two devices differ where torchvision's kernels differ: the CPU clamps the RoI size with
// std::max (a NaN size stays NaN), CUDA with fmax (a NaN size becomes 1).
// Light header: usable from .cpp and .cu files.
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/checks.h"
#include "core/macros.h"  // MYOPS_HD

namespace myops {
namespace roi_align {

// The level of a RoI that is padding (e.g. past the real RoIs of a static-shape batch): the
// RoI is not read and its output is 0, on both devices.
constexpr int64_t kNoLevel = -1;

// Levels one call takes (the CUDA kernel gets their pointers and sizes in one struct by value).
constexpr int64_t kMaxLevels = 8;

// The feature maps as the kernels read them: contiguous NCHW.
inline std::vector<at::Tensor> contiguous_features(at::TensorList features) {
  std::vector<at::Tensor> out;
  out.reserve(features.size());
  for (const at::Tensor& f : features) out.push_back(f.contiguous());
  return out;
}

// Checks every argument that does not need the data (the CPU kernel checks the batch indices
// and levels too; on CUDA that would need a host sync). Message: "myops.roi_align_levels: ...".
// Reads TensorInfo (core/checks.h): the fake kernel runs these checks through the control op
// myops::_roi_align_levels_meta (csrc/roi_align/schema.cpp).
inline void check_inputs(c10::ArrayRef<TensorInfo> features, const TensorInfo& rois, const TensorInfo& levels,
                         at::ArrayRef<double> spatial_scale, int64_t pooled_height, int64_t pooled_width,
                         int64_t sampling_ratio) {
  constexpr const char* op = "roi_align_levels";
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  const int64_t L = static_cast<int64_t>(features.size());
  TORCH_CHECK_VALUE(L >= 1 && L <= kMaxLevels, "myops.", op, ": argument 'features' must hold 1 to ", kMaxLevels,
                    " feature maps, got ", L);
  TORCH_CHECK_VALUE(static_cast<int64_t>(spatial_scale.size()) == L, "myops.", op,
                    ": argument 'spatial_scale' must have one scale per feature map (", L, "), got ",
                    spatial_scale.size());
  TORCH_CHECK_VALUE(pooled_height >= 0 && pooled_width >= 0, "myops.", op,
                    ": arguments 'pooled_height' and 'pooled_width' must be >= 0, got ", pooled_height, " and ",
                    pooled_width);
  TORCH_CHECK_VALUE(pooled_height <= kIntMax && pooled_width <= kIntMax && sampling_ratio <= kIntMax, "myops.", op,
                    ": pooled_height, pooled_width and sampling_ratio must be below 2^31");
  const TensorInfo& f0 = features[0];
  for (int64_t l = 0; l < L; ++l) {
    const TensorInfo& f = features[l];
    TORCH_CHECK_VALUE(f.dim() == 4, "myops.", op, ": argument 'features' must hold 4-D [N, C, H, W] tensors, got ",
                      f.dim(), "-D at level ", l);
    MYOPS_SYM_CHECK_VALUE(f.size(0).sym_eq(f0.size(0)) & f.size(1).sym_eq(f0.size(1)), "myops.", op,
                          ": the feature maps must have the same N and C, got ", f0.sizes, " at level 0 and ", f.sizes,
                          " at level ", l);
    MYOPS_SYM_CHECK_VALUE(f.size(2).sym_le(kIntMax) & f.size(3).sym_le(kIntMax), "myops.", op,
                          ": a feature map's height and width must be below 2^31, got ", f.sizes, " at level ", l);
    TORCH_CHECK(f.dtype == f0.dtype, "myops.", op, ": the feature maps must have one dtype, got ", f0.dtype,
                " at level 0 and ", f.dtype, " at level ", l);
    TORCH_CHECK(f.device == f0.device, "myops.", op, ": the feature maps must be on one device, got ", f0.device,
                " at level 0 and ", f.device, " at level ", l);
  }
  check_dtype(f0.dtype, {at::kHalf, at::kFloat, at::kDouble}, op, "features");
  MYOPS_SYM_CHECK_VALUE(rois.dim() == 2 ? rois.size(1).sym_eq(5) : c10::SymBool(false), "myops.", op,
                        ": argument 'rois' must be a [K, 5] tensor (batch index, x1, y1, x2, y2), got shape ",
                        rois.sizes);
  TORCH_CHECK(rois.dtype == f0.dtype, "myops.", op, ": argument 'rois' must have the features' dtype ", f0.dtype,
              ", got ", rois.dtype);
  check_same_device(f0, "features", rois, "rois", op);
  MYOPS_SYM_CHECK_VALUE(levels.dim() == 1 ? levels.size(0).sym_eq(rois.size(0)) : c10::SymBool(false), "myops.", op,
                        ": argument 'levels' must be a 1-D tensor of ", rois.size(0),
                        " levels (one per RoI), got shape ", levels.sizes);
  TORCH_CHECK(levels.dtype == at::kLong, "myops.", op, ": argument 'levels' must have dtype int64, got ", levels.dtype);
  check_same_device(f0, "features", levels, "levels", op);
}
inline void check_inputs(at::TensorList features, const at::Tensor& rois, const at::Tensor& levels,
                         at::ArrayRef<double> spatial_scale, int64_t pooled_height, int64_t pooled_width,
                         int64_t sampling_ratio) {
  const std::vector<TensorInfo> infos(features.begin(), features.end());
  check_inputs(infos, rois, levels, spatial_scale, pooled_height, pooled_width, sampling_ratio);
}

// A batch index (the RoI's first column) that torchvision's (int) conversion maps into [0, n).
template <typename T>
MYOPS_HD bool batch_index_ok(T b, int64_t n) {
  const double v = static_cast<double>(b);
  return v > -1.0 && v < static_cast<double>(n);
}

// torchvision's adaptive grid, (int)ceil(size / pooled), where it is a real loop count. Past
// int's range (a NaN, infinite or huge RoI) the CPU kernel's conversion gives INT_MIN on x86, so
// no point and a zero output: 0 here, on both devices (torchvision's CUDA kernel would saturate
// to INT_MAX and loop for hours).
template <typename Acc>
MYOPS_HD int adaptive_grid(Acc v) {
  const Acc c = ::ceil(v);
  return c >= Acc(1) && c < Acc(2147483648.0) ? static_cast<int>(c) : 0;
}

// Everything about one RoI that its output elements share.
template <typename T>
struct Geometry {
  T start_h, start_w, bin_h, bin_w;
  int grid_h, grid_w;
  T count;
};

// kCudaMax: clamp the size as torchvision's CUDA kernel does (fmax), else as its CPU kernel.
template <typename T, typename Acc, bool kCudaMax>
MYOPS_HD Geometry<T> geometry(const T* roi, T spatial_scale, int pooled_height, int pooled_width, int sampling_ratio,
                              bool aligned) {
  Geometry<T> g;
  T offset = aligned ? (T)0.5 : (T)0.0;
  T start_w = roi[1] * spatial_scale - offset;
  T start_h = roi[2] * spatial_scale - offset;
  T end_w = roi[3] * spatial_scale - offset;
  T end_h = roi[4] * spatial_scale - offset;
  T width = end_w - start_w;
  T height = end_h - start_h;
  if (!aligned) {  // malformed RoIs count as 1x1
    if constexpr (kCudaMax) {
      width = static_cast<T>(::fmax(static_cast<Acc>(width), static_cast<Acc>((T)1.)));
      height = static_cast<T>(::fmax(static_cast<Acc>(height), static_cast<Acc>((T)1.)));
    } else {
      width = width < (T)1. ? (T)1. : width;  // std::max(width, 1)
      height = height < (T)1. ? (T)1. : height;
    }
  }
  g.start_h = start_h;
  g.start_w = start_w;
  g.bin_h = static_cast<T>(height) / static_cast<T>(pooled_height);
  g.bin_w = static_cast<T>(width) / static_cast<T>(pooled_width);
  g.grid_h = sampling_ratio > 0 ? sampling_ratio : adaptive_grid(static_cast<Acc>(height / pooled_height));
  g.grid_w = sampling_ratio > 0 ? sampling_ratio : adaptive_grid(static_cast<Acc>(width / pooled_width));
  const int64_t n = int64_t(g.grid_h) * g.grid_w;
  g.count = static_cast<T>(n > 1 ? n : 1);
  return g;
}

// Sample row y of bin row ph (or column x of bin column pw: the same formula).
template <typename T>
MYOPS_HD T sample(T start, int p, T bin, int i, int grid) {
  return start + p * bin + static_cast<T>(i + .5f) * bin / static_cast<T>(grid);
}

// One sampling point's four in-plane positions and weights; false for an empty point.
template <typename T>
struct Point {
  int64_t pos1, pos2, pos3, pos4;
  T w1, w2, w3, w4;
};

template <typename T>
MYOPS_HD bool bilinear(int height, int width, T y, T x, Point<T>& p) {
  // !(inside) rather than (outside): a NaN coordinate is empty
  if (!(y >= -1.0 && y <= height && x >= -1.0 && x <= width)) return false;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  int y_low = (int)y;
  int x_low = (int)x;
  int y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = (T)y_low;
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = (T)x_low;
  } else {
    x_high = x_low + 1;
  }
  T ly = y - y_low;
  T lx = x - x_low;
  T hy = 1. - ly, hx = 1. - lx;
  p.w1 = hy * hx;
  p.w2 = hy * lx;
  p.w3 = ly * hx;
  p.w4 = ly * lx;
  p.pos1 = int64_t(y_low) * width + x_low;
  p.pos2 = int64_t(y_low) * width + x_high;
  p.pos3 = int64_t(y_high) * width + x_low;
  p.pos4 = int64_t(y_high) * width + x_high;
  return true;
}

}  // namespace roi_align
}  // namespace myops

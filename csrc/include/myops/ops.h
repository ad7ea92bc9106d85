// The myops C++ API: one typed function per op.
//
// Each function calls the registered op `myops::<name>` through the PyTorch dispatcher (a typed
// handle looked up once), exactly as `torch.ops.myops.<name>` does from Python: the CPU or CUDA
// kernel is chosen by the inputs' device, autograd records the backward when an input requires
// a gradient, and dispatch modes / tracing see the op. Nothing here needs Python.
//
// Link the CMake target myops::myops (libmyops.so):
//   find_package(myops CONFIG REQUIRED)        # with CMAKE_PREFIX_PATH from myops.cmake_prefix_path
//   target_link_libraries(app PRIVATE myops::myops)
// Loading libmyops.so registers every op, so a program that only runs a TorchScript or
// AOTInductor model using myops needs to link it and call nothing.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/string_view.h>

#include <cstdint>
#include <optional>
#include <tuple>

// Linux only (as the package): the functions are exported whatever -fvisibility the caller uses.
#define MYOPS_API __attribute__((visibility("default")))

namespace myops {

using at::Tensor;

// ---- nonzero family ----------------------------------------------------------------------

// == torch::nonzero(self): int64 [nnz, self.dim()], torch's values and strides.
MYOPS_API Tensor nonzero(const Tensor& self);
// == torch::nonzero_static(self, size, fill_value): int64 [size, self.dim()], no host sync on CUDA.
MYOPS_API Tensor nonzero_static(const Tensor& self, int64_t size, int64_t fill_value = -1);

// ---- bounded selection: static shapes, the true count as a 0-d int64 device tensor ---------

// (indices [size, self.dim()], count): the first min(count, size) rows of nonzero(self), the
// rest fill_value; count = the true number of nonzeros. No host sync on CUDA.
MYOPS_API std::tuple<Tensor, Tensor> nonzero_bounded(const Tensor& self, int64_t size, int64_t fill_value = -1);
// (values [size], count): the first min(count, size) elements of self.masked_select(mask).
MYOPS_API std::tuple<Tensor, Tensor> masked_select_bounded(const Tensor& self, const Tensor& mask, int64_t size,
                                                           const c10::Scalar& fill_value = 0);
// (rows [size, ...], count): the first min(count, size) rows of self[mask] (mask 1-D bool over dim 0).
MYOPS_API std::tuple<Tensor, Tensor> mask_rows_bounded(const Tensor& self, const Tensor& mask, int64_t size,
                                                       const c10::Scalar& fill_value = 0);

// ---- non-maximum suppression ---------------------------------------------------------------

// == torchvision::ops::nms / batched_nms: kept indices (int64) in decreasing score order.
MYOPS_API Tensor nms(const Tensor& boxes, const Tensor& scores, double iou_threshold);
MYOPS_API Tensor batched_nms(const Tensor& boxes, const Tensor& scores, const Tensor& idxs, double iou_threshold);
// (keep [size] padded with -1, count): the first size survivors and their true number. No sync.
MYOPS_API std::tuple<Tensor, Tensor> nms_static(const Tensor& boxes, const Tensor& scores, double iou_threshold,
                                                int64_t size);
MYOPS_API std::tuple<Tensor, Tensor> batched_nms_static(const Tensor& boxes, const Tensor& scores, const Tensor& idxs,
                                                        double iou_threshold, int64_t size);

// A detector's post-processing (score filter, optional pre-NMS top-k, per-class or
// class-agnostic NMS, top-K) padded to K = max_detections: (num_detections [N], boxes [N, K, 4],
// scores [N, K], classes [N, K], anchors [N, K]); boxes [N, A, 4] or [N, A, C, 4], scores
// [N, A, C]. Padding: boxes and scores 0, classes and anchors -1. No host sync on CUDA.
MYOPS_API std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> multiclass_nms_static(
    const Tensor& boxes, const Tensor& scores, double score_threshold, double iou_threshold, int64_t max_detections,
    std::optional<int64_t> pre_nms_top_k = std::nullopt, bool class_agnostic = false, bool multi_label = true);

// ---- multi-level RoIAlign ------------------------------------------------------------------

// [K, C, pooled_height, pooled_width]: RoI k (rois [K, 5]: batch index, x1, y1, x2, y2, the
// features' dtype) pooled on features[levels[k]] (levels int64 [K]) with
// spatial_scale[levels[k]], equal to torchvision::ops::roi_align on that level (on the CPU bit
// for bit). 1 to 8 feature maps [N, C, H_l, W_l]. A level of -1 marks a padded RoI: its row of
// rois is not read and its output is 0. Inference only: no gradient.
MYOPS_API Tensor roi_align_levels(at::TensorList features, const Tensor& rois, const Tensor& levels,
                                  at::ArrayRef<double> spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                  int64_t sampling_ratio = -1, bool aligned = false);

// ---- layers over the first `count` rows (inference only: no gradient) ----------------------

// [R, N]: rows [0, count) are torch::nn::functional::linear(input[:count], weight, bias) (the
// same call, the same bits on the CPU), the rows at or past count 0. input [R, K]; count a 0-d
// int64 tensor on input's device (clamped to [0, R]). No host sync on CUDA. Contiguous.
MYOPS_API Tensor linear_bounded(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                                const Tensor& count);
// at::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups) over the rows (dim 0) of input [R, C, *spatial] in the same way: rows [0, count) are
// the convolution of input[:count], the rest 0.
MYOPS_API Tensor conv_bounded(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                              at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                              bool transposed, at::IntArrayRef output_padding, int64_t groups, const Tensor& count);

// ---- per-detection decoding over the real rows (inference only: no gradient) ---------------

// torchvision's roi_heads.heatmaps_to_keypoints on the first `count` RoIs (0-d int64 on maps'
// device, clamped to [0, R]): maps [R, K, H, W] (float, double), rois [R, 4] (x1, y1, x2, y2, the
// maps' dtype) -> keypoints [R, K, 3] (x, y, 1) and scores [R, K], float32, the rows at or past
// count 0 (not read). On the CPU bit for bit. No host sync on CUDA.
MYOPS_API std::tuple<Tensor, Tensor> heatmaps_to_keypoints(const Tensor& maps, const Tensor& rois, const Tensor& count);
// torchvision's paste_mask_in_image for each image n's first count[n] rows: masks [N, D, S, S']
// (already padded; float, double), boxes int64 [N, D, 4] (expanded integer boxes), count int64
// [N], image_size {h0, w0, h1, w1, ...} -> [N, D, H, W] on a canvas of the largest image, every
// other pixel 0. On the CPU bit for bit; no host sync on CUDA.
MYOPS_API Tensor paste_masks(const Tensor& masks, const Tensor& boxes, const Tensor& count, at::IntArrayRef image_size);

// ---- elementwise ---------------------------------------------------------------------------
// One function per line of the op table (myops/op_table.h: the list of ops, each with its
// schema, its C++ signature that of its SIG in myops/op_signatures.h), each equal to the torch
// function of the same name on the same arguments:
//   unary      relu, gelu (approximate: "none" or "tanh"), silu, sigmoid, cast (self.to(dtype), a
//              new tensor)
//   numbers    the Scalar overloads, torch's promotion for a Python number: add_scalar /
//              sub_scalar (alpha), mul_scalar, div_scalar (tensor op number), add_scalar_self ...
//              div_scalar_self (number op tensor), where_scalar_self / where_scalar_other /
//              where_scalar. mul_scalar is mul.Scalar (it was the op myops::mul_scalar, which
//              remains as an alias)
//   binary     add / sub (alpha), mul, div, maximum, minimum (broadcasting, type promotion)
//   ternary    where(condition, self, other), addcmul (value), clamp with tensor bounds, and
//              clamp with number bounds (at least one given; the gradient is torch's for number
//              bounds: self only)
// The declarations, written out: myops/ops_elementwise.h (included at the end of this file).

// ---- max_pool2d_add ----------------------------------------------------------------------

// == torch::max_pool2d(self, kernel_size, stride, padding, /*dilation=*/1, ceil_mode) + other,
// in one pass.
MYOPS_API Tensor max_pool2d_add(const Tensor& self, const Tensor& other, at::IntArrayRef kernel_size = {3, 3},
                                at::IntArrayRef stride = {2, 2}, at::IntArrayRef padding = {1, 1},
                                bool ceil_mode = false);

// ---- diagonal ----------------------------------------------------------------------------

// == torch::diagonal(self, offset, dim1, dim2) as a new contiguous tensor.
MYOPS_API Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);

}  // namespace myops

#include "myops/ops_elementwise.h"

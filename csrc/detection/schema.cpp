// The detection family's schemas (core/schema.h): the per-detection decoders and the layers over
// the first `count` rows, and their shape rules for the fake kernels.
#include "core/schema.h"
#include "detection/bounded_layers.h"
#include "detection/detection_decode.h"

namespace myops {
namespace {

// linear_bounded / conv_bounded: the ops' own checks (the layer's are torch's).
void bounded_meta(c10::string_view op, MYOPS_INFO_ARGS(input), MYOPS_INFO_ARGS(count)) {
  if (op == bounded::Linear::name) {
    bounded::Linear::check(MYOPS_INFO(input), MYOPS_INFO(count));
  } else {
    TORCH_CHECK(op == bounded::Conv::name, "myops._bounded_meta: unknown op ", op);
    bounded::Conv::check(MYOPS_INFO(input), MYOPS_INFO(count));
  }
}

// heatmaps_to_keypoints (input = maps, other = rois) / paste_masks (input = masks, other = boxes,
// image_size).
void detection_decode_meta(c10::string_view op, MYOPS_INFO_ARGS(input), MYOPS_INFO_ARGS(other), MYOPS_INFO_ARGS(count),
                           c10::IntArrayRef image_size) {
  if (op == "heatmaps_to_keypoints") {
    decode::check_keypoints(MYOPS_INFO(input), MYOPS_INFO(other), MYOPS_INFO(count));
  } else {
    TORCH_CHECK(op == "paste_masks", "myops._detection_decode_meta: unknown op ", op);
    decode::check_paste(MYOPS_INFO(input), MYOPS_INFO(other), MYOPS_INFO(count), image_size);
  }
}

}  // namespace
}  // namespace myops

MYOPS_SCHEMAS(m) {
  // ---- per-detection decoding over the real rows (torchvision's loops, inference only) ------
  // heatmaps_to_keypoints: maps [R, K, H, W] (float, double), rois [R, 4] (x1, y1, x2, y2, the
  // maps' dtype), count 0-d int64 on the maps' device (clamped to [0, R]) -> keypoints
  // [R, K, 3] (x, y, 1) and scores [R, K], float32: rows < count ==
  // torchvision.models.detection.roi_heads.heatmaps_to_keypoints(maps[:count], rois[:count]),
  // the rest 0.
  m.def("heatmaps_to_keypoints(Tensor maps, Tensor rois, Tensor count) -> (Tensor, Tensor)");
  // paste_masks: masks [N, D, S, S'] (already padded: float, double), boxes int64 [N, D, 4] (the
  // expanded integer boxes), count int64 [N], image_size [h0, w0, h1, w1, ...] -> [N, D, H, W]
  // (H, W: the largest image), row d < count[n] == torchvision's paste_mask_in_image(masks[n, d],
  // boxes[n, d], h_n, w_n) at the top left of the canvas, every other pixel 0.
  m.def("paste_masks(Tensor masks, Tensor boxes, Tensor count, int[] image_size) -> Tensor");

  // ---- layers over the first `count` rows (inference only) ---------------------------------
  // out[:count] = the layer on input[:count] (rows = dim 0), the rows at or past count 0;
  // count: 0-d int64 on the input's device, clamped to [0, R]; out is contiguous.
  // linear_bounded: input [R, K], == F.linear(input[:count], weight, bias).
  m.def("linear_bounded(Tensor input, Tensor weight, Tensor? bias, Tensor count) -> Tensor");
  // conv_bounded: input [R, C, *spatial], == aten::convolution(input[:count], ...) (Conv1d/2d/3d,
  // ConvTranspose*d).
  m.def(
      "conv_bounded(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
      "bool transposed, int[] output_padding, int groups, Tensor count) -> Tensor");

  MYOPS_CONTROL_DEF(m, "_bounded_meta(str op, " MYOPS_INFO_SCHEMA("input") ", " MYOPS_INFO_SCHEMA("count") ") -> ()",
                    myops::bounded_meta);
  MYOPS_CONTROL_DEF(m,
                    "_detection_decode_meta(str op, " MYOPS_INFO_SCHEMA("input") ", " MYOPS_INFO_SCHEMA(
                        "other") ", " MYOPS_INFO_SCHEMA("count") ", int[] image_size) -> ()",
                    myops::detection_decode_meta);
}

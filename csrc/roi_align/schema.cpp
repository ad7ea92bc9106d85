// The roi_align family's schemas (core/schema.h): multi-level RoIAlign and its shape rule for the
// fake kernels.
#include <vector>

#include "core/schema.h"
#include "roi_align/roi_align_common.h"

namespace myops {
namespace {

// roi_align_levels: feature map l has features_ranks[l] dims, its sizes the next entries of
// `features_sizes` (its strides are not read).
void roi_align_levels_meta(c10::SymIntArrayRef features_sizes, c10::IntArrayRef features_ranks,
                           std::vector<at::ScalarType> features_dtypes, std::vector<c10::Device> features_devices,
                           MYOPS_INFO_ARGS(rois), MYOPS_INFO_ARGS(levels), c10::ArrayRef<double> spatial_scale,
                           int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio) {
  TORCH_CHECK(features_ranks.size() == features_dtypes.size() && features_ranks.size() == features_devices.size(),
              "myops._roi_align_levels_meta: one rank, dtype and device per feature map");
  std::vector<TensorInfo> features;
  size_t at = 0;
  for (size_t l = 0; l < features_ranks.size(); ++l) {
    const auto r = static_cast<size_t>(features_ranks[l]);
    TORCH_CHECK(at + r <= features_sizes.size(), "myops._roi_align_levels_meta: 'features_ranks' ", features_ranks,
                " do not fit ", features_sizes.size(), " sizes");
    features.emplace_back(features_sizes.slice(at, r), c10::SymIntArrayRef(), features_dtypes[l], features_devices[l]);
    at += r;
  }
  roi_align::check_inputs(features, MYOPS_INFO(rois), MYOPS_INFO(levels), spatial_scale, pooled_height, pooled_width,
                          sampling_ratio);
}

}  // namespace
}  // namespace myops

MYOPS_SCHEMAS(m) {
  // (== torchvision.ops.roi_align per RoI, inference only)
  // out [K, C, pooled_height, pooled_width]: RoI k (rois[k] = batch index, x1, y1, x2, y2)
  // pooled on features[levels[k]] with spatial_scale[levels[k]]; features: 1 to 8 maps
  // [N, C, H_l, W_l] of one dtype; levels: int64 [K]; a level of -1 marks a padded RoI (not
  // read, its output 0).
  m.def(
      "roi_align_levels(Tensor[] features, Tensor rois, Tensor levels, float[] spatial_scale, "
      "int pooled_height, int pooled_width, int sampling_ratio=-1, bool aligned=False) -> Tensor");

  MYOPS_CONTROL_DEF(m,
                    "_roi_align_levels_meta(SymInt[] features_sizes, int[] features_ranks, "
                    "ScalarType[] features_dtypes, Device[] features_devices, " MYOPS_INFO_SCHEMA("rois") ", "
                    MYOPS_INFO_SCHEMA("levels") ", float[] spatial_scale, int pooled_height, int pooled_width, "
                    "int sampling_ratio) -> ()",
                    myops::roi_align_levels_meta);
}

// The ops without a derivative, for the Autograd key: the inference-only ops (the forward runs,
// a backward through them raises) and the ops whose outputs are indices (a fallthrough).
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

TORCH_LIBRARY_IMPL(myops, Autograd, m) {
  // The inference-only ops have no derivative: torch's own rule for such ops. The forward runs
  // (a model's Parameters require grad, and torch.export / AOTInductor call the ops with them,
  // grad mode on); a result computed from an input that requires grad gets a grad_fn whose
  // backward raises "derivative for myops::<op> is not implemented".
  for (const char* op : {"roi_align_levels", "linear_bounded", "conv_bounded", "multiclass_nms_static",
                         "heatmaps_to_keypoints", "paste_masks"}) {
    m.impl(op, torch::autograd::autogradNotImplementedFallback());
  }
  // nonzero / nonzero_static, the bounded selection and the nms ops return indices and counts
  // (int64): never differentiable; the fallthrough skips the boxed "not implemented" fallback
  for (const char* op :
       {"nonzero", "nonzero_static", "nonzero_bounded", "nms", "batched_nms", "nms_static", "batched_nms_static"}) {
    m.impl(op, torch::CppFunction::makeFallthrough());
  }
}

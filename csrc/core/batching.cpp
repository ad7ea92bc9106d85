// vmap (torch.func.vmap) of the ops whose output shape depends on the data: an error that says
// so, as torch gives for aten::nonzero, instead of the per-example fallback's "stack expects
// each tensor to be equal size" (TORCH_LIBRARY_IMPL(myops, FuncTorchBatched, m)).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

namespace myops {
namespace {

void unsupported_dynamic_shape(const c10::OperatorHandle& op, torch::jit::Stack* /*stack*/) {
  TORCH_CHECK(false,
              "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over ",
              op.schema().operator_name(), ". Use myops.nonzero_static (a fixed output size) inside vmap instead.");
}

}  // namespace

TORCH_LIBRARY_IMPL(myops, FuncTorchBatched, m) {
  m.impl("nonzero", torch::CppFunction::makeFromBoxedFunction<&unsupported_dynamic_shape>());
  m.impl("nms", torch::CppFunction::makeFromBoxedFunction<&unsupported_dynamic_shape>());
  m.impl("batched_nms", torch::CppFunction::makeFromBoxedFunction<&unsupported_dynamic_shape>());
}

}  // namespace myops

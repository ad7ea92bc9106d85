#pragma once
// Entry point of the CUDA strided copy behind myops.diagonal / myops.diagonal_backward
// (defined in csrc/diagonal/cuda/diagonal.cu, called from csrc/diagonal/cuda/diagonal_glue.cpp).
#include <cuda_runtime_api.h>

#include "diagonal/diagonal_shape.h"

namespace myops {

// Runs dst[pos] = src[pos] for every position of `plan.shape` on `stream`.
// Requires plan.shape.dim() <= MYOPS_MAX_DIMS and a non-empty shape.
void diagonal_strided_copy_cuda(const StridedCopyPlan& plan, cudaStream_t stream);

}  // namespace myops

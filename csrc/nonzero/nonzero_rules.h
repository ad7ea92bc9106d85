#pragma once
// nonzero / nonzero_static / nonzero_bounded, shared by the CPU kernels (nonzero/cpu/nonzero.cpp) and the
// CUDA glue (nonzero/cuda/nonzero.cu): the input checks and the complex rule (the constants, torch-free
// for the CUB launchers: nonzero/nonzero_bits.h).
// Light header (no ATen.h): usable from .cpp and .cu files. The fake kernels run check_input
// through the control op myops::_nonzero_meta (csrc/nonzero/schema.cpp).
#include <ATen/core/Tensor.h>
#include <ATen/ops/ne.h>
#include <c10/core/ScalarType.h>

#include <cstdint>

#include "core/checks.h"
#include "core/dtypes.h"
#include "nonzero/nonzero_bits.h"

namespace myops {
namespace nonzero_rules {

// A complex input is nonzero where its real or imaginary part is: the kernels run on
// `self != 0`. Every other input as it is.
inline at::Tensor real_input(const at::Tensor& self) { return self.is_complex() ? at::ne(self, 0) : self; }

// The input checks (after real_input): a supported dtype, and on CUDA (`cuda`) at most
// kMaxCudaRank dims. A complex dtype passes (real_input turns it into bool).
inline void check_input(const TensorInfo& self, const char* op, bool cuda) {
  if (!c10::isComplexType(self.dtype)) check_dtype(self.dtype, all_dtypes(), op, "self");
  TORCH_CHECK(!cuda || self.dim() <= kMaxCudaRank, "myops.", op, ": argument 'self' must have at most ", kMaxCudaRank,
              " dims on CUDA, got ", self.dim());
}

// The nonzero mask of an element of `dtype` (nonzero/nonzero_bits.h).
inline uint64_t mask_of(at::ScalarType dtype) {
  return mask(c10::isFloatingType(dtype), static_cast<int>(c10::elementSize(dtype)));
}

}  // namespace nonzero_rules
}  // namespace myops

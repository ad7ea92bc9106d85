#pragma once
// The torch-free boundary between the CUDA glue (elementwise_glue.cpp: checks, planning,
// allocation) and the kernel files (elementwise_*.cu): one plain descriptor per launch and one
// launcher per op group. Included by .cpp and .cu files.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "elementwise/elementwise_functors.h"
#include "core/macros.h"

namespace myops {
namespace ew {
namespace cuda {

constexpr int kMaxIn = 3;

struct Desc {
  int nin = 0;
  int dtype = 0;              // c10::ScalarType of the output
  int in_dtype[kMaxIn] = {};  // c10::ScalarType of each input
  void* out = nullptr;
  const void* in[kMaxIn] = {};                        // nullptr for a folded input
  bool folded[kMaxIn] = {};                           // one-element host operand, value in `scalar`
  alignas(16) unsigned char scalar[kMaxIn][16] = {};  // in the input's dtype
  // Binary ops on half/bfloat16: the input (0 or 1) PyTorch applies at opmath precision,
  // removed from in[] and bound into the functor with value `bound` (float); -1 if none.
  int bind = -1;
  alignas(16) unsigned char bound[16] = {};
  alignas(16) unsigned char alpha[16] = {};  // add: alpha, addcmul: value (in the compute type)
  bool alpha_one = true;
  bool gelu_tanh = false;  // gelu approximate='tanh'
  int64_t numel = 0;
  bool linear = false;  // every unfolded operand addressed by one linear index
  int ndim = 0;         // merged iteration space, outermost dim first
  int64_t sizes[MYOPS_MAX_DIMS] = {};
  int64_t strides[MYOPS_MAX_DIMS][kMaxIn + 1] = {};  // elements; [dim][0] is the output
  int device = 0;
  cudaStream_t stream = nullptr;
};

// One launcher per CUDA_UNIT of myops/op_table.h (the .cu file compiling those kinds).
void launch_unary(EwKind kind, const Desc& d);           // elementwise_unary.cu
void launch_binary(EwKind kind, const Desc& d);          // elementwise_binary.cu
void launch_div_pow_minmax(EwKind kind, const Desc& d);  // elementwise_div_pow_minmax.cu
void launch_ternary(EwKind kind, const Desc& d);         // elementwise_ternary.cu
void launch_cast_to_float(const Desc& d);  // cast to half/bfloat16/float/double (elementwise_cast_float.cu)
void launch_cast_to_int(const Desc& d);    // cast to bool and the integer types (elementwise_cast_int.cu)

}  // namespace cuda
}  // namespace ew
}  // namespace myops

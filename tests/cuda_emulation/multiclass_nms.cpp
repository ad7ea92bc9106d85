// The CUDA kernels and glue, built by the host compiler for tests/test_cuda_emulation.py.
#include "nms/cuda/multiclass_nms.cu"

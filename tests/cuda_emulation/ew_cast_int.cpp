// The CUDA kernel file, built by the host compiler for tests/test_cuda_emulation.py.
#include "elementwise/cuda/elementwise_cast_int.cu"

// The CUDA kernel file, built by the host compiler for tests/test_cuda_emulation.py.
#include "cuda/elementwise_div_pow_minmax.cu"

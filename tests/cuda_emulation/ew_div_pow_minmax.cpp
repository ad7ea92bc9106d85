// The CUDA kernel file, built by the host compiler for tests/test_cuda_emulation.py.
#include "elementwise/cuda/elementwise_div_pow_minmax.cu"

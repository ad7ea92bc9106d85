// The CUDA kernels and glue, built by the host compiler for tests/test_cuda_emulation.py.
#include "max_pool2d_add/cuda/max_pool2d_add.cu"

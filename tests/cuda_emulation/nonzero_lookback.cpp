// The CUDA kernel file, built by the host compiler for tests/test_cuda_emulation.py.
#include "nonzero/cuda/nonzero_lookback.cu"

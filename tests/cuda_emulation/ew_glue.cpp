// The CUDA glue, built by the host compiler for tests/test_cuda_emulation.py.
#include "elementwise/cuda/elementwise_glue.cpp"

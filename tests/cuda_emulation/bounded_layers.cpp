// The CUDA glue, built by the host compiler for tests/test_cuda_emulation.py.
#include "cuda/bounded_layers.cpp"
